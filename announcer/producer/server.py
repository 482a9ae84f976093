"""Network front-ends of the demo producer: HTTP+SSE, WebSocket, Unix socket, stdio.

One TCP port serves both Appendix B.1 (SSE events, POST handshake and replies)
and B.2 (WebSocket, subprotocol ``aaep.v1``). HTTP is parsed with ``h11`` and
WebSocket framing is done by the sans-I/O protocol of ``websockets``, because
no single well-kept library here serves a streaming response and a WebSocket
upgrade on one port. ``paths="reference"`` imitates the public reference
producers instead: ``GET /events`` and ``POST /messages``, no manifest, no
handshake, which lets tests exercise a subscriber's fallback path discovery.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import socket
import ssl
import struct
import sys
from collections.abc import Awaitable, Callable
from dataclasses import asdict
from typing import Any, Literal
from urllib.parse import parse_qs, urlsplit

import h11
from websockets.frames import Opcode
from websockets.http11 import Request as WsRequest
from websockets.server import ServerProtocol

from announcer.platform.identity import current_uid
from announcer.producer.core import (
    AAEP_CONTEXT,
    AAEP_VERSION,
    ProducerCore,
    Subscription,
    new_id,
    now_rfc3339,
)

log = logging.getLogger("announcer.producer")


class _RedactAuthorization(logging.Filter):
    """websockets logs request headers at DEBUG; a bearer token must never reach a log."""

    def filter(self, record: logging.LogRecord) -> bool:
        if "authorization" in record.getMessage().lower():
            record.msg = "< Authorization: [redacted]"
            record.args = ()
        return True


wire_log = logging.getLogger("announcer.producer.wire")
wire_log.addFilter(_RedactAuthorization())

MAX_MESSAGE_BYTES = 1024 * 1024  # §8.3: at least 64 KiB, SHOULD 1 MiB
HEAD_LIMIT = 64 * 1024
Framing = Literal["length", "ndjson"]
_REJECT_CLOSE_CODES = {"authentication_required": 4002, "authorization_denied": 4003}
_REJECT_HTTP_STATUS = {
    "authentication_required": 401,
    "authorization_denied": 403,
    "rate_limit": 429,
    "version_unsupported": 400,
}


class MessageChannel:
    """A bidirectional message pipe (WebSocket, Unix socket, stdio) seen by the core."""

    async def recv(self) -> tuple[Any, Any] | None:
        """Next (message, rpc_id) or None at end of stream."""
        raise NotImplementedError

    async def send(
        self, message: dict[str, Any], *, rpc_id: Any = None, event: bool = False
    ) -> None:
        raise NotImplementedError

    async def close(self, code: int = 1000, reason: str = "") -> None:
        raise NotImplementedError


async def serve_channel(
    core: ProducerCore, channel: MessageChannel, authorization: str | None
) -> None:
    """The B.2.3/B.4/B.6 conversation: handshake first, then events out and replies in."""
    sub: Subscription | None = None
    if not core.options.handshake:
        sub = core.anonymous()
    else:
        first = await channel.recv()
        if first is None:
            return
        message, rpc_id = first
        response, sub = core.subscribe(message, authorization)
        await channel.send(response, rpc_id=rpc_id)
        if sub is None:
            code = _REJECT_CLOSE_CODES.get(str(response.get("reason_code")), 4001)
            await channel.close(code, str(response.get("reason_code")))
            return
    assert sub is not None

    async def pump() -> None:
        async for event in sub.follow():
            await channel.send(event, event=True)

    async def receive() -> None:
        while True:
            item = await channel.recv()
            if item is None:
                return
            message, rpc_id = item
            if (
                not core.options.handshake
                and isinstance(message, dict)
                and (message.get("type") == "subscription.request")
            ):
                continue  # a producer without the handshake never answers it (Level 1)
            response = core.handle(sub, message)
            if response is not None:
                await channel.send(response, rpc_id=rpc_id)
            if sub.closed:
                return

    tasks = [asyncio.ensure_future(pump()), asyncio.ensure_future(receive())]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        core.close(sub)
        with contextlib.suppress(Exception):
            await channel.close(4000 if sub.closed else 1000, "subscription closed")


class _WebSocketChannel(MessageChannel):
    def __init__(
        self, proto: ServerProtocol, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        self.proto = proto
        self.reader = reader
        self.writer = writer
        self._fragments: list[bytes] = []
        self._pending: list[Any] = []

    async def _flush(self) -> None:
        for chunk in self.proto.data_to_send():
            if chunk:
                self.writer.write(chunk)
            else:
                with contextlib.suppress(Exception):
                    self.writer.write_eof()
        await self.writer.drain()

    async def recv(self) -> tuple[Any, Any] | None:
        while True:
            while self._pending:
                frame = self._pending.pop(0)
                if frame.opcode in (Opcode.TEXT, Opcode.BINARY, Opcode.CONT):
                    self._fragments.append(frame.data)
                    if frame.fin:
                        data = b"".join(self._fragments)
                        self._fragments.clear()
                        try:
                            return json.loads(data), None
                        except ValueError:
                            log.warning("dropped a WebSocket frame that is not JSON")
                elif frame.opcode == Opcode.CLOSE:
                    await self._flush()
                    return None
            data = await self.reader.read(65536)
            if not data:
                self.proto.receive_eof()
                return None
            self.proto.receive_data(data)
            self._pending.extend(self.proto.events_received())
            await self._flush()
            if self.proto.close_expected() and not self._pending:
                return None

    async def send(
        self, message: dict[str, Any], *, rpc_id: Any = None, event: bool = False
    ) -> None:
        self.proto.send_text(json.dumps(message, ensure_ascii=False).encode("utf-8"))
        await self._flush()

    async def close(self, code: int = 1000, reason: str = "") -> None:
        with contextlib.suppress(Exception):
            self.proto.send_close(code, reason)
            await self._flush()


class _StreamChannel(MessageChannel):
    """Unix socket (B.4.4 length-prefixed or NDJSON) or stdio JSON-RPC (B.6)."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        write: Callable[[bytes], Awaitable[None]],
        framing: Framing,
        jsonrpc: bool = False,
    ) -> None:
        self.reader = reader
        self._write = write
        self.framing = framing
        self.jsonrpc = jsonrpc

    async def recv(self) -> tuple[Any, Any] | None:
        while True:
            try:
                if self.framing == "length":
                    header = await self.reader.readexactly(4)
                    (length,) = struct.unpack(">I", header)
                    if length > MAX_MESSAGE_BYTES:
                        log.warning("closing: a %d-byte message exceeds the limit", length)
                        return None
                    raw = await self.reader.readexactly(length)
                else:
                    raw = await self.reader.readline()
                    if not raw:
                        return None
                    if not raw.strip():
                        continue
            except (asyncio.IncompleteReadError, ConnectionError, ValueError):
                return None
            try:
                message = json.loads(raw)
            except ValueError:
                log.warning("dropped a message that is not JSON")
                continue
            if not self.jsonrpc:
                return message, None
            if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
                log.warning("dropped a line that is not JSON-RPC 2.0")
                continue
            method = message.get("method")
            if method == "aaep.ping" and "id" in message:
                await self._emit({"jsonrpc": "2.0", "id": message["id"], "result": {}})
                continue
            if method in ("aaep.subscribe", "aaep.renegotiate", "aaep.reply", "aaep.close"):
                return message.get("params"), message.get("id")
            log.warning("dropped a JSON-RPC call to unknown method %r", method)

    async def _emit(self, payload: dict[str, Any]) -> None:
        data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        if self.framing == "length":
            await self._write(struct.pack(">I", len(data)) + data)
        else:
            await self._write(data + b"\n")

    async def send(
        self, message: dict[str, Any], *, rpc_id: Any = None, event: bool = False
    ) -> None:
        if not self.jsonrpc:
            await self._emit(message)
        elif event:
            await self._emit({"jsonrpc": "2.0", "method": "aaep.event", "params": message})
        elif rpc_id is not None:
            await self._emit({"jsonrpc": "2.0", "id": rpc_id, "result": message})
        else:
            await self._emit({"jsonrpc": "2.0", "method": "aaep.message", "params": message})

    async def close(self, code: int = 1000, reason: str = "") -> None:
        if self.jsonrpc:
            with contextlib.suppress(Exception):
                await self._emit(
                    {"jsonrpc": "2.0", "method": "aaep.close", "params": {"reason": reason}}
                )


