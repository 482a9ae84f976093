"""Nothing a producer sends makes decode_frame raise, hang or accept garbage."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from protocol_samples import FIXTURES

from announcer.protocol import MAX_EVENT_BYTES, decode_frame
from tests.support.examples import examples

BASE: dict[str, Any] = json.loads((FIXTURES / "valid" / "agent.session.started.json").read_text())


def codes(raw: Any) -> list[str]:
    result = decode_frame(raw)
    assert result.kind == "invalid" and result.message is None
    return [d.code for d in result.diagnostics]


def with_(**fields: Any) -> dict[str, Any]:
    return {**BASE, **fields}


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        (b"\xff\xfe{}", "encoding.utf8"),
        (b'{"type": "aaep:agent.session.started", "summary_normal": "caf\xe9"}', "encoding.utf8"),
        (json.dumps(BASE)[:120], "json.syntax"),
        (b"", "json.syntax"),
        ("{'single': 'quotes'}", "json.syntax"),
        ('{"a": 1,}', "json.syntax"),  # JSON5 / JSONC dialects are refused (§3.8)
        ("\ufeff" + json.dumps(BASE), "encoding.bom"),
        ("[" * 10_000 + "]" * 10_000, "limits.depth"),
        ('{"a":' * 10_000 + "1" + "}" * 10_000, "limits.depth"),
        (json.dumps(BASE).replace("30000", "NaN"), "json.non_standard"),
        (json.dumps(BASE).replace("30000", "Infinity"), "json.non_standard"),
        (json.dumps(BASE).replace("30000", "-Infinity"), "json.non_standard"),
        (json.dumps(BASE).replace("30000", "1e400"), "number.range"),
        (json.dumps(BASE).replace("30000", str(2**53 + 1)), "number.range"),
        (json.dumps(BASE).replace("30000", str(-(2**53) - 1)), "number.range"),
        (json.dumps(BASE).replace("30000", "9" * 5000), "number.range"),
        (
            '{"type": "aaep:agent.session.started", "type": "aaep:agent.session.errored"}',
            "json.duplicate_key",
        ),
        ("[" + json.dumps(BASE) + "]", "message.not_object"),
        ('"aaep:agent.session.started"', "message.not_object"),
        ("null", "message.not_object"),
        ("42", "message.not_object"),
        ("true", "message.not_object"),
    ],
    ids=lambda value: repr(value)[:40],
)
def test_hostile_frames_are_refused_with_a_reason(raw: Any, code: str) -> None:
    assert code in codes(raw)


def test_fifty_megabytes_are_refused_before_parsing() -> None:
    huge = b'{"summary_normal": "' + b"x" * (50 * 1024 * 1024) + b'"}'
    result = decode_frame(huge)
    assert [d.code for d in result.diagnostics] == ["limits.size"]
    assert result.raw is None  # never parsed
    assert str(result.diagnostics[0]).startswith(f"frame: is {len(huge)} bytes")
    assert codes(huge.decode()) == ["limits.size"]


def test_size_limit_counts_utf8_bytes_not_characters() -> None:
    text = "ẹ" * 20_000  # 3 bytes each: 60,000 bytes of text
    assert len(text) < MAX_EVENT_BYTES < len(text.encode()) + 10_000
    event = with_(
        summary_detailed=text[:16_000], request_text=text[:16_000], summary_normal=text[:16_000]
    )
    assert "limits.size" in codes(json.dumps(event, ensure_ascii=False).encode())


def test_lone_surrogates_are_refused_once() -> None:
    found = codes(json.dumps(with_(summary_normal="\ud800 broken")))
    assert found == ["encoding.surrogate"]
    raw_text = json.dumps(with_(summary_normal="\udfff broken"), ensure_ascii=False)
    assert codes(raw_text) == ["encoding.surrogate"]
    assert codes(with_(summary_normal="\udfff broken")) == ["encoding.surrogate"]
    paired = decode_frame(json.dumps(with_(summary_normal="music \U0001d11e")))
    assert paired.ok


def test_strict_types_never_coerce() -> None:
    assert "expected_duration_ms.type" in codes(with_(expected_duration_ms="30000"))
    assert "sequence_number.type" in codes(with_(sequence_number=True))
    assert "sequence_number.range" in codes(with_(sequence_number=-1))
    assert "expected_duration_ms.type" in codes(with_(expected_duration_ms=3.5))


def test_nesting_and_field_limits_of_section_3_7() -> None:
    deep: dict[str, Any] = {"level": 1}
    for _ in range(9):
        deep = {"inner": deep}
    event = with_(
        **{"@context": [BASE["@context"], "https://example.org/medai/context/v1"]},
        extensions={"medai": deep},
    )
    assert "limits.depth" in codes(event)
    shallow: dict[str, Any] = {"level": 1}
    for _ in range(5):
        shallow = {"inner": shallow}
    assert decode_frame({**event, "extensions": {"medai": shallow}}).ok
    many = {f"ext{i}": {} for i in range(20)}
    crowded = with_(
        **{"@context": [BASE["@context"]] + [f"https://x.org/ext{i}/v1" for i in range(20)]},
        extensions=many,
    )
    assert "limits.fields" in codes(crowded)
    long_text = with_(summary_detailed="x" * 16_385)
    assert "limits.string" in codes(long_text)
    languages = [f"x{i:03d}" for i in range(33)]
    hints = {"primary_language": "en-US", "available_languages": languages}
    result = decode_frame(with_(localization_hints=hints))
    assert [(d.code, d.section) for d in result.diagnostics] == [
        ("localization_hints.available_languages.too_many", "§3.7")
    ]


def test_dict_input_is_held_to_the_same_rules() -> None:
    assert decode_frame(BASE).ok
    assert "json.non_standard" in codes(with_(expected_duration_ms=float("nan")))
    assert "json.not_serializable" in codes(with_(expected_duration_ms=object()))
    nested: dict[str, Any] = {}
    cursor = nested
    for _ in range(5_000):
        cursor["a"] = {}
        cursor = cursor["a"]
    assert "limits.depth" in codes(with_(extensions={"x": nested}))
    assert codes(12) == ["message.not_object"]  # type: ignore[arg-type]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=5)
    ),
    max_leaves=25,
)


@settings(max_examples=examples(300), deadline=None)
@given(st.binary(max_size=300))
def test_random_bytes_never_raise(raw: bytes) -> None:
    result = decode_frame(raw)
    assert result.kind in {"event", "handshake", "reply", "invalid"}
    assert result.ok == (result.kind != "invalid")
    assert "internal.error" not in [d.code for d in result.diagnostics]


@settings(max_examples=examples(300), deadline=None)
@given(
    st.dictionaries(
        st.sampled_from([*sorted(BASE), "extensions", "urgency", "x"]), json_values, max_size=12
    )
)
def test_random_objects_never_raise(fields: dict[str, Any]) -> None:
    result = decode_frame({**BASE, **fields})
    assert result.kind in {"event", "invalid"}
    # decode_frame turns our own bugs into "internal.error"; there must be none.
    assert "internal.error" not in [d.code for d in result.diagnostics]
    if result.kind == "invalid":
        assert result.diagnostics and all(d.message for d in result.diagnostics)


@settings(max_examples=examples(200), deadline=None)
@given(st.integers(min_value=0, max_value=len(json.dumps(BASE))))
def test_every_truncation_is_refused(cut: int) -> None:
    text = json.dumps(BASE)
    result = decode_frame(text[:cut])
    if cut < len(text):
        assert result.kind == "invalid"
    else:
        assert result.ok


def test_diagnostics_never_quote_payload_or_reply_tokens() -> None:
    secret = "rpl_SECRETtoken123"
    confirmation = json.loads((FIXTURES / "valid" / "agent.awaiting.confirmation.json").read_text())
    broken = {
        **confirmation,
        "reply_token": secret + "!",
        "action": "",
        "urgency": "normal",
        "custom_field": "PAYLOAD TEXT",
    }
    result = decode_frame(broken)
    text = " ".join(str(d) for d in result.diagnostics)
    assert result.kind == "invalid" and len(result.diagnostics) >= 4
    assert "SECRET" not in text and "PAYLOAD" not in text


def test_producer_chosen_names_cannot_drive_a_terminal_or_forge_log_lines() -> None:
    hostile = {**BASE, "evil\n\x1b[2Jkey": 1}
    result = decode_frame(hostile)
    shown = " ".join(str(d) for d in result.diagnostics)
    assert result.diagnostics and "\x1b" not in shown and "\n" not in shown
    assert "evil\\x0a\\x1b[2Jkey" in shown
