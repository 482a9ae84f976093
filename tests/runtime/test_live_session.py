"""The live session end to end: demo producer -> transport -> runtime -> UI, and replies back."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path
from typing import Any

import pytest

from announcer.engine.prompts import UserAnswer
from announcer.engine.reconnect import ReconnectPolicy
from announcer.engine.settings import UserSettings
from announcer.protocol import AwaitingClarification, AwaitingConfirmation
from announcer.runtime.backpressure import SOURCE_QUEUE_HARD_LIMIT
from announcer.runtime.session import LiveSession
from announcer.transports import TransportOptions
from tests.producer.live import (
    Recorder,
    free_port,
    running,
    start_producer,
    start_producer_process,
    stop_process,
    validate,
    wait_for,
)
from tests.shared_data import SHARED as SHARED_ROOT
from tests.support.producers import http_url, ws_url

CAPTURE = SHARED_ROOT / "aaep/fixtures/captured-minimal-producer-run.jsonl"


def _source(kind: str, server: Any, sock: str | None = None) -> str:
    return {
        "ws": ws_url(server),
        "sse": http_url(server),
        "unix": f"unix:{sock}",
    }[kind]


def _session(sources: list[str], settings: UserSettings | None = None, **kw: Any) -> LiveSession:
    settings = settings or UserSettings()
    return LiveSession(sources, settings, TransportOptions(), **kw)


@pytest.mark.parametrize(("kind", "decision"), [("ws", "accept"), ("sse", "reject")])
async def test_a_confirmation_end_to_end_with_the_token_checked_at_the_producer(
    kind: str, decision: str
) -> None:
    server = await start_producer("confirm")
    recorder = Recorder()
    session = _session([_source(kind, server)])
    session.subscribe(recorder)
    try:
        async with running(session):
            prompt = await recorder.wait_prompt()
            assert prompt.kind == "confirmation"
            outcome = await session.answer_async(UserAnswer(prompt.reply_token, decision=decision))
            assert outcome.sent, outcome.message
            again = await session.answer_async(UserAnswer(prompt.reply_token, decision="accept"))
            assert not again.sent and "already answered" in again.message  # §6.3.5, locally
            expected = "Email sent." if decision == "accept" else "The email was not sent."
            await recorder.wait_text(expected)
            await recorder.wait_text("All done.")
    finally:
        await server.close()
    [reply] = server.core.replies
    assert isinstance(prompt.event, AwaitingConfirmation)  # the validated protocol model
    assert reply.reply_token == prompt.event.reply_token  # echoed byte for byte (§6.2.3)
    assert reply.decision == decision
    assert reply.decided_by == "user:local"
    assert reply.subscription_id is not None and reply.subscription_id.startswith("sub_")
    validate(reply.message)
    assert server.core.closed_by_subscriber == 1  # subscription.close on shutdown (§5.8)


@pytest.mark.parametrize("kind", ["ws", "unix"])
async def test_every_clarification_kind(kind: str, tmp_path: Path) -> None:
    sock = str(tmp_path / "p.sock")
    server = await start_producer("clarify", unix_path=sock)
    recorder = Recorder()
    session = _session([_source(kind, server, sock)])
    session.subscribe(recorder)
    answers: list[Any] = ["Alice", True, "double", 3]
    try:
        async with running(session):
            for index, response in enumerate(answers):
                prompt = await recorder.wait_prompt(index)
                event = prompt.event
                assert isinstance(event, AwaitingClarification)
                if event.accepted_response_kinds == ["numeric"]:
                    refused = await session.answer_async(
                        UserAnswer(prompt.reply_token, response="x")
                    )
                    assert not refused.sent  # checked before anything is sent
                outcome = await session.answer_async(
                    UserAnswer(prompt.reply_token, response=response)
                )
                assert outcome.sent, outcome.message
            await recorder.wait_text("All done.")
    finally:
        await server.close()
    assert [r.response for r in server.core.replies] == answers
    for reply in server.core.replies:
        validate(reply.message)
    for text in ("Name: Alice.", "Breakfast: yes.", "Room: double.", "Nights: 3."):
        assert recorder.count(text) == 1


async def test_auto_reject_only_ever_rejects() -> None:
    server = await start_producer("confirm")
    recorder = Recorder()
    settings = UserSettings(reply_policy="auto_reject")
    session = _session([_source("ws", server)], settings)
    session.subscribe(recorder)
    try:
        async with running(session):
            await recorder.wait_text("The email was not sent.")
    finally:
        await server.close()
    [reply] = server.core.replies
    assert (reply.decision, reply.decided_by) == ("reject", "auto:configured_policy")
    validate(reply.message)


@pytest.mark.parametrize("kind", ["ws", "sse"])
async def test_renegotiation_when_the_user_changes_a_setting(kind: str) -> None:
    server = await start_producer("confirm")
    recorder = Recorder()
    session = _session([_source(kind, server)])
    session.subscribe(recorder)
    try:
        async with running(session):
            prompt = await recorder.wait_prompt()
            session.update_settings(UserSettings(verbosity="terse", cognitive_load="low"))
            await wait_for(lambda: server.core.renegotiations == 1)
            await recorder.wait_text("Settings changed")
            [sub] = server.core.subscriptions.values()
            assert sub.capabilities["preferred_verbosity"] == "terse"
            assert sub.capabilities["cognitive_load"] == "low"
            await session.answer_async(UserAnswer(prompt.reply_token, decision="accept"))
            await recorder.wait_text("Done.")  # the terse summary, after renegotiation
            assert recorder.count("All done.") == 0
    finally:
        await server.close()


async def test_a_rejected_subscription_is_explained_and_retried_after_the_delay() -> None:
    server = await start_producer("confirm", reject_first=1, retry_after_seconds=0)
    recorder = Recorder()
    session = _session([_source("ws", server)])
    session.subscribe(recorder)
    try:
        async with running(session):
            await recorder.wait_text("Connected to Test producer")
            await recorder.wait_prompt()
    finally:
        await server.close()
    assert recorder.count("refused the subscription: it has too many listeners right now") == 1
    assert server.core.handshakes_seen == 2


async def test_a_final_rejection_gives_up_with_the_reason() -> None:
    server = await start_producer("confirm", auth_token="needed")
    recorder = Recorder()
    session = _session([_source("sse", server)])
    session.subscribe(recorder)
    try:
        status = await asyncio.wait_for(session.run(), 60)
    finally:
        await server.close()
    assert status == 1
    assert recorder.count("it needs a token") == 1


async def test_a_producer_without_the_handshake_still_works() -> None:
    """Level 1/2 (§9.3.3): no answer to subscription.request; defaults apply."""
    server = await start_producer("confirm", handshake=False)
    recorder = Recorder()
    session = _session([_source("ws", server)], handshake_timeout=0.5)
    session.subscribe(recorder)
    try:
        async with running(session):
            prompt = await recorder.wait_prompt()
            outcome = await session.answer_async(UserAnswer(prompt.reply_token, decision="accept"))
            assert outcome.sent
            await recorder.wait_text("Email sent.")
    finally:
        await server.close()
    assert server.core.replies[0].reply_token == prompt.reply_token


async def test_a_withdrawn_prompt_is_void_and_cannot_be_answered() -> None:
    server = await start_producer("cancel")
    recorder = Recorder()
    session = _session([_source("ws", server)])
    session.subscribe(recorder)
    try:
        async with running(session):
            prompt = await recorder.wait_prompt()
            await recorder.wait_until(lambda: recorder.voided)
            outcome = await session.answer_async(UserAnswer(prompt.reply_token, decision="accept"))
            assert not outcome.sent
            assert "cancelled this question" in outcome.message
    finally:
        await server.close()
    assert server.core.replies == []


def _events(path: Path) -> list[str]:
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


async def _hear(path: Path) -> dict[str | None, list[str]]:
    """What was said, per session: order is only promised within a session (§8.2.3)."""
    recorder = Recorder()
    session = _session([str(path)], exit_when_done=True)
    session.subscribe(recorder)
    await asyncio.wait_for(session.run(), 60)
    heard: dict[str | None, list[str]] = {}
    for announcement in recorder.announcements:
        if announcement.kind.startswith("agent."):
            heard.setdefault(announcement.session_id, []).append(announcement.text)
    return heard


async def test_a_duplicated_and_reordered_stream_is_heard_once_in_order(tmp_path: Path) -> None:
    lines = _events(CAPTURE)
    clean = tmp_path / "clean.jsonl"
    clean.write_text("\n".join(lines) + "\n", encoding="utf-8")
    messy = list(lines)
    rng = random.Random(7)
    for index in range(1, len(messy) - 2, 4):  # swap neighbours: out of order within a session
        messy[index], messy[index + 1] = messy[index + 1], messy[index]
    for line in rng.sample(lines, 5):  # and deliver some twice (§8.2.4)
        messy.insert(rng.randrange(len(messy)), line)
    shuffled = tmp_path / "messy.jsonl"
    shuffled.write_text("\n".join(messy) + "\n", encoding="utf-8")
    clean_heard = await _hear(clean)
    assert len(clean_heard) == 2 and all(len(texts) > 5 for texts in clean_heard.values())
    assert await _hear(shuffled) == clean_heard


async def test_a_full_queue_pauses_the_reader_and_drops_nothing() -> None:
    session = _session([str(CAPTURE)])
    state = session.states[0]
    normal = json.dumps({"type": "aaep:agent.state.changed", "urgency": "normal"})
    critical = json.dumps({"type": "aaep:agent.session.errored", "urgency": "critical"})
    session._enqueue(state, normal)
    session._enqueue(state, critical)
    for _ in range(SOURCE_QUEUE_HARD_LIMIT + 10):
        session._enqueue(state, normal)
    queued = list(session._inbound)
    assert len(queued) == SOURCE_QUEUE_HARD_LIMIT + 12 == state.queued  # in arrival order
    assert [frame for _s, frame, _news in queued[:2]] == [normal, critical]
    assert session.dropped == {}
    waiting = asyncio.ensure_future(session._wait_for_room(state))
    await asyncio.sleep(0.05)
    assert not waiting.done()  # the reader waits for the processor
    session.stop()
    await asyncio.wait_for(waiting, 1)  # and never outlives a stop


async def test_sse_resumes_with_last_event_id_after_a_drop() -> None:
    server = await start_producer("ticker", speed=1.0)
    recorder = Recorder()
    session = _session([_source("sse", server)])
    session.subscribe(recorder)
    try:
        async with running(session):
            await recorder.wait_text("Tick 2.")
            for task in list(server._connections):  # drop every open HTTP stream
                task.cancel()
            await recorder.wait_text("Reconnected")
            prompt = await recorder.wait_prompt()
            await session.answer_async(UserAnswer(prompt.reply_token, decision="reject"))
            await recorder.wait_text("All done.")
    finally:
        await server.close()
    for tick in range(1, 7):
        assert recorder.count(f"Tick {tick}.") == 1, recorder.texts
    assert recorder.count("Connection to Test producer lost") == 1
    assert recorder.count("Reconnected") == 1
    assert server.core.handshakes_seen == 1  # resumed, not a new subscription (B.1.5)


async def test_a_silent_sse_producer_is_not_a_lost_connection() -> None:
    """Issue 22 item 11: AAEP requires no heartbeat; a producer that waits on a question
    in silence is still connected, and its question still answerable."""
    server = await start_producer("ticker", speed=1.0, heartbeat=600)
    recorder = Recorder()
    settings = UserSettings()
    options = TransportOptions(stall_seconds=1.0)
    session = LiveSession([_source("sse", server)], settings, options)
    session.subscribe(recorder)
    try:
        async with running(session):
            prompt = await recorder.wait_prompt()  # the producer now waits: no events at all
            await asyncio.sleep(3.5)  # well past the old 1 s stall time, in silence
            assert recorder.voided == []
            assert not any("lost" in text for text in recorder.texts)
            outcome = await session.answer_async(UserAnswer(prompt.reply_token, decision="reject"))
            assert outcome.sent, outcome.message
    finally:
        await server.close()


async def test_producer_killed_mid_session_and_restarted() -> None:
    port = free_port()
    # the ticker's pauses (3 s before its end) and the back-off are not this test's subject
    args = ("--scenario", "tests/producer/scenarios/ticker.json", "--speed", "0.3")
    proc, port = start_producer_process(*args, port=port)
    recorder = Recorder()
    session = _session([ws_url(port)])
    session.sources.new_policy = lambda clock: ReconnectPolicy(clock, first=0.05)
    session.subscribe(recorder)
    try:
        async with running(session):
            first = await recorder.wait_prompt()
            stop_process(proc, 9)  # killed, no goodbye
            await recorder.wait_text("lost")
            await recorder.wait_until(lambda: first.reply_token in [t for t, _ in recorder.voided])
            late = await session.answer_async(UserAnswer(first.reply_token, decision="accept"))
            assert not late.sent and "connection was lost" in late.message
            proc, port = start_producer_process(*args, port=port)
            await recorder.wait_text("Reconnected")
            second = await recorder.wait_prompt(1)
            assert second.reply_token != first.reply_token
            outcome = await session.answer_async(UserAnswer(second.reply_token, decision="reject"))
            assert outcome.sent
            await recorder.wait_text("All done.")
    finally:
        stop_process(proc)
    assert recorder.count("Connection to Test producer lost") == 1
    assert recorder.count("Reconnected") == 1


async def test_several_producers_at_once_replies_go_back_where_they_came_from() -> None:
    """Subscribers' Guide §9: one listener, two producers; each reply on its own connection."""
    first = await start_producer("confirm")
    second = await start_producer("confirm")
    recorder = Recorder()
    session = _session([_source("ws", first), _source("sse", second)])
    session.subscribe(recorder)
    try:
        async with running(session):
            await recorder.wait_until(lambda: len(recorder.prompts) == 2)
            for prompt in recorder.prompts:
                decision = "accept" if prompt.source_id.startswith("ws://") else "reject"
                outcome = await session.answer_async(
                    UserAnswer(prompt.reply_token, decision=decision)
                )
                assert outcome.sent, outcome.message
            await recorder.wait_until(lambda: recorder.count("All done.") == 2)
    finally:
        await first.close()
        await second.close()
    assert [r.decision for r in first.core.replies] == ["accept"]
    assert [r.decision for r in second.core.replies] == ["reject"]
    tokens = {p.reply_token for p in recorder.prompts}
    assert {first.core.replies[0].reply_token, second.core.replies[0].reply_token} == tokens


