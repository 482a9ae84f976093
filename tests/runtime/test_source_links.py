"""Each source is one ``SourceLink`` in one ``LinkState`` (issue 24 item 2), against real
producers on loopback: open while it delivers, closed by the producer when it says so,
given up after a final refusal, finished when a recording ends or we close it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from announcer.engine.settings import UserSettings
from announcer.engine.subscription import LinkState
from announcer.producer.core import ProducerCore, ProducerOptions
from announcer.producer.scenario import load_scenario
from announcer.producer.server import ProducerServer
from announcer.runtime.session import LiveSession
from announcer.transports import TransportOptions
from tests.producer.live import Recorder, running, scenario_path, start_producer, wait_for
from tests.shared_data import SHARED as SHARED_ROOT
from tests.support.producers import ws_url

CAPTURE = SHARED_ROOT / "aaep/fixtures/captured-minimal-producer-run.jsonl"


def _session(source: str, **kw: Any) -> tuple[LiveSession, Recorder]:
    session = LiveSession([source], UserSettings(), TransportOptions(), **kw)
    recorder = Recorder()
    session.subscribe(recorder)
    return session, recorder


class _QuietCore(ProducerCore):
    """A producer that sends only what the test pushes."""

    def _start_scenario(self) -> None:
        return None

    def push(self, message: dict[str, Any]) -> None:
        for sub in list(self.subscriptions.values()):
            sub._append(message)


async def test_a_link_is_open_while_it_delivers_and_finished_once_we_close_it() -> None:
    server = await start_producer("confirm")
    session, recorder = _session(ws_url(server))
    [link] = session.states
    assert link.link_state is LinkState.CONNECTING
    try:
        async with running(session):
            await recorder.wait_prompt()
            assert link.link_state is LinkState.OPEN and link.connected
            assert not link.finished and not link.failed
    finally:
        await server.close()
    assert link.link_state is LinkState.FINISHED  # we said goodbye (§5.8)
    assert not link.failed


async def test_a_final_refusal_leaves_the_link_given_up() -> None:
    server = await start_producer("confirm", auth_token="needed")
    session, recorder = _session(ws_url(server))
    try:
        status = await asyncio.wait_for(session.run(), 60)
    finally:
        await server.close()
    assert status == 1
    [link] = session.states
    assert link.link_state is LinkState.GIVEN_UP
    assert link.failed and link.finished and not link.connected
    assert recorder.count("it needs a token") == 1


async def test_a_recording_that_ends_is_finished_not_failed(tmp_path: Path) -> None:
    recording = tmp_path / "run.jsonl"
    recording.write_text(CAPTURE.read_text(encoding="utf-8"), encoding="utf-8")
    session, _recorder = _session(str(recording), exit_when_done=True)
    status = await asyncio.wait_for(session.run(), 60)
    assert status == 0
    [link] = session.states
    assert link.link_state is LinkState.FINISHED
    assert link.finished and not link.failed


async def test_the_producers_close_is_its_own_state_until_a_fresh_handshake() -> None:
    core = _QuietCore(load_scenario(scenario_path("confirm")), ProducerOptions(speed=0.05))
    server = ProducerServer(core, "127.0.0.1", 0)
    await server.start()
    session, _recorder = _session(ws_url(server), handshake_timeout=2.0)
    [link] = session.states
    try:
        async with running(session):
            await wait_for(lambda: core.subscriptions and link.connected)
            [sub] = list(core.subscriptions.values())
            core.push(
                {
                    "type": "subscription.close",
                    "subscription_id": sub.subscription_id,
                    "reason_code": "producer_shutdown",
                    "reason_message": "Going away.",
                }
            )
            await wait_for(lambda: link.link_state is LinkState.CLOSED_BY_PRODUCER)
            assert link.closed_by_producer and not link.connected
            assert session.status.connection == "closed by the producer"
            core.close(sub)
            # §8.7: back with a fresh subscription.request, and open again
            await wait_for(lambda: core.handshakes_seen >= 2 and link.connected)
            assert link.link_state is LinkState.OPEN
    finally:
        await server.close()
