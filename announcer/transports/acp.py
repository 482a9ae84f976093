"""An Agent Client Protocol agent as one event source of the runtime (``announcer agent``).

The agent runs as a child process in its own process group, spoken to over stdio with
the ``agent-client-protocol`` SDK (announcer is the client). Its ``session/update``
notifications and permission requests go through :class:`announcer.formats.acp.AcpAdapter`
(sans-I/O) into AAEP events, so the one engine, both UIs and the speech scheduler handle
them like any producer. A ``confirmation.reply`` from the user becomes the agent's own
option; each request is answered exactly once (the first answer, or ``cancelled`` when
the turn is cancelled or announcer stops).

Honest capabilities: announcer declares no file-system and no terminal support, so the
agent uses its own tools and asks permission for them. The agent's stderr goes to the
diagnostics log, never raw to the terminal.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from announcer.formats.acp import AcpAdapter
from announcer.formats.speakable import clip
from announcer.i18n.translate import translator
from announcer.platform.process import contain, own_group
from announcer.transports.base import HandshakeOutcome, TransportError, release_process_pipes
from announcer.transports.processes import (
    can_watch_exits,
    command_line,
    end_family,
    exited,
    innermost,
    kill_family_now,
    reap,
    same_processes,
    snapshot,
    still_running,
    track,
)

# How often the agent's commands are listed while it works (and while it waits).
FAMILY_SNAPSHOT_SECONDS = 1.0
FAMILY_IDLE_SECONDS = 5.0
# ... and at most this often when its messages come in.
FAMILY_NOTE_SECONDS = 0.25
TOOL_UPDATES = ("tool_call", "tool_call_update")

log = logging.getLogger("announcer.transports.acp")

#: how long the agent gets to start and answer ``initialize`` and ``session/new``
START_TIMEOUT_SECONDS = 60.0
#: lines of the agent's stderr kept for the diagnostics after it ends
STDERR_LINES_KEPT = 50
#: the SDK's stdio buffer: large tool outputs arrive as one JSON line
STREAM_LIMIT_BYTES = 16 * 1024 * 1024


def _dump(model: Any) -> Any:
    """An SDK model as its wire JSON (camelCase), for the sans-I/O adapter."""
    if hasattr(model, "model_dump"):
        return model.model_dump(by_alias=True, exclude_none=True, mode="json")
    return model


class _Client:
    """The client side the SDK calls: updates and permission requests go to the transport."""

    def __init__(self, transport: AcpTransport) -> None:
        self.transport = transport

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.transport.on_update({"sessionId": session_id, "update": _dump(update)})

    async def request_permission(
        self, session_id: str, tool_call: Any, options: Sequence[Any], **_: Any
    ) -> Any:
        params = {
            "sessionId": session_id,
            "toolCall": _dump(tool_call),
            "options": [_dump(option) for option in options],
        }
        return await self.transport.on_permission(params)

    def on_connect(self, conn: Any) -> None:
        return None


class AcpTransport:
    """``agent -- COMMAND...``: starts the agent, opens a session, relays prompts and answers."""

    # One agent process is one conversation: when it ends, the source is done (never
    # restarted behind the user's back, which would lose the conversation).
    finite = True
    # its events are announcer's own mapping of ACP: trusted with x-announcer
    maps_events = True

    def __init__(
        self,
        command: Sequence[str],
        *,
        name: str = "Agent",
        label: str | None = None,
        cwd: str | None = None,
        language: str = "en",
        env: dict[str, str] | None = None,
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
        self._frames: asyncio.Queue[str | None] = asyncio.Queue()
        self._pending: dict[str, asyncio.Future[Any]] = {}
        self._turn: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._closed = False
        self._gone = False  # the connection broke (the process may not be reaped yet)
        self._stderr_read: asyncio.Task[Any] | None = None
        self._end_reported = False  # "stopped" is said once, by the first to notice
        self._left_running: list[str] | None = None  # what it left running when it died
        self._family_seen: dict[int, int] = {}  # its commands lately: id -> start time
        self._family_noted = float("-inf")
        self._tool_changed = False  # a tool call changed since the last listing
        self._early: str | None = None  # a message typed before the agent was ready

    # -- the runtime's Transport face ---------------------------------------------------

    async def connect(self) -> None:
        import acp

        try:
            self._process = await asyncio.create_subprocess_exec(
                *self.command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=self.cwd,
                env=self.env,
                **own_group(),  # its own process group: ended with announcer
                limit=STREAM_LIMIT_BYTES,
            )
        except (FileNotFoundError, PermissionError) as exc:
            raise TransportError(
                f"cannot start the agent {self.command[0]!r}: {exc.strerror or exc}"
            ) from None
        contain(self._process.pid)  # Windows: a job object ends it however we end
        process = self._process
        track(process.pid)
        assert process.stdin is not None and process.stdout is not None
        self._stderr_read = self._spawn(self._read_stderr())
        self._spawn(self._watch_exit())
        self._spawn(self._remember_family())
        self._conn = acp.connect_to_agent(_Client(self), process.stdin, process.stdout)
        try:
            info = await asyncio.wait_for(
                self._conn.initialize(
                    protocol_version=acp.PROTOCOL_VERSION,
                    client_capabilities=acp.schema.ClientCapabilities(
                        fs=acp.schema.FileSystemCapabilities(
                            read_text_file=False, write_text_file=False
                        ),
                        terminal=False,
                    ),
                    client_info=acp.schema.Implementation(name="announcer", version=_version()),
                ),
                START_TIMEOUT_SECONDS,
            )
            agent_info = getattr(info, "agent_info", None)
            title = getattr(agent_info, "title", None) or getattr(agent_info, "name", None)
            if isinstance(title, str) and title.strip() and self.label is None:
                self.adapter.rename(title.strip())
                self.description = self.adapter.agent_name
            session = await asyncio.wait_for(
                self._conn.new_session(cwd=self.cwd, mcp_servers=[]), START_TIMEOUT_SECONDS
            )
        except TimeoutError:
            await self._end_process()
            raise TransportError(
                f"the agent {self.command[0]!r} did not answer within "
                f"{int(START_TIMEOUT_SECONDS)} seconds"
            ) from None
        except Exception as exc:
            await self._end_process()
            await self._last_words()
            raise TransportError(self._failure(exc)) from None
        self.session_id = str(session.session_id)
        self._queue(self.adapter.session_opened(self.session_id, self.cwd, time.time()).events)
        early, self._early = self._early, None
        if early is not None:
            self.prompt(early)

    async def handshake(self, request: dict[str, Any], timeout: float) -> HandshakeOutcome:
        return HandshakeOutcome(None)  # ACP has its own initialize; nothing to negotiate here

    async def frames(self) -> AsyncIterator[str]:
        while True:
            frame = await self._frames.get()
            if frame is None:
                return
            yield frame

    async def send(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """A ``confirmation.reply``: answer the agent's request with its own option, once."""
        if message.get("type") != "confirmation.reply":
            return None
        token = str(message.get("reply_token"))
        future = self._pending.pop(token, None)
        option = self.adapter.answer(token, str(message.get("decision")), _scope(message))
        if future is None or future.done():
            return None  # already answered or withdrawn: never twice (§6.2)
        future.set_result(_selected(option) if option is not None else _cancelled())
        return None

    async def close(self, reason: str = "subscriber_shutdown") -> None:
        if self._closed:
            return
        self._closed = True
        self._cancel_questions()
        if self._turn is not None and not self._turn.done() and self._conn is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._conn.cancel(session_id=self.session_id), 1.0)
        await self._end_process()
        release_process_pipes(self._process)
        for task in list(self._tasks):
            task.cancel()
        self._frames.put_nowait(None)

    # -- what the user does ---------------------------------------------------------------

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

    def prompt(self, text: str) -> bool:
        """Send the user's message; one typed while the agent starts waits until it is ready.

        False when it cannot be taken: a turn is under way, one message already waits, or
        the agent is gone.
        """
        if self.stopped or self.busy or self._early is not None:
            return False
        if not self.ready:
            self._early = text  # sent by connect() once the session is open
            return True
        assert self.session_id is not None
        self._queue(self.adapter.prompt_sent(self.session_id, time.time()).events)
        self._turn = self._spawn(self._run_turn(text))
        return True

    async def cancel_turn(self) -> bool:
        """``session/cancel``: stop the turn; open questions are answered ``cancelled``."""
        if not self.busy or self._conn is None:
            return False
        self._cancel_questions("You stopped the turn, so the question was withdrawn.")
        with contextlib.suppress(Exception):
            await self._conn.cancel(session_id=self.session_id)
        return True

    def commands(self) -> list[tuple[str, str]]:
        return self.adapter.commands(self.session_id or "")

    # -- what the agent does ----------------------------------------------------------------

    def on_update(self, params: dict[str, Any]) -> None:
        self._note_family(params)  # the agent is at work: what it runs now
        self._queue(self.adapter.update(params, time.time()).events)

    async def on_permission(self, params: dict[str, Any]) -> Any:
        key = f"{time.monotonic_ns()}"
        out = self.adapter.permission_requested(key, params, time.time())
        token = next(
            (
                e["reply_token"]
                for e in out.events
                if e.get("type") == "aaep:agent.awaiting.confirmation"
            ),
            None,
        )
        if token is None:
            log.warning("a permission request could not be asked; answered cancelled")
            self._queue(out.events)
            return _cancelled()
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[str(token)] = future
        self._queue(out.events)
        return await future  # no timeout: the agent waits, and so do we

    async def _run_turn(self, text: str) -> None:
        import acp

        stop_reason: str | None = None
        try:
            response = await self._conn.prompt(
                session_id=self.session_id, prompt=[acp.text_block(text)]
            )
            stop_reason = str(getattr(response, "stop_reason", None) or "end_turn")
        except Exception as exc:
            if self._closed:
                return
            # The agent's pipe is gone (it crashed): no more messages. An error the agent
            # answered (a JSON-RPC error) ends only this turn.
            self._gone = isinstance(exc, ConnectionError)
            reason = self._failure(exc)
            if self._gone:
                left_running = await self._end_leftovers()
                await self._last_words()
                if self._end_reported:
                    return  # its end was already said (the process exit came first)
                self._end_reported = True
                reason = self._failure(exc) + ". " + self._leftovers_said(left_running)
            self._queue(self.adapter.session_failed(self.session_id, reason, time.time()).events)
            return
        self._cancel_questions()
        self._queue(self.adapter.turn_ended(self.session_id or "", stop_reason, time.time()).events)

    # -- plumbing ----------------------------------------------------------------------------

    def _cancel_questions(self, sentence: str | None = None) -> None:
        for token, future in list(self._pending.items()):
            del self._pending[token]
            if not future.done():
                future.set_result(_cancelled())
            said = sentence or "The agent no longer waits for this answer."
            self._queue(self.adapter.permission_withdrawn(token, said, time.time()).events)

    def _queue(self, events: list[dict[str, Any]]) -> None:
        for event in events:
            self._frames.put_nowait(json.dumps(event, ensure_ascii=False))

    def _spawn(self, coroutine: Any) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _read_stderr(self) -> None:
        """The agent's stderr goes to the diagnostics log, never to the user's terminal."""
        assert self._process is not None and self._process.stderr is not None
        while True:
            line = await self._process.stderr.readline()
            if not line:
                return
            text = line.decode("utf-8", "replace").rstrip()
            self.stderr_tail = [*self.stderr_tail[-(STDERR_LINES_KEPT - 1) :], text]
            log.info("agent stderr: %s", text[:500])

    async def _last_words(self) -> None:
        """Its pipe broke: give its stderr a moment to end, so the reason said is its own."""
        reading = self._stderr_read
        if reading is not None and not reading.done():
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(reading), 1.0)

    async def _watch_exit(self) -> None:
        process = self._process
        assert process is not None
        # the exit itself: a command it left running may hold its pipes open for long
        if can_watch_exits():
            status = await exited(process.pid)
        else:  # no pidfd, no /proc (macOS, Windows): once its pipes have closed too
            status = await process.wait()
        for _ in range(100):  # reaped by asyncio's watcher: its status arrives in a moment
            if status is not None or process.returncode is not None:
                break
            await asyncio.sleep(0.01)
        code = process.returncode if status is None else status
        if self._closed:
            return
        self._cancel_questions("The agent stopped, so the question was withdrawn.")
        said_by_me = not self._end_reported  # said once, by whichever noticed first
        self._end_reported = True
        left_running = await self._end_leftovers()
        await self._last_words()
        if said_by_me:
            reason = f"its process ended with status {code}{self._last_said()}"
            reason += ". " + self._leftovers_said(left_running)
            self._queue(self.adapter.session_failed(None, reason, time.time()).events)
        self._frames.put_nowait(None)

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
        self._family_noted = now
        self._tool_changed = kind in TOOL_UPDATES
        self._family_seen = snapshot(process.pid)

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
        detail = str(exc).strip() or type(exc).__name__
        said = f"the agent {self.label or Path(self.command[0]).name!r} failed: {detail[:200]}"
        return said + self._last_said()

    def _last_said(self) -> str:
        """Its own last words, which say why far better than "connection closed"."""
        last = next((line for line in reversed(self.stderr_tail) if line.strip()), "")
        return f" (it said: {' '.join(last.split())[:200]})" if last else ""


def _scope(message: dict[str, Any]) -> str:
    """ "always" only when the reply says so (engine.replies puts it in modified_action)."""
    from announcer.engine.prompts import ALWAYS_SCOPE_KEY, ANNOUNCER_EXTENSION

    modified = message.get("modified_action")
    ours = modified.get(ANNOUNCER_EXTENSION) if isinstance(modified, dict) else None
    scope = ours.get(ALWAYS_SCOPE_KEY) if isinstance(ours, dict) else None
    return "always" if scope == "always" else "once"


def _selected(option_id: str) -> Any:
    import acp

    return acp.schema.RequestPermissionResponse(
        outcome=acp.schema.AllowedOutcome(option_id=option_id, outcome="selected")
    )


def _cancelled() -> Any:
    import acp

    return acp.schema.RequestPermissionResponse(
        outcome=acp.schema.DeniedOutcome(outcome="cancelled")
    )


def _agent_id(name: str) -> str:
    cleaned = "".join(ch if ch.isalnum() else "-" for ch in name.lower()).strip("-")
    return (cleaned or "acp-agent")[:64]


def _version() -> str:
    from announcer import __version__

    return __version__
