"""The quick JSON reader (jiter) and the careful one (stdlib hooks) must read alike.

``read_json`` takes jiter's result whenever jiter accepts the text, so every text jiter
accepts must be accepted by the careful decoder with an identical value (same types,
same float bits), and every text the careful decoder refuses must be refused overall.
"""

from __future__ import annotations

import json
import math
from typing import Any

import jiter
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from announcer.protocol import decode
from announcer.protocol.decode import decode_frame, read_json
from tests.shared_data import SHARED

FIXTURES = SHARED / "aaep" / "fixtures"


def _careful(text: str) -> tuple[str, Any]:
    try:
        return "ok", decode._DECODER.decode(text)
    except decode._Refused as refused:
        return "refused", refused.code
    except (ValueError, RecursionError) as exc:
        return "refused", type(exc).__name__


def _quick(text: str) -> tuple[str, Any]:
    try:
        return "ok", read_json(text)
    except decode._Refused as refused:
        return "refused", refused.code
    except (ValueError, RecursionError) as exc:
        return "refused", type(exc).__name__


def _same(left: Any, right: Any) -> bool:
    """Equal with the same types all the way down; floats compared bit for bit."""
    if type(left) is not type(right):
        return False
    if isinstance(left, float):
        return left.hex() == right.hex() or (math.isnan(left) and math.isnan(right))
    if isinstance(left, dict):
        return list(left) == list(right) and all(_same(left[k], right[k]) for k in left)
    if isinstance(left, list):
        return len(left) == len(right) and all(map(_same, left, right))
    return bool(left == right)


def _assert_read_alike(text: str) -> None:
    careful, quick = _careful(text), _quick(text)
    assert careful[0] == quick[0], (text, careful, quick)
    if careful[0] == "ok":
        assert _same(careful[1], quick[1]), (text, careful, quick)


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**60), max_value=2**60)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(json_values, st.booleans())
def test_serialised_values_read_alike(value: Any, ascii_only: bool) -> None:
    _assert_read_alike(json.dumps(value, ensure_ascii=ascii_only))


# Pieces a hostile producer may splice in: duplicate keys, NaN, huge numbers, odd
# whitespace, escapes, control characters, trailing data.
_PIECES = [
    '{"a":1,"a":2}',
    '{"a":{"b":1,"b":1}}',
    '{"a":NaN}',
    '{"a":Infinity}',
    '{"a":-Infinity}',
    '{"a":1e400}',
    '{"a":1E+308}',
    '{"a":9007199254740993}',
    '{"a":-9007199254740992}',
    '{"a":12345678901234567890123}',
    '{"a":0.1000000000000000055511151231257827}',
    '{"a":"\\ud800"}',
    '{"a":"\\ud83d\\ude00"}',
    '{"a":"\\u0000"}',
    '{"a":"x\x01"}',
    '{"a":1}\x0c',
    '\t{"a" : 1 }\r\n',
    '{"a":1} x',
    '{"a":01}',
    '{"a":-0}',
    '{"a":-0.0}',
    '{"a":1.}',
    '{"a":.5}',
    '{"a":+1}',
    "{'a':1}",
    '{"a":tru}',
    '{"a":[1,]}',
    '{"a":1,}',
    '{"":1,"":2}',
    "[" * 5000 + "]" * 5000,
    '{"a":"\\x41"}',
    '{"a":"\\/"}',
    '{"é":"ü","\\u00e9":1}',
]


@pytest.mark.parametrize("text", _PIECES)
def test_hostile_pieces_read_alike(text: str) -> None:
    _assert_read_alike(text)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(_PIECES), st.integers(min_value=0, max_value=40), st.text(max_size=3))
def test_mutated_pieces_read_alike(text: str, where: int, insert: str) -> None:
    at = min(where, len(text))
    _assert_read_alike(text[:at] + insert + text[at:])


def test_every_conformance_fixture_reads_alike() -> None:
    texts = [path.read_text(encoding="utf-8") for path in sorted(FIXTURES.rglob("*.json"))]
    for path in sorted(FIXTURES.rglob("*.jsonl")):
        texts += [line for line in path.read_text(encoding="utf-8").splitlines() if line]
    assert len(texts) > 10, "AAEP conformance fixtures not found"
    for text in texts:
        _assert_read_alike(text)


def test_jiter_really_does_the_common_case() -> None:
    """Guard the premise: a clean event needs no careful reading, and jiter reads it."""
    text = (FIXTURES / "valid" / "agent.session.started.json").read_text(encoding="utf-8")
    assert not decode._numbers_in_doubt(text.encode())
    quick = jiter.from_json(text.encode(), allow_inf_nan=False, catch_duplicate_keys=True)
    assert _same(read_json(text), quick)


def test_duplicate_key_still_explained_after_quick_refusal() -> None:
    result = decode_frame('{"type":"aaep:agent.tool.invoked","type":"x"}')
    assert result.kind == "invalid"
    assert result.diagnostics[0].code == "json.duplicate_key"
    assert '"type" appears twice' in result.diagnostics[0].message
