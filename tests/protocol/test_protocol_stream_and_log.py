"""Stream-level rules over real captured sessions, and the diagnostics log."""

from __future__ import annotations

import json
from typing import Any

from protocol_samples import FIXTURES

from announcer.protocol import (
    AaepEvent,
    DiagnosticsLog,
    StreamChecker,
    decode_frame,
)

CAPTURED = FIXTURES / "captured-minimal-producer-run.jsonl"


def session() -> list[dict[str, Any]]:
    """The first session of the captured reference run, as dicts."""
    events = [json.loads(line) for line in CAPTURED.read_text().splitlines() if line.strip()]
    first = events[0]["session_id"]
    return [e for e in events if e["session_id"] == first]


def typed(message: dict[str, Any]) -> AaepEvent:
    event = decode_frame(message).event
    assert event is not None
    return event


def feed_all(messages: list[dict[str, Any]]) -> list[str]:
    checker = StreamChecker()
    return [d.code for m in messages for d in checker.feed(typed(m))]


def test_a_real_session_passes_the_stream_rules() -> None:
    assert feed_all(session()) == []


def test_events_after_the_terminal_event_are_errors() -> None:
    events = session()
    invoked = next(e for e in events if e["type"] == "aaep:agent.tool.invoked")
    late = {
        **invoked,
        "event_id": "evt_late1",
        "sequence_number": len(events),
        "tool_call_id": "call_late1",
    }
    assert feed_all([*events, late]) == ["session.after_terminal"]


def test_sequence_gaps_and_mixed_usage() -> None:
    events = session()
    assert events[3]["type"] == "aaep:agent.tool.invoked"
    gap = [events[0], events[3]]
    assert feed_all(gap) == ["sequence_number.gap"]
    mixed = [events[0], {k: v for k, v in events[1].items() if k != "sequence_number"}]
    assert feed_all(mixed) == ["sequence_number.mixed"]


def test_second_completion_and_chunks_after_completion() -> None:
    events = session()
    outputs = [e for e in events if e["type"] == "aaep:agent.output.streaming"]
    final = outputs[-1]
    assert final["complete"] is True
    again = {**final, "event_id": "evt_again1", "sequence_number": None}
    again.pop("sequence_number")
    checker = StreamChecker()
    for message in events[:-1]:
        checker.feed(typed(message))
    found = checker.feed(typed({**again, "sequence_number": final["sequence_number"] + 1}))
    assert [d.code for d in found] == ["output.after_completion"]


def test_unpaired_tool_completion_and_broken_state_chain_are_warnings() -> None:
    events = session()
    completed = next(e for e in events if e["type"] == "aaep:agent.tool.completed")
    checker = StreamChecker()
    found = checker.feed(typed(completed))
    assert [(d.code, d.severity) for d in found] == [("tool.unpaired", "warning")]
    states = [e for e in events if e["type"] == "aaep:agent.state.changed"]
    checker = StreamChecker()
    checker.feed(typed(events[0]))
    checker.feed(typed(states[0]))
    skipped = {**states[0], "event_id": "evt_x1", "sequence_number": 2, "from_state": "deciding"}
    assert [d.code for d in checker.feed(typed(skipped))] == ["from_state.chain"]


def test_checker_memory_is_bounded() -> None:
    checker = StreamChecker(max_sessions=3)
    started = session()[0]
    for index in range(50):
        checker.feed(typed({**started, "session_id": f"sess_{index}", "event_id": f"evt_{index}"}))
    assert len(checker._sessions) == 3


