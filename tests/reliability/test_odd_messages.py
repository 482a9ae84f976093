"""One behaviour on every transport for odd messages (issue 13.7, docs/transports.md).

The rule: a message that is not UTF-8, or is over the size limit, is dropped and
counted with the same reason on every transport, and the connection stays open, so
the next good event is heard and the user hears no loss. Each transport gets the same
three messages in the same order: invalid UTF-8, an oversize message, a good event.
"""

from __future__ import annotations

import asyncio
import json
import struct
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from announcer.transports import TransportOptions
from announcer.transports.base import NOT_UTF8, oversize_reason
from tests.reliability.hostile import (
    ACCEPTED,
    BOUND,
    HttpProducer,
    Request,
    UnixProducer,
    WsProducer,
    event,
    frame,
    listener,
    open_event_stream,
    respond,
    respond_json,
    running,
    sse,
)

LIMIT = 8 * 1024  # --max-frame-bytes for these tests
BAD_UTF8 = frame(event("Invalid bytes follow: XX")).encode().replace(b"XX", b"\xff\xfe\xc0")
GOOD = "After the odd ones."


def _oversize(size: int) -> bytes:
    return frame(event("big " + "x" * size)).encode()


async def _listen(source: str, options: TransportOptions) -> tuple[Any, Any]:
    session, heard = listener([source], options)
    async with running(session):
        await heard.hears(GOOD)
        await asyncio.sleep(0.3)
    return session, heard


def _check(heard: Any, options: TransportOptions, oversize_limit: int = LIMIT) -> None:
    assert heard.count(GOOD) == 1
    assert heard.count("Invalid bytes") == 0  # never spoken with U+FFFD in it
    assert not any("\ufffd" in text for text in heard.spoken)
    assert heard.count("big x") == 0
    assert heard.count("lost") == 0 and heard.count("Cannot connect") == 0, heard.spoken
    assert options.dropped.get(NOT_UTF8) == 1, options.dropped
    assert options.dropped.get(oversize_reason(oversize_limit)) == 1, options.dropped


async def test_websocket() -> None:
    async def serve(ws: Any, producer: WsProducer) -> None:
        await producer.take(ws)
        await ws.send(frame(ACCEPTED))
        # a text frame whose bytes are not UTF-8: websockets would refuse to send it
        await _send_raw_text(ws, BAD_UTF8)
        await ws.send(_oversize(2 * LIMIT).decode())
        await ws.send(frame(event(GOOD)))
        await asyncio.sleep(BOUND)

    producer = await WsProducer(serve).start()
    options = TransportOptions(max_frame_bytes=LIMIT)
    try:
        _session, heard = await _listen(producer.url, options)
    finally:
        await producer.close()
    _check(heard, options)
    assert producer.connections == 1


async def _send_raw_text(ws: Any, payload: bytes) -> None:
    """A text frame with arbitrary bytes, below websockets' UTF-8-checking API."""
    from websockets.frames import Frame, Opcode

    async with ws.send_context():
        ws.protocol.send_frame(Frame(Opcode.TEXT, payload))


async def test_sse() -> None:
    async def handle(request: Request, writer: asyncio.StreamWriter) -> None:
        if request.method == "POST" and request.path == "/aaep/v1/subscriptions":
            await respond_json(writer, ACCEPTED)
        elif request.path.startswith("/aaep/v1/events"):
            await open_event_stream(writer)
            writer.write(sse(BAD_UTF8, "1"))
            writer.write(sse(_oversize(200 * 1024), "2"))  # past the §3.7 bound on SSE
            writer.write(sse(frame(event(GOOD, 3)), "3"))
            await writer.drain()
            await asyncio.sleep(BOUND)
        else:
            await respond(writer, "404 Not Found")

    producer = await HttpProducer(handle).start()
    options = TransportOptions(max_frame_bytes=LIMIT)
    try:
        session, heard = await _listen(producer.origin, options)
    finally:
        await producer.close()
    _check(heard, options, oversize_limit=session.states[0].transport.event_byte_limit)
    assert len([p for p in producer.paths("GET") if p.startswith("/aaep/v1/events")]) == 1


