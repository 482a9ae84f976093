"""The hook bridge: a local Unix socket from `announcer hook claude-code` to the announcer.

Wire format: the hook connects, sends ONE JSON line
``{"bridge": 1, "payload": {...hook payload...}, "blocking": true|false, "timeout": seconds}``
and, for a blocking request, waits for ONE JSON line back:
``{"decision": "allow"|"deny"|"ask", "reason": "..."}``.

Only the user may talk to it: the socket lives in a directory of mode 0700, the
socket itself is mode 0600, and the server checks the peer's uid (SO_PEERCRED)
where the platform offers it. Nothing here ever answers "allow" on its own:
no announcer, a refused connection, a timeout, or a garbled reply all give "ask".
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import stat
import struct
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PROTOCOL_VERSION = 1
SOCKET_ENV = "ANNOUNCER_HOOK_SOCKET"
MAX_REQUEST_BYTES = 1 << 20  # a hook payload is small; refuse anything huge
DECISIONS = ("allow", "deny", "ask")
KNOWN_AGENTS = ("claude-code", "codex")


@dataclass(frozen=True, slots=True)
class HookAnswer:
    decision: str  # allow | deny | ask
    reason: str


NO_ANNOUNCER = HookAnswer("ask", "No announcer is running; the agent asks you itself.")
NO_ANSWER = HookAnswer("ask", "No answer from the announcer in time; the agent asks you itself.")


def default_socket_path() -> Path:
    """$ANNOUNCER_HOOK_SOCKET, else $XDG_RUNTIME_DIR/announcer/hook.sock, else per-user tmp."""
    override = os.environ.get(SOCKET_ENV)
    if override:
        return Path(override)
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    base = Path(runtime) if runtime else Path(tempfile.gettempdir()) / f"announcer-{os.getuid()}"
    if runtime:
        base = base / "announcer"
    return base / "hook.sock"


def _prepare_directory(path: Path) -> None:
    directory = path.parent
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = directory.stat()
    if info.st_uid != os.getuid():
        raise PermissionError(
            f"{directory} belongs to another user; refusing to put the hook socket there"
        )
    if stat.S_IMODE(info.st_mode) & 0o077 and directory.name.startswith("announcer"):
        os.chmod(directory, 0o700)


def peer_uid(sock: socket.socket) -> int | None:
    """The uid of the process at the other end, where the OS tells us (Linux SO_PEERCRED)."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    try:
        raw = sock.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
    except OSError:
        return None
    _pid, uid, _gid = struct.unpack("3i", raw)
    return int(uid)


# -- the announcer's side ----------------------------------------------------

RequestHandler = Callable[[dict[str, Any], bool, float, str], Awaitable[HookAnswer | None]]


class HookBridgeServer:
    """Listens on the socket; hands each payload to ``handler(payload, blocking, timeout, agent)``.

    For a blocking request the handler returns the user's answer (or None for
    "no answer", which the hook turns into ``ask``). The handler is given the
    hook's own timeout so it can withdraw the prompt when the hook stops waiting.
    """

    def __init__(self, handler: RequestHandler, path: Path | None = None) -> None:
        self.handler = handler
        self.path = path or default_socket_path()
        self._server: asyncio.AbstractServer | None = None
        self.dropped = (
            0  # requests refused (wrong user, garbled, oversize), each logged by the caller
        )

    async def start(self) -> None:
        _prepare_directory(self.path)
        if self.path.is_socket():
            if await _alive(self.path):
                raise RuntimeError(f"another announcer already listens on {self.path}")
            self.path.unlink()
        old_umask = os.umask(0o177)  # the socket is born 0600
        try:
            self._server = await asyncio.start_unix_server(
                self._serve, path=str(self.path), limit=MAX_REQUEST_BYTES + 1
            )
        finally:
            os.umask(old_umask)
        os.chmod(self.path, 0o600)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()

    async def __aenter__(self) -> HookBridgeServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            sock = writer.get_extra_info("socket")
            uid = peer_uid(sock) if sock is not None else None
            if uid is not None and uid != os.getuid():
                self.dropped += 1
                return
            try:
                line = await reader.readuntil(b"\n")
            except (asyncio.IncompleteReadError, asyncio.LimitOverrunError):
                self.dropped += 1
                return
            if len(line) > MAX_REQUEST_BYTES:
                self.dropped += 1
                return
            try:
                request = json.loads(line)
            except ValueError:
                self.dropped += 1
                return
            payload = request.get("payload") if isinstance(request, dict) else None
            if not isinstance(payload, dict):
                self.dropped += 1
                return
            blocking = request.get("blocking") is True
            timeout = request.get("timeout")
            wait = float(timeout) if isinstance(timeout, int | float) and timeout > 0 else 60.0
            agent = request.get("agent")
            agent = agent if isinstance(agent, str) and agent in KNOWN_AGENTS else "claude-code"
            answer = await self.handler(payload, blocking, wait, agent)
            if blocking:
                reply = answer if answer is not None and answer.decision in DECISIONS else NO_ANSWER
                writer.write(
                    json.dumps({"decision": reply.decision, "reason": reply.reason}).encode()
                    + b"\n"
                )
                await writer.drain()
        except (ConnectionError, OSError):
            pass  # the hook gave up (its own timeout); nothing to answer
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError, OSError):
                await writer.wait_closed()


