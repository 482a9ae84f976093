"""The scripted producer, and a live session subscribed to it over real loopback sockets.

The producer is the project's own server (announcer.producer) with a core that sends
exactly the frames a test pushes, in the order given, and keeps every reply that reaches it
(``core.wire``: what the producer received). The ``scripted_live`` fixture (tests/conftest.py)
opens one over WebSocket or SSE::

    async with scripted_live(kind) as live:
        live.core.push(started(sid), question)
        prompt = await live.recorder.wait_prompt()
        ...
    assert live.core.wire == [...]

The block is entered once the subscription is up, and on leaving it the session stops and
then the producer closes. With ``record=True`` the session's speech goes to a ``jsonl``
record (``live.record``) at the fastest pace: what the user hears (``live.spoken()``,
``await live.hears(...)``); without it the session speaks through no backend and the
``Recorder`` (``live.recorder``, a UI that remembers what it was told) is what was said.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from announcer.cli.launch import make_driver
from announcer.engine.settings import UserSettings
from announcer.producer.core import ProducerCore, ProducerOptions, Subscription, new_id
from announcer.producer.scenario import load_scenario
from announcer.producer.server import ProducerServer
from announcer.runtime.session import LiveSession
from announcer.transports import TransportOptions
from tests.producer.live import Recorder, running, scenario_path, wait_for
from tests.support.producers import http_url, ws_url
from tests.support.speech_record import spoken_in

KINDS = ["ws", "sse"]
AGENT = {"agent_id": "scripted-agent", "agent_name": "Scripted Agent"}
# The fastest pace the settings allow, where pace is not the subject.
RECORD_PACE_WPM = 600


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
    """The scripted producer alone, listening on 127.0.0.1 (close it: ``server.close()``)."""
    core = ScriptedCore(ProducerOptions(speed=0.05, handshake=handshake))
    server = ProducerServer(core, "127.0.0.1", 0)
    await server.start()
    return server, core


def source(kind: str, server: ProducerServer) -> str:
    """The producer's address for ``kind``: ``ws`` or ``sse``."""
    if kind == "ws":
        return ws_url(server)
    return http_url(server)


async def connected(core: ScriptedCore, session: LiveSession) -> None:
    await wait_for(lambda: core.subscriptions and session.status.connection == "connected")


@dataclass
class ScriptedLive:
    """One scripted producer and the live session subscribed to it."""

    server: ProducerServer
    core: ScriptedCore
    session: LiveSession
    recorder: Recorder
    record: Path | None

    def heard(self, needle: str) -> bool:
        """``needle`` is in something the session said (its announcements)."""
        return any(needle in text for text in self.recorder.texts)

    def spoken(self) -> list[str]:
        """What the user heard: the text of every ``speak`` line of the record, in order."""
        assert self.record is not None, "opened without record=True"
        return spoken_in(self.record)

    async def hears(self, needle: str, timeout: float = 30) -> None:
        """Waits until the user heard ``needle`` (in part of an utterance of the record)."""
        try:
            await wait_for(lambda: any(needle in text for text in self.spoken()), timeout)
        except TimeoutError:
            raise AssertionError(f"never heard {needle!r}; heard {self.spoken()}") from None


# The ``scripted_live`` fixture: ``async with scripted_live(kind, **options) as live:``.
OpenScriptedLive = Callable[..., AbstractAsyncContextManager[ScriptedLive]]


def opener(tmp_path: Path) -> OpenScriptedLive:
    """What the ``scripted_live`` fixture gives a test: ``open(kind, **options)``."""

    @contextlib.asynccontextmanager
    async def open_live(
        kind: str,
        *,
        handshake: bool = True,
        record: bool = False,
        settings: UserSettings | None = None,
        **session_options: Any,
    ) -> AsyncIterator[ScriptedLive]:
        """The scripted producer and a live session over ``kind`` (``ws`` or ``sse``),
        subscribed; ``record``: speech to a jsonl record at the fastest pace;
        ``session_options``: LiveSession's own (``engine``, ``can_reply``, ...)."""
        server, core = await scripted(handshake=handshake)
        record_path = tmp_path / "speech.jsonl" if record else None
        if settings is None:
            settings = UserSettings(pace_wpm=RECORD_PACE_WPM) if record else UserSettings()
        if record_path is not None:
            session_options["driver"] = make_driver(f"jsonl:{record_path}", settings)
        session = LiveSession(
            [source(kind, server)],
            settings,
            TransportOptions(),
            handshake_timeout=2.0,
            **session_options,
        )
        recorder = Recorder()
        session.subscribe(recorder)
        try:
            async with running(session):
                await connected(core, session)
                yield ScriptedLive(server, core, session, recorder, record_path)
        finally:
            await server.close()

    return open_live
