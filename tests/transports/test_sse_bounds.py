"""§3.7 on SSE: an endless ``data:`` line is skipped as it arrives, never buffered."""

from __future__ import annotations

import asyncio
import json
import tracemalloc

from announcer.protocol import MAX_EVENT_BYTES
from announcer.transports import TransportOptions
from announcer.transports.sse import SseTransport
from announcer.transports.sse_lines import BoundedSseReader, OversizeEvent
from tests.producer.live import TIMEOUT
from tests.support.producers import http_url

HUGE_LINE_BYTES = 16 * 1024 * 1024
GOOD = {
    "@context": "https://aaep-protocol.org/context/v1",
    "type": "aaep:agent.state.changed",
    "event_id": "evt_after_the_flood",
}


async def serve_flood(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """A real HTTP/1.1 SSE response: 16 MiB in one data line, then a good event."""
    await reader.readuntil(b"\r\n\r\n")
    writer.write(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
        b"Cache-Control: no-cache\r\nConnection: close\r\n\r\n"
    )
    writer.write(b": hello\n\nid: 1\nevent: aaep.event\ndata: ")
    piece = b"x" * (64 * 1024)
    for _ in range(HUGE_LINE_BYTES // len(piece)):
        writer.write(piece)
        await writer.drain()
    writer.write(b"\n\n")
    writer.write(b"id: 2\r\nevent: aaep.event\r\ndata: " + json.dumps(GOOD).encode() + b"\r\n\r\n")
    await writer.drain()
    await reader.read()  # hold the stream open until the subscriber leaves
    writer.close()


async def test_a_multi_megabyte_data_line_is_skipped_and_the_next_event_arrives() -> None:
    server = await asyncio.start_server(serve_flood, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    options = TransportOptions(events_path="/events")
    transport = SseTransport(http_url(port), options)
    tracemalloc.start()
    try:
        await transport.connect()
        tracemalloc.reset_peak()
        first = await asyncio.wait_for(transport.frames().__anext__(), TIMEOUT)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        await transport.close()
        server.close()
        await server.wait_closed()
    assert json.loads(first) == GOOD  # the stream went on after the flood
    assert transport.last_event_id == "2"  # the skipped event's id was not taken
    # what our reader held, and what the whole process allocated at its peak (server
    # included), stay far below the 16 MiB line: it was never buffered
    assert transport.reader is not None
    assert transport.reader.peak_buffered <= transport.event_byte_limit
    assert transport.event_byte_limit < MAX_EVENT_BYTES * 2
    assert peak < HUGE_LINE_BYTES // 4
    reasons = [reason for reason, count in options.dropped.items() if count == 1]
    assert reasons == [f"message over {transport.event_byte_limit} bytes"]  # one rule everywhere


def test_reader_splits_lines_at_any_ending_across_chunks_and_resyncs_after_a_big_event() -> None:
    reader = BoundedSseReader(limit=100)
    stream = b"".join(
        [
            b"\xef\xbb\xbfdata: one\r\n\r\n",  # BOM, CRLF
            b"data: " + b"y" * 300 + b"\ndata: more of it\n\n",  # too big: skipped whole
            b"event: aaep.event\rdata: two\rdata: lines\r\r",  # CR only
            b":heartbeat\n" * 50,  # comments are not held
            b"data: three\n\n",
        ]
    )
    got: list[object] = []
    for size in (1, 2, 7, len(stream)):
        reader = BoundedSseReader(limit=100)
        got = []
        for start in range(0, len(stream), size):  # every way of cutting the chunks
            got += reader.feed(stream[start : start + size])
        assert [getattr(e, "data", None) for e in got] == ["one", None, "two\nlines", "three"]
        assert isinstance(got[1], OversizeEvent) and got[1].size > 300
        assert got[2].event == "aaep.event"  # type: ignore[union-attr]
        assert reader.peak_buffered <= 100


def test_many_small_lines_add_up_to_one_event_over_the_limit() -> None:
    reader = BoundedSseReader(limit=100)
    got = reader.feed(b"data: 0123456789\n" * 20 + b"\ndata: ok\n\n")
    assert isinstance(got[0], OversizeEvent)
    assert [e.data for e in got[1:]] == ["ok"]  # type: ignore[union-attr]
