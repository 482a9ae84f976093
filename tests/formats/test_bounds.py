"""Universal Agent API bounds at and just over each limit, multi-byte characters at the cut."""

from __future__ import annotations

import json

from announcer.formats.bounds import (
    CHANNEL_MAX_BYTES,
    DATA_MAX_BYTES,
    MESSAGE_MAX_BYTES,
    TEXT_MAX_BYTES,
    TRUNCATION_SUFFIX,
    bound_channel,
    bound_data,
    bound_message,
    serialized_json_bytes,
    split_text,
    utf8_len,
)
from announcer.formats.wrapper import WrapperEvent, enforce_bounds
from tests.formats.conftest import run_stream

EURO = "€"  # 3 bytes in UTF-8
SUFFIX_BYTES = utf8_len(TRUNCATION_SUFFIX)


def test_suffix_is_the_seeds_ellipsis_form():
    assert TRUNCATION_SUFFIX == "…(truncated)"
    assert SUFFIX_BYTES == 14  # "…" is 3 bytes


def test_channel_at_limit_kept_and_one_byte_over_absent():
    at_limit = "c" * CHANNEL_MAX_BYTES
    assert bound_channel(at_limit) == at_limit
    assert bound_channel(at_limit + "c") is None


def test_channel_multibyte_counts_bytes_not_characters():
    fits = "é" * 64  # 128 bytes
    assert bound_channel(fits) == fits
    assert bound_channel("é" * 64 + "x") is None  # 129 bytes, 65 characters


def test_message_at_limit_unchanged():
    message = "m" * MESSAGE_MAX_BYTES
    assert bound_message(message) == message


def test_message_one_byte_over_is_cut_and_suffixed():
    result = bound_message("m" * (MESSAGE_MAX_BYTES + 1))
    assert result is not None
    assert result == "m" * (MESSAGE_MAX_BYTES - SUFFIX_BYTES) + TRUNCATION_SUFFIX
    assert utf8_len(result) == MESSAGE_MAX_BYTES


def test_message_cut_never_splits_a_multibyte_character():
    keep = MESSAGE_MAX_BYTES - SUFFIX_BYTES  # 4082 bytes of room
    # 4081 ASCII bytes then a 3-byte euro straddling the cut (bytes 4082..4084)
    message = "a" * (keep - 1) + EURO + "b" * 20
    result = bound_message(message)
    assert result is not None
    assert result == "a" * (keep - 1) + TRUNCATION_SUFFIX  # the euro is dropped whole
    result.encode("utf-8")  # valid UTF-8
    assert utf8_len(result) <= MESSAGE_MAX_BYTES


