"""Issue 22 item 4: a question is withdrawn only on evidence (§6.8, §6.7.2, §6.1(3))."""

from __future__ import annotations

import pytest

from announcer.engine.prompts import UserAnswer
from announcer.engine.replies import Refusal, ReplyReady
from tests.engine.test_question_rules import Clocked

STILL_OPEN = "The agent went on working; your question is still open."


def told(c: Clocked, needle: str) -> int:
    """How many times the engine decided to say ``needle`` (its transcript)."""
    return sum(needle in entry.announcement.text for entry in c.engine.transcript())


def withdrawals_told(c: Clocked) -> int:
    """How many times a withdrawal was said: heard questions get "No answer needed any
    more", questions withdrawn before they were heard "Withdrawn before you could answer"
    (issue 20); either way once."""
    return told(c, "No answer needed any more") + told(c, "Withdrawn before you could answer")


def two_open() -> Clocked:
    c = Clocked()
    c.send("agent.session.started", 0, summary_normal="Hi.")
    c.state(1, "thinking", "awaiting_input")
    c.ask("rpl_a1", 2)
    c.ask("rpl_b2", 3)
    return c


@pytest.mark.parametrize("to_state", ["thinking", "deciding", "calling_tool", "idle"])
def test_with_two_open_a_change_naming_none_voids_none(to_state: str) -> None:
    c = two_open()
    c.state(4, "awaiting_input", to_state)
    assert sorted(c.open_tokens()) == ["rpl_a1", "rpl_b2"]
    assert told(c, STILL_OPEN) == 1
    assert not any("No answer needed any more" in text for text in c.said)
    c.now = 2.0
    assert isinstance(c.engine.answer(UserAnswer("rpl_a1", decision="reject"), c.now), ReplyReady)


def test_a_change_naming_one_question_withdraws_only_that_one() -> None:
    c = two_open()
    c.send(
        "agent.state.changed",
        4,
        from_state="awaiting_input",
        to_state="thinking",
        correlation_id="rpl_a1",
    )
    assert c.open_tokens() == ["rpl_b2"]
    assert withdrawals_told(c) == 1


@pytest.mark.parametrize("to_state", ["calling_tool", "writing_output", "idle"])
def test_parallel_work_from_awaiting_input_does_not_withdraw_the_only_question(
    to_state: str,
) -> None:
    c = Clocked()
    c.send("agent.session.started", 0, summary_normal="Hi.")
    c.state(1, "thinking", "awaiting_input")
    c.ask("rpl_only", 2)
    c.state(3, "awaiting_input", to_state)
    assert c.open_tokens() == ["rpl_only"]
    assert STILL_OPEN in c.said
    c.state(4, to_state, "awaiting_input")
    c.state(5, "awaiting_input", to_state)
    assert told(c, STILL_OPEN) == 1  # said once per question


def test_a_resolution_naming_the_question_is_answered_elsewhere_once() -> None:
    """§6.7.2: another subscriber accepted; a later key is never "Sent"."""
    c = Clocked()
    c.send("agent.session.started", 0, summary_normal="Hi.")
    c.ask("rpl_else", 1)
    event_id = c.engine.pending_prompts()[0].event_id
    c.send(
        "agent.state.changed",
        2,
        from_state="awaiting_input",
        to_state="calling_tool",
        correlation_id=event_id,
        summary_normal="User accepted the transfer; proceeding.",
    )
    assert c.open_tokens() == []
    assert told(c, "Answered elsewhere") == 1
    refused = c.engine.answer(UserAnswer("rpl_else", decision="accept"), 1.0)
    assert isinstance(refused, Refusal) and refused.code == "answered_elsewhere"
    assert "answered elsewhere" in refused.message


