"""A burst of WebSocket frames is parsed a little per turn of the event loop (issue 13).

asyncio hands the connection up to 256 KiB per read; parsed at once, a flood of small
frames held the loop for 50-150 ms, and no key was answered meanwhile. These tests send
a real burst over loopback and check that other callbacks run between slices, and that
nothing is lost, reordered or read after the close.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from websockets.asyncio.server import serve

from announcer.transports import TransportOptions, open_transport
from announcer.transports import websocket as ws_transport
from tests.producer.live import TIMEOUT
from tests.support.producers import ws_url

FRAMES = 6000


async def _burst(ws: Any) -> None:
    # One synchronous run of writes: the client finds them all waiting in one read.
    for number in range(FRAMES):
        ws.protocol.send_text(json.dumps({"n": number}).encode())
    ws.send_data()
    await ws.close(1000)


async def _read_all(transport: Any) -> list[int]:
    got: list[int] = []
    async for raw in transport.frames():
        got.append(json.loads(raw)["n"])
    return got


async def test_a_burst_is_parsed_between_other_callbacks_and_arrives_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # One slice per turn, whatever the machine's speed, so the count below is exact.
    monkeypatch.setattr(ws_transport, "PARSE_TURN_SECONDS", 0.0)
    parsed = 0
    process_event = ws_transport._AaepConnection.process_event

    def counting(self: Any, event: Any) -> None:
        nonlocal parsed
        parsed += 1
        process_event(self, event)

    monkeypatch.setattr(ws_transport._AaepConnection, "process_event", counting)
    loop = asyncio.get_running_loop()
    per_turn: list[int] = []
    seen = 0

    def heartbeat() -> None:  # another callback, as a key press would be
        nonlocal seen
        per_turn.append(parsed - seen)
        seen = parsed
        if not done.done():
            loop.call_soon(heartbeat)

    done: asyncio.Future[None] = loop.create_future()
    async with serve(_burst, "127.0.0.1", 0, subprotocols=["aaep.v1"]) as server:  # type: ignore[list-item]
        port = server.sockets[0].getsockname()[1]
        transport = open_transport(ws_url(port, "/"), TransportOptions())
        await transport.connect()
        loop.call_soon(heartbeat)
        try:
            got = await asyncio.wait_for(_read_all(transport), TIMEOUT)
        finally:
            done.set_result(None)
            await transport.close()
    assert got == list(range(FRAMES))  # every frame, in order, before the close
    # A frame here is at least 2 bytes on the wire: one slice holds at most this many.
    assert max(per_turn) <= ws_transport.READ_SLICE_BYTES // 2
    assert sum(per_turn) >= FRAMES  # the heartbeat ran all through the burst


async def test_a_burst_with_the_default_budget_arrives_whole_and_in_order() -> None:
    async with serve(_burst, "127.0.0.1", 0, subprotocols=["aaep.v1"]) as server:  # type: ignore[list-item]
        port = server.sockets[0].getsockname()[1]
        transport = open_transport(ws_url(port, "/"), TransportOptions())
        await transport.connect()
        try:
            got = await asyncio.wait_for(_read_all(transport), TIMEOUT)
        finally:
            await transport.close()
    assert got == list(range(FRAMES))
