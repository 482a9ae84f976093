"""Issue 12: every question reaches the person it was meant for, and only that question.

End to end over real loopback sockets (WebSocket and SSE): our own scripted producer
(the project's producer server with a core that sends exactly the frames a test
gives it, in the order given, and records every reply that reaches it) against the
live session: the ``scripted_live`` fixture (tests/support/scripted.py). Each test names
the spec rule it checks.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import pytest

from announcer.engine.pipeline import Engine
from announcer.engine.prompts import UserAnswer
from announcer.engine.settings import UserSettings
from announcer.producer.core import new_id
from tests.producer.live import validate, wait_for
from tests.support.scripted import (
    KINDS,
    OpenScriptedLive,
    confirmation,
    event,
    started,
    state,
)

# -- 3: a burst is answered in the order it was heard ---------------------------------------


@pytest.mark.parametrize("kind", KINDS)
async def test_a_burst_is_answered_in_the_order_heard_and_the_overflow_is_said(
    kind: str, scripted_live: OpenScriptedLive
) -> None:
    burst = [confirmation(f"sess_b{i}", action=f"Question {i:02d}") for i in range(15)]
    async with scripted_live(kind, engine=Engine(UserSettings(), open_prompts_limit=10)) as live:
        live.core.push(*burst)
        await live.recorder.wait_until(lambda: live.heard("5 newer ones were set aside"))
        for index in range(3):
            presented = live.session.presented_prompt()
            assert presented is not None
            assert presented.reply_token == burst[index]["reply_token"]
            outcome = await live.session.answer_async(
                UserAnswer(presented.reply_token, decision="reject", event_id=presented.event_id)
            )
            assert outcome.sent, outcome.message
        await wait_for(lambda: len(live.core.wire) == 3)
        assert live.heard("Questions waiting after this one: 9")
        # a set-aside question cannot be answered
        late = await live.session.answer_async(
            UserAnswer(burst[14]["reply_token"], decision="reject")
        )
        assert not late.sent and "set aside" in late.message
    assert [r["reply_token"] for r in live.core.wire] == [m["reply_token"] for m in burst[:3]]
    # Only the presented question was read out in full; the others were counted.
    assert sum("Question 0" in t or "Question 1" in t for t in live.recorder.texts) <= 4


# -- 4: §6.8 voiding, exactly ------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
async def test_parallel_tool_work_does_not_void_the_other_question(
    kind: str, scripted_live: OpenScriptedLive
) -> None:
    """The MCP bridge's order: calling_tool, two questions; rejecting one keeps the other."""
    sid = "sess_mcp"
    first = confirmation(sid, 3, action="Call delete_file")
    second = confirmation(sid, 5, action="Call send_payment")
    async with scripted_live(kind) as live:
        live.core.push(
            started(sid, 0),
            state(sid, 1, "idle", "calling_tool"),
            event(
                "agent.tool.invoked",
                sid,
                2,
                tool="delete_file",
                tool_call_id="call_a",
                summary_normal="Deleting.",
            ),
            first,
            event(
                "agent.tool.invoked",
                sid,
                4,
                tool="send_payment",
                tool_call_id="call_b",
                summary_normal="Paying.",
            ),
            second,
        )
        await live.recorder.wait_until(lambda: len(live.recorder.prompts) == 2)
        outcome = await live.session.answer_async(
            UserAnswer(first["reply_token"], decision="reject", event_id=first["event_id"])
        )
        assert outcome.sent, outcome.message
        live.core.push(
            event(
                "agent.tool.completed",
                sid,
                6,
                tool="delete_file",
                tool_call_id="call_a",
                status="error",
                error_message="User declined.",
            ),
            state(sid, 7, "calling_tool", "thinking"),  # §6.1(3): not a cancellation
        )
        await live.recorder.wait_until(lambda: live.session.status.pending_prompts == 1)
        await asyncio.sleep(0.3)
        assert [p.reply_token for p in live.session.pending_prompts()] == [second["reply_token"]]
        outcome = await live.session.answer_async(
            UserAnswer(second["reply_token"], decision="accept", event_id=second["event_id"])
        )
        assert outcome.sent, outcome.message
        await wait_for(lambda: len(live.core.wire) == 2)
    assert [(r["reply_token"], r["decision"]) for r in live.core.wire] == [
        (first["reply_token"], "reject"),
        (second["reply_token"], "accept"),
    ]


@pytest.mark.parametrize("kind", KINDS)
async def test_leaving_awaiting_input_voids_the_question(
    kind: str, scripted_live: OpenScriptedLive
) -> None:
    """§6.8 trigger 2: a state change from awaiting_input back to thinking cancels it."""
    sid = "sess_leave"
    question = confirmation(sid, 2)
    async with scripted_live(kind) as live:
        live.core.push(
            started(sid, 0),
            state(sid, 1, "thinking", "awaiting_input"),
            question,
            state(sid, 3, "awaiting_input", "thinking"),
        )
        await live.recorder.wait_until(lambda: live.recorder.voided)
        outcome = await live.session.answer_async(
            UserAnswer(question["reply_token"], decision="accept")
        )
        assert not outcome.sent and "cancelled" in outcome.message
        assert live.heard("No answer needed any more")
    assert live.core.wire == []