def test_another_subscribers_reply_passed_on_by_the_producer_closes_the_question() -> None:
    c = Clocked()
    c.send("agent.session.started", 0, summary_normal="Hi.")
    c.ask("rpl_other", 1)
    reply = {
        "type": "confirmation.reply",
        "reply_token": "rpl_other",
        "decision": "accept",
        "subscription_id": "sub_someone",
        "timestamp": "2026-11-23T12:00:01.000Z",
    }
    c._heard(c.engine.receive(reply, "c", 1.0))
    assert c.open_tokens() == []
    assert told(c, "Answered elsewhere") == 1
    refused = c.engine.answer(UserAnswer("rpl_other", decision="accept"), 2.0)
    assert isinstance(refused, Refusal) and refused.code == "answered_elsewhere"
    # the producer's own resolution notice that follows withdraws nothing else
    c.state(2, "awaiting_input", "calling_tool")
    assert told(c, "Answered elsewhere") == 1
    assert told(c, STILL_OPEN) == 0


def test_a_number_given_as_text_is_sent_only_as_typed() -> None:
    """Issue 22 item 6: "2.5e3" is never sent as 2500; "62" takes the numeric kind."""
    c = Clocked()
    c.send("agent.session.started", 0, summary_normal="Hi.")
    c.send(
        "agent.awaiting.clarification",
        1,
        urgency="critical",
        question="Which retirement age?",
        reply_token="rpl_age1",
        timeout_seconds=300,
        accepted_response_kinds=["multiple_choice", "numeric"],
        choices=[{"value": "60", "label": "Age 60"}, {"value": "65", "label": "Age 65"}],
    )
    c.now = 3.0
    refused = c.engine.answer(UserAnswer("rpl_age1", response="2.5e3"), c.now)
    assert isinstance(refused, Refusal)
    sent = c.engine.answer(UserAnswer("rpl_age1", response="62"), c.now)
    assert isinstance(sent, ReplyReady) and sent.message.response == 62


def test_the_tool_a_question_gated_completing_is_answered_elsewhere() -> None:
    """The reference producers: tool.invoked, then the confirmation gating it; another
    subscriber answers, and the tool completes. Said once; a later key sends nothing."""
    c = Clocked()
    c.send("agent.session.started", 0, summary_normal="Hi.")
    c.send(
        "agent.tool.invoked",
        1,
        tool="send_email",
        tool_call_id="call_g1",
        summary_normal="Calling send_email.",
        risk_level="high",
        irreversible=True,
    )
    c.ask("rpl_gated1", 2)
    c.send("agent.tool.completed", 3, tool="send_email", tool_call_id="call_g1", status="success")
    assert c.open_tokens() == []
    assert told(c, "Answered elsewhere") == 1
    refused = c.engine.answer(UserAnswer("rpl_gated1", decision="accept"), 2.0)
    assert isinstance(refused, Refusal) and refused.code == "answered_elsewhere"


def test_another_tool_completing_leaves_the_question_open() -> None:
    c = Clocked()
    c.send("agent.session.started", 0, summary_normal="Hi.")
    c.send("agent.tool.invoked", 1, tool="read_file", tool_call_id="call_r1", summary_normal="R.")
    c.send("agent.state.changed", 2, from_state="calling_tool", to_state="calling_tool")
    c.ask("rpl_open1", 3)
    c.send("agent.tool.completed", 4, tool="read_file", tool_call_id="call_r1", status="success")
    assert c.open_tokens() == ["rpl_open1"]


def test_the_gated_tool_declined_elsewhere_withdraws_the_question() -> None:
    c = Clocked()
    c.send("agent.session.started", 0, summary_normal="Hi.")
    c.send("agent.tool.invoked", 1, tool="send_email", tool_call_id="call_d1", summary_normal="S.")
    c.ask("rpl_declined1", 2)
    c.send(
        "agent.tool.completed",
        3,
        tool="send_email",
        tool_call_id="call_d1",
        status="error",
        error_message="User declined to authorize this action.",
    )
    assert c.open_tokens() == []
    assert withdrawals_told(c) == 1
