"""Handshake over transports that carry both directions as one message stream.

WebSocket (B.2.3), Unix sockets (B.4) and stdio (B.6) all send the
``subscription.request`` as the first message and read the answer from the
same stream. Events that arrive before any answer mean the producer does not
do the handshake (Level 1): they are kept and handed to the runtime.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from announcer.transports.base import (
    HandshakeOutcome,
    Transport,
    TransportError,
    decode_handshake_answer,
    is_handshake_answer,
    message_type,
)


class MessageStreamTransport(Transport):
    def __init__(self) -> None:
        self._early: list[str] = []

    async def _read(self) -> str | None:
        """Next whole message as JSON text, or None at end of stream."""
        raise NotImplementedError

    async def _write(self, message: dict[str, Any]) -> None:
        raise NotImplementedError

    async def handshake(self, request: dict[str, Any], timeout: float) -> HandshakeOutcome:
        await self._write(request)
        early: list[str] = []
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            remaining = deadline - loop.time()
            if remaining <= 0:
                return HandshakeOutcome(None, early)
            try:
                raw = await asyncio.wait_for(self._read(), remaining)
            except TimeoutError:
                return HandshakeOutcome(None, early)
            if raw is None:
                if early:
                    return HandshakeOutcome(None, early)
                raise TransportError("the producer closed the connection during the handshake")
            kind = message_type(raw)
            if is_handshake_answer(kind):
                answer = decode_handshake_answer(raw)
                if answer is not None:
                    return HandshakeOutcome(answer, early)
            early.append(raw)
            if kind is not None and kind.startswith("aaep:"):
                # An event before any answer: this producer has no handshake (§9.3.3).
                return HandshakeOutcome(None, early)

    async def frames(self) -> AsyncIterator[str]:
        while True:
            raw = await self._read()
            if raw is None:
                return
            yield raw

    async def send(self, message: dict[str, Any]) -> dict[str, Any] | None:
        await self._write(message)
        return None