async def test_an_expired_question_is_void_and_refused() -> None:
    server = await start_producer("timeout")
    recorder = Recorder()
    session = _session([_source("ws", server)])
    session.subscribe(recorder)
    try:
        async with running(session):
            prompt = await recorder.wait_prompt()
            await recorder.wait_text("nothing was archived")
            await recorder.wait_until(lambda: recorder.voided)
            late = session.answer(UserAnswer(prompt.reply_token, decision="accept"))
            assert not late.sent
    finally:
        await server.close()
    assert server.core.replies == []


async def test_the_synchronous_answer_used_by_the_full_screen_ui() -> None:
    server = await start_producer("confirm")
    recorder = Recorder()
    session = _session([_source("sse", server)])
    session.subscribe(recorder)
    try:
        async with running(session):
            prompt = await recorder.wait_prompt()
            outcome = session.answer(UserAnswer(prompt.reply_token, decision="accept"))
            assert outcome.sent and outcome.message == "Sending: accept."
            assert not session.answer(UserAnswer(prompt.reply_token, decision="reject")).sent
            await recorder.wait_text("Email sent.")
    finally:
        await server.close()
    assert [r.decision for r in server.core.replies] == ["accept"]


class StuckVoice:
    """A speech backend that never finishes an utterance until stopped: the slowest TTS."""

    name = "stuck"

    def __init__(self) -> None:
        from announcer.speech.backend import BackendCapabilities

        self.capabilities = BackendCapabilities(can_interrupt=True)
        self.started: list[str] = []
        self._pending: list[Any] = []

    def start(self) -> None:
        return None

    def speak(self, announcement: Any, voice: Any, on_done: Any) -> None:
        self.started.append(announcement.text)
        self._pending.append(on_done)

    def stop(self) -> None:
        pending, self._pending = self._pending, []
        for done in pending:
            done()

    def is_speaking(self) -> bool:
        return bool(self._pending)

    def close(self) -> None:
        self.stop()


