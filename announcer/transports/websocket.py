"""Appendix B.2: WebSocket with the ``aaep.v1`` subprotocol, via ``websockets``."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections import deque
from typing import Any
from urllib.parse import urlsplit

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus
from websockets.frames import CloseCode, Frame, Opcode

from announcer.engine.subscription import WEBSOCKET_CLOSE_REASONS
from announcer.transports.base import (
    TransportError,
    TransportOptions,
    check_plaintext_allowed,
    same_origin,
)
from announcer.transports.failure import Cause, Fault, os_cause, status_cause
from announcer.transports.stream import MessageStreamTransport

log = logging.getLogger("announcer.transports")


class _RedactAuthorization(logging.Filter):
    """websockets logs request headers at DEBUG; the bearer token must never reach a log."""

    def filter(self, record: logging.LogRecord) -> bool:
        if "authorization" in record.getMessage().lower():
            record.msg = "> Authorization: [redacted]"
            record.args = ()
        return True


wire_log = logging.getLogger("announcer.transports.wire")
wire_log.addFilter(_RedactAuthorization())

SUBPROTOCOL = "aaep.v1"

# asyncio hands a protocol up to 256 KiB per read, and websockets parses (and inflates)
# all of it at once: in a flood of small compressed frames that is thousands of frames,
# measured at up to 87 ms of CPU (200 ms on a busy machine) in which no key was answered
# (benchmarks/flood.py). So what arrives is parsed in slices of READ_SLICE_BYTES for at
# most PARSE_TURN_SECONDS per turn of the event loop, and the rest on the next turn.
READ_SLICE_BYTES = 2048
PARSE_TURN_SECONDS = 0.002


class _AaepConnection(ClientConnection):
    """Remembers, per message in arrival order, whether it came as a binary frame:
    ``recv(decode=False)`` hands text and binary alike as bytes.

    Also parses what arrives a few milliseconds per turn of the event loop
    (:data:`PARSE_TURN_SECONDS`), with reading paused meanwhile (the kernel's buffer and
    TCP flow control hold the rest): keys, timers and Ctrl-C are answered in between.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.binary_messages: deque[bool] = deque()
        self._unparsed = bytearray()
        self._lost = False

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        resume = self.recv_messages.resume

        def resume_unless_parsing() -> None:
            # the message queue has room again; reading resumes once the slices are done
            if not self._unparsed:
                resume()

        self.recv_messages.resume = resume_unless_parsing

    def data_received(self, data: bytes) -> None:
        if not self._unparsed and len(data) <= READ_SLICE_BYTES:
            super().data_received(data)
            return
        parsing = bool(self._unparsed)
        self._unparsed += data
        if not parsing:
            self.transport.pause_reading()
            self._parse_slice()

    def _parse_slice(self) -> None:
        until = time.perf_counter() + PARSE_TURN_SECONDS
        while self._unparsed and not self._lost:
            chunk = bytes(self._unparsed[:READ_SLICE_BYTES])
            del self._unparsed[:READ_SLICE_BYTES]
            super().data_received(chunk)
            if time.perf_counter() > until:
                break
        if self._lost:
            return
        if self._unparsed:
            self.loop.call_soon(self._parse_slice)
        elif not self.recv_messages.paused and not self.transport.is_closing():
            self.transport.resume_reading()

    def _parse_the_rest(self) -> None:
        if self._unparsed:
            chunk, self._unparsed = bytes(self._unparsed), bytearray()
            super().data_received(chunk)

    def eof_received(self) -> None:
        self._parse_the_rest()  # what came before the end is read first
        super().eof_received()

    def connection_lost(self, exc: Exception | None) -> None:
        if not self._lost:
            self._parse_the_rest()
            self._lost = True
        super().connection_lost(exc)

    def _reading_held(self) -> bool:
        """We stopped reading (our own flow control): frames, and the pong, wait unread."""
        return bool(self._unparsed) or bool(self.recv_messages.paused)

    async def keepalive(self) -> None:
        """websockets' keepalive, except that a pong is not awaited against the clock while
        our own reader holds the frames in front of it (issue 22 item 11: under a flood
        the Textual UI paused the reader and the connection was dropped as "stalled").

        A producer that answers no ping once we read again is still found stalled.
        """
        assert self.ping_interval is not None
        loop = asyncio.get_running_loop()
        latency = 0.0
        try:
            while True:
                await asyncio.sleep(self.ping_interval - latency)
                pong_received = await self.ping()
                if self.ping_timeout is None:
                    continue
                deadline = loop.time() + self.ping_timeout
                while True:
                    try:
                        async with asyncio.timeout_at(deadline):
                            latency = await asyncio.shield(pong_received)
                        break
                    except TimeoutError:
                        if self._reading_held():
                            deadline = loop.time() + self.ping_timeout
                            continue
                        async with self.send_context():
                            self.protocol.fail(CloseCode.INTERNAL_ERROR, "keepalive ping timeout")
                        raise AssertionError(
                            "send_context() waits for connection_lost(), which cancels this"
                        ) from None
        except Exception:
            self.logger.error("keepalive ping failed", exc_info=True)

    def process_event(self, event: Any) -> None:
        starts_message = isinstance(event, Frame) and event.opcode in (Opcode.TEXT, Opcode.BINARY)
        if self.response is not None and starts_message:
            self.binary_messages.append(event.opcode is Opcode.BINARY)
        super().process_event(event)