class ProducerServer:
    """Serves one :class:`ProducerCore` on TCP (HTTP+SSE+WS) and optionally a Unix socket."""

    def __init__(
        self,
        core: ProducerCore,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        unix_path: str | None = None,
        unix_framing: Framing = "length",
        paths: Literal["aaep", "reference"] = "aaep",
        heartbeat_seconds: float = 15.0,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self.core = core
        self.ssl_context = ssl_context
        self.host = host
        self.port = port
        self.unix_path = unix_path
        self.unix_framing = unix_framing
        self.paths = paths
        self.heartbeat_seconds = heartbeat_seconds
        self._servers: list[asyncio.Server] = []
        self._connections: set[asyncio.Task[Any]] = set()

    async def start(self) -> None:
        tcp = await asyncio.start_server(
            self._on_tcp, self.host, self.port, limit=HEAD_LIMIT, ssl=self.ssl_context
        )
        self._servers.append(tcp)
        self.port = tcp.sockets[0].getsockname()[1]
        if self.unix_path:
            if sys.platform == "win32":
                raise OSError("Unix sockets are not available on Windows; use the WebSocket URL")
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.unix_path)
            unix = await asyncio.start_unix_server(
                self._on_unix, self.unix_path, limit=MAX_MESSAGE_BYTES + 16
            )
            os.chmod(self.unix_path, 0o600)  # B.4.2 owner-only access
            self._servers.append(unix)

    @property
    def base_url(self) -> str:
        scheme = "https" if self.ssl_context is not None else "http"
        return f"{scheme}://{self.host}:{self.port}"

    async def close(self) -> None:
        for server in self._servers:
            server.close()
        await self.core.stop()
        for task in list(self._connections):
            task.cancel()
        for task in list(self._connections):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        for server in self._servers:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(server.wait_closed(), 2)
        if self.unix_path:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.unix_path)

    def _track(self) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._connections.add(task)
            task.add_done_callback(self._connections.discard)

    # ---- Unix socket (B.4) --------------------------------------------------------

    async def _on_unix(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._track()
        sock = writer.get_extra_info("socket")
        if sock is not None and hasattr(socket, "SO_PEERCRED"):
            creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
            _pid, uid, _gid = struct.unpack("3i", creds)
            if uid != current_uid():  # B.4.5 only the same user may subscribe
                log.warning("refused a Unix socket peer with uid %d", uid)
                writer.close()
                return

        async def write(data: bytes) -> None:
            writer.write(data)
            await writer.drain()

        channel = _StreamChannel(reader, write, self.unix_framing)
        try:
            await serve_channel(self.core, channel, None)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        except asyncio.CancelledError:
            pass  # close() ends it (see _on_tcp)
        finally:
            writer.close()

    # ---- TCP: HTTP or WebSocket ----------------------------------------------------

    async def _on_tcp(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._track()
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (
            asyncio.IncompleteReadError,
            asyncio.LimitOverrunError,
            ConnectionError,
            asyncio.CancelledError,  # close() ends it (see below)
        ):
            writer.close()
            return
        try:
            if b"upgrade: websocket" in head.lower():
                await self._websocket(head, reader, writer)
            else:
                await self._http(head, reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        except asyncio.CancelledError:
            # close() ends this connection and waits for it. Python 3.11's stream callback
            # would print a cancelled handler as "Exception in callback" on the terminal.
            pass
        except Exception:
            log.exception("a connection failed")
        finally:
            writer.close()

    async def _websocket(
        self, head: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        proto = ServerProtocol(
            subprotocols=["aaep.v1"],  # type: ignore[list-item]
            max_size=MAX_MESSAGE_BYTES,
            logger=wire_log,
        )
        proto.receive_data(head)
        events = proto.events_received()
        if not events or not isinstance(events[0], WsRequest):
            return
        request = events[0]
        offered = ",".join(request.headers.get_all("Sec-WebSocket-Protocol"))
        if "aaep.v1" not in [p.strip() for p in offered.split(",")] or self.paths != "aaep":
            response = proto.reject(400, "The aaep.v1 subprotocol is required (B.2.1).\n")
        else:
            response = proto.accept(request)
        proto.send_response(response)
        channel = _WebSocketChannel(proto, reader, writer)
        await channel._flush()
        if response.status_code != 101:
            return
        authorization = request.headers.get("Authorization")
        await serve_channel(self.core, channel, authorization)

    async def _http(
        self, head: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        conn = h11.Connection(h11.SERVER, max_incomplete_event_size=HEAD_LIMIT)
        conn.receive_data(head)
        request = conn.next_event()
        if not isinstance(request, h11.Request):
            await self._respond(conn, writer, 400, {"error": "bad_request"})
            return
        body = b""
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                chunk = await reader.read(65536)
                if not chunk:
                    return
                conn.receive_data(chunk)
                continue
            if isinstance(event, h11.Data):
                body += event.data
                if len(body) > MAX_MESSAGE_BYTES:
                    await self._respond(conn, writer, 413, {"error": "too_large"})
                    return
                continue
            break
        headers = {k.decode().lower(): v.decode("latin-1") for k, v in request.headers}
        method = request.method.decode()
        target = urlsplit(request.target.decode("latin-1"))
        query = {k: v[0] for k, v in parse_qs(target.query).items()}
        path = target.path
        authorization = headers.get("authorization")
        routes = _AAEP_ROUTES if self.paths == "aaep" else _REFERENCE_ROUTES
        route = routes.get((method, path))
        if route is None:
            await self._respond(conn, writer, 404, {"error": "not_found"})
            return
        if route == "manifest":
            await self._respond(conn, writer, 200, self.core.manifest())
        elif route == "status":
            await self._respond(conn, writer, 200, self.core.status())
        elif route == "replies_log":
            await self._respond(conn, writer, 200, [asdict(r) for r in self.core.replies])
        elif route == "subscribe":
            await self._subscribe(conn, writer, body, authorization)
        elif route == "events":
            await self._sse(conn, reader, writer, query, headers)
        elif route == "replies":
            await self._replies(conn, writer, body, authorization)

    async def _respond(
        self,
        conn: h11.Connection,
        writer: asyncio.StreamWriter,
        status: int,
        payload: Any = None,
        extra: list[tuple[str, str]] | None = None,
    ) -> None:
        data = b"" if payload is None else json.dumps(payload, ensure_ascii=False).encode("utf-8")
        headers = [("Content-Length", str(len(data))), ("Connection", "close")]
        if payload is not None:
            headers.append(("Content-Type", "application/json"))
        headers.extend(extra or [])
        writer.write(conn.send(h11.Response(status_code=status, headers=headers)) or b"")
        if data:
            writer.write(conn.send(h11.Data(data=data)) or b"")
        writer.write(conn.send(h11.EndOfMessage()) or b"")
        await writer.drain()

    def _authorised(self, authorization: str | None) -> bool:
        token = self.core.options.auth_token
        return token is None or authorization == f"Bearer {token}"

    async def _subscribe(
        self, conn: h11.Connection, writer: asyncio.StreamWriter, body: bytes, auth: str | None
    ) -> None:
        try:
            request = json.loads(body)
        except ValueError:
            await self._respond(conn, writer, 400, {"error": "invalid_json"})
            return
        response, sub = self.core.subscribe(request, auth)
        if sub is None:
            status = _REJECT_HTTP_STATUS.get(str(response.get("reason_code")), 400)
            extra = []
            if "retry_after_seconds" in response:
                extra.append(("Retry-After", str(response["retry_after_seconds"])))
            await self._respond(conn, writer, status, response, extra)
            return
        sub.detached_at = asyncio.get_running_loop().time()
        self._schedule_grace(sub)
        location = f"/aaep/v1/events?subscription_id={sub.subscription_id}"
        await self._respond(conn, writer, 201, response, [("Location", location)])

    def _schedule_grace(self, sub: Subscription) -> None:
        """A subscription made over HTTP lives on without a stream only for a while."""

        async def expire() -> None:
            while not sub.closed:
                await asyncio.sleep(min(1.0, self.core.options.sse_grace_seconds))
                detached = sub.detached_at
                if (
                    sub.attached == 0
                    and detached is not None
                    and (
                        asyncio.get_running_loop().time() - detached
                        >= self.core.options.sse_grace_seconds
                    )
                ):
                    log.info("subscription %s expired without a stream", sub.subscription_id)
                    self.core.close(sub)

        task = asyncio.get_running_loop().create_task(expire())
        self._connections.add(task)
        task.add_done_callback(self._connections.discard)

    async def _replies(
        self, conn: h11.Connection, writer: asyncio.StreamWriter, body: bytes, auth: str | None
    ) -> None:
        if not self._authorised(auth):
            await self._respond(conn, writer, 401, {"error": "authentication_required"})
            return
        try:
            message = json.loads(body)
        except ValueError:
            await self._respond(conn, writer, 400, {"error": "invalid_json"})
            return
        if not isinstance(message, dict):
            await self._respond(conn, writer, 400, {"error": "invalid_message"})
            return
        sub = self.core.find(message.get("subscription_id"))
        if message.get("type") in ("confirmation.reply", "clarification.reply"):
            accepted = self.core._reply(sub, message)
            # §6.3.4: never say why a reply was ignored.
            if accepted:
                await self._respond(conn, writer, 204)
            else:
                await self._respond(conn, writer, 400, {"error": "invalid_reply"})
            return
        if sub is None:
            await self._respond(conn, writer, 404, {"error": "unknown_subscription"})
            return
        response = self.core.handle(sub, message)
        await self._respond(conn, writer, 200 if response else 204, response)

    async def _sse(
        self,
        conn: h11.Connection,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        query: dict[str, str],
        headers: dict[str, str],
    ) -> None:
        subscription_id = query.get("subscription_id")
        if subscription_id:
            found = self.core.find(subscription_id)
            if found is None:
                await self._respond(conn, writer, 404, {"error": "unknown_subscription"})
                return
            if not self._authorised(headers.get("authorization")):
                await self._respond(conn, writer, 401, {"error": "authentication_required"})
                return
            sub = found
        else:
            sub = self.core.anonymous()
        last_event_id = headers.get("last-event-id")
        response_headers = [
            ("Content-Type", "text/event-stream"),
            ("Cache-Control", "no-cache"),
            ("X-Accel-Buffering", "no"),
        ]
        writer.write(conn.send(h11.Response(status_code=200, headers=response_headers)) or b"")
        writer.write(conn.send(h11.Data(data=b": connected\n\n")) or b"")
        await writer.drain()
        sub.attached += 1

        def frame(message: dict[str, Any]) -> bytes:
            data = json.dumps(message, ensure_ascii=False)
            text = f"event: aaep.event\nid: {message.get('event_id', '')}\ndata: {data}\n\n"
            return conn.send(h11.Data(data=text.encode("utf-8"))) or b""

        resumable = last_event_id is None or any(
            m.get("event_id") == last_event_id for _i, m in sub.log
        )
        if not resumable:
            # B.1.5: cannot resume, so summarise the current state first.
            writer.write(frame(self._state_summary()))

        async def pump() -> None:
            after = last_event_id if resumable else None
            async for message in sub.follow(after, from_start=sub.handshaken and after is None):
                writer.write(frame(message))
                await writer.drain()

        async def heartbeat() -> None:
            while True:
                await asyncio.sleep(self.heartbeat_seconds)
                writer.write(conn.send(h11.Data(data=b": heartbeat\n\n")) or b"")
                await writer.drain()

        async def watch_eof() -> None:
            while await reader.read(1024):
                pass

        tasks = [asyncio.ensure_future(c()) for c in (pump, heartbeat, watch_eof)]
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
            sub.attached -= 1
            sub.detached_at = asyncio.get_running_loop().time()
            if not sub.handshaken:
                self.core.close(sub)

    def _state_summary(self) -> dict[str, Any]:
        core = self.core
        return {
            "@context": AAEP_CONTEXT,
            "aaep_version": AAEP_VERSION,
            "type": "aaep:agent.state.changed",
            "event_id": new_id("evt"),
            "session_id": core.session_id,
            "timestamp": now_rfc3339(),
            "producer": dict(core.scenario.agent),
            "urgency": "normal",
            "from_state": core._state,
            "to_state": core._state,
            "summary_normal": f"Resumed; the agent is {core._state.replace('_', ' ')}.",
        }


_AAEP_ROUTES = {
    ("GET", "/.well-known/aaep-manifest.json"): "manifest",
    ("POST", "/aaep/v1/subscriptions"): "subscribe",
    ("GET", "/aaep/v1/events"): "events",
    ("POST", "/aaep/v1/replies"): "replies",
    ("GET", "/demo/replies"): "replies_log",
    ("GET", "/demo/status"): "status",
}
_REFERENCE_ROUTES = {
    ("GET", "/events"): "events",
    ("POST", "/messages"): "replies",
    ("GET", "/demo/replies"): "replies_log",
    ("GET", "/demo/status"): "status",
}


async def serve_stdio(core: ProducerCore) -> None:
    """B.6: speak JSON-RPC 2.0 on this process's stdin and stdout."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MAX_MESSAGE_BYTES + 16)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    out = sys.stdout.buffer

    async def write(data: bytes) -> None:
        out.write(data)
        out.flush()

    channel = _StreamChannel(reader, write, "ndjson", jsonrpc=True)
    try:
        await serve_channel(core, channel, None)
    finally:
        await core.stop()
