"""A small scripted AAEP producer on loopback WebSocket, for hostile and odd producers.

Our own code, written from the spec (B.2, chapter 5): it answers the handshake, then
runs a script that sends whatever frames a test wants, as fast as the connection
takes them, and keeps every message the subscriber sends back.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

import websockets.asyncio.server as ws_server

from tests.support.producers import ws_url

CONTEXT = "https://aaep-protocol.org/context/v1"
PRODUCER = {"agent_id": "flooder", "agent_name": "Flooder"}
SESSION = "sess_flood"

Script = Callable[["LoopbackProducer", Any], Awaitable[None]]


def event(sequence: int, kind: str, urgency: str = "normal", **fields: Any) -> str:
    """One event of session ``sess_flood`` as JSON text (``kind`` without ``aaep:``)."""
    return json.dumps(
        {
            "@context": CONTEXT,
            "type": kind if ":" in kind else f"aaep:{kind}",
            "event_id": f"evt_{sequence}",
            "session_id": SESSION,
            "sequence_number": sequence,
            "timestamp": "2026-06-30T14:22:20.014Z",
            "producer": PRODUCER,
            "urgency": urgency,
            **fields,
        }
    )


def confirmation(sequence: int, token: str, action: str = "Delete the build folder.") -> str:
    return event(
        sequence,
        "agent.awaiting.confirmation",
        "critical",
        action=action,
        consequence="The folder is removed.",
        reply_token=token,
        timeout_seconds=300,
        default_decision="reject",
        summary_normal=f"Confirm: {action}",
    )


class LoopbackProducer:
    """Serves one script on ``ws://127.0.0.1:PORT``; ``received`` holds what came back."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.received: list[dict[str, Any]] = []
        self.got_message = asyncio.Event()
        self.script_done = asyncio.Event()
        self.stop_flooding = asyncio.Event()
        self.sent = 0
        self.marks: dict[str, float] = {}
        self._server: Any = None

    @property
    def url(self) -> str:
        port = self._server.sockets[0].getsockname()[1]
        return ws_url(port, "")

    async def __aenter__(self) -> LoopbackProducer:
        self._server = await ws_server.serve(
            self._handle,
            "127.0.0.1",
            0,
            subprotocols=["aaep.v1"],  # type: ignore[list-item]
            max_size=None,
        )
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.stop_flooding.set()
        self._server.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._server.wait_closed(), 10)

    def mark(self, name: str) -> None:
        self.marks[name] = time.monotonic()

    async def send(self, websocket: Any, frame: str) -> None:
        await websocket.send(frame)
        self.sent += 1
        if self.sent % 64 == 0:
            await asyncio.sleep(0)  # the subscriber runs in this process too

    async def wait_for_message(self, kind: str, timeout: float = 20) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            for message in self.received:
                if message.get("type") == kind:
                    return message
            remaining = deadline - time.monotonic()
            assert remaining > 0, (
                f"no {kind} received; got {[m.get('type') for m in self.received]}"
            )
            self.got_message.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.got_message.wait(), remaining)

    async def _handle(self, websocket: Any) -> None:
        reader: asyncio.Future[None] | None = None
        try:
            first = json.loads(await asyncio.wait_for(websocket.recv(), 10))
            self.received.append(first)
            if first.get("type") == "subscription.request":
                await websocket.send(
                    json.dumps(
                        {
                            "type": "subscription.accepted",
                            "subscription_id": "sub_flood",
                            "aaep_version": "1.0.0",
                            "producer": PRODUCER,
                            "honored_capabilities": first.get("capabilities", {}),
                        }
                    )
                )
            reader = asyncio.ensure_future(self._read(websocket))
            await self.script(self, websocket)
            self.script_done.set()
            await websocket.wait_closed()
        except Exception:  # the subscriber going away ends the script
            self.script_done.set()
        finally:
            if reader is not None:
                reader.cancel()

    async def _read(self, websocket: Any) -> None:
        with contextlib.suppress(Exception):
            async for message in websocket:
                self.received.append(json.loads(message))
                self.got_message.set()