@pytest.mark.parametrize("kind", KINDS)
async def test_a_cancelled_session_voids_its_question(
    kind: str, scripted_live: OpenScriptedLive
) -> None:
    """§6.8 trigger 1: agent.session.cancelled cancels every pending confirmation."""
    sid = "sess_cancel"
    question = confirmation(sid, 1)
    async with scripted_live(kind) as live:
        live.core.push(
            started(sid, 0),
            question,
            event(
                "agent.session.cancelled",
                sid,
                2,
                cancelled_by="producer",
                summary_normal="Stopped.",
            ),
        )
        await live.recorder.wait_until(lambda: live.recorder.voided)
        outcome = await live.session.answer_async(
            UserAnswer(question["reply_token"], decision="accept")
        )
        assert not outcome.sent
    assert live.core.wire == []


# -- 5: a question from a session that already ended -------------------------------------


@pytest.mark.parametrize("kind", KINDS)
async def test_a_question_after_its_session_ended_is_void_on_arrival(
    kind: str, scripted_live: OpenScriptedLive
) -> None:
    sid = "sess_ended"
    question = confirmation(sid, 1, action="Delete the production database")
    errored = event(
        "agent.session.errored",
        sid,
        2,
        urgency="critical",
        error_category="permanent",
        summary_normal="The agent crashed.",
    )
    async with scripted_live(kind) as live:
        # Out of order: the critical terminal event (N+1) before the question (N).
        live.core.push(started(sid, 0), errored, question)
        await live.recorder.wait_until(lambda: live.heard("had already ended"))
        outcome = await live.session.answer_async(
            UserAnswer(question["reply_token"], decision="accept")
        )
        assert not outcome.sent and "already ended" in outcome.message
    assert live.recorder.prompts == []
    assert live.core.wire == []


# -- 6: the producer's subscription.close ----------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
async def test_the_producers_subscription_close_is_honoured(
    kind: str, scripted_live: OpenScriptedLive
) -> None:
    sid = "sess_close"
    question = confirmation(sid, 1, default_decision="accept", action="Archive the report")
    statuses: list[str] = []
    async with scripted_live(kind) as live:
        [sub] = list(live.core.subscriptions.values())
        live.core.push(started(sid, 0), question)
        await live.recorder.wait_prompt()
        original_status_changed = live.recorder.status_changed

        def status_changed(status: Any) -> None:
            statuses.append(status.connection)
            original_status_changed(status)

        live.recorder.status_changed = status_changed  # type: ignore[method-assign]
        live.core.push(
            {
                "type": "subscription.close",
                "subscription_id": sub.subscription_id,
                "reason_code": "producer_shutdown",
                "reason_message": "Going away.",
            }
        )
        await live.recorder.wait_until(lambda: live.recorder.voided)
        [(token, reason)] = live.recorder.voided
        assert token == question["reply_token"]
        assert "closed the subscription" in reason
        assert live.heard("closed the subscription, so it goes ahead with: Archive")
        outcome = await live.session.answer_async(
            UserAnswer(question["reply_token"], decision="reject")
        )
        assert not outcome.sent and "Nothing was sent" in outcome.message
        live.core.close(sub)
        # §8.7: back with a fresh subscription.request, never the closed subscription.
        await wait_for(lambda: live.core.handshakes_seen >= 2)
        await wait_for(lambda: live.session.status.connection == "connected")
    assert "closed by the producer" in statuses
    assert live.core.wire == []


@pytest.mark.parametrize("kind", KINDS)
async def test_a_subscription_close_naming_another_subscription_closes_nothing(
    kind: str, scripted_live: OpenScriptedLive
) -> None:
    """Issue 29, item 15 (§5.8.1): a close that names someone else's subscription was
    honoured: our question was voided and the connection dropped. Now ours stays open,
    the question stays answerable and its reply reaches the producer; the stray close is
    logged where :diagnostics shows it."""
    sid = "sess_not_ours"
    question = confirmation(sid, 1, action="Archive the report")
    async with scripted_live(kind) as live:
        [sub] = list(live.core.subscriptions.values())
        live.core.push(started(sid, 0), question)
        await live.recorder.wait_prompt()
        live.core.push(
            {
                "type": "subscription.close",
                "subscription_id": "sub_someoneelse1",
                "reason_code": "producer_shutdown",
            }
        )
        await wait_for(
            lambda: any(
                "subscription.close_not_ours" in r.reasons
                for r in live.session.engine.diagnostics.recent()
            )
        )
        assert live.recorder.voided == []
        assert live.session.status.connection == "connected"
        assert not live.heard("closed the subscription")
        outcome = await live.session.answer_async(
            UserAnswer(question["reply_token"], decision="reject")
        )
        assert outcome.sent, outcome.message
        await wait_for(lambda: len(live.core.wire) == 1)
        assert live.core.wire[0]["reply_token"] == question["reply_token"]
        assert live.core.wire[0]["subscription_id"] == sub.subscription_id
        assert live.core.handshakes_seen == 1  # never reconnected: nothing was closed
        assert sub.subscription_id in live.core.subscriptions