@pytest.mark.parametrize("framing", ["length", "ndjson"])
async def test_unix_socket(framing: str, tmp_path: Path) -> None:
    def pack(data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + data if framing == "length" else data + b"\n"

    async def serve(reader: Any, writer: Any, producer: UnixProducer) -> None:
        if framing == "length":
            (length,) = struct.unpack(">I", await reader.readexactly(4))
            await reader.readexactly(length)
        else:
            await reader.readline()
        writer.write(pack(frame(ACCEPTED).encode()))
        writer.write(pack(BAD_UTF8))
        writer.write(pack(_oversize(2 * LIMIT)))
        writer.write(pack(frame(event(GOOD)).encode()))
        await writer.drain()
        await asyncio.sleep(BOUND)

    producer = await UnixProducer(str(tmp_path / "p.sock"), serve).start()
    options = TransportOptions(max_frame_bytes=LIMIT, unix_framing=framing)
    try:
        _session, heard = await _listen(f"unix:{producer.path}", options)
    finally:
        await producer.close()
    _check(heard, options)
    assert producer.connections == 1


async def test_stdio(tmp_path: Path) -> None:
    script = tmp_path / "producer.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import json, sys, time
            out = sys.stdout.buffer
            request = json.loads(sys.stdin.readline())
            def rpc(method, params):
                return json.dumps({{"jsonrpc": "2.0", "method": method, "params": params}})
            out.write(json.dumps({{"jsonrpc": "2.0", "id": request["id"],
                                   "result": {json.dumps(ACCEPTED)}}}).encode() + b"\\n")
            out.write(rpc("aaep.event", {{"summary_normal": "Invalid bytes follow: XX"}})
                      .encode().replace(b"XX", b"\\xff\\xfe\\xc0") + b"\\n")
            out.write(rpc("aaep.event", {{"summary_normal": "big " + "x" * {2 * LIMIT}}})
                      .encode() + b"\\n")
            out.write(rpc("aaep.event", {json.dumps(event(GOOD))}).encode() + b"\\n")
            out.flush()
            time.sleep({BOUND})
            """
        )
    )
    options = TransportOptions(max_frame_bytes=LIMIT)
    _session, heard = await _listen(f"stdio:{sys.executable} {script}", options)
    _check(heard, options)


async def test_websocket_message_past_the_wire_cap_is_counted_then_reconnected() -> None:
    """The one exception, documented: past 4 times the limit websockets cannot skip a
    frame and must close (1009). It is counted as the same drop; the user hears the
    loss once and the recovery once, and the producer sees a fresh subscription."""

    async def serve(ws: Any, producer: WsProducer) -> None:
        await producer.take(ws)
        await ws.send(frame(ACCEPTED))
        if producer.connections == 1:
            await ws.send(frame(event("Before.")))
            await asyncio.sleep(2.5)  # up long enough to count as connected
            await ws.send(_oversize(5 * LIMIT).decode())
        else:
            # a new event_id (the old one is a duplicate) and a new state (no short cycle)
            await ws.send(frame(event(GOOD, 2, from_state="thinking", to_state="executing")))
        await asyncio.sleep(BOUND)

    producer = await WsProducer(serve).start()
    options = TransportOptions(max_frame_bytes=LIMIT)
    try:
        _session, heard = await _listen(producer.url, options)
    finally:
        await producer.close()
    assert options.dropped.get(oversize_reason(LIMIT)) == 1, options.dropped
    assert heard.count("Connection to Hostile lost") == 1, heard.spoken
    assert heard.count("Reconnected to Hostile") == 1, heard.spoken
    assert producer.connections == 2
