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
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from announcer.formats.acp import AcpAdapter
from announcer.formats.acp_logins import terminal_logins
from announcer.formats.acp_tools import RUNNING_QUIET_SECONDS
from announcer.formats.speakable import clip
from announcer.i18n.translate import translator
from announcer.platform.process import contain, own_group
from announcer.transports.acp_wire import GuardedStdio
from announcer.transports.base import (
    HandshakeOutcome,
    TransportError,
    TransportOptions,
    release_process_pipes,
)
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
#: how many times one agent's start offers its terminal login (a login that does not take)
LOGIN_TRIES = 2
#: ``offer_login(agent name, [(method name, argv, env)], cwd)``: the interface asks which
#: login to run, runs it in the user's terminal and returns its exit status (None: not now)
LoginOffer = Callable[
    [str, list[tuple[str, list[str], dict[str, str]]], str], Awaitable[int | None]
]
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

    async def create_elicitation(self, message: str, mode: Any, **_: Any) -> Any:
        """ACP ``elicitation/create``: the agent's own question, asked of the user."""
        params = {"message": message, **(_dump(mode) or {})}
        params["mode"] = "url" if "url" in params else "form"
        return await self.transport.on_elicitation(params)

    async def complete_elicitation(self, elicitation_id: str, **_: Any) -> None:
        return None  # the agent's out-of-band step ended: nothing the user must hear

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
        options: TransportOptions | None = None,
        start_settings: Mapping[str, str | bool] | None = None,
        local: bool = True,
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
        self._restarting = False  # the new process is ours to watch
        contain(self._process.pid)  # Windows: a job object ends it however we end
        process = self._process
        track(process.pid)
        assert process.stdin is not None and process.stdout is not None
        self._stderr_read = self._spawn(self._read_stderr())
        self._spawn(self._watch_exit())
        self._spawn(self._remember_family())
        # Elicitation is stable in ACP but still "unstable" in SDK 0.12: enabled on purpose.
        self._wire = GuardedStdio(
            process.stdout,
            process.stdin,
            on_drop=self.options.count_drop,
            room=self._room,
            on_notice=self.on_update,
        )
        # _Client implements no fs/terminal methods (we declare neither capability): the
        # SDK's router answers method-not-found for them, so the Client protocol is not met.
        self._conn = acp.connect_to_agent(
            _Client(self),  # type: ignore[arg-type]
            self._wire,
            use_unstable_protocol=True,
        )
        try:
            info = await asyncio.wait_for(
                self._conn.initialize(
                    protocol_version=acp.PROTOCOL_VERSION,
                    client_capabilities=acp.schema.ClientCapabilities(
                        fs=acp.schema.FileSystemCapabilities(
                            read_text_file=False, write_text_file=False
                        ),
                        terminal=False,
                        # a login is said as the command to run (ACP terminal auth methods)
                        auth=acp.schema.AuthCapabilities(terminal=True),
                        # the agent's own questions reach the user (ACP elicitation, form mode)
                        elicitation=acp.schema.ElicitationCapabilities(
                            form=acp.schema.ElicitationFormCapabilities()
                        ),
                    ),
                    client_info=acp.schema.Implementation(name="announcer", version=_version()),
                ),
                START_TIMEOUT_SECONDS,
            )
            self._agent_capabilities = getattr(info, "agent_capabilities", None)
            agent_info = getattr(info, "agent_info", None)
            title = getattr(agent_info, "title", None) or getattr(agent_info, "name", None)
            if isinstance(title, str) and title.strip() and self.label is None:
                self.adapter.rename(title.strip())
                self.description = self.adapter.agent_name
            try:
                session = await asyncio.wait_for(
                    self._conn.new_session(cwd=self.cwd, mcp_servers=[]), START_TIMEOUT_SECONDS
                )
            except acp.RequestError as exc:
                if exc.code != _AUTH_REQUIRED:
                    raise
                # ACP authentication: say which login to run, from its own authMethods
                methods = [_dump(m) for m in getattr(info, "auth_methods", None) or []]
                self._restarting = True  # its end is ours, not a crash to report
                await self._end_process()
                if await self._log_in(methods):
                    # ACP terminal login done: reconnect, reinitialize, and try again (the
                    # old process's watcher stays quiet: _restarting until the new one runs)
                    await self.connect()
                    return
                raise TransportError(self.adapter.login_hint(methods, self.command)) from None
        except TimeoutError:
            await self._end_process()
            raise TransportError(
                f"the agent {self.command[0]!r} did not answer within "
                f"{int(START_TIMEOUT_SECONDS)} seconds"
            ) from None
        except TransportError:
            raise
        except Exception as exc:
            await self._end_process()
            await self._last_words()
            raise TransportError(self._failure(exc)) from None
        self.session_id = str(session.session_id)
        self._queue(self.adapter.session_opened(self.session_id, self.cwd, time.time()).events)
        modes = _dump(getattr(session, "modes", None))
        self._start_config = [_dump(o) for o in getattr(session, "config_options", None) or []]
        if self.start_settings:  # known first, so a mode is set as the agent offers it
            self.adapter.settings_known(
                self.session_id, modes, self._start_config, time.time(), say=False
            )
        for kind, value in self.start_settings.items():
            said = await self.change_setting(kind, value, quiet=True)
            if said:
                log.warning("%s: a start setting was not applied: %s", self.description, said)
            elif kind == "mode" and isinstance(modes, dict):
                modes = {**modes, "currentModeId": str(value)}
        # said once, as they are after the start settings: the mode, the model, ...
        self._queue(
            self.adapter.settings_known(
                self.session_id, modes, self._start_config, time.time()
            ).events
        )
        early, self._early = self._early, None
        if early is not None:
            self.prompt(early)

    async def handshake(self, request: dict[str, Any], timeout: float) -> HandshakeOutcome:
        return HandshakeOutcome(None)  # ACP has its own initialize; nothing to negotiate here

    async def frames(self) -> AsyncIterator[str]:
        while True:
            frame = await self._frames.get()
            if self._frames.qsize() <= FRAMES_LOW_WATER:
                self._room_free.set()
            if frame is None:
                return
            yield frame

    async def _room(self) -> None:
        """Wait while the engine has many of this agent's events still to read."""
        while self._frames.qsize() > FRAMES_HIGH_WATER and not self._closed:
            self._room_free.clear()
            await self._room_free.wait()

    async def send(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """A ``confirmation.reply``: answer the agent's request with its own option, once."""
        if message.get("type") == "clarification.reply":
            self._answer_form(str(message.get("reply_token")), message.get("response"))
            return None
        if message.get("type") != "confirmation.reply":
            return None
        token = str(message.get("reply_token"))
        future = self._pending.pop(token, None)
        if (
            future is not None
            and message.get("decision") == "accept"
            and _scope(message) == "always"
            and self.adapter.always_choices(token)
        ):
            # several "always" options: which one is asked, never guessed (issue 21, 5)
            asked = self.adapter.permissions[token].request_key
            out = self.adapter.ask_which_always(token, time.time())
            key = f"always-{asked}"
            self._queue(out.events)
            if self.adapter.form_token(key) is not None:
                self._forms[key] = future
                self._choosing.add(key)
                return None
        option = self.adapter.answer(token, str(message.get("decision")), _scope(message))
        if future is None or future.done():
            return None  # already answered or withdrawn: never twice (§6.2)
        future.set_result(_selected(option) if option is not None else _cancelled())
        self._queue(self.adapter.answer_said(time.time()).events)
        return None

    async def close(self, reason: str = "subscriber_shutdown") -> None:
        if self._closed:
            return
        self._closed = True
        self._room_free.set()
        self._cancel_questions()
        self._cancel_forms("The agent no longer waits for this answer.")
        if self._turn is not None and not self._turn.done() and self._conn is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._conn.cancel(session_id=self.session_id), 1.0)
        try:
            await self._end_process()
        finally:
            release_process_pipes(self._process)  # even when this close was cut short
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
        self._turn_cancelled = False
        self._turn = self._spawn(self._run_turn(text))
        return True

    async def cancel_turn(self) -> bool:
        """``session/cancel``: stop the turn; open questions are answered ``cancelled``."""
        if not self.busy or self._conn is None:
            return False
        self._turn_cancelled = True
        self.adapter.turn_cancelled(self.session_id or "")
        self._cancel_questions("You stopped the turn, so the question was withdrawn.")
        self._cancel_forms("You stopped the turn, so the question was withdrawn.")
        with contextlib.suppress(Exception):
            await self._conn.cancel(session_id=self.session_id)
        return True

    def commands(self) -> list[tuple[str, str]]:
        return self.adapter.commands(self.session_id or "")

    async def sessions(self, choice: str = "") -> str:
        """``:sessions`` lists the agent's sessions; ``:sessions N`` resumes one.

        Only where the agent says it can (``sessionCapabilities.list`` / ``resume``); the
        sentence to say is returned.
        """
        capabilities = getattr(self._agent_capabilities, "session_capabilities", None)
        if self._conn is None or self.stopped or getattr(capabilities, "list", None) is None:
            return self.adapter.sessions_refused("list")
        if not choice:
            try:
                listed = await asyncio.wait_for(
                    self._conn.list_sessions(cwd=self.cwd), START_TIMEOUT_SECONDS
                )
            except Exception as exc:
                log.warning("%s: session/list failed: %s", self.description, exc)
                return self.adapter.sessions_refused("list")
            self._listed = [
                (str(item.session_id), " ".join(str(item.title or item.updated_at or
                                                     item.session_id).split()))
                for item in (listed.sessions or [])[:20]
            ]  # fmt: skip
            return self.adapter.sessions_said(self._listed)
        if getattr(capabilities, "resume", None) is None:
            return self.adapter.sessions_refused("resume")
        if self.busy:
            return self.adapter.sessions_refused("busy")
        if not choice.isdigit() or not 1 <= int(choice) <= len(self._listed):
            return self.adapter.sessions_refused("number")
        session_id, title = self._listed[int(choice) - 1]
        try:
            resumed = await asyncio.wait_for(
                self._conn.resume_session(session_id=session_id, cwd=self.cwd, mcp_servers=[]),
                START_TIMEOUT_SECONDS,
            )
        except Exception as exc:
            log.warning("%s: session/resume failed: %s", self.description, exc)
            return self.adapter.sessions_refused("resume")
        self.session_id = session_id
        self._queue(self.adapter.session_resumed(session_id, title, time.time()).events)
        self._queue(
            self.adapter.settings_known(
                session_id,
                _dump(getattr(resumed, "modes", None)),
                [_dump(o) for o in getattr(resumed, "config_options", None) or []],
                time.time(),
                say=False,
            ).events
        )
        return ""

    def setting_rows(self) -> list[tuple[str, str, str, bool]]:
        """The agent's mode and config choices, for the Textual picker."""
        return self.adapter.setting_rows(self.session_id or "")

    async def change_setting(self, kind: str, wanted: str | bool, *, quiet: bool = False) -> str:
        """``:mode NAME`` / ``:model NAME``: ``session/set_config_option``, else ``set_mode``.

        Returns the sentence to say when nothing changed (a listing or a refusal); a
        change itself is said from the agent's answer, as the session's own news.
        """
        if self.session_id is None or self._conn is None or self.stopped:
            return self.adapter.setting_refused(kind, str(wanted), "")
        if isinstance(wanted, bool):
            plan: tuple[str, str, str | bool] | str = ("config", kind, wanted)
        else:
            plan = self.adapter.setting_plan(self.session_id, kind, wanted)
            if isinstance(plan, str) and quiet and kind != "mode":
                plan = ("config", kind, wanted)  # not announced yet: the agent decides
            elif isinstance(plan, str) and quiet:
                plan = ("mode", "", wanted)
        if isinstance(plan, str):
            return plan
        how, config_id, value = plan
        try:
            if how == "config":
                answer = await asyncio.wait_for(
                    self._conn.set_config_option(
                        config_id=config_id, session_id=self.session_id, value=value
                    ),
                    START_TIMEOUT_SECONDS,
                )
                options = [_dump(o) for o in getattr(answer, "config_options", None) or []]
                if quiet and options:
                    self._start_config = options
                if not quiet:
                    self._queue(
                        self.adapter.config_changed(self.session_id, options, time.time()).events
                    )
            else:
                await asyncio.wait_for(
                    self._conn.set_session_mode(session_id=self.session_id, mode_id=str(value)),
                    START_TIMEOUT_SECONDS,
                )
                if not quiet:
                    self._queue(
                        self.adapter.mode_changed(self.session_id, str(value), time.time()).events
                    )
        except Exception as exc:  # the agent refused or does not know the method
            detail = " ".join((str(exc) or type(exc).__name__).split())[:200]
            log.warning("%s: could not set %s to %s: %s", self.description, kind, value, detail)
            return self.adapter.setting_refused(kind, str(value), detail)
        return ""

    # -- what the agent does ----------------------------------------------------------------

    def on_update(self, params: dict[str, Any]) -> None:
        self._note_family(params)  # the agent is at work: what it runs now
        self._queue(self.adapter.update(params, time.time()).events)
        for old, new in self.adapter.take_asked_again():  # a plan that came after its question
            future = self._pending.pop(old, None)
            if future is not None:
                self._pending[new] = future
        if self.adapter.running_due() and not self._flush_pending:
            # a running call is said shortly, unless the agent asks about it first
            self._flush_pending = True
            asyncio.get_running_loop().call_later(RUNNING_QUIET_SECONDS + 0.05, self._flush)

    def _flush(self) -> None:
        self._flush_pending = False
        if self._closed:
            return
        self._queue(self.adapter.flush_running(time.time()).events)
        if self.adapter.running_due():
            self._flush_pending = True
            asyncio.get_running_loop().call_later(RUNNING_QUIET_SECONDS + 0.05, self._flush)

    async def on_permission(self, params: dict[str, Any]) -> Any:
        if not self.busy or self._turn_cancelled:
            # ACP: a turn that ended or was cancelled asks nothing more; never shown, never
            # accepted, and counted where the user can read it.
            self.options.count_drop("ACP permission request after its turn ended; cancelled")
            return _cancelled()
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

    async def on_elicitation(self, params: dict[str, Any]) -> Any:
        """Ask the user, field by field; the agent gets only what the user chose."""
        key = f"e{time.monotonic_ns()}"
        out = self.adapter.elicitation_requested(key, params, time.time())
        self._queue(out.events)
        if self.adapter.form_token(key) is None:
            log.warning("an elicitation could not be asked; answered cancel")
            return {"action": "cancel"}
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._forms[key] = future
        return await future  # no timeout: the agent waits, and so do we

    def _answer_form(self, token: str, response: object) -> None:
        form = self.adapter.forms.get(token)
        if form is None:
            return  # already answered or withdrawn: never twice (§6.2)
        out, result = self.adapter.elicitation_answered(token, response, time.time())
        self._queue(out.events)
        if result is not None:
            future = self._forms.pop(form.request_key, None)
            if form.request_key in self._choosing:
                self._choosing.discard(form.request_key)
                result = _permission_outcome(form.permission, result)
            if future is not None and not future.done():
                future.set_result(result)

    def _cancel_forms(self, sentence: str) -> None:
        """The agent's own questions are answered ``cancel``: the user never answered them."""
        for key, future in list(self._forms.items()):
            del self._forms[key]
            if not future.done():
                choosing = key in self._choosing
                future.set_result(_cancelled() if choosing else {"action": "cancel"})
            self._choosing.discard(key)
            token = self.adapter.form_token(key)
            if token is not None:
                self._queue(self.adapter.permission_withdrawn(token, sentence, time.time()).events)

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
                self.died = self.session_id is not None
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
        choices = [(login.name, list(login.argv), {**base, **dict(login.env)}) for login in logins]
        code = await self.offer_login(self.adapter.agent_name, choices, self.cwd)
        return code == 0

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
        if self._closed or self._restarting or process is not self._process:
            return  # ended by announcer, or started again after a login
        self._cancel_questions("The agent stopped, so the question was withdrawn.")
        self._cancel_forms("The agent stopped, so the question was withdrawn.")
        said_by_me = not self._end_reported  # said once, by whichever noticed first
        self._end_reported = True
        left_running = await self._end_leftovers()
        await self._last_words()
        # it ended on its own mid-conversation: announcer exits non-zero (a start failure
        # is said as one and counts as the runtime's own failure rule says)
        self.died = self.session_id is not None
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


def _permission_outcome(permission: Any, result: dict[str, Any]) -> Any:
    """The answer to "which always?" as the permission's own outcome."""
    action = result.get("action")
    content = result.get("content")
    option = content.get("option") if isinstance(content, dict) else None
    if action == "accept" and isinstance(option, str):
        return _selected(option)
    reject = permission.options.get("reject_once") if permission is not None else None
    if action == "decline" and reject:
        return _selected(reject)  # declined to choose: a reject for this time only
    return _cancelled()


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
