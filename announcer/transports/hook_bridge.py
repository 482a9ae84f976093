"""The hook bridge: a local Unix socket from `announcer hook claude-code` to the announcer.

Wire format: the hook connects, sends ONE JSON line
``{"bridge": 1, "payload": {...hook payload...}, "blocking": true|false, "timeout": seconds,
"spawned": [seconds, pid]}`` (when the agent started the hook; see :class:`SpawnOrder`)
and, for a blocking request, waits for ONE JSON line back:
``{"decision": "allow"|"deny"|"ask", "reason": "..."}``.

Only the user may talk to it: the socket lives in a directory of mode 0700, the
socket itself is mode 0600, and the server checks the peer's uid (SO_PEERCRED)
where the platform offers it. The hook's side (``hook_client``) checks the same
from its end before it sends anything. Nothing here ever answers "allow" on its
own: no announcer, a refused connection, a timeout, or a garbled reply all give "ask".
A second announcer never takes over a live socket: the first holds a lock beside it.

The tcp form (Windows; ``ANNOUNCER_HOOK_CHANNEL=tcp`` anywhere): the server listens on
127.0.0.1 and writes ``hook.endpoint`` (port and a fresh secret, mode 0600) in the same
private directory; before a request counts, each end proves it knows the secret
(``hook_client.tcp_connect``), so the same ownership rule holds without peer uids.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import stat
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, get_args

from announcer.agents.files import hook_agents
from announcer.platform.identity import current_uid, owned_by_me
from announcer.platform.locks import open_lock_file, try_lock
from announcer.protocol.events import Decision
from announcer.transports.base import Transport
from announcer.transports.hook_client import (
    DECISIONS,
    MAX_REQUEST_BYTES,
    NO_ANNOUNCER,
    NO_ANSWER,
    PROTOCOL_VERSION,
    SOCKET_ENV,
    UNATTENDED_KEY,
    HookAnswer,
    ask_announcer,
    boot_clock,
    channel_form,
    default_socket_path,
    forwardable,
    peer_uid,
    proof,
    proofs_match,
    read_endpoint,
)

__all__ = [
    "NO_ANNOUNCER",
    "NO_ANSWER",
    "PROTOCOL_VERSION",
    "SOCKET_ENV",
    "HookAnswer",
    "HookBridgeServer",
    "HookBridgeTransport",
    "SpawnOrder",
    "ask_announcer",
    "default_socket_path",
    "forwardable",
]


def _prepare_directory(path: Path) -> None:
    directory = path.parent
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = os.lstat(directory)
    if not stat.S_ISDIR(info.st_mode) or not owned_by_me(info.st_uid):
        raise PermissionError(
            f"{directory} belongs to another user; refusing to put the hook socket there"
        )
    if current_uid() is not None and stat.S_IMODE(info.st_mode) & 0o077:
        if not directory.name.startswith("announcer"):
            raise PermissionError(
                f"{directory} is open to other users (mode {stat.S_IMODE(info.st_mode):o});"
                " the hook socket needs a directory of mode 700"
            )
        os.chmod(directory, 0o700)


# -- the announcer's side ----------------------------------------------------

# How long an announce-only request may wait, counted from when the agent started its
# hook, for hooks the agent started earlier. Interpreters start in 30-250 ms here
# (more on a busy machine), and announce-only hooks run side by side (``"async": true``)
# or hand over to a background process (``--detach``), so they can arrive out of order.
SPAWN_ORDER_HOLD_SECONDS = 0.5
# A stamp further off than this is not believed (a clock that jumped, a hostile value).
SPAWN_STAMP_SLACK_SECONDS = 30.0


class SpawnOrder:
    """Lets hook requests go on in the order the agent STARTED the hooks, not as they arrive.

    Pure and clocked by the caller (``boot_clock``, the clock of the hooks' ``spawned``
    stamps). An announce-only request waits until ``hold_seconds`` after its hook was
    started, unless it already arrived that late. A blocking request (a question) never
    waits. Whatever goes on takes every earlier-started request that is waiting with
    it, earliest first. A request without a believable stamp goes on at once.
    """

    def __init__(self, hold_seconds: float = SPAWN_ORDER_HOLD_SECONDS) -> None:
        self.hold_seconds = hold_seconds
        self._waiting: dict[int, tuple[tuple[float, int, int], float]] = {}  # ticket -> key, due
        self._tickets = 0

    def arrive(self, spawned: object, *, blocking: bool, now: float) -> int:
        """Register a request; returns its ticket for :meth:`release`."""
        self._tickets += 1
        ticket = self._tickets
        stamp = _spawn_stamp(spawned, now)
        if stamp is None:
            key, due = (now, 0, ticket), now
        else:
            started, pid = stamp
            key = (started, pid, ticket)
            due = now if blocking else max(now, started + self.hold_seconds)
        self._waiting[ticket] = (key, due)
        return ticket

    def release(self, now: float) -> list[int]:
        """The tickets that go on now, earliest-started first."""
        due_keys = [key for key, due in self._waiting.values() if due <= now]
        if not due_keys:
            return []
        last = max(due_keys)
        going = sorted(
            (key, ticket) for ticket, (key, _due) in self._waiting.items() if key <= last
        )
        for _key, ticket in going:
            del self._waiting[ticket]
        return [ticket for _key, ticket in going]

    def next_due(self) -> float | None:
        return min((due for _key, due in self._waiting.values()), default=None)

    def __len__(self) -> int:
        return len(self._waiting)


def _spawn_stamp(spawned: object, now: float) -> tuple[float, int] | None:
    """``[seconds on boot_clock, pid]`` from the request, if it is believable."""
    if not isinstance(spawned, list) or len(spawned) != 2:
        return None
    started, pid = spawned
    if not isinstance(started, int | float) or isinstance(started, bool):
        return None
    if not isinstance(pid, int) or isinstance(pid, bool):
        return None
    if not now - SPAWN_STAMP_SLACK_SECONDS <= started <= now + 1.0:
        return None
    return float(started), pid


RequestHandler = Callable[[dict[str, Any], bool, float, str], Awaitable[HookAnswer | None]]
#: ``on_reply(payload, delivered)`` after a blocking request: the reply written to the hook,
#: or None when nothing reached it (it hung up while it waited, or the write failed)
ReplyHandler = Callable[[dict[str, Any], HookAnswer | None], None]

#: The message a waiting handler is cancelled with when its hook hangs up (the hook process
#: was killed, or gave up): whatever the user answers now reaches no one.
HOOK_HUNG_UP = "the hook hung up"


def hook_hung_up(stop: BaseException) -> bool:
    """Whether a handler's cancellation is its hook hanging up (not announcer ending)."""
    return isinstance(stop, asyncio.CancelledError) and HOOK_HUNG_UP in stop.args