def test_log_keeps_envelope_fields_only_and_counts_reasons() -> None:
    log = DiagnosticsLog(capacity=2)
    confirmation = json.loads((FIXTURES / "invalid" / "wrong-default-decision.json").read_text())
    record = log.record(decode_frame(confirmation), source="ws://127.0.0.1:8765", now=12.5)
    assert record is not None and record.action == "dropped"
    assert record.reasons == ("default_decision.unsafe",)
    assert record.type == "aaep:agent.awaiting.confirmation"
    assert record.event_id == "evt_unsafeexample"
    assert record.session_id == "sess_unsafeexample"
    assert record.agent_id == "bad-bank-agent"
    line = record.log_line()
    assert "rpl_unsafeexample" not in line and "Delete all customer" not in line
    assert "rpl_unsafeexample" not in json.dumps(record.as_dict())
    assert line.startswith("dropped from ws://127.0.0.1:8765: type=aaep:agent.awaiting")

    assert (
        log.record(
            decode_frame(FIXTURES.joinpath("valid", "agent.session.started.json").read_bytes())
        )
        is None
    )
    log.record(decode_frame(b"\xff"))
    log.record(decode_frame(b"[1]"))
    assert log.dropped == 3 and len(log) == 2  # bounded: the oldest record is gone
    assert log.counts() == {
        "default_decision.unsafe": 1,
        "encoding.utf8": 1,
        "message.not_object": 1,
    }
    assert [r.reasons for r in log.recent(1)] == [("message.not_object",)]
    log.record_drop(
        "rate_limit", "more than 5 events per second", section="§5.6.2", envelope=confirmation
    )
    assert log.counts()["rate_limit"] == 1
    log.clear()
    assert log.counts() == {} and log.dropped == 0


def test_log_neutralises_hostile_envelope_values() -> None:
    log = DiagnosticsLog()
    hostile = {
        "type": "aaep:agent.session.started",
        "event_id": "evt_\x1b[2J" + "x" * 500,
        "producer": {"agent_id": "line1\nline2"},
    }
    record = log.record(decode_frame(hostile))
    assert record is not None
    assert record.event_id is not None and "\x1b" not in record.event_id
    assert len(record.event_id) <= 81
    assert record.agent_id == "line1?line2"
    assert "\n" not in record.log_line()


def test_warnings_are_logged_but_do_not_drop() -> None:
    log = DiagnosticsLog()
    tool = json.loads((FIXTURES / "valid" / "agent.tool.invoked.high-risk.json").read_text())
    result = decode_frame(tool)
    checker = StreamChecker()
    assert result.event is not None
    extra = checker.feed(result.event)
    record = log.record(result, extra=extra)
    assert record is not None and record.action == "warned" and log.warned == 1
    assert record.reasons == ("irreversible.unconfirmed",)


def test_a_reused_reply_token_is_refused_but_a_redelivery_is_not() -> None:
    confirmation = json.loads((FIXTURES / "valid" / "agent.awaiting.confirmation.json").read_text())
    confirmation.pop("sequence_number")
    checker = StreamChecker()
    assert checker.feed(typed(confirmation)) == []
    # The same prompt delivered twice is a duplicate, not a reused token.
    assert [d.code for d in checker.feed(typed(confirmation))] == ["event_id.duplicate"]
    other = {**confirmation, "event_id": "evt_another1", "action": "Delete the account."}
    found = checker.feed(typed(other))
    assert [(d.code, d.severity, d.section) for d in found] == [
        ("reply_token.reused", "error", "§6.2.2")
    ]


def unnumbered(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in e.items() if k != "sequence_number"} for e in events]


def test_streaming_positions_must_follow_on() -> None:
    events = unnumbered(session())
    chunks = [e for e in events if e["type"] == "aaep:agent.output.streaming"]
    checker = StreamChecker()
    checker.feed(typed(events[0]))
    assert checker.feed(typed(chunks[0])) == []
    skipped = checker.feed(typed(chunks[2]))
    assert [(d.code, d.severity) for d in skipped] == [("position.discontinuous", "warning")]
    assert "skips ahead" in skipped[0].message


def test_tool_call_ids_are_unique_within_a_session() -> None:
    events = unnumbered(session())
    invoked = next(e for e in events if e["type"] == "aaep:agent.tool.invoked")
    checker = StreamChecker()
    checker.feed(typed(invoked))
    again = {**invoked, "event_id": "evt_second1"}
    assert [d.code for d in checker.feed(typed(again))] == ["tool_call_id.duplicate"]