async def test_a_stuck_speech_backend_never_holds_back_a_confirmation() -> None:
    from announcer.speech.driver import SpeechDriver

    server = await start_producer("confirm")
    voice = StuckVoice()
    recorder = Recorder()
    # at the fastest pace the stuck utterance is overdue sooner; the rule (twice its
    # estimated time and a second) is the same at every pace
    fast = UserSettings(pace_wpm=600)
    session = _session([_source("ws", server)], fast, driver=SpeechDriver(voice))
    session.subscribe(recorder)
    try:
        async with running(session):
            prompt = await recorder.wait_prompt()  # opened although nothing finished speaking
            # The critical question is said once its session's stuck utterance is overdue
            # (twice its estimated time and a second): never held back for good (§5.5.4).
            await wait_for(lambda: any(t.startswith("Confirmation needed") for t in voice.started))
            outcome = await session.answer_async(UserAnswer(prompt.reply_token, decision="reject"))
            assert outcome.sent
            await wait_for(lambda: len(server.core.replies) == 1)
    finally:
        await server.close()


def test_reconnection_delays_start_under_a_second_and_are_capped() -> None:
    from announcer.engine.reconnect import Backoff

    backoff = Backoff(rng=random.Random(1))
    delays = [backoff.next_delay() for _ in range(20)]
    assert 0 < delays[0] <= 1.0
    assert max(delays) <= 30.0
    assert delays[10] > delays[0]
    backoff.reset()
    assert backoff.next_delay() <= 1.0


