"""The ACP agent's process and what one connection to it holds (``announcer agent``).

The state every room of the transport shares; the agent's stderr (to the diagnostics
log, never the terminal); its terminal login; ending it and every command it started,
and saying what it left running when it died. The rooms above build on it:
:mod:`announcer.transports.acp_answers` (its questions and the user's answers),
:mod:`announcer.transports.acp_settings` (sessions, modes, settings) and
:mod:`announcer.transports.acp` (the runtime's Transport face, the SDK connection).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from announcer.formats.acp import AcpAdapter
from announcer.formats.acp_logins import LoginChoice, login_choice, terminal_logins
from announcer.formats.speakable import clip
from announcer.i18n.translate import translator
from announcer.transports.acp_wire import GuardedStdio
from announcer.transports.base import TransportError, TransportOptions
from announcer.transports.failure import Cause, os_cause
from announcer.transports.processes import (
    command_line,
    end_family,
    innermost,
    kill_family_now,
    reap,
    same_processes,
    snapshot,
    still_running,
)

# How often the agent's commands are listed while it works (and while it waits).
FAMILY_SNAPSHOT_SECONDS = 1.0
FAMILY_IDLE_SECONDS = 5.0
# ... and at most this often when its messages come in.
FAMILY_NOTE_SECONDS = 0.25
# ... and after a tool call changed, at once, but in a burst of tool calls at most this
# often: a listing reads every process on the machine (14 ms with 140 of them), and 500
# tool calls in a second made the agent's updates wait on /proc (issue 32, step 2). The
# listing a burst held back is taken when this time is up.
FAMILY_AFTER_TOOL_SECONDS = 0.25
TOOL_UPDATES = ("tool_call", "tool_call_update")

log = logging.getLogger("announcer.transports.acp")

#: how long the agent gets to start and answer ``initialize`` and ``session/new``
START_TIMEOUT_SECONDS = 60.0
#: how many times one agent's start offers its terminal login (a login that does not take)
LOGIN_TRIES = 2
#: ``offer_login(agent name, [LoginChoice], cwd)``: the interface asks which
#: login to run, runs it in the user's terminal and returns its exit status (None: not now)
LoginOffer = Callable[[str, list[LoginChoice], str], Awaitable[int | None]]
#: ACP's JSON-RPC error code for "authentication required"
_AUTH_REQUIRED = -32000
#: lines of the agent's stderr kept for the diagnostics after it ends
STDERR_LINES_KEPT = 50
#: the SDK's stdio buffer: large tool outputs arrive as one JSON line
STREAM_LIMIT_BYTES = 16 * 1024 * 1024
#: the longest stderr line kept (the rest of a longer one is skipped, never gathered)
STDERR_LINE_CHARS = 2000
#: events waiting for the engine beyond which the agent's stdout is not read (flow control)
FRAMES_HIGH_WATER = 2000
FRAMES_LOW_WATER = 500


def _dump(model: Any) -> Any:
    """An SDK model as its wire JSON (camelCase), for the sans-I/O adapter."""
    if hasattr(model, "model_dump"):
        return model.model_dump(by_alias=True, exclude_none=True, mode="json")
    return model


def _agent_id(name: str) -> str:
    cleaned = "".join(ch if ch.isalnum() else "-" for ch in name.lower()).strip("-")
    return (cleaned or "acp-agent")[:64]


class AcpProcess:
    """One agent process and its connection's state; the transport's rooms build on it."""

    def __init__(
        self,
        command: Sequence[str],
        *,
        name: str = "Agent",
        label: str | None = None,
        cwd: str | None = None,
        language: str = "en",
        env: dict[str, str] | None = None,
        options: TransportOptions | None = None,
        start_settings: Mapping[str, str | bool] | None = None,
        local: bool = True,
        no_preset: str | None = None,
    ) -> None:
        if not command:
            raise TransportError("no agent command to start")
        self.command = list(command)
        self.cwd = os.path.abspath(cwd or os.getcwd())
        self.env = env
        # ``label``: the short name the user gave it ("claude", "codex") when several agents
        # run side by side; it is what they type after ``@`` and what is said, so the
        # agent's own title (``agentInfo``) does not replace it. Labels are unique per run.
        self.label = label
        self.adapter = AcpAdapter(agent_name=label or name, agent_id=_agent_id(label or name))
        self.adapter.set_language(language)
        self.source_id = f"acp:{label or name}"
        self.description = label or name
        self.session_id: str | None = None
        self.stderr_tail: list[str] = []
        self._process: asyncio.subprocess.Process | None = None
        self._conn: Any = None
        self._frames: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self._pending: dict[str, asyncio.Future[Any]] = {}
        # the agent's own questions (elicitations) waiting for the user, by request key
        self._forms: dict[str, asyncio.Future[Any]] = {}
        # forms that pick one of several "always" options: their future is a permission's
        self._choosing: set[str] = set()
        self._turn: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._closed = False
        self.died = False  # the agent ended on its own (a crash): the run's status is 1
        self._gone = False  # the connection broke (the process may not be reaped yet)
        self._stderr_read: asyncio.Task[Any] | None = None
        self._end_reported = False  # "stopped" is said once, by the first to notice
        self._left_running: list[str] | None = None  # what it left running when it died
        self._family_seen: dict[int, int] = {}  # its commands lately: id -> start time
        self._family_noted = float("-inf")
        self._tool_changed = False  # a tool call changed since the last listing
        self._after_tool_noted = float("-inf")
        self._family_due: asyncio.TimerHandle | None = None  # a listing a burst held back
        self._early: str | None = None  # a message typed before the agent was ready
        # drops (bad lines, unknown sessions, late questions) are counted where the user
        # can read them (:diagnostics), not only logged
        self.options = options or TransportOptions()
        self._room_free = asyncio.Event()
        self._wire: GuardedStdio | None = None
        self._turn_cancelled = False  # :cancel was asked: a question now comes too late
        # applied once the session is open, before any message: ``{"mode": "default"}`` or
        # ``{config option id or category: value}`` (agent data: ask before acting)
        self.start_settings = dict(start_settings or {})
        # a registry agent with no preset of ours: its title, for the one sentence said
        # once its session is open ("No preset for ...: it may act without asking")
        self.no_preset = no_preset
        self._start_config: list[Any] = []
        self._agent_capabilities: Any = None
        self._listed: list[tuple[str, str]] = []  # the sessions :sessions listed last
        self._flush_pending = False  # a timer will say the running calls no question claimed
        # ACP terminal login: only for an agent on this machine (not over ssh), run by the
        # interface that can hand the terminal to it (set by the session: offer_login)
        self.local = local
        self.offer_login: LoginOffer | None = None
        self._logins_tried = 0
        self._restarting = False

    @property
    def busy(self) -> bool:
        """A turn is under way (a prompt waits for its ``stopReason``)."""
        return self._turn is not None and not self._turn.done()

    @property
    def stopped(self) -> bool:
        """The agent process has ended (or announcer closed it): it takes no more messages."""
        if self._closed or self._gone:
            return True
        return self._process is not None and self._process.returncode is not None

    @property
    def ready(self) -> bool:
        """The agent answered ``session/new``: a message goes out at once."""
        return self._conn is not None and self.session_id is not None and not self._closed

    # -- plumbing ----------------------------------------------------------------------------

    def _queue(self, events: list[dict[str, Any]]) -> None:
        for event in events:
            self._frames.put_nowait(event)  # the object: the engine takes it as a model

    def _spawn(self, coroutine: Any) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _read_stderr(self) -> None:
        """The agent's stderr goes to the diagnostics log, never to the user's terminal.

        Read in pieces, each line cut at ``STDERR_LINE_CHARS``: however much an agent
        writes without a newline, the reader keeps going and the agent never blocks.
        """
        assert self._process is not None and self._process.stderr is not None
        stream = self._process.stderr
        line = bytearray()
        while True:
            chunk = await stream.read(65536)
            if not chunk:
                if line:
                    self._stderr_line(bytes(line))
                return
            pieces = chunk.split(b"\n")
            for index, piece in enumerate(pieces):
                if len(line) < STDERR_LINE_CHARS:
                    line += piece[: STDERR_LINE_CHARS - len(line)]
                if index < len(pieces) - 1:
                    self._stderr_line(bytes(line))
                    line.clear()

    def _stderr_line(self, raw: bytes) -> None:
        text = raw.decode("utf-8", "replace").rstrip()
        self.stderr_tail = [*self.stderr_tail[-(STDERR_LINES_KEPT - 1) :], text]
        log.info("agent stderr: %s", text[:500])

    async def _last_words(self) -> None:
        """Its pipe broke: give its stderr a moment to end, so the reason said is its own."""
        reading = self._stderr_read
        if reading is not None and not reading.done():
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(reading), 1.0)

    async def _log_in(self, methods: list[Any]) -> bool:
        """Offer the agent's own terminal login (ACP ``terminal`` auth methods) and run the
        one the user picks in their terminal, through the interface (``offer_login``).
        True when it ended with status 0, so the agent is started again. Only for an
        agent on this machine, and at most :data:`LOGIN_TRIES` times."""
        logins = terminal_logins(methods, self.command)
        if not logins or not self.local or self.offer_login is None:
            return False
        if self._logins_tried >= LOGIN_TRIES:
            return False
        self._logins_tried += 1
        base = dict(os.environ if self.env is None else self.env)
        choices = [login_choice(login, base) for login in logins]
        code = await self.offer_login(self.adapter.agent_name, choices, self.cwd)
        return code == 0

    async def _end_process(self) -> None:
        """SIGTERM to the agent and every process it started, then SIGKILL: nothing is left.

        Its commands may have left its process group (``detached``, ``setsid``): the
        whole family is found from ``/proc`` (:mod:`announcer.transports.processes`;
        on Windows CTRL_BREAK, then the process tree: announcer.platform.process).
        """
        process = self._process
        if process is None:
            return
        try:
            alive = process.returncode is None
            if alive or still_running(process.pid, tree=False):
                await end_family(process.pid, tree=alive)
            if process.returncode is None:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(process.wait(), 2.0)
        finally:
            # Cut short (the runtime bounds its goodbyes): never leave the family running.
            self.kill_now()

    def _note_family(self, params: dict[str, Any] | None = None) -> None:
        """List the agent's commands now, at most every FAMILY_NOTE_SECONDS; and always at
        the first other message after a tool call changed (its command has started by then).
        """
        process = self._process
        now = time.monotonic()
        if process is None or process.returncode is not None:
            return
        update = params.get("update") if isinstance(params, dict) else None
        kind = update.get("sessionUpdate") if isinstance(update, dict) else None
        after_a_tool = self._tool_changed and kind not in TOOL_UPDATES
        self._tool_changed = self._tool_changed or kind in TOOL_UPDATES
        if now - self._family_noted < FAMILY_NOTE_SECONDS and not after_a_tool:
            return
        if after_a_tool:
            wait = self._after_tool_noted + FAMILY_AFTER_TOOL_SECONDS - now
            if wait > 0:
                if self._family_due is None:
                    loop = asyncio.get_running_loop()
                    self._family_due = loop.call_later(wait, self._note_family_due)
                return
            self._after_tool_noted = now
        self._family_noted = now
        self._tool_changed = kind in TOOL_UPDATES
        self._family_seen = snapshot(process.pid)

    def _note_family_due(self) -> None:
        """The listing a burst of tool calls held back."""
        self._family_due = None
        self._note_family()

    async def _remember_family(self) -> None:
        """Keep a recent list of what the agent runs: a command that left its session
        (Node's ``detached``) is found by no other means once the agent has died."""
        process = self._process
        assert process is not None
        while process.returncode is None and not self._closed:
            self._family_noted = float("-inf")
            self._note_family()
            busy = self._turn is not None and not self._turn.done()
            await asyncio.sleep(FAMILY_SNAPSHOT_SECONDS if busy else FAMILY_IDLE_SECONDS)

    async def _end_leftovers(self) -> list[str]:
        """The agent died: end the commands it left running; their command lines."""
        process = self._process
        if process is None:
            return []
        if self._left_running is not None:
            return self._left_running  # the exit and the broken pipe both ask: once
        left = [pid for pid, _ in still_running(process.pid, tree=False)]  # it may be reaped
        detached = [pid for pid in same_processes(self._family_seen) if pid not in left]
        named = innermost(left + detached)
        self._left_running = [] if named is None else [command_line(named)]
        if left:
            await end_family(process.pid, tree=False)
        for pid in detached:  # each in a session of its own, checked to be the same process
            await end_family(pid)
            reap(pid)  # adopted by announcer (a subreaper) when its agent died
        return self._left_running

    def _leftovers_said(self, commands: list[str]) -> str:
        """Whether a command of the agent's was still running (it is stopped now)."""
        _t = translator(self.adapter.language).gettext
        if not commands:
            return _t("Nothing it started is still running.")
        return _t("It left {command} running; announcer stopped it.").format(
            command=clip(" ".join(commands[0].split()), 120)
        )

    def kill_now(self) -> None:
        """SIGKILL to the agent and its whole family at once (announcer is exiting)."""
        process = self._process
        if process is not None:
            kill_family_now(process.pid, tree=process.returncode is None)

    def _failure(self, exc: BaseException) -> str:
        return self._failed_about() + ": " + _detail(exc) + self._last_said()

    def _failure_cause(self, exc: BaseException) -> Cause:
        """The fact behind :meth:`_failure`, with the agent's own last words."""
        return os_cause(exc, self._failed_about()).saying(self._last_words_said())

    def _failed_about(self) -> str:
        return f"the agent {self.label or Path(self.command[0]).name!r} failed"

    def _last_said(self) -> str:
        last = self._last_words_said()
        return f" (it said: {last})" if last else ""

    def _last_words_said(self) -> str:
        """Its own last words, which say why far better than "connection closed"; never a
        debug line ("[session/create] sessionId=... phase=register durationMs=2")."""
        last = next(
            (line for line in reversed(self.stderr_tail) if line.strip() and not _debug(line)),
            "",
        )
        return " ".join(last.split())[:200]

    def _exit_said(self, code: int | None) -> str:
        """How its process ended: a signal by its number ("it was killed by signal 9"),
        else its exit status (issue 31, item 7)."""
        _t = translator(self.adapter.language).gettext
        if code is not None and code < 0:
            return _t("it was killed by signal {signal}").format(signal=-code)
        return _t("its process ended with status {status}").format(status=code)


# a debug or trace line: "[session/create] sessionId=1 phase=register durationMs=2",
# "2026-01-01T00:00:00Z DEBUG ...", or mostly key=value pairs
_DEBUG_LINE = re.compile(r"^\s*(?:\[[\w/.:-]+\]|\S*\d{4}-\d\d-\d\dT\S*|(?:DEBUG|TRACE)\b)")
_KEY_VALUE = re.compile(r"\b\w+=\S+")


def _detail(exc: BaseException) -> str:
    return (str(exc).strip() or type(exc).__name__)[:200]


def _debug(line: str) -> bool:
    """Whether a stderr line is the agent's debug output, not words for a person."""
    words = line.split()
    pairs = len(_KEY_VALUE.findall(line))
    return (bool(_DEBUG_LINE.match(line)) and pairs >= 1) or (
        len(words) >= 3 and pairs * 2 >= len(words)
    )
