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
import time
from collections.abc import AsyncIterator, Sequence
from typing import Any

from announcer.formats.acp_tools import RUNNING_QUIET_SECONDS
from announcer.platform.process import contain, own_group
from announcer.transports.acp_answers import AcpAnswers
from announcer.transports.acp_process import (
    _AUTH_REQUIRED,
    FRAMES_HIGH_WATER,
    FRAMES_LOW_WATER,
    START_TIMEOUT_SECONDS,
    STREAM_LIMIT_BYTES,
    _dump,
    log,
)
from announcer.transports.acp_settings import AcpSettings
from announcer.transports.acp_wire import GuardedStdio
from announcer.transports.base import (
    AgentLink,
    HandshakeOutcome,
    Transport,
    TransportError,
    release_process_pipes,
)
from announcer.transports.failure import Cause, Fault
from announcer.transports.processes import can_watch_exits, exited, track


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


class AcpTransport(AcpSettings, AcpAnswers, Transport):
    """``agent -- COMMAND...``: starts the agent, opens a session, relays prompts and answers."""

    # One agent process is one conversation: when it ends, the source is done (never
    # restarted behind the user's back, which would lose the conversation).
    finite = True
    # its events are announcer's own mapping of ACP: trusted with x-announcer
    maps_events = True

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
            fault = (
                Fault.COMMAND_NOT_FOUND
                if isinstance(exc, FileNotFoundError)
                else Fault.COMMAND_NOT_STARTED
            )
            raise TransportError(
                f"cannot start the agent {self.command[0]!r}: {exc.strerror or exc}",
                Cause(fault, command=self.command[0]),
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
            on_form_refused=self.on_form_refused,
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
                f"{int(START_TIMEOUT_SECONDS)} seconds",
                Cause(Fault.NO_ANSWER, command=self.command[0]),
            ) from None
        except TransportError:
            raise
        except Exception as exc:
            await self._end_process()
            await self._last_words()
            raise TransportError(self._failure(exc), self._failure_cause(exc)) from None
        self.session_id = str(session.session_id)
        # a message typed while the agent started goes once it is ready: the start news is
        # not said before its answer (issue 31, item 11)
        self._queue(
            self.adapter.session_opened(
                self.session_id, self.cwd, time.time(), message_waiting=self._early is not None
            ).events
        )
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
                self.session_id,
                modes,
                self._start_config,
                time.time(),
                message_waiting=self._early is not None,
            ).events
        )
        if self.no_preset:
            # issue 33: started in its own default mode; the user is told, modes named
            self._queue(
                self.adapter.no_preset_said(self.session_id, self.no_preset, time.time()).events
            )
        early, self._early = self._early, None
        if early is not None:
            self.prompt(early)

    async def handshake(self, request: dict[str, Any], timeout: float) -> HandshakeOutcome:
        return HandshakeOutcome(None)  # ACP has its own initialize; nothing to negotiate here

    async def frames(self) -> AsyncIterator[str | dict[str, Any]]:
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

    async def close(self, reason: str = "subscriber_shutdown") -> None:
        if self._closed:
            return
        self._closed = True
        if self._family_due is not None:
            self._family_due.cancel()
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

    def aaep_session_id(self) -> str | None:
        """The session's id in the events the engine reads (it differs from ACP's)."""
        return self.adapter.aaep_session_id(self.session_id or "")

    def suggestions(self) -> list[str]:
        return self.adapter.suggestions(self.session_id or "")

    # -- the runtime's AgentLink face ---------------------------------------------------------

    def agent(self) -> AgentLink:
        """An ACP agent takes the user's messages: it is its own :class:`AgentLink`."""
        return self

    @property
    def producer_id(self) -> str:
        """The producer id of the events it maps (who speaks, §9)."""
        return self.adapter.agent_id

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
            reason = self._exit_said(code) + self._last_said()
            reason += ". " + self._leftovers_said(left_running)
            self._queue(self.adapter.session_failed(None, reason, time.time()).events)
        self._frames.put_nowait(None)


def _version() -> str:
    from announcer import __version__

    return __version__
