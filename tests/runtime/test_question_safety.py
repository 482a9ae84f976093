"""Issue 12: every question reaches the person it was meant for, and only that question.

End to end over real loopback sockets (WebSocket and SSE): our own scripted producer
(the project's producer server with a core that sends exactly the frames a test
gives it, in the order given, and records every reply that reaches it) against the
live session. Each test names the spec rule it checks.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from announcer.engine.pipeline import Engine
from announcer.engine.prompts import UserAnswer
from announcer.engine.settings import UserSettings
from announcer.producer.core import ProducerCore, ProducerOptions, Subscription, new_id
from announcer.producer.scenario import load_scenario
from announcer.producer.server import ProducerServer
from announcer.runtime.session import LiveSession
from announcer.transports import TransportOptions
from tests.producer.live import Recorder, running, scenario_path, validate, wait_for
from tests.support.producers import http_url, ws_url

KINDS = ["ws", "sse"]
AGENT = {"agent_id": "scripted-agent", "agent_name": "Scripted Agent"}


class ScriptedCore(ProducerCore):
    """A producer that says only what the test pushes and keeps every reply it receives."""

    def __init__(self, options: ProducerOptions) -> None:
        super().__init__(load_scenario(scenario_path("confirm")), options)
        self.wire: list[dict[str, Any]] = []

    def _start_scenario(self) -> None:
        return None

    def _reply(self, sub: Subscription | None, message: dict[str, Any]) -> bool:
        self.wire.append(dict(message))
        return True

    def push(self, *messages: dict[str, Any]) -> None:
        for sub in list(self.subscriptions.values()):
            for message in messages:
                sub._append(message)


def stamp(seconds_ago: float = 0.0) -> str:
    at = datetime.now(UTC) - timedelta(seconds=seconds_ago)
    return at.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def event(
    short_type: str, session: str, sequence: int | None = None, *, ago: float = 0.0, **fields: Any
) -> dict[str, Any]:
    message: dict[str, Any] = {
        "@context": "https://aaep-protocol.org/context/v1",
        "type": f"aaep:{short_type}",
        "event_id": new_id("evt"),
        "session_id": session,
        "timestamp": stamp(ago),
        "producer": AGENT,
        "urgency": "normal",
    }
    if sequence is not None:
        message["sequence_number"] = sequence
    message.update(fields)
    return message


def confirmation(
    session: str, sequence: int | None = None, *, action: str = "Send 5 dollars to Alice", **kw: Any
) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "urgency": "critical",
        "action": action,
        "consequence": "It happens at once.",
        "reply_token": new_id("rpl"),
        "timeout_seconds": 300,
        "default_decision": "reject",
        "risk_level": "low",
    }
    fields.update(kw)
    return event("agent.awaiting.confirmation", session, sequence, **fields)


def started(session: str, sequence: int | None = None) -> dict[str, Any]:
    return event("agent.session.started", session, sequence, summary_normal="Started.")


def state(session: str, sequence: int | None, from_state: str, to_state: str) -> dict[str, Any]:
    return event("agent.state.changed", session, sequence, from_state=from_state, to_state=to_state)


async def scripted(*, handshake: bool = True) -> tuple[ProducerServer, ScriptedCore]:
    core = ScriptedCore(ProducerOptions(speed=0.05, handshake=handshake))
    server = ProducerServer(core, "127.0.0.1", 0)
    await server.start()
    return server, core


def source(kind: str, server: ProducerServer) -> str:
    if kind == "ws":
        return ws_url(server)
    return http_url(server)


def live(kind: str, server: ProducerServer, **kw: Any) -> tuple[LiveSession, Recorder]:
    settings = kw.pop("settings", None) or UserSettings()
    session = LiveSession(
        [source(kind, server)], settings, TransportOptions(), handshake_timeout=2.0, **kw
    )
    recorder = Recorder()
    session.subscribe(recorder)
    return session, recorder


async def connected(core: ScriptedCore, session: LiveSession) -> None:
    await wait_for(lambda: core.subscriptions and session.status.connection == "connected")


def heard(recorder: Recorder, needle: str) -> bool:
    return any(needle in text for text in recorder.texts)


# -- 3: a burst is answered in the order it was heard ---------------------------------------


@pytest.mark.parametrize("kind", KINDS)
async def test_a_burst_is_answered_in_the_order_heard_and_the_overflow_is_said(kind: str) -> None:
    server, core = await scripted()
    session, recorder = live(kind, server, engine=Engine(UserSettings(), open_prompts_limit=10))
    burst = [confirmation(f"sess_b{i}", action=f"Question {i:02d}") for i in range(15)]
    try:
        async with running(session):
            await connected(core, session)
            core.push(*burst)
            await recorder.wait_until(lambda: heard(recorder, "5 newer ones were set aside"))
            for index in range(3):
                presented = session.presented_prompt()
                assert presented is not None
                assert presented.reply_token == burst[index]["reply_token"]
                outcome = await session.answer_async(
                    UserAnswer(
                        presented.reply_token, decision="reject", event_id=presented.event_id
                    )
                )
                assert outcome.sent, outcome.message
            await wait_for(lambda: len(core.wire) == 3)
            assert heard(recorder, "Questions waiting after this one: 9")
            # a set-aside question cannot be answered
            late = await session.answer_async(
                UserAnswer(burst[14]["reply_token"], decision="reject")
            )
            assert not late.sent and "set aside" in late.message
    finally:
        await server.close()
    assert [r["reply_token"] for r in core.wire] == [m["reply_token"] for m in burst[:3]]
    # Only the presented question was read out in full; the others were counted.
    assert sum("Question 0" in t or "Question 1" in t for t in recorder.texts) <= 4


# -- 4: §6.8 voiding, exactly ------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
async def test_parallel_tool_work_does_not_void_the_other_question(kind: str) -> None:
    """The MCP bridge's order: calling_tool, two questions; rejecting one keeps the other."""
    server, core = await scripted()
    session, recorder = live(kind, server)
    sid = "sess_mcp"
    first = confirmation(sid, 3, action="Call delete_file")
    second = confirmation(sid, 5, action="Call send_payment")
    try:
        async with running(session):
            await connected(core, session)
            core.push(
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
            await recorder.wait_until(lambda: len(recorder.prompts) == 2)
            outcome = await session.answer_async(
                UserAnswer(first["reply_token"], decision="reject", event_id=first["event_id"])
            )
            assert outcome.sent, outcome.message
            core.push(
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
            await recorder.wait_until(lambda: session.status.pending_prompts == 1)
            await asyncio.sleep(0.3)
            assert [p.reply_token for p in session.pending_prompts()] == [second["reply_token"]]
            outcome = await session.answer_async(
                UserAnswer(second["reply_token"], decision="accept", event_id=second["event_id"])
            )
            assert outcome.sent, outcome.message
            await wait_for(lambda: len(core.wire) == 2)
    finally:
        await server.close()
    assert [(r["reply_token"], r["decision"]) for r in core.wire] == [
        (first["reply_token"], "reject"),
        (second["reply_token"], "accept"),
    ]


@pytest.mark.parametrize("kind", KINDS)
async def test_leaving_awaiting_input_voids_the_question(kind: str) -> None:
    """§6.8 trigger 2: a state change from awaiting_input back to thinking cancels it."""
    server, core = await scripted()
    session, recorder = live(kind, server)
    sid = "sess_leave"
    question = confirmation(sid, 2)
    try:
        async with running(session):
            await connected(core, session)
            core.push(
                started(sid, 0),
                state(sid, 1, "thinking", "awaiting_input"),
                question,
                state(sid, 3, "awaiting_input", "thinking"),
            )
            await recorder.wait_until(lambda: recorder.voided)
            outcome = await session.answer_async(
                UserAnswer(question["reply_token"], decision="accept")
            )
            assert not outcome.sent and "cancelled" in outcome.message
            assert heard(recorder, "No answer needed any more")
    finally:
        await server.close()
    assert core.wire == []


@pytest.mark.parametrize("kind", KINDS)
async def test_a_cancelled_session_voids_its_question(kind: str) -> None:
    """§6.8 trigger 1: agent.session.cancelled cancels every pending confirmation."""
    server, core = await scripted()
    session, recorder = live(kind, server)
    sid = "sess_cancel"
    question = confirmation(sid, 1)
    try:
        async with running(session):
            await connected(core, session)
            core.push(
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
            await recorder.wait_until(lambda: recorder.voided)
            outcome = await session.answer_async(
                UserAnswer(question["reply_token"], decision="accept")
            )
            assert not outcome.sent
    finally:
        await server.close()
    assert core.wire == []


# -- 5: a question from a session that already ended -------------------------------------


@pytest.mark.parametrize("kind", KINDS)
async def test_a_question_after_its_session_ended_is_void_on_arrival(kind: str) -> None:
    server, core = await scripted()
    session, recorder = live(kind, server)
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
    try:
        async with running(session):
            await connected(core, session)
            # Out of order: the critical terminal event (N+1) before the question (N).
            core.push(started(sid, 0), errored, question)
            await recorder.wait_until(lambda: heard(recorder, "had already ended"))
            outcome = await session.answer_async(
                UserAnswer(question["reply_token"], decision="accept")
            )
            assert not outcome.sent and "already ended" in outcome.message
    finally:
        await server.close()
    assert recorder.prompts == []
    assert core.wire == []


# -- 6: the producer's subscription.close ----------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
async def test_the_producers_subscription_close_is_honoured(kind: str) -> None:
    server, core = await scripted()
    session, recorder = live(kind, server)
    sid = "sess_close"
    question = confirmation(sid, 1, default_decision="accept", action="Archive the report")
    statuses: list[str] = []
    try:
        async with running(session):
            await connected(core, session)
            [sub] = list(core.subscriptions.values())
            core.push(started(sid, 0), question)
            await recorder.wait_prompt()
            original_status_changed = recorder.status_changed

            def status_changed(status: Any) -> None:
                statuses.append(status.connection)
                original_status_changed(status)

            recorder.status_changed = status_changed  # type: ignore[method-assign]
            core.push(
                {
                    "type": "subscription.close",
                    "subscription_id": sub.subscription_id,
                    "reason_code": "producer_shutdown",
                    "reason_message": "Going away.",
                }
            )
            await recorder.wait_until(lambda: recorder.voided)
            [(token, reason)] = recorder.voided
            assert token == question["reply_token"]
            assert "closed the subscription" in reason
            assert heard(recorder, "closed the subscription, so it goes ahead with: Archive")
            outcome = await session.answer_async(
                UserAnswer(question["reply_token"], decision="reject")
            )
            assert not outcome.sent and "Nothing was sent" in outcome.message
            core.close(sub)
            # §8.7: back with a fresh subscription.request, never the closed subscription.
            await wait_for(lambda: core.handshakes_seen >= 2)
            await wait_for(lambda: session.status.connection == "connected")
    finally:
        await server.close()
    assert "closed by the producer" in statuses
    assert core.wire == []


@pytest.mark.parametrize("kind", KINDS)
async def test_a_subscription_close_naming_another_subscription_closes_nothing(kind: str) -> None:
    """Issue 29, item 15 (§5.8.1): a close that names someone else's subscription was
    honoured: our question was voided and the connection dropped. Now ours stays open,
    the question stays answerable and its reply reaches the producer; the stray close is
    logged where :diagnostics shows it."""
    server, core = await scripted()
    session, recorder = live(kind, server)
    sid = "sess_not_ours"
    question = confirmation(sid, 1, action="Archive the report")
    try:
        async with running(session):
            await connected(core, session)
            [sub] = list(core.subscriptions.values())
            core.push(started(sid, 0), question)
            await recorder.wait_prompt()
            core.push(
                {
                    "type": "subscription.close",
                    "subscription_id": "sub_someoneelse1",
                    "reason_code": "producer_shutdown",
                }
            )
            await wait_for(
                lambda: any(
                    "subscription.close_not_ours" in r.reasons
                    for r in session.engine.diagnostics.recent()
                )
            )
            assert recorder.voided == []
            assert session.status.connection == "connected"
            assert not heard(recorder, "closed the subscription")
            outcome = await session.answer_async(
                UserAnswer(question["reply_token"], decision="reject")
            )
            assert outcome.sent, outcome.message
            await wait_for(lambda: len(core.wire) == 1)
            assert core.wire[0]["reply_token"] == question["reply_token"]
            assert core.wire[0]["subscription_id"] == sub.subscription_id
            assert core.handshakes_seen == 1  # never reconnected: nothing was closed
            assert sub.subscription_id in core.subscriptions
    finally:
        await server.close()


# -- 7: a malformed question never vanishes ----------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
async def test_malformed_confirmations_open_reject_only_and_are_never_rate_limited(
    kind: str,
) -> None:
    server, core = await scripted()
    session, recorder = live(kind, server)
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
    try:
        async with running(session):
            await connected(core, session)
            core.push(started(sid), bad_default, no_urgency, clarification)
            await recorder.wait_until(lambda: len(recorder.prompts) == 2)
            await recorder.wait_until(lambda: heard(recorder, "Unreadable question from"))
            first, second = recorder.prompts
            assert first.malformed and second.malformed
            assert heard(recorder, "only reject is offered")
            refused = await session.answer_async(
                UserAnswer(first.reply_token, decision="accept", event_id=first.event_id)
            )
            assert not refused.sent and "only reject" in refused.message
            for prompt in (first, second):
                outcome = await session.answer_async(
                    UserAnswer(prompt.reply_token, decision="reject", event_id=prompt.event_id)
                )
                assert outcome.sent, outcome.message
            await wait_for(lambda: len(core.wire) == 2)
    finally:
        await server.close()
    assert {r["decision"] for r in core.wire} == {"reject"}
    for reply in core.wire:
        validate(reply)
    urgent = [a for a in recorder.announcements if "Unreadable question from" in a.text]
    assert any("Which account?" in a.text for a in urgent)  # its words kept
    assert urgent and all(a.urgency == "critical" for a in urgent)


# -- 8: replies are correct on the wire --------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
async def test_a_reply_carries_the_decision_time_and_a_valid_subscription_id(kind: str) -> None:
    """§6.3.1: without a handshake the reply still has a schema-valid subscription_id."""
    server, core = await scripted(handshake=False)
    session, recorder = live(kind, server)
    sid = "sess_late"
    # Delivered an hour late (after fresh events), with time left to answer.
    question = confirmation(sid, ago=3600.0, timeout_seconds=7200)
    try:
        async with running(session):
            await wait_for(lambda: core.subscriptions and session.status.connection == "connected")
            core.push(started(sid), question)
            prompt = await recorder.wait_prompt()
            assert 3500 < prompt.late_by < 3700
            before = datetime.now(UTC)
            outcome = await session.answer_async(UserAnswer(prompt.reply_token, decision="reject"))
            assert outcome.sent, outcome.message
            await wait_for(lambda: core.wire)
    finally:
        await server.close()
    [reply] = core.wire
    validate(reply)
    decided = datetime.fromisoformat(reply["timestamp"].replace("Z", "+00:00"))
    assert abs((decided - before).total_seconds()) < 30
    assert reply["subscription_id"].startswith("sub_")


async def test_ui_none_without_auto_reject_declares_it_cannot_reply() -> None:
    """§5.3.1.4: producers then apply their defaults at once instead of waiting."""
    server, core = await scripted()
    session, _recorder = live("ws", server, can_reply=False)
    try:
        async with running(session):
            await connected(core, session)
            [sub] = list(core.subscriptions.values())
            assert sub.capabilities["supports_confirmation_reply"] is False
            assert sub.capabilities["supports_clarification_reply"] is False
    finally:
        await server.close()


# -- 9: the countdown is honest ---------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
async def test_a_question_past_its_deadline_is_announced_expired(kind: str) -> None:
    server, core = await scripted()
    session, recorder = live(kind, server)
    sid = "sess_expired"
    question = confirmation(sid, ago=600.0, timeout_seconds=60, action="Pay the invoice")
    try:
        async with running(session):
            await connected(core, session)
            core.push(started(sid), question)
            await recorder.wait_until(lambda: heard(recorder, "after its time ran out"))
            outcome = await session.answer_async(
                UserAnswer(question["reply_token"], decision="accept")
            )
            assert not outcome.sent and "Too late" in outcome.message
    finally:
        await server.close()
    assert recorder.prompts == []
    assert core.wire == []


@pytest.mark.parametrize("kind", KINDS)
async def test_the_countdown_counts_from_the_events_own_clock(kind: str) -> None:
    server, core = await scripted()
    session, recorder = live(kind, server)
    sid = "sess_clock"
    question = confirmation(sid, ago=50.0, timeout_seconds=120, action="Rename the folder")
    try:
        async with running(session):
            await connected(core, session)
            core.push(started(sid), question)
            await recorder.wait_prompt()
            await recorder.wait_until(lambda: heard(recorder, "Rename the folder"))
    finally:
        await server.close()
    spoken = " ".join(recorder.texts)
    assert "within 2 minutes" not in spoken
    assert "within 1 minute and 1" in spoken or "within 1 minute and 9" in spoken