# -- 7: a malformed question never vanishes ----------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
async def test_malformed_confirmations_open_reject_only_and_are_never_rate_limited(
    kind: str,
    scripted_live: OpenScriptedLive,
) -> None:
    sid = "sess_bad"
    # §6.4.1: irreversible, high risk, default accept: breaks a rule of the prose.
    bad_default = confirmation(
        sid,
        action="Wire 900 dollars",
        risk_level="high",
        irreversible=True,
        default_decision="accept",
    )
    no_urgency = confirmation(sid, action="Delete the backups")
    del no_urgency["urgency"]  # the schema allows it; §4.4.1 says critical
    clarification = event(
        "agent.awaiting.clarification",
        sid,
        urgency="normal",
        question="Which account?",
        reply_token=new_id("rpl"),
        timeout_seconds=300,
    )
    async with scripted_live(kind) as live:
        live.core.push(started(sid), bad_default, no_urgency, clarification)
        await live.recorder.wait_until(lambda: len(live.recorder.prompts) == 2)
        await live.recorder.wait_until(lambda: live.heard("Unreadable question from"))
        first, second = live.recorder.prompts
        assert first.malformed and second.malformed
        assert live.heard("only reject is offered")
        refused = await live.session.answer_async(
            UserAnswer(first.reply_token, decision="accept", event_id=first.event_id)
        )
        assert not refused.sent and "only reject" in refused.message
        for prompt in (first, second):
            outcome = await live.session.answer_async(
                UserAnswer(prompt.reply_token, decision="reject", event_id=prompt.event_id)
            )
            assert outcome.sent, outcome.message
        await wait_for(lambda: len(live.core.wire) == 2)
    assert {r["decision"] for r in live.core.wire} == {"reject"}
    for reply in live.core.wire:
        validate(reply)
    urgent = [a for a in live.recorder.announcements if "Unreadable question from" in a.text]
    assert any("Which account?" in a.text for a in urgent)  # its words kept
    assert urgent and all(a.urgency == "critical" for a in urgent)


# -- 8: replies are correct on the wire --------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
async def test_a_reply_carries_the_decision_time_and_a_valid_subscription_id(
    kind: str, scripted_live: OpenScriptedLive
) -> None:
    """§6.3.1: without a handshake the reply still has a schema-valid subscription_id."""
    sid = "sess_late"
    # Delivered an hour late (after fresh events), with time left to answer.
    question = confirmation(sid, ago=3600.0, timeout_seconds=7200)
    async with scripted_live(kind, handshake=False) as live:
        live.core.push(started(sid), question)
        prompt = await live.recorder.wait_prompt()
        assert 3500 < prompt.late_by < 3700
        before = datetime.now(UTC)
        outcome = await live.session.answer_async(UserAnswer(prompt.reply_token, decision="reject"))
        assert outcome.sent, outcome.message
        await wait_for(lambda: live.core.wire)
    [reply] = live.core.wire
    validate(reply)
    decided = datetime.fromisoformat(reply["timestamp"].replace("Z", "+00:00"))
    assert abs((decided - before).total_seconds()) < 30
    assert reply["subscription_id"].startswith("sub_")


async def test_ui_none_without_auto_reject_declares_it_cannot_reply(
    scripted_live: OpenScriptedLive,
) -> None:
    """§5.3.1.4: producers then apply their defaults at once instead of waiting."""
    async with scripted_live("ws", can_reply=False) as live:
        [sub] = list(live.core.subscriptions.values())
        assert sub.capabilities["supports_confirmation_reply"] is False
        assert sub.capabilities["supports_clarification_reply"] is False


# -- 9: the countdown is honest ---------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
async def test_a_question_past_its_deadline_is_announced_expired(
    kind: str, scripted_live: OpenScriptedLive
) -> None:
    sid = "sess_expired"
    question = confirmation(sid, ago=600.0, timeout_seconds=60, action="Pay the invoice")
    async with scripted_live(kind) as live:
        live.core.push(started(sid), question)
        await live.recorder.wait_until(lambda: live.heard("after its time ran out"))
        outcome = await live.session.answer_async(
            UserAnswer(question["reply_token"], decision="accept")
        )
        assert not outcome.sent and "Too late" in outcome.message
    assert live.recorder.prompts == []
    assert live.core.wire == []


@pytest.mark.parametrize("kind", KINDS)
async def test_the_countdown_counts_from_the_events_own_clock(
    kind: str, scripted_live: OpenScriptedLive
) -> None:
    sid = "sess_clock"
    question = confirmation(sid, ago=50.0, timeout_seconds=120, action="Rename the folder")
    async with scripted_live(kind) as live:
        live.core.push(started(sid), question)
        await live.recorder.wait_prompt()
        await live.recorder.wait_until(lambda: live.heard("Rename the folder"))
    spoken = " ".join(live.recorder.texts)
    assert "within 2 minutes" not in spoken
    assert "within 1 minute and 1" in spoken or "within 1 minute and 9" in spoken
