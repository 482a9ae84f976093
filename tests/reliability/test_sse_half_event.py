"""Half an SSE event, then silence, is a stall (issue 29 item 5); silence between events is not.

Issue 22 item 11 took the read timeout off the event stream (AAEP requires no heartbeat,
so a producer may be silent between events as long as it likes), and with it went the
only thing that noticed a producer stopping in the middle of an event. The transport
now keeps a deadline only while an event is incomplete. The loopback producer below
is real; the transport's clock is injected, so the verdict never depends on how fast
the machine is: the test moves the clock only after the half event was read.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from announcer.transports import TransportError, TransportOptions
from announcer.transports.sse import SseTransport
from tests.reliability.hostile import (
    ACCEPTED,
    HttpProducer,
    Request,
    event,
    frame,
    listener,
    open_event_stream,
    respond,
    respond_json,
    running,
    sse,
)
from tests.support.waiting import TIMEOUT, until

STALL = 15.0


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _halves(number: int, summary: str) -> tuple[bytes, bytes]:
    """An event cut in two: whole ``id:`` and ``event:`` lines and half its ``data:``."""
    whole = sse(frame(event(summary, number)), str(number))
    cut = whole.index(b"data: ") + 40
    return whole[:cut], whole[cut:]


def _producer(second_half_after: asyncio.Event | None, before: asyncio.Event) -> HttpProducer:
    """Event 1 whole; after ``before`` is set, half of event 2; the rest of it only after
    ``second_half_after`` (never, when None)."""

    async def handle(request: Request, writer: asyncio.StreamWriter) -> None:
        if request.method == "POST":
            await respond_json(writer, ACCEPTED)
        elif request.path.startswith("/aaep/v1/events"):
            await open_event_stream(writer)
            writer.write(sse(frame(event("First.", 1)), "1"))
            await writer.drain()
            await before.wait()
            head, tail = _halves(2, "Second.")
            writer.write(head)
            await writer.drain()
            if second_half_after is None:
                await asyncio.Event().wait()  # silent, the connection open, until closed
            else:
                await second_half_after.wait()
                writer.write(tail)
                await writer.drain()
                await asyncio.Event().wait()
        else:
            await respond(writer, "404 Not Found")

    return HttpProducer(handle)


async def _open(producer: HttpProducer, clock: Clock) -> SseTransport:
    transport = SseTransport(producer.origin, TransportOptions(stall_seconds=STALL))
    transport.clock = clock
    await transport.connect()
    await transport.handshake({"type": "subscription.request"}, TIMEOUT)
    return transport


def _summary(raw: str) -> str:
    return str(json.loads(raw)["summary_normal"])


async def test_half_an_event_then_silence_is_a_stall() -> None:
    clock = Clock()
    go = asyncio.Event()
    producer = await _producer(None, go).start()
    transport = await _open(producer, clock)
    frames = transport.frames()
    try:
        assert _summary(await asyncio.wait_for(frames.__anext__(), TIMEOUT)) == "First."
        clock.now += 10 * STALL  # long silence between events: no stall
        go.set()
        following = asyncio.ensure_future(frames.__anext__())
        await until(
            lambda: transport.reader is not None and transport.reader.buffered > 0,
            "half of the second event read",
        )
        assert not following.done()  # half an event in hand is not yet a stall
        clock.now += STALL  # and then nothing, for --stall-timeout seconds
        with pytest.raises(TransportError, match="stalled in the middle of an event"):
            await asyncio.wait_for(following, TIMEOUT)
    finally:
        await frames.aclose()
        await transport.close()
        await producer.close()


async def test_silence_between_events_is_never_a_stall_however_long() -> None:
    clock = Clock()
    go, rest = asyncio.Event(), asyncio.Event()
    producer = await _producer(rest, go).start()
    transport = await _open(producer, clock)
    frames = transport.frames()
    try:
        assert _summary(await asyncio.wait_for(frames.__anext__(), TIMEOUT)) == "First."
        clock.now += 1000 * STALL  # the producer thinks a long time between events
        go.set()
        following = asyncio.ensure_future(frames.__anext__())
        await until(
            lambda: transport.reader is not None and transport.reader.buffered > 0,
            "half of the second event read",
        )
        # the event's own time started when it began, not at the last event: the long
        # silence before it is not held against it
        rest.set()
        assert _summary(await asyncio.wait_for(following, TIMEOUT)) == "Second."
    finally:
        await frames.aclose()
        await transport.close()
        await producer.close()


async def test_the_user_hears_that_the_producer_stalled_mid_event() -> None:
    """End to end on the real clock: a short --stall-timeout, and the sentence the user
    hears (the verdict waits on it; it never measures how long it took)."""
    go = asyncio.Event()
    producer = await _producer(None, go).start()
    go.set()
    session, heard = listener([producer.origin], TransportOptions(stall_seconds=0.5))
    try:
        async with running(session):
            await heard.hears("First.")
            await heard.hears("stalled", bound=TIMEOUT)
    finally:
        await producer.close()
    [said] = [text for text in heard.spoken if "stalled" in text][:1]
    assert "Connection to Hostile lost" in said, heard.spoken
