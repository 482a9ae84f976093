"""The shared conformance fixtures and every example in the seed chapters 3 and 4."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from protocol_samples import FIXTURES, SEEDS, spec_examples

from announcer.protocol import (
    AaepEvent,
    LocalizationHints,
    Producer,
    StreamChecker,
    SubscriptionRequest,
    decode_frame,
)

VALID = sorted((FIXTURES / "valid").glob("*.json"))
INVALID = sorted((FIXTURES / "invalid").glob("*.json"))
CAPTURED = sorted(FIXTURES.glob("captured-*.jsonl"))

# Why each invalid fixture is invalid (the reason code we must give).
INVALID_REASONS = {
    "malformed-event-id.json": "event_id.format",
    "missing-required-fields.json": "session_id.missing",
    "no-critical-urgency-on-errored.json": "urgency.critical_required",
    "wrong-default-decision.json": "default_decision.unsafe",
}


def test_fixture_directories_are_all_covered() -> None:
    assert len(VALID) == 5 and len(INVALID) == 5 and len(CAPTURED) == 2
    assert set(INVALID_REASONS) | {"duplicate-completion-streaming.json"} == {
        p.name for p in INVALID
    }


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.name)
def test_valid_fixture_is_valid(path: Path) -> None:
    result = decode_frame(path.read_bytes())
    assert result.ok, [str(d) for d in result.diagnostics]
    assert result.errors == []
    if path.name.startswith("subscription."):
        assert result.kind == "handshake"
        assert isinstance(result.message, SubscriptionRequest)
        assert result.message.capabilities.extension_capabilities() == {
            "azlearn": {"tonal_marks": "preserve", "transliteration": "native"}
        }
    else:
        assert result.kind == "event"
        assert isinstance(result.message, AaepEvent)
        assert result.message.type == json.loads(path.read_bytes())["type"]


@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.name)
def test_invalid_fixture_is_rejected_for_its_reason(path: Path) -> None:
    if path.name == "duplicate-completion-streaming.json":
        # Alone it is a well-formed event; it is only invalid after an earlier
        # completion of the same output_id (§4.5.4).
        single = decode_frame(path.read_bytes())
        assert single.ok
        first = json.loads(path.read_bytes())
        first["event_id"] = "evt_firstcomp001"
        first["chunk"] = "First and final chunk."
        first["position"] = 0
        checker = StreamChecker()
        earlier = decode_frame(json.dumps(first))
        assert earlier.event is not None and single.event is not None
        assert checker.feed(earlier.event) == []
        found = checker.feed(single.event)
        assert [d.code for d in found] == ["output.after_completion"]
        assert found[0].severity == "error" and found[0].section == "§4.5.4"
        return
    result = decode_frame(path.read_bytes())
    assert result.kind == "invalid" and result.message is None
    assert INVALID_REASONS[path.name] in [d.code for d in result.diagnostics]


@pytest.mark.parametrize("path", CAPTURED, ids=lambda p: p.name)
def test_captured_streams_are_valid_event_by_event(path: Path) -> None:
    lines = [line for line in path.read_bytes().splitlines() if line.strip()]
    assert len(lines) >= 10
    checker = StreamChecker()
    for line in lines:
        result = decode_frame(line)
        assert result.kind == "event", [str(d) for d in result.diagnostics]
        assert result.event is not None
        stream_errors = [d for d in checker.feed(result.event) if d.severity == "error"]
        assert stream_errors == []


def test_the_reference_producer_invokes_an_irreversible_tool_before_confirming() -> None:
    # A real finding: the captured reference run emits tool.invoked (irreversible)
    # before its agent.awaiting.confirmation, which §4.3.1 forbids. We warn, not drop,
    # because a subscriber may have joined after the confirmation.
    path = FIXTURES / "captured-minimal-producer-confirmation-run.jsonl"
    checker = StreamChecker()
    codes = []
    for line in path.read_bytes().splitlines():
        event = decode_frame(line).event
        assert event is not None
        codes += [d.code for d in checker.feed(event)]
    assert codes == ["irreversible.unconfirmed"]


# ------------------------------------------------------------ the seed chapters

CH3 = spec_examples(SEEDS / "aaep-ch3-event-envelope.txt")
CH4 = spec_examples(SEEDS / "aaep-ch4-core-event-types.txt")
FULL_EVENTS = [e for e in CH3 + CH4 if "event_id" in e.value and not e.section.startswith("3.11")]
FRAGMENTS = [
    e
    for e in CH3
    if "event_id" not in e.value
    and not e.section.startswith("3.11")
    # §3.2.6 opens with a structure template ("<uri>" placeholders), not an example.
    and "<uri>" not in json.dumps(e.value)
]
INVALID_EXAMPLES = [e for e in CH3 if e.section.startswith("3.11.")]

# §3.11: the defect each invalid example states, as our reason code.
STATED_DEFECTS = {
    "3.11.1": "event_id.missing",
    "3.11.2": "timestamp.format",
    "3.11.3": "type.unknown_core",
    "3.11.4": "extensions.undeclared_prefix",
    "3.11.5": "envelope.forbidden_field",
}
# §3.11.1-§3.11.5 (and §3.1) show envelopes of agent.session.started without the
# summary_normal that chapter 4 requires; that omission is not the defect they show.
ENVELOPE_ONLY = {"summary_normal.missing"}


def _ids(example: Any) -> str:
    return f"{example.chapter[:8]}-{example.section}-line{example.line}"


def test_the_seeds_hold_the_examples_we_expect() -> None:
    # 13 chapter-4 examples (one per type, two for streaming), §3.1 and §3.10.
    assert len([e for e in FULL_EVENTS if e.chapter.startswith("aaep-ch4")]) == 13
    assert {e.section for e in FULL_EVENTS if e.chapter.startswith("aaep-ch3")} == {"3.1", "3.10"}
    assert sorted(e.section for e in INVALID_EXAMPLES) == sorted(STATED_DEFECTS)


@pytest.mark.parametrize("example", FULL_EVENTS, ids=_ids)
def test_every_example_event_validates(example: Any) -> None:
    # All chapter-4 examples carry full envelopes in the seed text, so nothing is
    # filled in. §3.1 is "the minimal envelope": it shows only envelope fields of a
    # session.started, so the missing summary_normal is the one thing we accept there.
    result = decode_frame(example.value)
    if example.section == "3.1":
        assert {d.code for d in result.diagnostics} == ENVELOPE_ONLY
        completed = {**example.value, "summary_normal": "Session started."}
        assert decode_frame(completed).ok
        return
    assert result.ok, [str(d) for d in result.diagnostics]
    assert result.diagnostics == []
    assert result.event is not None
    assert result.event.short_type == example.value["type"].removeprefix("aaep:")


MINIMAL = {
    "@context": "https://aaep-protocol.org/context/v1",
    "type": "aaep:agent.session.started",
    "event_id": "evt_8a3f5b22c91e4d7a",
    "session_id": "sess_2c91a7b4d23f1e88",
    "timestamp": "2026-05-24T14:22:11.342Z",
    "producer": {"agent_id": "retirement-planner"},
    "summary_normal": "Started.",
}


@pytest.mark.parametrize("example", FRAGMENTS, ids=_ids)
def test_every_envelope_fragment_fits_a_valid_event(example: Any) -> None:
    # Fragments show one field; each is put into a minimal valid event.
    merged = {**MINIMAL, **example.value}
    if "extensions" in example.value:
        merged["@context"] = [MINIMAL["@context"], "https://example.org/medai/context/v1"]
    result = decode_frame(merged)
    if "type" in example.value and example.value["type"] != MINIMAL["type"]:
        # Another type needs its own payload; the type itself must be accepted.
        assert not [d for d in result.diagnostics if d.code.startswith("type.")]
        assert {d.code for d in result.diagnostics} <= {"tool.missing"}
        return
    assert result.ok, [str(d) for d in result.diagnostics]
    if "producer" in example.value:
        Producer.model_validate(example.value["producer"])
    if "localization_hints" in example.value:
        LocalizationHints.model_validate(example.value["localization_hints"])


@pytest.mark.parametrize("example", INVALID_EXAMPLES, ids=_ids)
def test_every_invalid_example_is_rejected_for_the_stated_reason(example: Any) -> None:
    result = decode_frame(example.value)
    assert result.kind == "invalid"
    codes = {d.code for d in result.diagnostics}
    assert STATED_DEFECTS[example.section] in codes
    assert codes - ENVELOPE_ONLY == {STATED_DEFECTS[example.section]}
