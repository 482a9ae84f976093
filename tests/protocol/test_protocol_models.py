"""The typed models: attribute names, summaries and language variants, to_wire."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from protocol_samples import FIXTURES, SEEDS, spec_examples
from pydantic import ValidationError

from announcer.protocol import (
    CORE_CONTEXT,
    CORE_EVENT_TYPES,
    AwaitingClarification,
    AwaitingConfirmation,
    ClarificationReply,
    ConfirmationReply,
    Diagnostic,
    GenericEvent,
    OutputStreaming,
    SessionStarted,
    SubscriptionClose,
    SubscriptionRenegotiate,
    SubscriptionRequest,
    decode_frame,
)
from announcer.protocol.identifiers import (
    format_timestamp,
    is_event_id,
    is_reply_token,
    new_event_id,
    new_reply_token,
    new_session_id,
    new_subscription_id,
    parse_timestamp,
    timestamp_from_epoch,
)
from tests.support.examples import examples

STARTED: dict[str, Any] = json.loads(
    (FIXTURES / "valid" / "agent.session.started.json").read_text()
)


def test_twelve_core_types_each_with_its_own_class() -> None:
    assert len(CORE_EVENT_TYPES) == 12
    assert len(set(CORE_EVENT_TYPES.values())) == 12
    for short, cls in CORE_EVENT_TYPES.items():
        assert short == cls.SHORT_TYPE and cls.SECTION.startswith("§4.")


def test_envelope_attributes_are_named_like_the_json_fields() -> None:
    event = decode_frame(STARTED).event
    assert isinstance(event, SessionStarted)
    assert event.context == CORE_CONTEXT
    assert event.type == "aaep:agent.session.started"
    assert event.short_type == "agent.session.started"
    assert event.sequence_number == 0
    assert event.timestamp == datetime(2026, 6, 30, 14, 22, 11, 342000, tzinfo=UTC)
    assert event.producer.agent_name == "Retirement Planning Assistant"
    assert event.producer.model == "claude-opus-4-7"
    assert event.localization_hints is not None
    assert event.localization_hints.available_languages == ["en-US", "yo-NG", "es-419"]
    assert event.primary_language == "en-US"
    assert event.tools_available == ["fetch_balance", "calculate_projection", "draft_plan"]
    assert event.urgency == "normal" and event.verbosity == "normal"


def test_full_uri_type_is_the_same_type() -> None:
    full = {**STARTED, "type": "https://aaep-protocol.org/types/agent.session.started"}
    event = decode_frame(full).event
    assert isinstance(event, SessionStarted)
    assert event.short_type == "agent.session.started"
    assert event.type == full["type"]  # kept as sent


def test_urgency_defaults_to_normal() -> None:
    event = decode_frame({k: v for k, v in STARTED.items() if k != "urgency"}).event
    assert event is not None and event.urgency == "normal"


def test_summaries_prefer_the_per_field_language_variant() -> None:
    message = {
        **STARTED,
        "summary_normal_yo": "Olùrànlọ́wọ́ ń ṣiṣẹ́ lórí ìbéèrè rẹ.",
        "summary_terse_yo-NG": "Ó ti bẹ̀rẹ̀.",
        "request_text_es": "Planifica mi jubilación.",
    }
    result = decode_frame(message)
    event = result.event
    assert event is not None and result.diagnostics == []
    assert event.summary("normal", "yo") == "Olùrànlọ́wọ́ ń ṣiṣẹ́ lórí ìbéèrè rẹ."
    assert event.summary("normal", "yo-NG") == "Olùrànlọ́wọ́ ń ṣiṣẹ́ lórí ìbéèrè rẹ."
    assert event.summary("terse", "yo") == "Ó ti bẹ̀rẹ̀."  # same base language
    assert event.summary("terse", "YO-ng") == "Ó ti bẹ̀rẹ̀."  # tags compare case-blind
    assert event.summary("normal", "fr") == STARTED["summary_normal"]
    assert event.summary("normal") == STARTED["summary_normal"]
    assert event.summary("detailed", "yo") == STARTED["summary_detailed"]
    assert event.text("request_text", "es-MX") == "Planifica mi jubilación."
    assert event.language_variants() == {
        "summary_normal": {"yo": "Olùrànlọ́wọ́ ń ṣiṣẹ́ lórí ìbéèrè rẹ."},
        "summary_terse": {"yo-NG": "Ó ti bẹ̀rẹ̀."},
        "request_text": {"es": "Planifica mi jubilación."},
    }
    assert event.to_wire()["summary_normal_yo"] == message["summary_normal_yo"]


def test_a_variant_of_a_field_the_type_lacks_is_a_custom_field() -> None:
    result = decode_frame({**STARTED, "question_yo": "?"})
    assert [d.code for d in result.diagnostics] == ["envelope.forbidden_field"]


def test_summary_is_none_when_the_producer_sent_none() -> None:
    tool = next(
        e.value
        for e in spec_examples(SEEDS / "aaep-ch4-core-event-types.txt")
        if e.value.get("type") == "aaep:agent.output.streaming"
    )
    event = decode_frame(tool).event
    assert isinstance(event, OutputStreaming)
    assert event.summary("normal") is None
    assert event.chunk_language is None


def test_to_wire_round_trips_every_valid_fixture() -> None:
    for path in sorted((FIXTURES / "valid").glob("*.json")):
        original = json.loads(path.read_text())
        result = decode_frame(original)
        assert result.message is not None
        wire = result.message.to_wire()
        assert "@context" in wire or "type" in wire
        again = decode_frame(json.dumps(wire))
        assert again.ok and again.message == result.message
        # Fields the producer sent survive unchanged (defaults may be added).
        for key, value in original.items():
            assert wire[key] == value, key


def test_to_wire_follows_the_recommended_order_and_from_wire_builds() -> None:
    message = {
        **STARTED,
        "@context": [CORE_CONTEXT, "https://example.org/medai/context/v1"],
        "extensions": {"medai": {"audit": True}},
    }
    event = decode_frame(message).event
    assert event is not None
    keys = list(event.to_wire())
    assert keys[:8] == [
        "@context",
        "aaep_version",
        "type",
        "event_id",
        "session_id",
        "sequence_number",
        "timestamp",
        "producer",
    ]
    assert keys[-1] == "extensions"
    assert SessionStarted.from_wire(message) == event
    built = SessionStarted(
        context=CORE_CONTEXT,
        type="aaep:agent.session.started",
        event_id=new_event_id(),
        session_id=new_session_id(),
        timestamp="2026-05-24T14:22:11.342Z",
        producer={"agent_id": "demo"},  # type: ignore[arg-type]
        summary_normal="Started.",
    )
    assert decode_frame(built.to_wire()).message == built


def test_confirmation_helpers_read_safety_conservatively() -> None:
    confirmation = json.loads((FIXTURES / "valid" / "agent.awaiting.confirmation.json").read_text())
    event = decode_frame(confirmation).event
    assert isinstance(event, AwaitingConfirmation)
    assert event.is_irreversible and event.replies == ["accept", "reject"]
    assert event.reply_token == "rpl_4f8a2e7d9c1b6a3f"


def test_clarification_context_field_does_not_clash_with_at_context() -> None:
    clarification = next(
        e.value
        for e in spec_examples(SEEDS / "aaep-ch4-core-event-types.txt")
        if e.value.get("type") == "aaep:agent.awaiting.clarification"
    )
    event = decode_frame(clarification).event
    assert isinstance(event, AwaitingClarification)
    assert event.context == CORE_CONTEXT
    assert event.context_ == clarification["context"]
    assert event.choices is not None and event.choices[1].label == "Age 65 (standard)"
    assert event.to_wire()["context"] == clarification["context"]
    assert event.text("context") == clarification["context"]
    assert event.text("question") == clarification["question"]
    started = decode_frame(STARTED).event
    assert started is not None and started.text("context") is None


def test_generic_event_keeps_its_own_fields() -> None:
    message = {
        **{k: v for k, v in STARTED.items() if k not in {"summary_terse", "summary_detailed"}},
        "@context": [CORE_CONTEXT, "https://example.org/fedlearn/context/v1"],
        "type": "fedlearn:model.parameters.updated",
        "round_number": 47,
        "summary_normal": "Aggregated parameters from 12 participants in round 47.",
    }
    result = decode_frame(message)
    assert result.kind == "event" and result.diagnostics == []
    event = result.event
    assert isinstance(event, GenericEvent)
    assert event.short_type == "fedlearn:model.parameters.updated"
    assert event.summary("normal") == message["summary_normal"]
    assert event.to_wire()["round_number"] == 47


def test_foreign_type_without_a_declared_vocabulary_is_refused() -> None:
    result = decode_frame({**STARTED, "type": "fedlearn:model.parameters.updated"})
    assert [d.code for d in result.diagnostics] == ["type.undeclared_prefix"]


def test_extension_prefix_that_no_context_entry_names_is_a_warning() -> None:
    message = {
        **STARTED,
        "@context": [CORE_CONTEXT, "https://aaep-protocol.org/extensions/multilingual/v1"],
        "extensions": {"azlearn": {"dominant_language": "yo-NG"}},
    }
    result = decode_frame(message)
    assert result.ok
    assert [(d.code, d.severity) for d in result.diagnostics] == [
        ("extensions.unconfirmed_prefix", "warning")
    ]


def test_replies_and_handshake_build_and_serialise() -> None:
    reply = ConfirmationReply(
        reply_token="rpl_4f8a2e7d9c1b6a3f",
        decision="reject",
        subscription_id="sub_8a4f2c9d1e7b5f3a",
        timestamp="2026-05-24T14:22:24.812Z",
    )
    wire = reply.to_wire()
    assert wire == {
        "type": "confirmation.reply",
        "reply_token": "rpl_4f8a2e7d9c1b6a3f",
        "decision": "reject",
        "subscription_id": "sub_8a4f2c9d1e7b5f3a",
        "timestamp": "2026-05-24T14:22:24.812Z",
    }
    assert decode_frame(json.dumps(wire)).kind == "reply"
    answer = ClarificationReply(
        reply_token="rpl_2c8e4a9f7b1d3a6e",
        response=67,
        subscription_id="sub_8a4f2c9d1e7b5f3a",
        timestamp=datetime(2026, 5, 24, 14, 22, 18, 121000, tzinfo=UTC),
    )
    assert answer.to_wire()["response"] == 67
    assert answer.to_wire()["timestamp"] == "2026-05-24T14:22:18.121Z"
    with pytest.raises(ValidationError):
        ConfirmationReply(
            reply_token="rpl_x",
            decision="maybe",  # type: ignore[arg-type]
            subscription_id="sub_1",
            timestamp="2026-05-24T14:22:24.812Z",
        )
    request = SubscriptionRequest.model_validate(
        json.loads((FIXTURES / "valid" / "subscription.request.multilingual.json").read_text())
    )
    assert request.capabilities.languages == ["yo-NG", "ha-NG", "ig-NG", "en-NG", "en-US"]
    renegotiate = SubscriptionRenegotiate(
        subscription_id="sub_8a4f2c9d1e7b5f3a",
        capabilities={"max_events_per_second": 1, "cognitive_load": "low"},  # type: ignore[arg-type]
    )
    assert decode_frame(renegotiate.to_wire()).kind == "handshake"
    close = SubscriptionClose(subscription_id="sub_8a4f2c9d1e7b5f3a", reason_code="shutdown")
    assert decode_frame(close.to_wire()).kind == "handshake"


@pytest.mark.parametrize(
    ("message", "code"),
    [
        (
            {
                "type": "confirmation.reply",
                "reply_token": "rpl_1",
                "decision": "yes",
                "subscription_id": "sub_1",
                "timestamp": "2026-05-24T14:22:24.812Z",
            },
            "decision.enum",
        ),
        ({"type": "subscription.rejected", "reason_code": "rate_limit"}, "reason_message.missing"),
        (
            {
                "type": "subscription.accepted",
                "subscription_id": "sub_1",
                "aaep_version": "1",
                "producer": {"agent_id": "a"},
                "honored_capabilities": {},
            },
            "aaep_version.format",
        ),
        (
            {
                "type": "subscription.request",
                "aaep_version": "1.0.0",
                "subscriber_id": "s",
                "capabilities": {"azlearn": "not an object"},
            },
            "capabilities.rule",
        ),
    ],
)
def test_broken_handshake_and_replies_are_invalid_not_unknown_events(
    message: dict[str, Any], code: str
) -> None:
    result = decode_frame(message)
    assert result.kind == "invalid" and result.type == message["type"]
    assert code in [d.code for d in result.diagnostics]
    assert not any(d.code.startswith(("type.", "event_id", "@context")) for d in result.diagnostics)


def test_diagnostic_reads_as_a_sentence() -> None:
    diagnostic = Diagnostic(
        "event_id.format",
        "/event_id",
        "§3.2.3",
        'must be "evt_" followed by 1-64 letters or digits',
    )
    assert str(diagnostic) == 'event_id: must be "evt_" followed by 1-64 letters or digits (§3.2.3)'
    nested = Diagnostic("x", "/localization_hints/available_languages/3", "§3.7", "is bad")
    assert str(nested) == "localization_hints.available_languages[3]: is bad (§3.7)"
    with pytest.raises(AttributeError):
        diagnostic.code = "other"  # type: ignore[misc]


def test_identifiers_and_timestamps() -> None:
    assert is_event_id(new_event_id()) and len(new_event_id()) == 36
    assert new_session_id().startswith("sess_") and new_subscription_id().startswith("sub_")
    assert is_reply_token(new_reply_token()) and new_reply_token() != new_reply_token()
    assert not is_event_id("evt_" + "a" * 65) and not is_event_id("evt_ab-c")
    assert is_event_id("evt_" + "a" * 64)
    for good in [
        "2026-05-24T14:22:11.342Z",
        "2026-05-24T15:22:11.342+01:00",
        "2026-05-24T14:22:11Z",
        "2026-05-24T14:22:11.342123-05:30",
    ]:
        assert parse_timestamp(good) is not None, good
    for bad in [
        "May 24, 2026 14:22:11",
        "2026-05-24T14:22:11.34Z",
        "2026-05-24T14:22:11.3421Z",
        "2026-05-24 14:22:11Z",
        "2026-05-24T14:22:11",
        "2026-02-30T14:22:11Z",
        "2026-05-24t14:22:11z",
        "2026-05-24T14:22:11.342+0100",
    ]:
        assert parse_timestamp(bad) is None, bad
    assert format_timestamp(datetime(2026, 5, 24, 14, 22, 11, 342000, tzinfo=UTC)) == (
        "2026-05-24T14:22:11.342Z"
    )
    plus_one = timezone(timedelta(hours=1))
    assert format_timestamp(datetime(2026, 5, 24, 15, 22, 11, 342123, tzinfo=plus_one)) == (
        "2026-05-24T15:22:11.342123+01:00"
    )
    assert timestamp_from_epoch(0) == "1970-01-01T00:00:00.000Z"


# -- §3.2.5 timestamps are checked inside pydantic-core; they must agree with ours -------

_timestamps = st.builds(
    lambda y, mo, d, h, mi, s, frac, zone: (
        f"{y:04d}-{mo:02d}-{d:02d}T{h:02d}:{mi:02d}:{s:02d}{frac}{zone}"
    ),
    st.integers(0, 9999),
    st.integers(0, 13),
    st.integers(0, 32),
    st.integers(0, 25),
    st.integers(0, 61),
    st.integers(0, 61),
    st.sampled_from(["", ".000", ".342", ".999999", ".5", ".1234", ".1234567"]),
    st.sampled_from(
        ["Z", "z", "+00:00", "-00:00", "+01:00", "+23:59", "+24:00", "-12:30", "", "+0100"]
    ),
)


@settings(max_examples=examples(500))
@given(_timestamps | st.text(max_size=30))
def test_model_timestamps_agree_with_parse_timestamp(text: str) -> None:
    expected = parse_timestamp(text)
    try:
        moment = SessionStarted.from_wire({**STARTED, "timestamp": text}).timestamp
    except ValidationError as exc:
        assert expected is None, (text, exc)
        assert exc.errors()[0]["type"] == "timestamp_format"
    else:
        assert expected is not None, text
        assert moment == expected and moment.utcoffset() == expected.utcoffset()
        assert format_timestamp(moment) == format_timestamp(expected)


def _reordered(value: Any, order: st.DataObject) -> Any:
    """``value`` with the keys of every object in an order hypothesis picks."""
    if isinstance(value, dict):
        keys = order.draw(st.permutations(list(value)))
        return {key: _reordered(value[key], order) for key in keys}
    if isinstance(value, list):
        return [_reordered(item, order) for item in value]
    return value


def _every_sample() -> list[dict[str, Any]]:
    samples = [json.loads(p.read_text()) for p in sorted(FIXTURES.glob("*/*.json"))]
    for captured in sorted(FIXTURES.glob("captured-*.jsonl")):
        samples.extend(json.loads(line) for line in captured.read_text().splitlines() if line)
    for seed in ("aaep-ch3-event-envelope.txt", "aaep-ch4-core-event-types.txt"):
        samples.extend(example.value for example in spec_examples(SEEDS / seed))
    return [s for s in samples if isinstance(s, dict) and "type" in s]


SAMPLES = _every_sample()


@settings(max_examples=examples(200), deadline=None)
@given(st.sampled_from(SAMPLES), st.data())
def test_field_order_never_changes_what_a_frame_means(
    sample: dict[str, Any], order: st.DataObject
) -> None:
    """§3.6: field order carries no meaning. Every fixture and spec example (valid or not),
    its keys shuffled at every level and sent as text (the quick way in and the careful
    way both), decodes to the same verdict, the same message and the same reasons."""
    shuffled = _reordered(sample, order)
    before = decode_frame(json.dumps(sample))
    after = decode_frame(json.dumps(shuffled))
    assert after.ok == before.ok
    assert after.kind == before.kind
    assert after.message == before.message
    assert sorted(d.code for d in after.diagnostics) == sorted(d.code for d in before.diagnostics)