async def _alive(path: Path) -> bool:
    try:
        _reader, writer = await asyncio.wait_for(asyncio.open_unix_connection(str(path)), 1.0)
    except (OSError, TimeoutError):
        return False
    writer.close()
    return True


# -- the hook's side (a short-lived synchronous process) ----------------------

# Long strings in a payload (a Write's file content, a command's output) are never
# spoken; only their start travels, so a big edit still reaches the announcer.
MAX_FORWARDED_CHARS = 4096


def shrink(value: Any, depth: int = 0) -> Any:
    if isinstance(value, str):
        if len(value) <= MAX_FORWARDED_CHARS:
            return value
        # Imported here: hook commands start a process per call and most strings are short.
        from announcer.i18n.text import grapheme_floor

        return value[: grapheme_floor(value, MAX_FORWARDED_CHARS)] + "…"
    if depth > 32:
        return None
    if isinstance(value, dict):
        return {str(k): shrink(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [shrink(v, depth + 1) for v in value[:1000]]
    return value


def ask_announcer(
    payload: dict[str, Any],
    *,
    blocking: bool,
    timeout: float,
    path: Path | None = None,
    agent: str = "claude-code",
) -> HookAnswer | None:
    """Send one hook payload; for a blocking one wait up to ``timeout`` seconds for the decision.

    Returns None for a non-blocking send. Every failure becomes ``ask`` (never allow).
    """
    path = path or default_socket_path()
    payload = shrink(payload)
    request = {
        "bridge": PROTOCOL_VERSION,
        "agent": agent,
        "payload": payload,
        "blocking": blocking,
        "timeout": timeout,
    }
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(min(timeout, 5.0))
            sock.connect(str(path))
            sock.sendall(json.dumps(request).encode("utf-8") + b"\n")
            if not blocking:
                return None
            sock.settimeout(timeout)
            data = b""
            while not data.endswith(b"\n"):
                chunk = sock.recv(65536)
                if not chunk:
                    break
                data += chunk
                if len(data) > MAX_REQUEST_BYTES:
                    return NO_ANSWER
    except (FileNotFoundError, ConnectionRefusedError):
        return NO_ANNOUNCER if blocking else None
    except TimeoutError:
        return NO_ANSWER if blocking else None
    except OSError:
        return NO_ANNOUNCER if blocking else None
    try:
        reply = json.loads(data)
    except ValueError:
        return NO_ANSWER
    decision = reply.get("decision") if isinstance(reply, dict) else None
    reason = reply.get("reason") if isinstance(reply, dict) else None
    if decision not in DECISIONS:
        return NO_ANSWER
    return HookAnswer(str(decision), str(reason) if isinstance(reason, str) else "")


# -- the bridge as a runtime transport ------------------------------------------


class HookBridgeTransport:
    """The hook bridge seen by the runtime as one more event source.

    Hook payloads come out of :meth:`frames` as AAEP events (through the agent's
    mapping file); a blocking hook becomes an ``agent.awaiting.confirmation`` whose
    ``confirmation.reply`` (given to :meth:`send`) decides it: accept -> allow,
    reject -> deny. No reply before the hook's deadline -> ``ask``, and the
    question is withdrawn with a state change.
    """

    def __init__(self, path: Path | None = None) -> None:
        from announcer.formats import get_adapter
        from announcer.formats.hooks import MappedHookAdapter

        self.adapters: dict[str, MappedHookAdapter] = {}
        for agent in KNOWN_AGENTS:
            adapter = get_adapter(f"{agent}-hooks")
            assert isinstance(adapter, MappedHookAdapter)
            self.adapters[agent] = adapter
        self.server = HookBridgeServer(self._handle, path)
        self.source_id = f"hooks:{self.server.path}"
        self.description = f"coding-agent hooks on {self.server.path}"
        self.finite = False
        self._frames: asyncio.Queue[str | None] = asyncio.Queue()
        self._pending: dict[str, asyncio.Future[HookAnswer]] = {}

    async def connect(self) -> None:
        from announcer.transports.base import TransportError

        try:
            await self.server.start()
        except (OSError, RuntimeError) as exc:  # a foreign socket dir, another announcer
            raise TransportError(f"cannot listen for hooks on {self.server.path}: {exc}") from None

    async def handshake(self, request: dict[str, Any], timeout: float) -> Any:
        from announcer.transports.base import HandshakeOutcome  # the runtime's own type

        return HandshakeOutcome(None)  # hooks never negotiate: a Level 1 source

    async def frames(self) -> Any:
        while True:
            frame = await self._frames.get()
            if frame is None:
                return
            yield frame

    async def send(self, message: dict[str, Any]) -> dict[str, Any] | None:
        if message.get("type") != "confirmation.reply":
            return None
        future = self._pending.get(str(message.get("reply_token")))
        if future is None or future.done():
            return None  # unknown or already used token (single-use, §6.2)
        decision = message.get("decision")
        if decision == "accept":
            future.set_result(HookAnswer("allow", "Allowed by the user in announcer."))
        elif decision == "reject":
            rationale = message.get("decision_rationale")
            reason = (
                rationale
                if isinstance(rationale, str) and rationale
                else "Denied by the user in announcer."
            )
            future.set_result(HookAnswer("deny", reason))
        return None

    async def close(self, reason: str = "subscriber_shutdown") -> None:
        for future in self._pending.values():
            if not future.done():
                future.set_result(NO_ANSWER)
        await self.server.close()
        self._frames.put_nowait(None)

    def _queue(self, events: list[dict[str, Any]]) -> None:
        for event in events:
            self._frames.put_nowait(json.dumps(event, ensure_ascii=False))

    async def _handle(
        self, payload: dict[str, Any], blocking: bool, timeout: float, agent: str
    ) -> HookAnswer | None:
        import time

        now = time.time()
        adapter = self.adapters[agent]
        if not blocking:
            self._queue(adapter.feed_object(payload, now).events)
            return None
        budget = max(0.5, timeout - 2)  # answer the hook before it gives up
        out = adapter.confirm(payload, now, timeout_seconds=max(1, int(budget)))
        token = next(
            (
                e["reply_token"]
                for e in out.events
                if e.get("type") == "aaep:agent.awaiting.confirmation"
            ),
            None,
        )
        if token is None:
            return None
        future: asyncio.Future[HookAnswer] = asyncio.get_running_loop().create_future()
        self._pending[token] = future
        self._queue(out.events)
        try:
            return await asyncio.wait_for(asyncio.shield(future), timeout=budget)
        except TimeoutError:
            self._queue(
                adapter.withdraw(
                    payload, time.time(), "No answer in time: the agent asks you itself."
                ).events
            )
            return None
        finally:
            self._pending.pop(token, None)