class _SameOriginConnect(connect):
    """websockets follows HTTP redirects (stripping the token across origins); a producer
    may only redirect within the origin the user named, or the replies would go elsewhere."""

    def process_redirect(self, exc: Exception) -> Exception | str:
        target = super().process_redirect(exc)
        if isinstance(target, str) and same_origin(target, _origin(self.uri)) is None:
            return TransportError(
                "the producer redirected the connection to another origin; refused",
                Cause(Fault.OTHER_ORIGIN),
            )
        return target


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


class WebSocketTransport(MessageStreamTransport):
    def __init__(self, url: str, options: TransportOptions, source_id: str | None = None) -> None:
        super().__init__()
        check_plaintext_allowed(url, options)
        self.url = url
        self.options = options
        self.source_id = source_id or url
        self.description = url
        self._ws: _AaepConnection | None = None
        self.close_code: int | None = None

    async def connect(self) -> None:
        ssl_context = self.options.ssl_context() if self.url.startswith("wss://") else None
        # Allow a few times the limit on the wire so one oversized frame is dropped, not fatal.
        wire_limit = self.options.max_frame_bytes * 4
        ping = max(1.0, self.options.stall_seconds / 2)
        try:
            ws = await _SameOriginConnect(
                self.url,
                subprotocols=[SUBPROTOCOL],  # type: ignore[list-item]
                additional_headers=self.options.auth_headers(),
                ssl=ssl_context,
                max_size=wire_limit,
                open_timeout=self.options.connect_timeout,
                ping_interval=ping,
                ping_timeout=ping,  # §5 stall detection: no pong means a dead producer
                # a stalled producer gets no longer to answer our close than it had to
                # answer the ping (websockets' 10 s, unless stall_seconds is shorter)
                close_timeout=min(10.0, ping),
                logger=wire_log,
                create_connection=_AaepConnection,
            )
        except InvalidStatus as exc:
            status = exc.response.status_code
            raise TransportError(
                f"the producer refused the WebSocket (HTTP {status})", status_cause(status)
            ) from None
        except (OSError, InvalidHandshake, TimeoutError) as exc:
            raise TransportError(f"cannot connect to {self.url}: {exc}", os_cause(exc)) from None
        assert isinstance(ws, _AaepConnection)
        self._ws = ws
        if self._ws.subprotocol != SUBPROTOCOL:
            await self._ws.close()
            raise TransportError(
                "the producer did not agree to the aaep.v1 subprotocol (B.2.1)",
                Cause(Fault.NO_SUBPROTOCOL),
            )

    async def _read(self) -> str | None:
        if self._ws is None:
            return None
        while True:
            try:
                # Text frames as bytes: UTF-8 is checked here, so a bad frame is dropped
                # like on every other transport instead of closing the connection (1007).
                data = await self._ws.recv(decode=False)
            except ConnectionClosed as exc:
                code = exc.rcvd.code if exc.rcvd is not None else None
                self.close_code = code
                if exc.sent is not None and exc.sent.code == 1009:
                    # Over the wire cap websockets cannot skip the frame: it must close.
                    limit = self.options.max_frame_bytes
                    self.options.drop_oversize()
                    raise TransportError(
                        f"the producer sent a message far over {limit} bytes",
                        Cause(Fault.OVERSIZE),
                    ) from None
                if exc.sent is not None and "keepalive ping timeout" in exc.sent.reason:
                    # §8.2.5 stall: frozen, or trickling a frame so slowly no pong gets through
                    raise TransportError(
                        "the producer stalled: no answer to a ping for "
                        f"{max(1.0, self.options.stall_seconds / 2):g} seconds",
                        Cause(Fault.STALLED),
                    ) from None
                if (
                    code is not None
                    and code in WEBSOCKET_CLOSE_REASONS
                    and code not in (4000, 4005)
                ):
                    # B.2.6, said in words (the runtime translates them: runtime.failures)
                    words = WEBSOCKET_CLOSE_REASONS[code]
                    raise TransportError(words, Cause(Fault.CLOSE_CODE, detail=words)) from None
                if exc.rcvd is None or code not in (1000, 4000, 4005):
                    raise TransportError(f"the WebSocket connection broke ({exc})") from None
                return None
            if self._ws.binary_messages and self._ws.binary_messages.popleft():
                self.options.count_drop("binary WebSocket frame (B.2.2)")
                continue
            if len(data) > self.options.max_frame_bytes:
                self.options.drop_oversize()
                continue
            try:
                return data.decode("utf-8")
            except UnicodeDecodeError:
                self.options.drop_not_utf8()

    async def _write(self, message: dict[str, Any]) -> None:
        if self._ws is None:
            raise TransportError("not connected")
        try:
            await self._ws.send(json.dumps(message, ensure_ascii=False))
        except ConnectionClosed:
            raise TransportError(
                "the WebSocket connection is closed", Cause(Fault.CLOSED)
            ) from None

    async def close(self, reason: str = "subscriber_shutdown") -> None:
        if self._ws is not None:
            with contextlib.suppress(Exception):
                await self._ws.close(4005, reason)
            self._ws = None
