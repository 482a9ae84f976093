"""Hostile producers on loopback, and a listener whose speech is recorded as jsonl.

Each server is written here from the wire up (raw HTTP over asyncio streams, a
``websockets`` server, a Unix socket), so it can do what no polite producer does:
hang up after the handshake, answer 500, redirect in a loop, trickle bytes, send
invalid UTF-8 or escape sequences. Every server counts what it received, so a test
can assert what the producer saw as well as what the user heard. Every wait has a
bound; nothing here measures speed.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from announcer.engine.settings import UserSettings
from announcer.runtime.session import LiveSession
from announcer.speech.driver import SpeechDriver
from announcer.speech.jsonl import JsonlBackend
from announcer.transports import TransportOptions
from tests.support.producers import http_url, ws_url
from tests.support.speech_record import records, spoken_in

BOUND = 60.0  # seconds any single wait may take before the test fails

ACCEPTED: dict[str, Any] = {
    "type": "subscription.accepted",
    "aaep_version": "0.1.0",
    "subscription_id": "sub_hostile1",
    "producer": {"agent_id": "hostile", "agent_name": "Hostile"},
    "honored_capabilities": {"preferred_verbosity": "normal"},
}


def event(summary: str, number: int = 1, **extra: Any) -> dict[str, Any]:
    """A valid AAEP state-change event whose summary the user should hear."""
    body: dict[str, Any] = {
        "@context": "https://aaep-protocol.org/context/v1",
        "type": "aaep:agent.state.changed",
        "aaep_version": "0.1.0",
        "event_id": f"evt_hostile{number:04d}",
        "session_id": "sess_hostile",
        "timestamp": "2026-01-01T00:00:00Z",
        "producer": {"agent_id": "hostile", "agent_name": "Hostile"},
        "urgency": "normal",
        "summary_normal": summary,
        "from_state": "idle",
        "to_state": "thinking",
    }
    body.update(extra)
    return body


def frame(message: dict[str, Any]) -> str:
    return json.dumps(message, ensure_ascii=False)


# ---- the listener --------------------------------------------------------------------


@dataclass
class Heard:
    """The jsonl speech record of a running session, read back as it grows."""

    stream: io.StringIO

    @property
    def records(self) -> list[dict[str, Any]]:
        return records(self.stream)

    @property
    def spoken(self) -> list[str]:
        return spoken_in(self.records)

    def count(self, needle: str) -> int:
        return sum(needle in text for text in self.spoken)

    async def until(self, predicate: Callable[[], bool], bound: float = BOUND) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + bound
        while not predicate():
            if loop.time() > deadline:
                raise AssertionError(f"never held; heard: {self.spoken}")
            await asyncio.sleep(0.05)

    async def hears(self, needle: str, bound: float = BOUND) -> None:
        await self.until(lambda: self.count(needle) > 0, bound)


def listener(
    sources: list[str], options: TransportOptions | None = None, **kw: Any
) -> tuple[LiveSession, Heard]:
    record = io.StringIO()
    session = LiveSession(
        sources,
        kw.pop("settings", None) or UserSettings(),
        options or TransportOptions(),
        driver=SpeechDriver(JsonlBackend(record)),
        handshake_timeout=kw.pop("handshake_timeout", 2.0),
        **kw,
    )
    return session, Heard(record)


@contextlib.asynccontextmanager
async def running(session: LiveSession) -> AsyncIterator[asyncio.Future[int]]:
    task = asyncio.ensure_future(session.run())
    try:
        yield task
    finally:
        session.stop()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(task, 30)


# ---- raw HTTP / SSE --------------------------------------------------------------------


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class HttpProducer:
    """A bare HTTP/1.1 server; ``handler(request, writer)`` writes the whole answer."""

    handler: Callable[[Request, asyncio.StreamWriter], Awaitable[None]]
    requests: list[Request] = field(default_factory=list)
    server: asyncio.Server | None = None
    port: int = 0

    async def start(self) -> HttpProducer:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    @property
    def origin(self) -> str:
        return http_url(self)

    def paths(self, method: str | None = None) -> list[str]:
        return [r.path for r in self.requests if method is None or r.method == method]

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                line = await reader.readline()
                if not line:
                    return
                method, path, _ = line.decode("latin-1").split(" ", 2)
                headers: dict[str, str] = {}
                while (header := await reader.readline()) not in (b"\r\n", b"\n", b""):
                    name, _, value = header.decode("latin-1").partition(":")
                    headers[name.strip().lower()] = value.strip()
                length = int(headers.get("content-length", "0"))
                body = await reader.readexactly(length) if length else b""
                request = Request(method, path, headers, body)
                self.requests.append(request)
                await self.handler(request, writer)
                if writer.is_closing():
                    return
        except (ConnectionError, asyncio.IncompleteReadError, ValueError):
            return
        except asyncio.CancelledError:
            return  # the server is closing: a test's endless stream ends here
        finally:
            writer.close()

    async def close(self) -> None:
        if self.server is not None:
            self.server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.server.wait_closed(), 5)


async def respond(
    writer: asyncio.StreamWriter,
    status: str,
    body: bytes = b"",
    headers: dict[str, str] | None = None,
    *,
    close: bool = False,
) -> None:
    head = [f"HTTP/1.1 {status}", f"Content-Length: {len(body)}"]
    head += [f"{k}: {v}" for k, v in (headers or {}).items()]
    if close:
        head.append("Connection: close")
    writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)
    await writer.drain()
    if close:
        writer.close()


async def respond_json(writer: asyncio.StreamWriter, message: dict[str, Any], **kw: Any) -> None:
    await respond(
        writer,
        "200 OK",
        json.dumps(message).encode(),
        {"Content-Type": "application/json", **kw.pop("headers", {})},
        **kw,
    )


async def open_event_stream(writer: asyncio.StreamWriter) -> None:
    """Headers of an endless event stream; the body follows as the test writes it."""
    writer.write(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
        b"Connection: close\r\n\r\n"
    )
    await writer.drain()


def sse(data: str | bytes, event_id: str | None = None) -> bytes:
    payload = data.encode() if isinstance(data, str) else data
    head = f"id: {event_id}\n".encode() if event_id else b""
    return head + b"event: aaep.event\ndata: " + payload + b"\n\n"


# ---- WebSocket and Unix socket -------------------------------------------------------------


@dataclass
class WsProducer:
    """A ``websockets`` server speaking ``aaep.v1``; ``handler(ws, producer)`` per connection."""

    handler: Callable[[Any, WsProducer], Awaitable[None]]
    connections: int = 0
    received: list[str] = field(default_factory=list)
    server: Any = None
    port: int = 0
    _handlers: set[asyncio.Task[Any]] = field(default_factory=set)

    async def start(self) -> WsProducer:
        from websockets.asyncio.server import serve

        async def serve_one(ws: Any) -> None:
            self.connections += 1
            task = asyncio.current_task()
            assert task is not None
            self._handlers.add(task)
            try:
                with contextlib.suppress(Exception):
                    await self.handler(ws, self)
            finally:
                self._handlers.discard(task)

        self.server = await serve(
            serve_one, "127.0.0.1", 0, subprotocols=["aaep.v1"], max_size=None
        )
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    @property
    def url(self) -> str:
        return ws_url(self)

    async def take(self, ws: Any) -> dict[str, Any]:
        raw = await ws.recv()
        self.received.append(raw)
        return json.loads(raw)

    async def close(self) -> None:
        if self.server is not None:
            self.server.close()
            # websockets waits for every handler to return; a test's handler that idles
            # (``asyncio.sleep(BOUND)``) ends here rather than by the 5 s timeout
            for task in list(self._handlers):
                task.cancel()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.server.wait_closed(), 5)


@dataclass
class UnixProducer:
    """A Unix socket producer; ``handler(reader, writer, producer)`` runs per connection."""

    path: str
    handler: Callable[[asyncio.StreamReader, asyncio.StreamWriter, UnixProducer], Awaitable[None]]
    connections: int = 0
    server: asyncio.Server | None = None

    async def start(self) -> UnixProducer:
        async def serve_one(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            self.connections += 1
            try:
                await self.handler(reader, writer, self)
            except (ConnectionError, asyncio.IncompleteReadError):
                pass
            finally:
                writer.close()

        self.server = await asyncio.start_unix_server(serve_one, self.path)
        os.chmod(self.path, 0o600)
        return self

    async def close(self) -> None:
        if self.server is not None:
            self.server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.server.wait_closed(), 5)
