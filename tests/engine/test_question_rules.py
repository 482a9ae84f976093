"""Issue 12 at the engine: each §6.8 trigger by name, arrival after the end, honest time.

The end-to-end versions over real sockets are in tests/runtime/test_question_safety.py.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from announcer.engine.pipeline import Engine
from announcer.engine.prompts import UserAnswer
from announcer.engine.replies import Refusal, ReplyReady
from announcer.engine.settings import UserSettings
from announcer.engine.speech_commands import Speak, SpeechCommand

BASE = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)


class Clocked:
    """An engine on an injected clock: ``now`` seconds after BASE on both clocks."""

    def __init__(self) -> None:
        self.now = 0.0
        self.engine = Engine(UserSettings(), wall_clock=lambda: BASE + timedelta(seconds=self.now))
        self.engine.set_subscription("c", "sub_rules1")
        self.serial = 0
        self.said: list[str] = []

    def send(self, short_type: str, seq: int | None = None, *, ago: float = 0.0, **kw: Any) -> None:
        self.serial += 1
        at = BASE + timedelta(seconds=self.now - ago)
        frame: dict[str, Any] = {
            "@context": "https://aaep-protocol.org/context/v1",
            "type": f"aaep:{short_type}",
            "event_id": f"evt_r{self.serial}",
            "session_id": kw.pop("session", "sess_r"),
            "timestamp": at.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "producer": {"agent_id": "rules", "agent_name": "Rules Agent"},
            "urgency": "normal",
        }
        if seq is not None:
            frame["sequence_number"] = seq
        frame.update(kw)
        self._heard(self.engine.receive(json.dumps(frame), "c", self.now))

    def _heard(self, commands: list[SpeechCommand]) -> None:
        self.said += [c.announcement.text for c in commands if isinstance(c, Speak)]
        self.said += [a.text for a in self.engine.scheduler.queued_announcements()]

    def ask(self, token: str, seq: int | None = None, **kw: Any) -> None:
        fields: dict[str, Any] = {
            "urgency": "critical",
            "action": f"Do {token}",
            "consequence": "It happens.",
            "reply_token": token,
            "timeout_seconds": 120,
            "default_decision": "reject",
        }
        fields.update(kw)
        self.send("agent.awaiting.confirmation", seq, **fields)

    def state(self, seq: int | None, from_state: str, to_state: str) -> None:
        self.send("agent.state.changed", seq, from_state=from_state, to_state=to_state)

    def open_tokens(self) -> list[str]:
        return [p.reply_token for p in self.engine.pending_prompts()]


@pytest.mark.parametrize(
    ("short_type", "fields"),
    [
        ("agent.session.cancelled", {"cancelled_by": "producer", "summary_normal": "Stopped."}),
        ("agent.session.completed", {"summary_normal": "Done."}),
        (
            "agent.session.errored",
            {"urgency": "critical", "error_category": "permanent", "summary_normal": "Broke."},
        ),
    ],
)
def test_trigger_terminal_event_voids_every_open_question(
    short_type: str, fields: dict[str, Any]
) -> None:
    """§6.8 (cancelled) and §4.5.1 (any terminal event ends the session)."""
    c = Clocked()
    c.send("agent.session.started", 0, summary_normal="Hi.")
    c.ask("rpl_t1", 1)
    c.ask("rpl_t2", 2)
    c.send(short_type, 3, **fields)
    assert c.open_tokens() == []
    refused = c.engine.answer(UserAnswer("rpl_t2", decision="accept"), 1.0)
    assert isinstance(refused, Refusal) and refused.code == "voided"


@pytest.mark.parametrize("to_state", ["thinking", "deciding"])
def test_trigger_state_change_from_awaiting_input_voids(to_state: str) -> None:
    """§6.8: the producer left awaiting_input without our answer: the question is void."""
    c = Clocked()
    c.send("agent.session.started", 0, summary_normal="Hi.")
    c.state(1, "thinking", "awaiting_input")
    # Another agent's urgent news is being said: the question waits behind it.
    c.send(
        "agent.handoff.requested",
        session="sess_other",
        urgency="critical",
        reason="A person must look at this.",
        target_kind="human",
    )
    c.ask("rpl_s1", 2)
    c.state(3, "awaiting_input", to_state)
    assert c.open_tokens() == []
    # Issue 20: never heard (the clock stood still behind the handoff), it is said whole.
    assert any("Withdrawn before you could answer: Do rpl_s1." in text for text in c.said)


@pytest.mark.parametrize(
    ("from_state", "to_state"),
    [("thinking", "calling_tool"), ("thinking", "awaiting_input"), ("calling_tool", "idle")],
)
def test_not_a_trigger_parallel_work_keeps_the_question(from_state: str, to_state: str) -> None:
    """§6.1(3): work that does not depend on the question goes on; nothing is voided.
    A return to ``thinking`` from any state is §6.8's cancel (test_literal_cancel.py)."""
    c = Clocked()
    c.send("agent.session.started", 0, summary_normal="Hi.")
    c.ask("rpl_p1", 1)
    c.state(2, from_state, to_state)
    assert c.open_tokens() == ["rpl_p1"]