async def test_confirmation_over_a_unix_socket_and_over_stdio(tmp_path: Path) -> None:
    """The same question answered over B.4 and B.6; the producer proceeds only on a valid token."""
    import sys

    sock = str(tmp_path / "p.sock")
    server = await start_producer("confirm", unix_path=sock)
    command = (
        f"{sys.executable} -m announcer demo-producer --stdio --speed 0.05 "
        f"--scenario {Path(__file__).parents[1] / 'producer' / 'scenarios' / 'confirm.json'}"
    )
    recorder = Recorder()
    session = _session([f"unix:{sock}", f"stdio:{command}"])
    session.subscribe(recorder)
    try:
        async with running(session):
            await recorder.wait_until(lambda: len(recorder.prompts) == 2)
            for prompt in recorder.prompts:
                outcome = await session.answer_async(
                    UserAnswer(prompt.reply_token, decision="accept")
                )
                assert outcome.sent, outcome.message
            await recorder.wait_until(lambda: recorder.count("Email sent.") == 2)
    finally:
        await server.close()
    assert [r.reply_token for r in server.core.replies] == [
        p.reply_token for p in recorder.prompts if p.source_id.startswith("unix:")
    ]


async def test_a_frozen_websocket_producer_is_detected_by_ping() -> None:
    import os
    import signal

    proc, port = start_producer_process("--scenario", "tests/producer/scenarios/ticker.json")
    recorder = Recorder()
    settings = UserSettings()
    options = TransportOptions(stall_seconds=2.0)
    session = LiveSession([ws_url(port)], settings, options)
    session.subscribe(recorder)
    try:
        async with running(session):
            await recorder.wait_prompt()
            os.kill(proc.pid, signal.SIGSTOP)  # alive but silent: no frames, no pongs
            try:
                await recorder.wait_text("Connection to Test producer lost")
            finally:
                os.kill(proc.pid, signal.SIGCONT)
            await recorder.wait_text("Reconnected")
    finally:
        stop_process(proc)
