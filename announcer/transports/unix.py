"""Appendix B.4: Unix domain socket, length-prefixed (default) or NDJSON framing."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import struct
import sys
from collections.abc import Awaitable
from typing import Any

from announcer.platform.identity import current_uid
from announcer.transports.base import TransportError, TransportOptions
from announcer.transports.failure import Cause, Fault, os_cause
from announcer.transports.stream import MessageStreamTransport


class UnixSocketTransport(MessageStreamTransport):
    def __init__(self, path: str, options: TransportOptions, source_id: str | None = None) -> None:
        super().__init__()
        if options.unix_framing not in ("length", "ndjson"):
            raise TransportError("--unix-framing must be 'length' or 'ndjson'")
        self.path = path
        self.options = options
        self.source_id = source_id or f"unix:{path}"
        self.description = f"unix:{path}"
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    async def connect(self) -> None:
        if sys.platform == "win32":
            raise TransportError(
                f"unix:{self.path}: Unix sockets are not available on Windows; "
                "ask the producer for ws://127.0.0.1 instead"
            )
        try:
            self._reader, self._writer = await asyncio.wait_for(
                asyncio.open_unix_connection(self.path, limit=self.options.max_frame_bytes + 16),
                self.options.connect_timeout,
            )
        except (OSError, TimeoutError) as exc:
            raise TransportError(
                f"cannot connect to unix:{self.path}: {exc}", os_cause(exc)
            ) from None
        self._check_peer()

    def _check_peer(self) -> None:
        """B.4.5 the other end must run as this user (or root), where the OS tells us."""
        assert self._writer is not None
        sock = self._writer.get_extra_info("socket")
        if sock is None or not hasattr(socket, "SO_PEERCRED"):
            return
        creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        _pid, uid, _gid = struct.unpack("3i", creds)
        if uid not in (current_uid(), 0):
            self._writer.close()
            raise TransportError(
                f"unix:{self.path} belongs to another user (uid {uid}); refusing to listen"
            )

    async def _read(self) -> str | None:
        reader = self._reader
        if reader is None:
            return None
        limit = self.options.max_frame_bytes
        while True:
            try:
                if self.options.unix_framing == "length":
                    (length,) = struct.unpack(">I", await reader.readexactly(4))
                    if length > limit:
                        # Skip it in bounded chunks rather than buffer it.
                        while length:
                            chunk = await self._rest(reader.readexactly(min(length, 65536)))
                            length -= len(chunk)
                        self.options.drop_oversize()
                        continue
                    data = await self._rest(reader.readexactly(length))
                else:
                    # A quiet producer may wait forever between lines; once a line has
                    # begun, its end must come within the stall time (no slow loris).
                    first = await reader.readexactly(1)
                    if first == b"\n":
                        continue
                    try:
                        data = first + await self._rest(reader.readuntil(b"\n"))
                    except asyncio.LimitOverrunError:
                        await self._skip_rest_of_line(reader)
                        self.options.drop_oversize()
                        continue
                    except asyncio.IncompleteReadError as exc:
                        data = first + exc.partial  # a last line without its newline
                    if not data.strip():
                        continue
            except asyncio.IncompleteReadError as exc:
                if exc.partial:
                    raise TransportError(
                        "the producer closed mid-message", Cause(Fault.CLOSED)
                    ) from None
                return None
            except ConnectionError as exc:
                raise TransportError(
                    f"the Unix socket broke: {exc}", os_cause(exc, "the Unix socket broke")
                ) from None
            try:
                return data.decode("utf-8")
            except UnicodeDecodeError:
                self.options.drop_not_utf8()

    async def _rest(self, read: Awaitable[bytes]) -> bytes:
        """The rest of a message already begun: as slow as the stall time, no slower."""
        stall = self.options.stall_seconds
        try:
            return await asyncio.wait_for(read, stall)
        except TimeoutError:
            raise TransportError(
                f"the producer stalled: a message began but did not end within {stall:g} seconds",
                Cause(Fault.STALLED),
            ) from None

    @staticmethod
    async def _skip_rest_of_line(reader: asyncio.StreamReader) -> None:
        """Discard the rest of an over-long line in bounded steps, keeping what follows."""
        while True:
            try:
                await reader.readuntil(b"\n")
                return
            except asyncio.LimitOverrunError as exc:
                await reader.readexactly(exc.consumed)
            except asyncio.IncompleteReadError:
                return

    async def _write(self, message: dict[str, Any]) -> None:
        if self._writer is None:
            raise TransportError("not connected")
        data = json.dumps(message, ensure_ascii=False).encode("utf-8")
        if self.options.unix_framing == "length":
            self._writer.write(struct.pack(">I", len(data)) + data)
        else:
            self._writer.write(data + b"\n")
        try:
            await self._writer.drain()
        except ConnectionError as exc:
            raise TransportError(
                f"the Unix socket broke: {exc}", os_cause(exc, "the Unix socket broke")
            ) from None

    async def close(self, reason: str = "subscriber_shutdown") -> None:
        if self._writer is not None:
            self._writer.close()
            with contextlib.suppress(Exception):
                await self._writer.wait_closed()
            self._writer = None
            self._reader = None