def test_the_resolution_of_an_answered_question_does_not_void_the_other() -> None:
    """§6.7.2: awaiting_input -> thinking right after our reply resolves *that* question."""
    c = Clocked()
    c.send("agent.session.started", 0, summary_normal="Hi.")
    c.state(1, "thinking", "awaiting_input")
    c.ask("rpl_r1", 2)
    c.ask("rpl_r2", 3)
    assert isinstance(c.engine.answer(UserAnswer("rpl_r1", decision="reject"), 0.5), ReplyReady)
    c.state(4, "awaiting_input", "thinking")
    assert c.open_tokens() == ["rpl_r2"]
    # a second move away, with no answer of ours outstanding, is a cancellation
    c.state(5, "thinking", "awaiting_input")
    c.state(6, "awaiting_input", "thinking")
    assert c.open_tokens() == []


def test_a_question_numbered_before_the_terminal_event_is_void_on_arrival() -> None:
    """Issue 12 (5): the critical terminal event (N+1) is released before the question (N)."""
    c = Clocked()
    c.send("agent.session.started", 0, summary_normal="Hi.")
    c.send(
        "agent.session.errored",
        2,
        urgency="critical",
        error_category="permanent",
        summary_normal="Broke.",
    )
    c.ask("rpl_late", 1)
    assert c.open_tokens() == []
    assert any("had already ended when this question came" in text for text in c.said)
    refused = c.engine.answer(UserAnswer("rpl_late", decision="accept"), 1.0)
    assert isinstance(refused, Refusal) and refused.code == "session_ended"


def test_a_question_numbered_before_its_cancellation_is_void_on_arrival() -> None:
    c = Clocked()
    c.send("agent.session.started", 0, summary_normal="Hi.")
    c.state(1, "thinking", "awaiting_input")
    c.state(3, "awaiting_input", "thinking")  # held: 2 is missing
    c.now = 3.0
    c.engine.tick(c.now)  # the gap is given up on
    c.ask("rpl_gone", 2)
    assert c.open_tokens() == []
    assert any("already withdrawn when it came" in text for text in c.said)


def test_time_left_counts_from_the_events_clock_and_say_again_recomputes() -> None:
    c = Clocked()
    c.send("agent.session.started", 0, summary_normal="Hi.")
    c.ask("rpl_c1", 1, ago=50.0)  # sent 50 s ago; 120 s to answer
    [prompt] = c.engine.pending_prompts()
    assert prompt.late_by == pytest.approx(50.0, abs=0.1)
    assert any("within 1 minute and 10 seconds" in text for text in c.said)
    c.now = 40.0
    again = [
        cmd.announcement.text for cmd in c.engine.present("rpl_c1", c.now) if isinstance(cmd, Speak)
    ] + [a.text for a in c.engine.scheduler.queued_announcements()]
    assert any("within 30 seconds" in text for text in again)
    assert prompt.seconds_left(c.now) == pytest.approx(30.0, abs=0.1)


def test_skew_is_not_lateness() -> None:
    """A producer whose clock runs 5 minutes slow is not late: its skew is measured."""
    c = Clocked()
    c.send("agent.session.started", 0, ago=300.0, summary_normal="Hi.")
    c.ask("rpl_k1", 1, ago=300.0, timeout_seconds=60)
    [prompt] = c.engine.pending_prompts()
    assert prompt.late_by == 0.0


def test_a_question_past_its_deadline_is_expired_on_arrival() -> None:
    c = Clocked()
    c.send("agent.session.started", 0, summary_normal="Hi.")
    c.ask("rpl_x1", 1, ago=600.0, timeout_seconds=60)
    assert c.open_tokens() == []
    assert any("came after its time ran out" in text for text in c.said)
    refused = c.engine.answer(UserAnswer("rpl_x1", decision="accept"), 0.0)
    assert isinstance(refused, Refusal) and refused.code == "expired"


