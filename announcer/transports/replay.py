"""JSON Lines replay from a file or standard input (the ``replay`` use case, §8.6).

A recording has no producer on the other end: no handshake, no replies.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from typing import Any

from announcer.transports.base import (
    HandshakeOutcome,
    Transport,
    TransportError,
    TransportOptions,
)


class ReplayTransport(Transport):
    def __init__(self, path: str, options: TransportOptions, source_id: str | None = None) -> None:
        self.path = path
        self.options = options
        self.source_id = source_id or ("stdin" if path == "-" else path)
        # Said as "Connected to session.jsonl.": its name says which file; the folders
        # before it were heard as a long string of words (issue 30 item 8).
        self.description = "standard input" if path == "-" else (os.path.basename(path) or path)
        self.finite = True

    async def connect(self) -> None:
        if self.path != "-":
            try:
                with open(self.path, "rb"):
                    pass
            except OSError as exc:
                raise TransportError(f"cannot open {self.path}: {exc.strerror}") from None

    async def handshake(self, request: dict[str, Any], timeout: float) -> HandshakeOutcome:
        return HandshakeOutcome(None)

    async def frames(self) -> AsyncIterator[str]:
        limit = self.options.max_frame_bytes
        if self.path == "-":
            loop = asyncio.get_running_loop()
            reader = asyncio.StreamReader(limit=limit + 16)
            await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
            while True:
                try:
                    line = await reader.readline()
                except ValueError:
                    self.options.count_drop(f"line over {limit} bytes")
                    continue
                if not line:
                    return
                text = line.decode("utf-8", "replace").strip()
                if text:
                    yield text
            return
        with open(self.path, "rb") as handle:
            for line in handle:
                if len(line) > limit:
                    self.options.count_drop(f"line over {limit} bytes")
                    continue
                text = line.decode("utf-8", "replace").strip()
                if text:
                    yield text
                await asyncio.sleep(0)

    async def send(self, message: dict[str, Any]) -> dict[str, Any] | None:
        raise TransportError("a recording cannot take replies")

    async def close(self, reason: str = "subscriber_shutdown") -> None:
        return None
