"""Issue 12: a state machine over event orders and key timings, at the engine.

Questions, terminal events, state changes, subscription closes, duplicates and
out-of-order deliveries arrive in any order; keys are pressed before, during and
after, bound (as the UIs bind them) to the question presented at the press. The
invariants are the safety rules:

* a reply is made only for a question that was open and presented when its key
  was pressed, and it names that very question;
* never accept for a void, expired or malformed question;
* never two replies for one token.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from announcer.engine.pipeline import Engine
from announcer.engine.prompts import PendingPrompt, UserAnswer
from announcer.engine.replies import ReplyReady
from announcer.engine.settings import UserSettings
from tests.support.examples import examples

BASE = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)
SESSIONS = ("sess_a", "sess_b", "sess_c")
STATES = ("awaiting_input", "thinking", "calling_tool", "deciding")
SOURCE = "c"


def _stamp(at: float) -> str:
    return (BASE + timedelta(seconds=at)).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class QuestionMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.now = 0.0
        self.engine = Engine(UserSettings(), wall_clock=lambda: BASE + timedelta(seconds=self.now))
        self.engine.set_subscription(SOURCE, "sub_m1")
        self.serial = 0
        self.sequence = dict.fromkeys(SESSIONS, 0)
        self.sent: list[dict[str, Any]] = []
        self.held: list[dict[str, Any]] = []
        self.ended: set[str] = set()  # sessions whose terminal event arrived
        self.closed = False
        self.tokens: dict[str, tuple[str, float, bool]] = {}  # token -> session, deadline, bad
        self.replied: set[str] = set()
        self.bound: list[tuple[str, str]] = []  # (token, event_id) keys were bound to
        # Questions delivered late: a reject stays possible while the producer may still
        # wait (issue 22 item 2), but accept never after the producer's deadline.
        self.delayed: set[str] = set()
        self.arrived: dict[str, float] = {}  # token -> when it was first delivered
        self.timeouts: dict[str, float] = {}
        # The producer's clock is seen once before anything else (a question that is the
        # very first thing a producer sends is timed from its arrival: its clock unknown).
        self._deliver(self._frame("sess_a", "agent.session.started", summary_normal="Hi."))

    # -- what the producer sends ---------------------------------------------------------------

    def _frame(self, session: str, short_type: str, **fields: Any) -> dict[str, Any]:
        self.serial += 1
        frame: dict[str, Any] = {
            "@context": "https://aaep-protocol.org/context/v1",
            "type": f"aaep:{short_type}",
            "event_id": f"evt_m{self.serial}",
            "session_id": session,
            "sequence_number": self.sequence[session],
            "timestamp": _stamp(self.now),
            "producer": {"agent_id": "machine", "agent_name": "Machine"},
            "urgency": "normal",
        }
        self.sequence[session] += 1
        frame.update(fields)
        return frame

    def _deliver(self, frame: dict[str, Any]) -> None:
        token = frame.get("reply_token")
        if isinstance(token, str):
            self.arrived.setdefault(token, self.now)
        self.engine.receive(json.dumps(frame), SOURCE, self.now)
        self.sent.append(frame)
        kind = frame.get("type", "")
        if kind.endswith(("session.completed", "session.errored", "session.cancelled")):
            self.ended.add(frame["session_id"])

    @rule(
        session=st.sampled_from(SESSIONS),
        timeout=st.sampled_from([5, 60, 300]),
        malformed=st.booleans(),
        hold=st.booleans(),
    )
    def question(self, session: str, timeout: int, malformed: bool, hold: bool) -> None:
        self.serial += 1
        token = f"rpl_q{self.serial}"
        fields: dict[str, Any] = {
            "urgency": "critical",
            "action": f"Action {self.serial}",
            "consequence": "Something happens.",
            "reply_token": token,
            "timeout_seconds": timeout,
            "default_decision": "reject",
            "risk_level": "high",
            "irreversible": True,
        }
        if malformed:
            fields["default_decision"] = "accept"  # §6.4.1 broken: malformed
        frame = self._frame(session, "agent.awaiting.confirmation", **fields)
        self.tokens[token] = (session, self.now + timeout, malformed)
        self.timeouts[token] = timeout
        if hold:
            self.delayed.add(token)
            self.held.append(frame)  # delivered later, out of order
        else:
            self._deliver(frame)

    @rule(session=st.sampled_from(SESSIONS), kind=st.sampled_from(["cancelled", "errored"]))
    def terminal(self, session: str, kind: str) -> None:
        fields: dict[str, Any] = {"summary_normal": "Ended."}
        if kind == "cancelled":
            fields["cancelled_by"] = "producer"
        else:
            fields.update(urgency="critical", error_category="permanent")
        self._deliver(self._frame(session, f"agent.session.{kind}", **fields))

    @rule(
        session=st.sampled_from(SESSIONS),
        from_state=st.sampled_from(STATES),
        to_state=st.sampled_from(STATES),
    )
    def state_change(self, session: str, from_state: str, to_state: str) -> None:
        self._deliver(
            self._frame(session, "agent.state.changed", from_state=from_state, to_state=to_state)
        )

    @rule()
    def release_held(self) -> None:
        held, self.held = self.held, []
        for frame in reversed(held):
            self._deliver(frame)

    @rule(index=st.integers(min_value=0, max_value=50))
    def duplicate(self, index: int) -> None:
        if self.sent:
            self._deliver(self.sent[index % len(self.sent)])

    @rule()
    def producer_closes(self) -> None:
        self.engine.subscription_closed(SOURCE, self.now)
        self.closed = True

    @rule(seconds=st.sampled_from([0.1, 1.0, 10.0, 100.0]))
    def time_passes(self, seconds: float) -> None:
        self.now += seconds
        self.engine.tick(self.now)

    # -- what the user does ------------------------------------------------------------------------

    def _answer(self, token: str, event_id: str, decision: str) -> None:
        before: PendingPrompt | None = self.engine.book.get(token)
        outcome = self.engine.answer(
            UserAnswer(token, decision=decision, event_id=event_id), self.now
        )
        if not isinstance(outcome, ReplyReady):
            return
        # The reply is for the very question the key was bound to, which was open.
        assert before is not None and before.event_id == event_id
        assert outcome.prompt.event_id == event_id
        assert outcome.message.reply_token == token
        assert token not in self.replied, "two replies for one token"
        self.replied.add(token)
        session, deadline, malformed = self.tokens[token]
        assert not self.closed, "a reply after the producer closed the subscription"
        assert session not in self.ended, "a reply for a question whose session ended"
        if outcome.message.decision == "accept":
            assert not malformed, "accept for a malformed question"
            assert not before.malformed
            assert self.now < deadline, "an accept after the producer's deadline"
        elif token in self.delayed:
            # A reject while the producer may still wait: never beyond its timeout from
            # the question's arrival (it cannot wait longer than that).
            assert self.now < self.arrived[token] + self.timeouts[token], (
                "a reject after the producer can have stopped waiting"
            )
        else:
            assert self.now < deadline, "a reply after the deadline"

    @rule(decision=st.sampled_from(["accept", "reject"]))
    def key_now(self, decision: str) -> None:
        """A key bound to the question presented right now."""
        presented = self.engine.presented_prompt()
        if presented is not None:
            self.bound.append((presented.reply_token, presented.event_id))
            self._answer(presented.reply_token, presented.event_id, decision)

    @rule()
    def bind_key(self) -> None:
        """The user starts pressing while this question is on screen..."""
        presented = self.engine.presented_prompt()
        if presented is not None:
            self.bound.append((presented.reply_token, presented.event_id))

    @rule(decision=st.sampled_from(["accept", "reject"]), index=st.integers(0, 20))
    def key_lands_later(self, decision: str, index: int) -> None:
        """...and the key lands after other things happened (a dialog changed meanwhile)."""
        if self.bound:
            token, event_id = self.bound[index % len(self.bound)]
            self._answer(token, event_id, decision)

    # -- invariants -----------------------------------------------------------------------------

    @invariant()
    def presented_is_open_and_oldest(self) -> None:
        presented = self.engine.presented_prompt()
        pending = self.engine.pending_prompts()
        if presented is not None:
            assert presented in pending
        assert len(pending) <= self.engine.book.limit

    @invariant()
    def nothing_open_for_an_ended_or_closed_source(self) -> None:
        for prompt in self.engine.pending_prompts():
            if self.closed:
                raise AssertionError("a question stayed open after subscription.close")
            assert prompt.session_id not in self.ended


QuestionMachine.TestCase.settings = settings(
    max_examples=examples(150),
    stateful_step_count=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestQuestionSafety = QuestionMachine.TestCase


def test_the_machine_really_replies() -> None:
    """The invariants above are about replies: check the machine's keys do make some."""
    machine = QuestionMachine()
    machine.question(session="sess_a", timeout=60, malformed=False, hold=False)
    machine.bind_key()
    machine.question(session="sess_b", timeout=60, malformed=False, hold=False)
    machine.key_now(decision="accept")
    assert machine.replied == {"rpl_q2"}  # (event 1 is the session's start)
    machine.key_lands_later(decision="accept", index=0)  # the same question again: refused
    machine.time_passes(seconds=0.1)
    machine.key_now(decision="reject")
    assert machine.replied == {"rpl_q2", "rpl_q4"}


