"""Appendix B.1: Server-Sent Events for events, HTTP POST for everything else.

Paths come, in order, from the user's flags, the producer manifest
(``/.well-known/aaep-manifest.json``, §5.10.2, B.7.1), the Appendix B paths
(``POST /aaep/v1/subscriptions``, ``GET /aaep/v1/events``,
``POST /aaep/v1/replies``), and last the paths the public reference producers
use (``GET /events``, ``POST /messages``). Field parsing is left to ``httpx-sse``;
the body is cut into lines by :mod:`announcer.transports.sse_lines`, which bounds
the bytes held per event (§3.7) before anything is buffered.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import time
from collections.abc import AsyncIterator, Callable
from typing import Any
from urllib.parse import urlsplit

import httpx

from announcer.engine.subscription import Accepted, read_answer
from announcer.protocol import MAX_EVENT_BYTES
from announcer.transports.base import (
    HandshakeOutcome,
    ReplyNotDelivered,
    SourceUnavailable,
    Transport,
    TransportError,
    TransportOptions,
    check_plaintext_allowed,
    decode_handshake_answer,
    same_origin,
)
from announcer.transports.sse_lines import BoundedSseReader, NotUtf8Event, OversizeEvent

log = logging.getLogger("announcer.transports")

APPENDIX_B = {
    "subscribe": "/aaep/v1/subscriptions",
    "events": "/aaep/v1/events",
    "replies": "/aaep/v1/replies",
}
REFERENCE = {"subscribe": None, "events": "/events", "replies": "/messages"}
_EVENT_NAMES = {"aaep.event", "message", ""}
# §3.7: an event is at most MAX_EVENT_BYTES of JSON; on the wire SSE adds "data: " per line,
# "event:", "id:" and line ends. 16 KiB covers a 64 KiB event split over ~2700 data lines.
SSE_FRAMING_SLACK = 16 * 1024
# Inside an event, how often the stall deadline is looked at again at most (seconds).
STALL_CHECK_SECONDS = 1.0
_STREAM_HEADERS = {
    "Accept": "text/event-stream",
    "Cache-Control": "no-cache",
    # no compression: a small compressed chunk may inflate far past the per-event bound
    "Accept-Encoding": "identity",
}


class SseTransport(Transport):
    def __init__(self, url: str, options: TransportOptions, source_id: str | None = None) -> None:
        check_plaintext_allowed(url, options)
        parts = urlsplit(url)
        self.origin = f"{parts.scheme}://{parts.netloc}"
        self.given_path = parts.path if parts.path not in ("", "/") else None
        self.options = options
        self.source_id = source_id or url
        self.description = url
        self.paths: dict[str, str | None] | None = None
        self.subscription_id: str | None = None
        self.events_url: str | None = None
        self.last_event_id: str | None = None
        self._accepted: Accepted | None = None
        self._client: httpx.AsyncClient | None = None
        self._ready: tuple[Any, httpx.Response] | None = None
        #: bytes of one event held at most, framing included; bigger events are skipped
        self.event_byte_limit = min(options.max_frame_bytes, MAX_EVENT_BYTES) + SSE_FRAMING_SLACK
        #: the reader of the current event stream (its ``peak_buffered`` shows memory use)
        self.reader: BoundedSseReader | None = None
        #: producer-supplied URLs refused for pointing at another origin
        self.refused_urls = 0
        #: the handshake is a POST: the runtime hears from us when the event stream opens
        self.signals_open = True
        self.on_open = None
        self.clock: Callable[[], float] = time.monotonic

    async def connect(self) -> None:
        if self._client is None:
            verify: Any = self.options.ssl_context() if self.origin.startswith("https") else True
            self._client = httpx.AsyncClient(
                base_url=self.origin,
                verify=verify,
                headers=self.options.auth_headers(),
                # Requests (handshake, replies) time out; the event stream does not (see
                # _open): AAEP requires no heartbeat, so silence is not a dead producer.
                timeout=httpx.Timeout(
                    self.options.connect_timeout, read=self.options.stall_seconds
                ),
                # A dead peer is found by TCP keepalive, the transport's own signal.
                transport=httpx.AsyncHTTPTransport(
                    verify=verify, socket_options=keepalive_socket_options()
                ),
                follow_redirects=False,
            )
        if self.paths is None:
            self.paths = await self._discover()

    async def _discover(self) -> dict[str, str | None] | None:
        """Known paths, or None when only trying will tell (see :meth:`handshake`)."""
        opts = self.options
        if opts.events_path or opts.replies_path or opts.subscribe_path:
            return {
                "subscribe": opts.subscribe_path,
                "events": opts.events_path or self.given_path or APPENDIX_B["events"],
                "replies": opts.replies_path or APPENDIX_B["replies"],
            }
        manifest = await self._manifest()
        endpoints = manifest.get("endpoints") if isinstance(manifest, dict) else None
        if isinstance(endpoints, dict) and isinstance(endpoints.get("events"), str):
            log.info("paths from the producer manifest")
            return {
                # a refused endpoint falls back to the Appendix B path on the user's origin
                "subscribe": self._own_path(endpoints.get("subscriptions"), "subscriptions")
                or (APPENDIX_B["subscribe"] if endpoints.get("subscriptions") else None),
                "events": self._own_path(endpoints["events"], "events") or APPENDIX_B["events"],
                "replies": self._own_path(endpoints.get("replies"), "replies")
                or APPENDIX_B["replies"],
            }
        if self.given_path == REFERENCE["events"]:
            return dict(REFERENCE)
        if self.given_path is not None:
            return {"subscribe": None, "events": self.given_path, "replies": REFERENCE["replies"]}
        return None

    def _own_path(self, url: Any, what: str) -> str | None:
        """A producer-supplied URL as a path on the origin the user named, or None.

        Another origin is never followed: the token and the replies would go there.
        """
        if not isinstance(url, str) or not url:
            return None
        path = same_origin(url, self.origin)
        if path is None:
            self.refused_urls += 1
            # counted with the dropped frames, so the diagnostics show it without -v
            self.options.count_drop(
                f"the producer pointed {what} at another origin; only {self.origin} is used"
            )
        return path

    async def _manifest(self) -> Any:
        assert self._client is not None
        try:
            response = await self._client.get("/.well-known/aaep-manifest.json")
        except httpx.HTTPError as exc:
            raise TransportError(f"cannot reach {self.origin}: {_plain(exc)}") from None
        if response.status_code != 200:
            return None
        try:
            return response.json()
        except ValueError:
            log.warning("the producer manifest is not JSON; ignoring it")
            return None

    async def _open(self, url: str, headers: dict[str, str]) -> tuple[Any, httpx.Response]:
        assert self._client is not None
        path = same_origin(url, self.origin)
        if path is None:  # never reached: every path is checked when it is learnt
            raise TransportError("the event stream would be on another origin; refused")
        # §8 (issue 22 item 11): a producer may be silent for as long as it likes; no read
        # timeout on the stream. TCP keepalive (keepalive_socket_options) ends a dead one.
        stream = self._client.stream(
            "GET",
            path,
            headers=headers,
            timeout=httpx.Timeout(self.options.connect_timeout, read=None),
        )
        try:
            response = await stream.__aenter__()
        except httpx.HTTPError as exc:
            raise TransportError(f"the event stream failed: {_plain(exc)}") from None
        return stream, response

    async def _probe_events(self) -> dict[str, str | None]:
        """Find the event stream by trying; the stream that answers is kept for :meth:`frames`.

        Keeping it open matters: a producer counts every stream as a listener, and a
        probe that comes and goes could make it apply defaults to pending prompts.
        """
        headers = dict(_STREAM_HEADERS)
        for candidate in (APPENDIX_B, REFERENCE):
            path = str(candidate["events"])
            stream, response = await self._open(path, headers)
            if response.status_code == 200:
                self._ready = (stream, response)
                if candidate is REFERENCE:
                    log.info("using the reference producer paths GET /events and POST /messages")
                return {"subscribe": None, "events": path, "replies": candidate["replies"]}
            await stream.__aexit__(None, None, None)
        raise TransportError(f"{self.origin} has no AAEP event stream at the known paths")

    async def resume(self) -> bool:
        """After a drop: is our subscription still known, so Last-Event-ID can resume it?"""
        return self.subscription_id is not None and self._accepted is not None

    async def handshake(self, request: dict[str, Any], timeout: float) -> HandshakeOutcome:
        assert self._client is not None
        self.subscription_id = None
        self.events_url = None
        path = APPENDIX_B["subscribe"] if self.paths is None else self.paths.get("subscribe")
        if not path:
            return HandshakeOutcome(None)
        try:
            response = await self._client.post(path, json=request, timeout=timeout)
        except httpx.HTTPError as exc:
            raise TransportError(f"the subscription request failed: {_plain(exc)}") from None
        if response.status_code in (404, 405, 501):
            if self.paths is None:
                self.paths = await self._probe_events()
            return HandshakeOutcome(None)  # no handshake here: Level 1/2 defaults (§9.3.3)
        if self.paths is None:
            self.paths = dict(APPENDIX_B)
        answer = decode_handshake_answer(response.text)
        if answer is None and response.status_code in (401, 403):
            # Retrying with the same credentials cannot help: say so once and stop.
            raise SourceUnavailable(
                f"the producer refused the subscription (HTTP {response.status_code}): "
                "check the token (--token-env or --token-file)"
            )
        if answer is None:
            raise TransportError(
                f"the producer answered the subscription with HTTP {response.status_code} "
                "and nothing readable"
            )
        typed = read_answer(answer)
        if isinstance(typed, Accepted):
            self._accepted = typed
            self.subscription_id = typed.subscription_id
            self.last_event_id = None
            location = self._own_path(response.headers.get("Location"), "the event stream")
            self.events_url = location or (
                f"{self.paths['events']}?subscription_id={self.subscription_id}"
            )
        return HandshakeOutcome(answer)

    async def frames(self) -> AsyncIterator[str]:
        assert self._client is not None
        if self.paths is None:
            self.paths = await self._probe_events()
        if self._ready is not None:
            stream, response = self._ready
            self._ready = None
        else:
            url = self.events_url or str(self.paths["events"])
            headers = dict(_STREAM_HEADERS)
            if self.last_event_id:
                headers["Last-Event-ID"] = self.last_event_id  # B.1.5 resume
            stream, response = await self._open(url, headers)
        pending: asyncio.Future[bytes | None] | None = None
        try:
            if response.status_code == 404 and self.subscription_id:
                self._accepted = None
                raise TransportError("the producer no longer knows our subscription")
            if response.status_code != 200:
                raise TransportError(f"the event stream answered HTTP {response.status_code}")
            content_type = response.headers.get("content-type", "")
            if not content_type.partition(";")[0].strip().lower() == "text/event-stream":
                raise TransportError(f"the event stream is not text/event-stream: {content_type!r}")
            if self.on_open is not None:
                self.on_open()  # the stream really is open: now "Connected" may be said
            reader = self.reader = BoundedSseReader(self.event_byte_limit)
            stall = self.options.stall_seconds
            chunks = response.aiter_bytes().__aiter__()
            progress_at = self.clock()
            while True:
                if pending is None and not reader.mid_event:
                    # Between events there is no deadline (AAEP requires no heartbeat).
                    chunk = await _next_chunk(chunks)
                else:
                    # Inside an event the rest of it is owed within --stall-timeout (issue
                    # 29 item 5). The deadline is looked at again at least every
                    # STALL_CHECK_SECONDS, so the clock alone decides (an injected one in
                    # tests); the read itself is never cancelled meanwhile.
                    if pending is None:
                        pending = asyncio.ensure_future(_next_chunk(chunks))
                    left = stall - (self.clock() - progress_at)
                    await asyncio.wait({pending}, timeout=min(max(left, 0.0), STALL_CHECK_SECONDS))
                    if not pending.done():
                        if self.clock() - progress_at >= stall:
                            raise TransportError(
                                f"the producer stalled in the middle of an event: nothing "
                                f"more for {stall:g} seconds"
                            )
                        continue
                    chunk = pending.result()
                    pending = None
                if chunk is None:
                    break
                if not reader.mid_event:
                    progress_at = self.clock()  # a new event starts: its time starts now
                done = reader.feed(chunk)
                if reader.lines_done or done:
                    reader.lines_done = 0
                    progress_at = self.clock()
                elif self.clock() - progress_at > stall:
                    # Bytes keep coming but never a whole line (slow loris): as silent as none.
                    raise TransportError(
                        f"the producer stalled: bytes trickle in but no whole event or "
                        f"heartbeat for {stall:g} seconds"
                    )
                for sse in done:
                    if isinstance(sse, OversizeEvent):
                        # §3.7: skipped as it arrived; the next event is read normally
                        self.options.drop_oversize(self.event_byte_limit)
                        continue
                    if isinstance(sse, NotUtf8Event):
                        self.options.drop_not_utf8()
                        continue
                    if sse.event not in _EVENT_NAMES:
                        self.options.count_drop(f"SSE event named {sse.event!r}")
                        continue
                    if len(sse.data.encode("utf-8")) > self.options.max_frame_bytes:
                        self.options.drop_oversize()
                        continue
                    if sse.id:
                        self.last_event_id = sse.id
                    if sse.data.strip():
                        yield sse.data
        except httpx.ReadTimeout:
            raise TransportError("the producer's connection timed out") from None
        except httpx.HTTPError as exc:
            raise TransportError(f"the event stream broke: {_plain(exc)}") from None
        finally:
            if pending is not None:
                pending.cancel()
            with contextlib.suppress(Exception):
                await stream.__aexit__(None, None, None)
        raise TransportError("the producer ended the event stream")

    async def send(self, message: dict[str, Any]) -> dict[str, Any] | None:
        assert self._client is not None and self.paths is not None
        path = self.paths.get("replies") or APPENDIX_B["replies"]
        try:
            response = await self._client.post(path, json=message)
        except httpx.HTTPError as exc:
            raise ReplyNotDelivered(f"the producer could not be reached: {_plain(exc)}") from None
        if response.status_code >= 400:
            raise ReplyNotDelivered(f"the producer refused it (HTTP {response.status_code})")
        if response.status_code == 204 or not response.content:
            return None
        with contextlib.suppress(ValueError):
            answer = decode_handshake_answer(response.text)
            if answer is not None:
                typed = read_answer(answer)
                if isinstance(typed, Accepted):
                    self._accepted = typed
                return answer
        return None

    async def close(self, reason: str = "subscriber_shutdown") -> None:
        if self._ready is not None:
            with contextlib.suppress(Exception):
                await self._ready[0].__aexit__(None, None, None)
            self._ready = None
        client = self._client
        self._client = None
        if client is not None:
            await client.aclose()


async def _next_chunk(chunks: AsyncIterator[bytes]) -> bytes | None:
    """The body's next chunk, or None at its end (a task cannot carry StopAsyncIteration)."""
    try:
        return await chunks.__anext__()
    except StopAsyncIteration:
        return None


