"""Issue 30 item 6: low cognitive load keeps what comes of the user's own decision.

Subscribers' Guide §7: low load announces only critical events and final outputs. The
result of something the user just approved is such an output, and so is every state
change that concerns the user; only the states that say the agent is at work fold
(docs/configuration.md says which).
"""

from __future__ import annotations

import pytest

from announcer.engine.pipeline import Engine
from announcer.engine.policy_rules import LOW_LOAD_FOLDED_STATES
from announcer.engine.prompts import UserAnswer
from announcer.engine.replies import ReplyReady
from announcer.engine.settings import UserSettings
from tests.engine.aaep import confirmation, frame, started
from tests.engine.test_engine import Listener

LOW = UserSettings(cognitive_load="low")


def state(from_state: str, to_state: str, text: str | None = None) -> str:
    fields = {"summary_normal": text} if text else {}
    return frame(
        "agent.state.changed",
        urgency="background",
        from_state=from_state,
        to_state=to_state,
        **fields,
    )


def answering(settings: UserSettings) -> Listener:
    engine = Engine(settings)
    engine.set_subscription("conn1", "sub_low1")
    return Listener(engine)


def test_low_load_says_the_result_of_what_the_user_approved() -> None:
    listener = answering(LOW)
    listener.feed(started(), confirmation("rpl_book1", action="Book the 9:04 train."))
    reply = listener.engine.answer(UserAnswer("rpl_book1", decision="accept"), 1.0)
    assert isinstance(reply, ReplyReady)
    said = listener.feed(
        state("awaiting_input", "calling_tool", "You accepted; booking the train."),
        frame("agent.tool.invoked", tool="book_train", summary_normal="Booking the train."),
        frame(
            "agent.tool.completed",
            tool="book_train",
            status="success",
            summary_normal="Booked. Reference LYO 4821.",
        ),
        # An ordinary result later on is still folded at low load.
        frame(
            "agent.tool.completed",
            tool="search_hotels",
            status="success",
            summary_normal="Found 12 hotels.",
        ),
        now=2.0,
    )
    assert "You accepted; booking the train." in said
    assert "Booked. Reference LYO 4821." in said
    assert "Found 12 hotels." not in said
    assert "Booking the train." not in said


def test_a_rejected_question_is_followed_by_what_the_agent_did_about_it() -> None:
    listener = answering(LOW)
    listener.feed(started(), confirmation("rpl_book2"))
    assert isinstance(
        listener.engine.answer(UserAnswer("rpl_book2", decision="reject"), 1.0), ReplyReady
    )
    said = listener.feed(
        state("awaiting_input", "thinking", "You rejected; nothing was booked."), now=2.0
    )
    assert said == ["You rejected; nothing was booked."]


@pytest.mark.parametrize(
    ("from_state", "to_state", "heard"),
    [
        ("thinking", "awaiting_input", "Waiting for your answer."),
        ("thinking", "handing_off", "Handing off."),
        ("thinking", "waiting_for_ci", "Now waiting for ci."),
    ],
)
def test_low_load_says_state_changes_that_concern_the_user(
    from_state: str, to_state: str, heard: str
) -> None:
    listener = Listener(Engine(LOW))
    listener.feed(started())
    assert listener.feed(state(from_state, to_state), now=1.0) == [heard]


@pytest.mark.parametrize("to_state", sorted(LOW_LOAD_FOLDED_STATES))
def test_low_load_folds_the_states_that_only_say_the_agent_is_at_work(to_state: str) -> None:
    listener = Listener(Engine(LOW))
    listener.feed(started())
    assert listener.feed(state("somewhere", to_state), now=1.0) == []
    assert listener.engine.policy.suppressed["low cognitive load"] >= 1
