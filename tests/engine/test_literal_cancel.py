"""Issue 29 item 8: §6.8's cancel as the spec words it, ``calling_tool`` -> ``thinking``.

§6.8 says a change "returning to thinking or deciding" cancels the pending question; it
names no ``from_state``. A producer that asked while it was calling a tool says
``calling_tool`` -> ``thinking``. The question is void: said once, never answered, and
its deadline says nothing about the agent going ahead.
"""

from __future__ import annotations

import pytest

from announcer.engine.prompts import UserAnswer
from announcer.engine.replies import Refusal, ReplyReady
from tests.engine.test_question_rules import Clocked

GOES_AHEAD = "the agent goes ahead with"


def withdrawals(c: Clocked) -> list[str]:
    """What the engine decided to say about withdrawn questions (its transcript)."""
    return [
        entry.announcement.text
        for entry in c.engine.transcript()
        if "No answer needed any more" in entry.announcement.text
        or "Withdrawn before you could answer" in entry.announcement.text
    ]


def said_ever(c: Clocked) -> str:
    return " ".join([*c.said, *(e.announcement.text for e in c.engine.transcript())])


@pytest.mark.parametrize("to_state", ["thinking", "deciding"])
def test_a_return_to_thinking_from_calling_tool_voids_the_question(to_state: str) -> None:
    c = Clocked()
    c.send("agent.session.started", 0, summary_normal="Hi.")
    c.state(1, "thinking", "calling_tool")
    c.ask("rpl_lit", 2, default_decision="accept", risk_level="low", timeout_seconds=30)
    c.state(3, "calling_tool", to_state)
    assert c.open_tokens() == []
    assert len(withdrawals(c)) == 1, said_ever(c)
    refused = c.engine.answer(UserAnswer("rpl_lit", decision="accept"), c.now)
    assert isinstance(refused, Refusal)
    assert c.engine.take_outgoing() == []
    # its deadline passes: nothing says the agent goes ahead with a cancelled question
    c.now = 60.0
    c._heard(c.engine.tick(c.now))
    assert GOES_AHEAD not in said_ever(c).lower()
    assert len(withdrawals(c)) == 1


def test_with_two_questions_the_cancel_of_the_second_is_heeded() -> None:
    """The first is answered here and the producer resolves it (§6.7.2, ``calling_tool``);
    then it returns to ``thinking`` while the second waits: that one is cancelled."""
    c = Clocked()
    c.send("agent.session.started", 0, summary_normal="Hi.")
    c.state(1, "thinking", "awaiting_input")
    c.ask("rpl_one", 2)
    c.now = 5.0
    assert isinstance(c.engine.answer(UserAnswer("rpl_one", decision="accept"), c.now), ReplyReady)
    c.ask("rpl_two", 3, default_decision="accept", risk_level="low", timeout_seconds=30)
    c.state(4, "awaiting_input", "calling_tool")  # the first one's resolution
    assert c.open_tokens() == ["rpl_two"]
    c.state(5, "calling_tool", "thinking")  # §6.8: the second is no longer needed
    assert c.open_tokens() == []
    assert len(withdrawals(c)) == 1, said_ever(c)
    refused = c.engine.answer(UserAnswer("rpl_two", decision="accept"), c.now)
    assert isinstance(refused, Refusal)
    c.now = 60.0
    c._heard(c.engine.tick(c.now))
    assert GOES_AHEAD not in said_ever(c).lower()


def test_a_change_from_calling_tool_naming_one_of_two_withdraws_that_one() -> None:
    c = Clocked()
    c.send("agent.session.started", 0, summary_normal="Hi.")
    c.state(1, "thinking", "calling_tool")
    c.ask("rpl_keep", 2)
    c.ask("rpl_drop", 3)
    c.send(
        "agent.state.changed",
        4,
        from_state="calling_tool",
        to_state="thinking",
        correlation_id="rpl_drop",
    )
    assert c.open_tokens() == ["rpl_keep"]
    assert len(withdrawals(c)) == 1


def test_a_question_numbered_before_a_literal_cancel_that_came_first_is_void() -> None:
    """Reordered: the cancel (4) is released before the question (3) it cancelled."""
    c = Clocked()
    c.send("agent.session.started", 0, summary_normal="Hi.")
    c.state(1, "thinking", "calling_tool")
    c.send("agent.tool.invoked", 2, tool="Bash", tool_call_id="call_1")
    c.state(4, "calling_tool", "thinking")  # 3 is missing
    c.now = 3.0
    c.engine.tick(c.now)  # the gap is given up on
    c.ask("rpl_late", 3)
    assert c.open_tokens() == []
    assert any("already withdrawn when it came" in text for text in c.said)