def test_message_multibyte_exactly_at_limit_is_kept():
    message = EURO * (MESSAGE_MAX_BYTES // 3) + "a"  # 4095 + 1 = 4096 bytes
    assert utf8_len(message) == MESSAGE_MAX_BYTES
    assert bound_message(message) == message
    over = message + EURO
    result = bound_message(over)
    assert result is not None and result.endswith(TRUNCATION_SUFFIX)
    assert utf8_len(result) <= MESSAGE_MAX_BYTES


def test_message_bound_too_small_for_suffix_gives_cut_ellipsis():
    too_long = "x" * 20
    assert bound_message(too_long, bound=SUFFIX_BYTES) == "…"
    assert bound_message(too_long, bound=SUFFIX_BYTES + 1) == "x" + TRUNCATION_SUFFIX
    assert bound_message(too_long, bound=2) == ""  # "…" is 3 bytes: nothing of it fits


def test_text_at_limit_is_one_piece_and_over_splits_in_order():
    at_limit = "t" * TEXT_MAX_BYTES
    assert split_text(at_limit) == [at_limit]
    over = "t" * TEXT_MAX_BYTES + "u"
    assert split_text(over) == ["t" * TEXT_MAX_BYTES, "u"]


def test_text_split_keeps_multibyte_characters_whole():
    text = "a" + EURO * (TEXT_MAX_BYTES // 3)  # 1 + 65535 = 65536 bytes
    assert split_text(text) == [text]
    text = "ab" + EURO * (TEXT_MAX_BYTES // 3)  # 65537 bytes; a euro straddles the cut
    pieces = split_text(text)
    assert "".join(pieces) == text
    assert all(utf8_len(p) <= TEXT_MAX_BYTES for p in pieces)
    # "ab" + 21844 euros = 65534 bytes; the next euro would end at byte 65537
    assert pieces == ["ab" + EURO * 21844, EURO]


def test_data_at_limit_kept_and_one_byte_over_dropped():
    def blob(size: int) -> dict[str, str]:
        overhead = serialized_json_bytes({"k": ""})
        return {"k": "x" * (size - overhead)}

    at_limit = blob(DATA_MAX_BYTES)
    assert serialized_json_bytes(at_limit) == DATA_MAX_BYTES
    assert bound_data(at_limit) == at_limit
    over = blob(DATA_MAX_BYTES + 1)
    assert bound_data(over) == {"dropped": {"reason": "oversize"}}


def test_data_size_counts_utf8_like_serde_json():
    # serde_json writes non-ASCII as raw UTF-8 and no spaces: "€" counts 3 bytes, not 6 ("\u20ac")
    value = {"k": EURO * 10}
    assert serialized_json_bytes(value) == len('{"k":""}') + 30


def test_enforce_bounds_splits_text_events_and_only_the_last_is_final():
    event = WrapperEvent("codex", "TextOutput", text="z" * (2 * TEXT_MAX_BYTES + 5))
    pieces = enforce_bounds(event)
    assert [len(p.text or "") for p in pieces] == [TEXT_MAX_BYTES, TEXT_MAX_BYTES, 5]
    assert [p.hints.final for p in pieces] == [False, False, True]


def test_ingest_applies_bounds_and_text_is_spoken_in_order(validate):
    big_text = "Hello. " + "é" * TEXT_MAX_BYTES  # 65543 bytes + 65536 bytes -> 3 pieces
    long_message = "w" * (MESSAGE_MAX_BYTES + 100)
    lines = [
        json.dumps(
            {"agent_kind": "codex", "kind": "TextOutput", "channel": "c" * 200, "text": big_text}
        ),
        json.dumps({"agent_kind": "codex", "kind": "Status", "message": long_message}),
        json.dumps(
            {
                "agent_kind": "codex",
                "kind": "ToolCall",
                "channel": "tool",
                "data": {"blob": "x" * (DATA_MAX_BYTES + 1)},
            }
        ),
    ]
    out = run_stream("agent-wrapper", lines)
    validate(out.events)
    chunks = [e for e in out.events if e["type"] == "aaep:agent.output.streaming"]
    assert "".join(c["chunk"] for c in chunks) == big_text  # nothing lost, order kept
    assert len({c["output_id"] for c in chunks}) == 1
    positions = [c["position"] for c in chunks]
    assert positions == sorted(positions)
    status = next(e for e in out.events if e["type"] == "aaep:agent.progress.updated")
    assert status["progress"]["description"].endswith("…(truncated)")
    # the oversize tools facet became {"dropped": ...}: a tool event whose tool is unknown
    assert not any("blob" in json.dumps(e) for e in out.events)


def test_long_streamed_text_fits_aaep_chunk_and_event_limits(validate):
    """§4.3.3 chunk <= 16384 characters and §3.7 events <= 64 KiB, even ASCII-escaped."""
    text = "😀" * 20000 + "a" * 20000 + "\n" * 5000
    out = run_stream(
        "agent-wrapper", [json.dumps({"agent_kind": "x", "kind": "TextOutput", "text": text})]
    )
    validate(out.events)
    chunks = [e for e in out.events if e["type"] == "aaep:agent.output.streaming"]
    assert "".join(c["chunk"] for c in chunks) == text
    assert all(len(c["chunk"]) <= 16384 for c in chunks)
    assert all(len(json.dumps(e).encode()) <= 65536 for e in out.events)  # ASCII-escaped form
