"""Universal Agent API ``AgentWrapperEvent`` bounds, enforced on ingest exactly as the envelope
spec (v1) sets them (docs/formats.md, "Universal Agent API envelope").

All limits count UTF-8 bytes, not characters:

- ``channel`` over 128 bytes becomes absent;
- ``message`` over 4096 bytes is cut UTF-8-safely to ``4096 - len("…(truncated)")``
  bytes and the suffix appended (a bound too small for the suffix gives "…" cut to it);
- ``text`` over 65536 bytes is split, in order, into several TextOutput events;
- ``data`` whose serialized JSON exceeds 65536 bytes is replaced by
  ``{"dropped": {"reason": "oversize"}}``.
"""

from __future__ import annotations

import json

from announcer.i18n.text import grapheme_floor

CHANNEL_MAX_BYTES = 128
MESSAGE_MAX_BYTES = 4096
TEXT_MAX_BYTES = 65536
DATA_MAX_BYTES = 65536
TRUNCATION_SUFFIX = "…(truncated)"
OVERSIZE_DATA: dict[str, object] = {"dropped": {"reason": "oversize"}}


def utf8_len(text: str) -> int:
    return len(text.encode("utf-8"))


def cut_utf8(text: str, max_bytes: int) -> str:
    """The longest prefix of ``text`` that fits in ``max_bytes`` UTF-8 bytes."""
    encoded = text.encode("utf-8")
    if len(encoded) <= max_bytes:
        return text
    prefix = encoded[:max_bytes].decode("utf-8", errors="ignore")
    # §11.3.3: and never inside a grapheme cluster (a mark stays with its base).
    return text[: grapheme_floor(text, len(prefix))]


def bound_channel(channel: str | None) -> str | None:
    if channel is None or utf8_len(channel) > CHANNEL_MAX_BYTES:
        return None
    return channel


def bound_message(message: str | None, bound: int = MESSAGE_MAX_BYTES) -> str | None:
    if message is None or utf8_len(message) <= bound:
        return message
    suffix_len = utf8_len(TRUNCATION_SUFFIX)
    if bound > suffix_len:
        return cut_utf8(message, bound - suffix_len) + TRUNCATION_SUFFIX
    return cut_utf8("…", bound)


def split_text(text: str, bound: int = TEXT_MAX_BYTES) -> list[str]:
    """Split into in-order pieces of at most ``bound`` bytes, never inside a grapheme cluster."""
    if utf8_len(text) <= bound:
        return [text]
    pieces: list[str] = []
    rest = text
    while rest:
        piece = cut_utf8(rest, bound)
        if not piece:  # one cluster bigger than the bound: keep it whole rather than tear it
            piece = rest[: grapheme_floor(rest, 1, progress=True)]
        pieces.append(piece)
        rest = rest[len(piece) :]
    return pieces


def serialized_json_bytes(value: object) -> int:
    """Length of serde_json::to_vec(value): compact separators, UTF-8 kept as is."""
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def bound_data(data: object) -> object:
    if data is None:
        return None
    try:
        size = serialized_json_bytes(data)
    except (TypeError, ValueError, RecursionError):
        return dict(OVERSIZE_DATA)
    if size > DATA_MAX_BYTES:
        return {"dropped": {"reason": "oversize"}}
    return data