def _plain(exc: Exception) -> str:
    """An httpx error as a sentence, without headers (they may carry the token)."""
    text = str(exc) or type(exc).__name__
    return text.split("\n")[0]


# TCP keepalive: probes after this long idle, this often, this many unanswered = dead.
KEEPALIVE_IDLE_SECONDS = 30
KEEPALIVE_INTERVAL_SECONDS = 10
KEEPALIVE_PROBES = 3


def keepalive_socket_options() -> list[tuple[int, int, int]]:
    """Socket options that make the kernel find a dead peer (about 60 s on a silent stream).

    The producer's own silence is never taken for a dead connection (AAEP requires no
    heartbeat); only an unanswered keepalive probe or a reset ends the stream.
    """
    options = [(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)]
    for name, value in (
        ("TCP_KEEPIDLE", KEEPALIVE_IDLE_SECONDS),
        ("TCP_KEEPALIVE", KEEPALIVE_IDLE_SECONDS),  # macOS spells the idle time so
        ("TCP_KEEPINTVL", KEEPALIVE_INTERVAL_SECONDS),
        ("TCP_KEEPCNT", KEEPALIVE_PROBES),
    ):
        option = getattr(socket, name, None)
        if isinstance(option, int):
            options.append((socket.IPPROTO_TCP, option, value))
    return options
