"""JSON read strictly (§3.8, RFC 8259): no duplicate keys, NaN or Infinity; numbers in range."""

from __future__ import annotations

import json
import math
import re
from typing import Any

# §3.8: integers must stay within IEEE 754 double precision.
SAFE_INTEGER = 2**53
_SAFE_KEY = re.compile(r"[A-Za-z0-9_@.\-]{1,64}")


class _Refused(Exception):
    """Raised from inside the JSON decoder's hooks; never escapes the protocol package."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _no_constants(name: str) -> Any:
    raise _Refused("json.non_standard", f"{name} is not a JSON value (RFC 8259)")


def _bounded_int(text: str) -> int:
    value = int(text)
    if -SAFE_INTEGER <= value <= SAFE_INTEGER:
        return value
    raise _Refused("number.range", "integers beyond ±2^53 must be sent as strings")


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isfinite(value):
        return value
    raise _Refused("number.range", "numbers must fit in a double-precision float")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                name = f'"{key}"' if _SAFE_KEY.fullmatch(key) else "a key"
                raise _Refused(
                    "json.duplicate_key",
                    f"{name} appears twice in one object; meaning is ambiguous",
                )
            seen.add(key)
    return result


_DECODER = json.JSONDecoder(
    object_pairs_hook=_unique_keys,
    parse_constant=_no_constants,
    parse_int=_bounded_int,
    parse_float=_finite_float,
)


def loads_strict(text: str) -> Any:
    """JSON as the decoder reads it (§3.8): no duplicate keys, no NaN or Infinity, numbers
    within range. For framing that wraps AAEP messages (stdio's JSON-RPC envelope), so a
    message inside is judged by the same rules as a bare one. Raises ValueError."""
    try:
        return _DECODER.decode(text)
    except _Refused as refused:
        raise ValueError(refused.message) from None
    except RecursionError:
        raise ValueError("nested far too deeply to read") from None