async def _hang_up(reader: asyncio.StreamReader) -> None:
    """Returns when the hook closes its end: it sends nothing after its one request line,
    so the end of the stream (or a reset) is the hook gone."""
    with contextlib.suppress(ConnectionError, OSError):
        while await reader.read(4096):
            pass


class HookBridgeServer:
    """Listens on the socket; hands each payload to ``handler(payload, blocking, timeout, agent)``.

    For a blocking request the handler returns the user's answer (or None for
    "no answer", which the hook turns into ``ask``). The handler is given the
    hook's own timeout so it can withdraw the prompt when the hook stops waiting.
    A hook that hangs up while it waits (killed) gets its handler cancelled with
    :data:`HOOK_HUNG_UP`; ``on_reply`` hears what reached the hook, if anything.
    """

    def __init__(
        self,
        handler: RequestHandler,
        path: Path | None = None,
        on_reply: ReplyHandler | None = None,
    ) -> None:
        self.handler = handler
        self.on_reply = on_reply
        self.path = path or default_socket_path()
        self._server: asyncio.AbstractServer | None = None
        self._lock_fd: int | None = None
        self._socket_id: tuple[int, int] | None = None
        self.dropped = (
            0  # requests refused (wrong user, garbled, oversize), each logged by the caller
        )
        self.order = SpawnOrder()
        self.form = channel_form()
        self._secret: bytes | None = None  # the tcp form's, also in the endpoint file
        self._turns: dict[int, asyncio.Future[None]] = {}
        self._order_timer: asyncio.TimerHandle | None = None

    async def start(self) -> None:
        _prepare_directory(self.path)
        self._lock_fd = _take_lock(self.path)  # refuses while another announcer serves here
        try:
            if self.form == "tcp":
                await self._start_tcp()
                return
            if sys.platform == "win32":  # channel_form() is always tcp there
                raise RuntimeError("Unix sockets are not available on Windows")
            if self.path.is_socket() and await _alive(self.path):  # one without the lock
                raise RuntimeError(f"another announcer already listens on {self.path}")
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()  # a stale socket: its announcer is gone (it held no lock)
            old_umask = os.umask(0o177)  # the socket is born 0600
            try:
                self._server = await asyncio.start_unix_server(
                    self._serve, path=str(self.path), limit=MAX_REQUEST_BYTES + 1
                )
            finally:
                os.umask(old_umask)
            os.chmod(self.path, 0o600)
            info = os.lstat(self.path)
            self._socket_id = (info.st_dev, info.st_ino)
        except BaseException:
            os.close(self._lock_fd)
            self._lock_fd = None
            raise

    async def _start_tcp(self) -> None:
        """Loopback TCP on a free port, and the endpoint file only this user can read."""
        if self.path.is_file() and await _alive_tcp(self.path):  # one without the lock
            raise RuntimeError(f"another announcer already listens on {self.path}")
        self._server = await asyncio.start_server(
            self._serve, "127.0.0.1", 0, limit=MAX_REQUEST_BYTES + 1
        )
        port = self._server.sockets[0].getsockname()[1]
        self._secret = secrets.token_bytes(32)
        endpoint = json.dumps({"port": port, "secret": self._secret.hex()}).encode()
        fresh = self.path.with_name(f".{self.path.name}.{secrets.token_hex(4)}")
        fd = os.open(fresh, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)  # born 0600
        try:
            os.write(fd, endpoint)
        finally:
            os.close(fd)
        os.replace(fresh, self.path)
        info = os.lstat(self.path)
        self._socket_id = (info.st_dev, info.st_ino)

    async def close(self) -> None:
        if self._order_timer is not None:
            self._order_timer.cancel()
            self._order_timer = None
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None
        if self._socket_id is not None:
            # only the socket this server made: never another announcer's
            with contextlib.suppress(OSError):
                info = os.lstat(self.path)
                if (info.st_dev, info.st_ino) == self._socket_id:
                    self.path.unlink()
            self._socket_id = None
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    async def __aenter__(self) -> HookBridgeServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            hook_proof: str | None = None
            if self.form == "tcp":
                hook_proof = await self._challenge(reader, writer)
                if hook_proof is None:
                    self.dropped += 1
                    return
            else:
                sock = writer.get_extra_info("socket")
                uid = peer_uid(sock) if sock is not None else None
                if uid is not None and uid != current_uid():
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
            except (ValueError, RecursionError):
                self.dropped += 1
                return
            payload = request.get("payload") if isinstance(request, dict) else None
            if not isinstance(payload, dict):
                self.dropped += 1
                return
            if hook_proof is not None and not proofs_match(hook_proof, request.get("proof")):
                self.dropped += 1  # a hook that does not know the secret: another user's
                return
            blocking = request.get("blocking") is True
            timeout = request.get("timeout")
            wait = float(timeout) if isinstance(timeout, int | float) and timeout > 0 else 60.0
            agent = request.get("agent")
            agent = agent if isinstance(agent, str) and agent in hook_agents() else "claude-code"
            if blocking:
                # no one at the agent's own dialog (`claude -p`): no answer is a denial
                payload[UNATTENDED_KEY] = request.get("attended") is False
            await self._turn(request.get("spawned"), blocking)
            if blocking:
                await self._answer(payload, wait, agent, reader, writer)
            else:
                await self.handler(payload, blocking, wait, agent)
        except (ConnectionError, OSError):
            pass  # the hook gave up (its own timeout); nothing to answer
        except asyncio.CancelledError:
            # announcer is ending: the hook sees the connection close, which it takes as no
            # answer (never an allow). Python 3.11's stream callback would print a cancelled
            # handler as "Exception in callback ... CancelledError" on the terminal.
            pass
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError, OSError):
                await writer.wait_closed()

    async def _answer(
        self,
        payload: dict[str, Any],
        wait: float,
        agent: str,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        """Ask, and write the answer back while the hook still waits for it.

        The hook may be killed while the user thinks: its end of the connection closing
        cancels the question's handler (:data:`HOOK_HUNG_UP`), and no answer is written
        or said to have been given. ``on_reply`` hears what was delivered, or None.
        """
        delivered: HookAnswer | None = None
        asking = asyncio.ensure_future(self.handler(payload, True, wait, agent))
        gone = asyncio.ensure_future(_hang_up(reader))
        try:
            await asyncio.wait({asking, gone}, return_when=asyncio.FIRST_COMPLETED)
            if not asking.done():  # hung up first: the question is withdrawn
                asking.cancel(HOOK_HUNG_UP)
                await asyncio.wait({asking})
                return
            answer = asking.result()
            if gone.done():
                return  # answered as it hung up: nothing can reach it
            reply = answer if answer is not None and answer.decision in DECISIONS else NO_ANSWER
            writer.write(
                json.dumps({"decision": reply.decision, "reason": reply.reason}).encode() + b"\n"
            )
            await writer.drain()
            delivered = reply
        finally:
            gone.cancel()
            if not asking.done():
                asking.cancel()  # announcer is ending
            if self.on_reply is not None:
                self.on_reply(payload, delivered)

    async def _challenge(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> str | None:
        """The tcp form's handshake: prove we know the secret over the hook's nonce, and
        return the proof the hook must send back over ours (None: not a hook of ours)."""
        assert self._secret is not None
        try:
            hello = json.loads(await asyncio.wait_for(reader.readuntil(b"\n"), 10.0))
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError):
            return None
        except (ValueError, RecursionError):
            return None
        nonce = hello.get("hello") if isinstance(hello, dict) else None
        if not isinstance(nonce, str) or not 16 <= len(nonce) <= 128:
            return None
        ours = secrets.token_hex(16)
        reply = {"proof": proof(self._secret, b"announcer", nonce), "nonce": ours}
        writer.write(json.dumps(reply).encode() + b"\n")
        await writer.drain()
        return proof(self._secret, b"hook", ours)

    async def _turn(self, spawned: object, blocking: bool) -> None:
        """Wait until the requests from hooks the agent started earlier have gone on."""
        ticket = self.order.arrive(spawned, blocking=blocking, now=boot_clock())
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._turns[ticket] = turn
        self._release()
        try:
            await turn
        finally:
            self._turns.pop(ticket, None)

    def _release(self) -> None:
        if self._order_timer is not None:
            self._order_timer.cancel()
            self._order_timer = None
        for ticket in self.order.release(boot_clock()):
            turn = self._turns.get(ticket)
            if turn is not None and not turn.done():
                turn.set_result(None)  # resumed in this order: earliest-started first
        due = self.order.next_due()
        if due is not None:
            delay = max(0.0, due - boot_clock()) + 0.005
            self._order_timer = asyncio.get_running_loop().call_later(delay, self._release)


def _take_lock(path: Path) -> int:
    """An exclusive lock on ``hook.sock.lock`` beside the socket, held while we serve."""
    lock_path = path.with_name(path.name + ".lock")
    fd = open_lock_file(str(lock_path))
    if not try_lock(fd):
        os.close(fd)
        raise RuntimeError(f"another announcer already listens on {path}")
    return fd


async def _alive_tcp(path: Path) -> bool:
    endpoint = read_endpoint(path)
    if endpoint is None:
        return False
    try:
        _reader, writer = await asyncio.wait_for(
            asyncio.open_connection("127.0.0.1", endpoint[0]), 1.0
        )
    except (OSError, TimeoutError):
        return False
    writer.close()
    return True


async def _alive(path: Path) -> bool:
    if sys.platform == "win32":
        return await _alive_tcp(path)
    try:
        _reader, writer = await asyncio.wait_for(asyncio.open_unix_connection(str(path)), 1.0)
    except (OSError, TimeoutError):
        return False
    writer.close()
    return True


# A question withdrawn because the agent decided elsewhere (its own dialog, Stop).
WITHDRAWN = HookAnswer("ask", "Decided in the agent itself.")
# Why an answer reached no hook (the runtime says "Nothing was sent: ..." with it).
HOOK_GONE_REASON = "the agent stopped waiting"


# -- the bridge as a runtime transport ------------------------------------------


class HookBridgeTransport(Transport):
    """The hook bridge seen by the runtime as one more event source.

    Hook payloads come out of :meth:`frames` as AAEP events (through the agent's
    mapping file); a blocking hook becomes an ``agent.awaiting.confirmation`` whose
    ``confirmation.reply`` (given to :meth:`send`) decides it: accept -> allow,
    reject -> deny. No reply before the hook's deadline -> ``ask``, and the
    question is withdrawn with a state change.
    """

    # its events are announcer's own mapping of hook payloads: trusted with x-announcer
    maps_events = True

    def __init__(self, path: Path | None = None) -> None:
        from announcer.formats import get_adapter
        from announcer.formats.hooks import HookDesk, MappedHookAdapter

        self.desks: dict[str, HookDesk] = {}
        for agent, known in hook_agents().items():
            adapter = get_adapter(f"{agent}-hooks")
            assert isinstance(adapter, MappedHookAdapter)
            # Codex's PreToolUse cannot ask; it waits to hear whether a question follows
            self.desks[agent] = HookDesk(adapter, hold_pre_tool_use=known.hold_pre_tool_use)
        self._timer: asyncio.TimerHandle | None = None
        self.server = HookBridgeServer(self._handle, path, on_reply=self._replied)
        self.source_id = f"hooks:{self.server.path}"
        self.description = f"coding-agent hooks on {self.server.path}"
        self.finite = False
        self._frames: asyncio.Queue[str | None] = asyncio.Queue()
        self._pending: dict[str, asyncio.Future[HookAnswer]] = {}
        # while a hook waits: its request (by the payload's id) -> its agent and token
        self._asked: dict[int, tuple[str, str]] = {}
        # an answer given: whether it reached the hook (``send`` says "Sent" only then)
        self._delivered: dict[str, asyncio.Future[bool]] = {}

    async def connect(self) -> None:
        from announcer.transports.base import TransportRefused

        try:
            await self.server.start()
        except (OSError, RuntimeError) as exc:  # a foreign socket dir, another announcer
            # never retried: the other announcer keeps its socket, and the user hears why
            raise TransportRefused(
                f"cannot listen for hooks on {self.server.path}: {exc}"
            ) from None

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
        from announcer.transports.base import TransportError

        token = str(message.get("reply_token"))
        future = self._pending.get(token)
        if future is None or future.done():
            # the hook no longer waits (it hung up, or its time ran out): nothing is sent
            raise TransportError(HOOK_GONE_REASON)
        decision = message.get("decision")
        if decision not in get_args(Decision):
            return None
        delivered: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._delivered[token] = delivered
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
        if not await delivered:  # "Sent" and "Allowed" only for what reached the hook
            raise TransportError(HOOK_GONE_REASON)
        return None

    async def close(self, reason: str = "subscriber_shutdown") -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        for future in self._pending.values():
            if not future.done():
                future.set_result(NO_ANSWER)
        for delivered in self._delivered.values():
            if not delivered.done():
                delivered.set_result(False)
        await self.server.close()
        self._frames.put_nowait(None)

    def _queue(self, events: list[dict[str, Any]]) -> None:
        for event in events:
            self._frames.put_nowait(json.dumps(event, ensure_ascii=False))

    async def _handle(
        self, payload: dict[str, Any], blocking: bool, timeout: float, agent: str
    ) -> HookAnswer | None:
        import time

        desk = self.desks[agent]
        if not blocking:
            events, withdrawn = desk.hook(payload, time.time())
            self._queue(events)
            for gone in withdrawn:  # decided in the agent's own dialog: the hook may go
                waiting = self._pending.get(gone)
                if waiting is not None and not waiting.done():
                    waiting.set_result(WITHDRAWN)
            self._schedule(desk)
            return None
        budget = max(0.5, timeout - 2)  # answer the hook before it gives up
        token, events = desk.ask(payload, time.time(), timeout_seconds=max(1, int(budget)))
        self._queue(events)
        if token is None:
            return None
        future: asyncio.Future[HookAnswer] = asyncio.get_running_loop().create_future()
        self._pending[token] = future
        self._asked[id(payload)] = (agent, token)
        answer: HookAnswer | None = None
        try:
            answer = await asyncio.wait_for(asyncio.shield(future), timeout=budget)
        except TimeoutError:
            answer = None
        finally:
            self._pending.pop(token, None)
        if answer is WITHDRAWN:
            self._asked.pop(id(payload), None)
            return NO_ANSWER  # the agent has its answer; it no longer waits for ours
        return answer  # said once written to the hook (_replied)

    def _replied(self, payload: dict[str, Any], delivered: HookAnswer | None) -> None:
        """After a blocking request: "Allowed." and what follows only for an answer that
        reached the hook; a hook that hung up (killed) withdraws its question in words."""
        import time

        asked = self._asked.pop(id(payload), None)
        if asked is None:
            return  # withdrawn already (decided in the agent itself): said then
        agent, token = asked
        desk = self.desks[agent]
        reached = self._delivered.pop(token, None)
        if delivered is None:
            self._queue(desk.hung_up(token, time.time()))
        else:
            decision = delivered.decision if delivered.decision in ("allow", "deny") else None
            # No answer: the engine's own timer closes the question and says so, once.
            self._queue(desk.answered(token, decision, time.time(), say_timeout=False))
        if reached is not None and not reached.done():
            reached.set_result(delivered is not None)

    def _schedule(self, desk: Any) -> None:
        """Say held PreToolUse calls once their wait is over."""
        import time

        due = desk.next_due()
        if due is None:
            return
        if self._timer is not None:
            self._timer.cancel()

        def release() -> None:
            self._timer = None
            for each in self.desks.values():
                self._queue(each.due(time.time()))
                if each.next_due() is not None:
                    self._schedule(each)

        loop = asyncio.get_running_loop()
        self._timer = loop.call_later(max(0.0, due - time.time()) + 0.01, release)