def test_the_reply_is_stamped_with_the_wall_clock_time_of_the_decision() -> None:
    """§6.3.1: an event delivered an hour late gets a reply stamped now, not an hour early."""
    c = Clocked()
    c.send("agent.session.started", 0, summary_normal="Hi.")
    c.ask("rpl_w1", 1, ago=3600.0, timeout_seconds=7200)
    c.now = 12.5
    outcome = c.engine.answer(UserAnswer("rpl_w1", decision="reject"), c.now)
    assert isinstance(outcome, ReplyReady)
    assert outcome.message.timestamp == BASE + timedelta(seconds=12.5)


def test_an_answer_naming_another_question_is_refused() -> None:
    c = Clocked()
    c.send("agent.session.started", 0, summary_normal="Hi.")
    c.ask("rpl_n1", 1)
    [prompt] = c.engine.pending_prompts()
    wrong = c.engine.answer(UserAnswer("rpl_n1", decision="accept", event_id="evt_other"), 1.0)
    assert isinstance(wrong, Refusal) and wrong.code == "other_question"
    right = c.engine.answer(UserAnswer("rpl_n1", decision="accept", event_id=prompt.event_id), 1.0)
    assert isinstance(right, ReplyReady)


def test_the_next_question_is_presented_when_the_first_closes() -> None:
    c = Clocked()
    c.send("agent.session.started", 0, summary_normal="Hi.", session="sess_a")
    c.ask("rpl_q1", None, session="sess_a")
    c.ask("rpl_q2", None, session="sess_b")
    first = c.engine.presented_prompt()
    assert first is not None and first.reply_token == "rpl_q1"
    assert any("Questions waiting after this one: 1" in text for text in c.said)
    c.engine.answer(UserAnswer("rpl_q1", decision="reject", event_id=first.event_id), 1.0)
    assert c.engine.next_wakeup() == 1.0
    commands = c.engine.tick(1.0)
    second = c.engine.presented_prompt()
    assert second is not None and second.reply_token == "rpl_q2"
    assert c.engine.questions.presented_at == 1.0
    spoken = [cmd.announcement.text for cmd in commands if isinstance(cmd, Speak)]
    spoken += [a.text for a in c.engine.scheduler.queued_announcements()]
    assert any("Do rpl_q2" in text for text in spoken)


def test_subscription_close_voids_with_the_default_and_later_questions_too() -> None:
    c = Clocked()
    c.send("agent.session.started", 0, summary_normal="Hi.")
    c.ask("rpl_z1", 1, default_decision="accept", risk_level="low")
    commands = c.engine.subscription_closed("c", 1.0)
    texts = [cmd.announcement.text for cmd in commands if isinstance(cmd, Speak)]
    texts += [a.text for a in c.engine.scheduler.queued_announcements()]
    assert any("closed the subscription, so it goes ahead with: Do rpl_z1" in t for t in texts)
    c.ask("rpl_z2", 2)
    assert c.open_tokens() == []
    c.engine.set_subscription("c", "sub_again1")  # a fresh handshake
    c.ask("rpl_z3", 3)
    assert c.open_tokens() == ["rpl_z3"]


def test_a_waiting_count_put_off_is_said_as_it_is_then_not_as_it_was() -> None:
    """Issue 29, item 14: a count of questions waiting, put off (counts are said at most
    every few seconds), was said later with its old number: one too many once a question
    had been answered meanwhile."""
    from tests.engine.aaep import confirmation, started
    from tests.engine.test_engine import listen

    listener = listen()
    listener.engine.set_subscription("conn1", "sub_count1")
    listener.feed(started(), now=0.0)
    listener.feed(confirmation("rpl_c1"), now=0.1)
    listener.feed(confirmation("rpl_c2", session="sess_c2"), now=0.5)  # "1 waiting", said
    listener.feed(confirmation("rpl_c3", session="sess_c3"), now=1.0)  # "2 waiting", put off
    first = listener.engine.pending_prompts()[0]
    answered = listener.engine.answer(
        UserAnswer("rpl_c1", decision="reject", event_id=first.event_id), 2.0
    )
    assert not isinstance(answered, Refusal), answered
    for now in (2.0, 3.0, 6.0, 8.0, 12.0):
        listener.run(listener.engine.tick(now), now)
    assert [p.reply_token for p in listener.engine.pending_prompts()] == ["rpl_c2", "rpl_c3"]
    counts = [t for t in listener.said if t.startswith("Questions waiting after this one")]
    assert counts == [
        "Questions waiting after this one: 1. The latest is from Harbor Bank Assistant.",
        # said with rpl_c2 when it is read: one waits (rpl_c3), and never "2" after it
        "Questions waiting after this one: 1. The latest is from Harbor Bank Assistant.",
    ], counts