def test_a_late_question_takes_a_reject_but_no_accept_after_the_producers_deadline() -> None:
    """Delivered 55 s late for 60 s: after 6 s more only a reject is still sent."""
    machine = QuestionMachine()
    machine.question(session="sess_a", timeout=60, malformed=False, hold=True)
    for seconds in (10.0,) * 5 + (1.0,) * 5:
        machine.time_passes(seconds=seconds)
    machine.release_held()
    machine.bind_key()
    for _ in range(6):
        machine.time_passes(seconds=1.0)
    machine.key_lands_later(decision="accept", index=0)
    assert machine.replied == set()
    machine.key_lands_later(decision="reject", index=0)
    assert machine.replied == {"rpl_q2"}


def test_a_question_for_a_session_that_ended_long_ago_is_still_void() -> None:
    """The tracker forgets an ended session's state after 10 minutes, not that it ended."""
    machine = QuestionMachine()
    machine.terminal(kind="cancelled", session="sess_a")
    for _ in range(7):
        machine.time_passes(seconds=100.0)  # past CLOSED_SESSION_TTL_SECONDS
    machine.question(hold=False, malformed=False, session="sess_a", timeout=60)
    machine.nothing_open_for_an_ended_or_closed_source()
    assert machine.engine.pending_prompts() == []
