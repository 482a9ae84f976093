"""Agent Client Protocol (ACP) sessions -> AAEP events, so an ACP agent goes through the one engine.

ACP is how editors drive coding agents: the client sends prompts, the agent streams
``session/update`` notifications (message and thought chunks, tool calls, plans,
mode changes) and asks ``session/request_permission`` before it acts. This module is
the sans-I/O half of ``announcer agent``: it takes those messages as plain JSON
objects (the wire form, camelCase) with a clock and returns AAEP event dicts; the
adapter in ``announcer.transports.acp`` runs the agent process with the
``agent-client-protocol`` SDK and feeds it here.

What the user hears, by design (docs/agents.md):

- message chunks are one output stream per turn, coalesced into sentences by the engine;
- a thought is gathered whole and said only at detailed verbosity (never in low
  cognitive load, whose terse wording is just "Thinking.");
- a tool call is announced once, when it has a title (adapters first send it empty),
  with its human description by verbosity; its end says finished or failed, diffs
  become "changes 3 lines in app.py", and paths are relative to the session's folder;
- a plan is read as "Step 2 of 5: ..." when the step in progress changes;
- a mode change is said briefly; token usage is never spoken;
- a permission request is a confirmation whose reply maps back to the agent's own
  option: allow once / reject once, and allow always / reject always when the agent
  offers them (an "always" answer rides in the reply's ``modified_action``, see
  :mod:`announcer.engine.replies`); the agent waits, so no timeout is spoken.
"""

from __future__ import annotations

import difflib
import posixpath
import shlex
from dataclasses import dataclass, field
from typing import Any

from announcer.command_analysis import analyse, higher_risk
from announcer.formats.base import AdapterOutput, FormatAdapter, JsonObject, get_str
from announcer.formats.builder import AaepBuilder, SessionState, mark_command, mark_literal
from announcer.formats.speakable import clip, command_in_words
from announcer.i18n.translate import translator

#: the longest an agent is given to wait for a confirmation: ACP has no timeout, the agent
#: waits; AAEP needs a number, so the protocol's maximum is sent and never spoken (§4.4.1).
NO_TIMEOUT_SECONDS = 86_400
#: where announcer's own hints travel inside an event (§7 extensions), and the @context
#: entry that declares that prefix (§3.4.3)
EXTENSION = "x-announcer"
EXTENSION_CONTEXT = "urn:announcer:x-announcer:v1"

# ACP tool kinds (schema ToolKind) whose effect cannot be taken back, or that run anything.
_IRREVERSIBLE_KINDS = frozenset({"delete"})
_HIGH_RISK_KINDS = frozenset({"delete", "move"})
_LOW_RISK_KINDS = frozenset({"read", "search", "think", "fetch"})
_ALLOW_ONCE, _ALLOW_ALWAYS, _REJECT_ONCE, _REJECT_ALWAYS = (
    "allow_once",
    "allow_always",
    "reject_once",
    "reject_always",
)


@dataclass(slots=True)
class _Tool:
    """One ACP tool call, announced once it has something to say."""

    title: str = ""
    kind: str = "other"
    description: str = ""
    locations: list[str] = field(default_factory=list)
    announced: bool = False
    finished: bool = False
    asked: bool = False  # a permission request stands for its announcement
    # what its diffs do, kept from the update that brought them (they often come before
    # the permission request): "adds 3 lines and removes 1 in src/app.py"
    changes: list[str] = field(default_factory=list)
    command: str | None = None  # the command it runs (rawInput.command)


@dataclass(slots=True)
class _Session:
    """What one ACP session has said so far."""

    state: SessionState
    cwd: str
    turn: int = 0
    thought: list[str] = field(default_factory=list)
    tools: dict[str, _Tool] = field(default_factory=dict)
    plan_step: tuple[int, str] | None = None
    mode: str | None = None
    commands: list[tuple[str, str]] = field(default_factory=list)
    # Titled calls not yet announced: said when the agent moves on, unless it asks first.
    due: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Permission:
    """A question the agent asked: which request it answers and the agent's own options."""

    request_key: str
    session_id: str
    tool_call_id: str | None
    options: dict[str, str]  # kind -> optionId, the first of each kind

    def option_for(self, decision: str, scope: str = "once") -> str | None:
        """The agent's option for the user's decision, or None (answered ``cancelled``).

        "always" only when the user chose it: a reject for once never becomes a
        remembered "reject always" (an agent without "reject once" is told the turn is
        cancelled instead, which is not remembered).
        """
        if decision == "accept":
            return self.options.get(_ALLOW_ALWAYS if scope == "always" else _ALLOW_ONCE)
        if decision == "reject":
            return self.options.get(_REJECT_ALWAYS if scope == "always" else _REJECT_ONCE)
        return None


class AcpAdapter(FormatAdapter):
    """One ACP connection (an agent process) as AAEP events; sessions keyed by ACP sessionId."""

    name = "acp"

    def __init__(self, agent_name: str = "Agent", agent_id: str = "acp-agent") -> None:
        super().__init__()
        self.agent_name = agent_name
        self.agent_id = agent_id
        self.builder = AaepBuilder(agent_id, agent_name, language=self.language)
        self.sessions: dict[str, _Session] = {}
        self.permissions: dict[str, Permission] = {}

    def set_language(self, language: str) -> None:
        super().set_language(language)
        self.builder.language = self.language

    def rename(self, agent_name: str, agent_id: str | None = None) -> None:
        """The agent said its name in ``initialize`` (``agentInfo``)."""
        self.agent_name = self.builder.agent_name = clip(agent_name, 120) or self.agent_name
        if agent_id:
            self.agent_id = self.builder.agent_id = agent_id

    # -- the client's own steps ------------------------------------------------

    def session_opened(self, session_id: str, cwd: str, now: float) -> AdapterOutput:
        """``session/new`` answered: the session starts."""
        return self._run(lambda: self._open(session_id, cwd, now))

    def prompt_sent(self, session_id: str, now: float) -> AdapterOutput:
        """The user sent a prompt: a new turn, the agent is thinking."""

        def step() -> None:
            # Only a new output stream: "Sent" was just said, and the agent's first
            # thought, call or words say the rest.
            self._session(session_id, now).turn += 1

        return self._run(step)

    def turn_ended(self, session_id: str, stop_reason: str | None, now: float) -> AdapterOutput:
        """``session/prompt`` answered with its ``stopReason``: the turn is over."""
        return self._run(lambda: self._end_turn(session_id, stop_reason, now))

    def session_failed(self, session_id: str | None, reason: str, now: float) -> AdapterOutput:
        """The agent process ended or broke: the session errored (always critical, §4.1.3)."""

        def step() -> None:
            targets = [self.sessions[session_id]] if session_id in self.sessions else []
            if session_id is None:
                targets = [s for s in self.sessions.values() if not s.state.ended]
            for session in targets:
                self.builder.session_errored(
                    session.state,
                    now,
                    normal=self._t("{agent} stopped: {reason}").format(
                        agent=self.agent_name, reason=reason
                    ),
                    terse=self._t("{agent} stopped.").format(agent=self.agent_name),
                    category="permanent",  # §4.1.3: the process is gone
                    recoverable=False,
                )

        return self._run(step)

    def permission_requested(
        self, request_key: str, params: JsonObject, now: float
    ) -> AdapterOutput:
        """``session/request_permission`` as a confirmation; the reply token names the request."""
        return self._run(lambda: self._permission(request_key, params, now))

    def permission_withdrawn(self, reply_token: str, sentence: str, now: float) -> AdapterOutput:
        """The question no longer stands (turn cancelled, agent gone): §6.8 withdraws it."""

        def step() -> None:
            permission = self.permissions.pop(reply_token, None)
            if permission is None:
                return
            session = self.sessions.get(permission.session_id)
            if session is None or session.state.ended:
                return
            self.builder.state_changed(
                session.state,
                now,
                "thinking",
                normal=sentence,
                terse=self._t("Question withdrawn."),
                urgency="normal",
                force=True,
            )

        return self._run(step)

    def answer(self, reply_token: str, decision: str, scope: str = "once") -> str | None:
        """The agent's option id for a reply, once: a token is used up by its first answer.

        A rejected call never runs: it is not announced afterwards (the user has just heard
        their own "Sent: reject"), and its failure report is not read as a failure.
        """
        permission = self.permissions.pop(reply_token, None)
        if permission is None:
            return None
        option = permission.option_for(decision, scope)
        session = self.sessions.get(permission.session_id)
        tool = session.tools.get(permission.tool_call_id or "") if session else None
        if tool is not None and decision != "accept" and not tool.announced:
            tool.announced = tool.finished = True
        return option

    def commands(self, session_id: str) -> list[tuple[str, str]]:
        """The agent's slash commands (``available_commands_update``), name and description."""
        session = self.sessions.get(session_id)
        return list(session.commands) if session is not None else []

    # -- wire messages -------------------------------------------------------------

    def handle(self, obj: JsonObject, now: float) -> None:
        """A JSON-RPC message from the agent: ``session/update`` or a permission request."""
        method = obj.get("method")
        params = obj.get("params")
        if not isinstance(params, dict):
            self.diagnose("acp_params", f"{method!r} has no params object; dropped")
            return
        if method == "session/update":
            self._update(params, now)
        elif method == "session/request_permission":
            self._permission(str(obj.get("id", "")), params, now)
        else:
            self.diagnose("acp_method", f"no announcement for ACP method {str(method)[:60]!r}")

    def _run(self, step: Any) -> AdapterOutput:
        self._out = AdapterOutput()
        try:
            step()
        except Exception as exc:  # a bug of ours must not take the agent down
            self.diagnose(
                "adapter_error", f"could not translate an ACP message ({type(exc).__name__})"
            )
        self._flush()
        return self._take()

    def _flush(self) -> None:
        built = self.builder.take()
        if built:
            self._out.events.extend(built)

    def update(self, params: JsonObject, now: float) -> AdapterOutput:
        """One ``session/update`` notification's params."""
        return self._run(lambda: self._update(params, now))

    # -- mapping --------------------------------------------------------------------

    def _open(self, session_id: str, cwd: str, now: float) -> _Session:
        session = self.sessions.get(session_id)
        if session is None:
            state = self.builder.session(session_id)
            session = _Session(state, cwd)
            self.sessions[session_id] = session
            self.builder.session_started(
                state,
                now,
                normal=self._t("{agent} is ready.").format(agent=self.agent_name),
                terse=self._t("{agent} ready.").format(agent=self.agent_name),
            )
        return session

    def _session(self, session_id: str | None, now: float) -> _Session:
        session = self.sessions.get(session_id) if session_id else None
        if session is None:
            return self._open(session_id or "unknown", "", now)
        self.builder.current = session.state
        return session

    def _update(self, params: JsonObject, now: float) -> None:
        # The hot path (benchmarks/acp.py): most updates are message chunks, so this
        # does only what a chunk needs before it goes to the builder.
        session = self._session(get_str(params, "sessionId"), now)
        update = params.get("update")
        if not isinstance(update, dict):
            self.diagnose("acp_update", "session/update without an update object; dropped")
            return
        kind = update.get("sessionUpdate")
        if kind != "agent_thought_chunk" and session.thought:
            self._say_thought(session, now)
        if session.due:
            self._announce_due(session, now, keep=get_str(update, "toolCallId"))
        if kind == "agent_message_chunk":
            self._message(session, update, now)
        elif kind == "agent_thought_chunk":
            text = _content_text(update.get("content"))
            if text:
                session.thought.append(text)
        elif kind in ("tool_call", "tool_call_update"):
            self._tool(session, update, now)
        elif kind == "plan":
            self._plan(session, update, now)
        elif kind == "current_mode_update":
            self._mode(session, get_str(update, "currentModeId"), now)
        elif kind == "available_commands_update":
            session.commands = _commands(update.get("availableCommands"))
        elif kind in (
            "user_message_chunk",
            "usage_update",
            "config_option_update",
            "session_info_update",
        ):
            return  # our own prompt echoed, token counts, settings: never spoken
        else:
            self.diagnose("acp_update", f"no announcement for update {str(kind)[:60]!r}")

    def _output_key(self, session: _Session) -> str:
        return f"turn-{session.turn}"

    def _message(self, session: _Session, update: JsonObject, now: float) -> None:
        content = update.get("content")
        text = _content_text(content)
        if text is None:
            kind = get_str(content, "type") or "content"
            text = self._t("(The agent sent {kind} that cannot be read aloud.)").format(kind=kind)
            text = f" {text} "
        if text:
            self.builder.output(session.state, now, self._output_key(session), text, complete=False)

    def _say_thought(self, session: _Session, now: float) -> None:
        """A thought is said whole once the agent moves on: detailed wording only."""
        if not session.thought:
            return
        thought = " ".join("".join(session.thought).split())
        session.thought.clear()
        if not thought:
            return
        self.builder.state_changed(
            session.state,
            now,
            "thinking",
            normal=self._t("Thinking."),
            terse=self._t("Thinking."),
            detailed=self._t("Thinking: {text}").format(text=clip(thought, 1000)),
            force=True,
        )

    def _tool(self, session: _Session, update: JsonObject, now: float) -> None:
        call_id = get_str(update, "toolCallId") or f"anonymous-{len(session.tools)}"
        tool = session.tools.get(call_id)
        if tool is None:
            tool = session.tools[call_id] = _Tool()
        title = get_str(update, "title")
        if title:
            tool.title = " ".join(title.split())
        tool.kind = get_str(update, "kind") or tool.kind
        description = get_str(update, "rawInput", "description")
        if description:
            tool.description = " ".join(description.split())
        paths = _locations(update.get("locations"), session.cwd)
        if paths:
            tool.locations = paths
        changes = _change_summaries(update.get("content"), session.cwd, self.language)
        if changes:
            tool.changes = changes
        command = _raw_command(update)
        if command is not None:
            tool.command = command
        status = get_str(update, "status")
        if not tool.announced and status in ("in_progress", "completed", "failed"):
            if call_id in session.due:
                session.due.remove(call_id)
            self._announce_tool(session, call_id, tool, now)
        elif not tool.announced and not tool.asked and tool.title and call_id not in session.due:
            # Wait: the agent may ask permission for it next, and one question says it all.
            session.due.append(call_id)
        if status in ("completed", "failed") and not tool.finished:
            self._finish_tool(session, call_id, tool, status, update, now)

    def _announce_due(self, session: _Session, now: float, keep: str | None = None) -> None:
        for call_id in [c for c in session.due if c != keep]:
            session.due.remove(call_id)
            tool = session.tools.get(call_id)
            if tool is not None and not tool.announced and not tool.asked:
                self._announce_tool(session, call_id, tool, now)

    def _tool_label(self, tool: _Tool) -> str:
        return tool.title or self._t("a {kind} step").format(kind=tool.kind)

    def _tool_name(self, tool: _Tool) -> str:
        """What the call is called when it ends: the agent's description, else its title."""
        return tool.description or self._tool_label(tool)

    def _announce_tool(self, session: _Session, call_id: str, tool: _Tool, now: float) -> None:
        tool.announced = True
        label = self._tool_label(tool)
        where = self._where(tool)
        normal = tool.description or label
        detailed = f"{label}: {tool.description}" if tool.description else label
        self.builder.tool_invoked(
            session.state,
            now,
            call_id,
            tool.kind,
            normal=_sentence(normal + where),
            terse=_sentence(label),
            detailed=_sentence(detailed + where),
        )

    def _where(self, tool: _Tool) -> str:
        if not tool.locations:
            return ""
        return " " + self._t("in {files}").format(files=", ".join(tool.locations[:3]))

    def _finish_tool(
        self,
        session: _Session,
        call_id: str,
        tool: _Tool,
        status: str,
        update: JsonObject,
        now: float,
    ) -> None:
        tool.finished = True
        changes = _diff_sentences(
            update.get("content"), session.cwd, translator(self.language).ngettext
        )
        label = self._tool_name(tool)
        if status == "completed":
            said = "; ".join(changes) if changes else self._t("{tool}: done.").format(tool=label)
            self.builder.tool_completed(
                session.state,
                now,
                call_id,
                "success",
                tool_name=tool.kind,
                normal=_sentence(said),
                terse=self._t("Done."),
            )
        else:
            reason = _content_text_all(update.get("content")) or get_str(
                update, "rawOutput", "error"
            )
            self.builder.tool_completed(
                session.state,
                now,
                call_id,
                "error",
                tool_name=tool.kind,
                normal=_sentence(clip(reason, 300)) if reason else self._t("It reported an error."),
                detailed=self._t("{tool} failed: {reason}").format(
                    tool=label, reason=clip(reason or self._t("no reason given"), 300)
                ),
                terse=self._t("Failed."),
                error_message=clip(reason or self._t("the agent reported a failure"), 4096),
            )

    def _plan(self, session: _Session, update: JsonObject, now: float) -> None:
        entries = update.get("entries")
        if not isinstance(entries, list) or not entries:
            return
        steps = [e for e in entries if isinstance(e, dict)]
        current = next(
            (i for i, e in enumerate(steps) if e.get("status") == "in_progress"),
            next((i for i, e in enumerate(steps) if e.get("status") == "pending"), None),
        )
        if current is None:
            # Issue 20: a completed plan is said ("All 4 steps done."), once.
            done = (len(steps), "")
            if session.plan_step is None or session.plan_step == done:
                return
            if not all(e.get("status") == "completed" for e in steps):
                return
            session.plan_step = done
            said = (
                translator(self.language)
                .ngettext("The one step is done.", "All {count} steps done.", len(steps))
                .format(count=len(steps))
            )
            self.builder.progress(
                session.state,
                now,
                percent=100,
                step=len(steps),
                total_steps=len(steps),
                normal=said,
                terse=said,
                urgency="normal",
            )
            return
        content = " ".join(str(steps[current].get("content") or "").split())
        key = (current, content)
        if session.plan_step == key:
            return
        session.plan_step = key
        said = self._t("Step {step} of {total}: {text}").format(
            step=current + 1, total=len(steps), text=clip(content, 200)
        )
        self.builder.progress(
            session.state,
            now,
            description=clip(content, 4096) or None,
            step=current + 1,
            total_steps=len(steps),
            normal=_sentence(said),
            terse=self._t("Step {step} of {total}.").format(step=current + 1, total=len(steps)),
            urgency="normal",
        )

    def _mode(self, session: _Session, mode: str | None, now: float) -> None:
        if not mode or mode == session.mode:
            return
        session.mode = mode
        self.builder.progress(
            session.state,
            now,
            description=self._t("mode {mode}").format(mode=mode),
            normal=self._t("Mode: {mode}.").format(mode=mode.replace("_", " ")),
            urgency="normal",
        )

    def _end_turn(self, session_id: str, stop_reason: str | None, now: float) -> None:
        session = self._session(session_id, now)
        self._say_thought(session, now)
        self._announce_due(session, now)
        self.builder.output(session.state, now, self._output_key(session), "", complete=True)
        # Adapters do not always report the end of a call that ran without asking.
        for call_id, tool in session.tools.items():
            if tool.announced and not tool.finished:
                tool.finished = True
                self.builder.tool_completed(
                    session.state,
                    now,
                    call_id,
                    "success",
                    tool_name=tool.kind,
                    normal=self._t("{tool} ended with the turn.").format(
                        tool=self._tool_label(tool)
                    ),
                    terse=self._t("Done."),
                )
        session.tools.clear()
        sentences = {
            "end_turn": self._t("{agent} finished the turn."),
            "cancelled": self._t("{agent} stopped the turn: you cancelled it."),
            "refusal": self._t("{agent} refused to go on."),
            "max_tokens": self._t("{agent} stopped: it reached its output limit."),
            "max_turn_requests": self._t("{agent} stopped: it reached its step limit."),
        }
        said = sentences.get(stop_reason or "end_turn", sentences["end_turn"])
        # The agent now waits for the user: always said (never folded into a short cycle),
        # since silence while an agent waits is what users of agent tools hate most.
        self.builder.state_changed(
            session.state,
            now,
            "awaiting_input",
            normal=said.format(agent=self.agent_name),
            terse=self._t("Your turn."),
            urgency="normal",
            force=True,
        )

    def _permission(self, request_key: str, params: JsonObject, now: float) -> str | None:
        session = self._session(get_str(params, "sessionId"), now)
        self._say_thought(session, now)
        call = params.get("toolCall") if isinstance(params.get("toolCall"), dict) else {}
        assert isinstance(call, dict)
        call_id = get_str(call, "toolCallId")
        # The request carries the call's latest title, kind and places.
        if call_id is not None:
            self._tool(session, {**call, "status": None}, now)
        tool = session.tools.get(call_id or "", _Tool())
        if call_id in session.due:
            session.due.remove(call_id)
        tool.asked = True
        self._announce_due(session, now)
        # a title's code marks are markdown (older adapters), never part of what runs
        title = " ".join((get_str(call, "title") or tool.title or "").replace("`", "").split())
        kind = get_str(call, "kind") or tool.kind
        description = get_str(call, "rawInput", "description") or tool.description
        # What will run decides the risk and is said, never the title or kind alone
        # (issue 22): "List the files" that runs rm -rf ~ is a high-risk delete.
        command = _raw_command(call) or tool.command
        # an "execute" call without rawInput is titled by its command (Claude's adapters)
        judged = command or (title if kind == "execute" and title else None)
        analysis = analyse(judged) if judged is not None else None
        options = _options(params.get("options"))
        allowed = ["reject"] + (["accept"] if _ALLOW_ONCE in options else [])
        risk = "low" if kind in _LOW_RISK_KINDS else "medium"
        if kind in _HIGH_RISK_KINDS:
            risk = "high"
        if analysis is not None:
            risk = higher_risk(risk, analysis.risk)
        action = title or self._t("a {kind} step").format(kind=kind)
        if command is not None:
            said = command_in_words(command, self.language).rstrip(".")
            flat = " ".join(command.split())
            if " ".join(title.replace("`", "").split()) == flat:
                action = said  # titled by its command (`rm -rf build`): said once, as run
            else:
                # the title's code marks are markdown, not part of what runs
                action = " ".join(action.replace("`", "").split())
                if flat not in action or len(flat) > len(said):
                    command_words = self._t("Command: {command}").format(command=said)
                    action = f"{_sentence(action)} {command_words}"
        files = ", ".join(tool.locations[:3]) if tool.locations else ""
        changes = _change_summaries(call.get("content"), session.cwd, self.language) or (
            tool.changes
        )
        touches = (
            _sentence("; ".join(changes))
            if changes
            else self._t("It touches {files}.").format(files=files)
            if files
            else ""
        )
        consequence = description or touches or self._t("It runs only if you accept.")
        if description and touches:
            consequence = f"{_sentence(description)} {touches}"
        token_seed = f"permission-{request_key}"
        event = self.builder.confirmation(
            session.state,
            now,
            token_seed=token_seed,
            action=_sentence(
                self._t("{agent} wants to run: {action}").format(
                    agent=self.agent_name, action=action
                )
            ),
            consequence=_sentence(consequence),
            normal=_sentence(
                self._t("{agent} asks permission: {action}").format(
                    agent=self.agent_name, action=action
                )
            ),
            terse=_sentence(action),
            risk_level=risk,
            irreversible=kind in _IRREVERSIBLE_KINDS
            or (analysis is not None and analysis.irreversible),
            timeout_seconds=NO_TIMEOUT_SECONDS,
        )
        event["allowed_replies"] = allowed
        # §7: the agent waits without a deadline; the engine must not speak one.
        event["@context"] = [event["@context"], EXTENSION_CONTEXT]
        always = [
            decision
            for decision, kind in (("accept", _ALLOW_ALWAYS), ("reject", _REJECT_ALWAYS))
            if kind in options and decision in allowed
        ]
        event.setdefault("extensions", {})[EXTENSION] = {
            "no_timeout": True,
            "options": sorted(options),
            # the decisions the agent also offers "always" for (engine.prompts.always_decisions)
            "always": always,
        }
        if command is not None:
            mark_command(event, command)
        else:
            mark_literal(event)  # titles and paths are read as written
        session.state.state = "awaiting_input"  # §6.8: a later change away from it withdraws
        token = str(event["reply_token"])
        self.permissions[token] = Permission(
            request_key, get_str(params, "sessionId") or "", call_id, options
        )
        return token


def _sentence(text: str) -> str:
    text = " ".join(text.split())
    if text and text[-1] not in ".!?…:":
        text += "."
    return text[:1].upper() + text[1:]


def _content_text(content: object) -> str | None:
    """The text of one ContentBlock; None for blocks that are not text."""
    if isinstance(content, dict) and content.get("type") == "text":
        text = content.get("text")
        return text if isinstance(text, str) else ""
    return None


def _content_text_all(content: object) -> str:
    """Text of a tool call's content list (``{"type": "content", "content": block}``)."""
    if not isinstance(content, list):
        return ""
    parts = []
    for item in content:
        if isinstance(item, dict) and item.get("type") == "content":
            text = _content_text(item.get("content"))
            if text:
                parts.append(" ".join(text.split()))
    return " ".join(parts)


def _relative(path: str, cwd: str) -> str:
    if cwd and posixpath.isabs(path) and posixpath.isabs(cwd):
        relative = posixpath.relpath(path, cwd)
        if not relative.startswith(".."):
            return relative
    return path


def _locations(value: object, cwd: str) -> list[str]:
    if not isinstance(value, list):
        return []
    found: list[str] = []
    for item in value:
        path = get_str(item, "path")
        if path:
            name = _relative(path, cwd)
            if name not in found:
                found.append(name)
    return found


def _diff_sentences(content: object, cwd: str, ngettext: Any) -> list[str]:
    """``{"type": "diff", "path", "oldText", "newText"}`` as "changes 3 lines in app.py"."""
    if not isinstance(content, list):
        return []
    said: list[str] = []
    for item in content:
        if not isinstance(item, dict) or item.get("type") != "diff":
            continue
        path = get_str(item, "path")
        if path is None:
            continue
        name = _relative(path, cwd)
        new = item.get("newText") if isinstance(item.get("newText"), str) else ""
        old = item.get("oldText")
        if not isinstance(old, str):
            lines = len(str(new).splitlines())
            created = ngettext(
                "creates {file} ({lines} line)", "creates {file} ({lines} lines)", lines
            )
            said.append(created.format(file=name, lines=lines))
            continue
        changed = sum(
            1
            for line in difflib.unified_diff(
                old.splitlines(), str(new).splitlines(), lineterm="", n=0
            )
            if line[:1] in "+-" and not line.startswith(("+++", "---"))
        )
        changes = ngettext(
            "changes {lines} line in {file}", "changes {lines} lines in {file}", changed
        )
        said.append(changes.format(lines=changed, file=name))
    return said


def _raw_command(call: JsonObject) -> str | None:
    """``rawInput.command`` as one command line (Codex sends a list of words)."""
    raw = call.get("rawInput")
    value = raw.get("command") if isinstance(raw, dict) else None
    if isinstance(value, list) and value and all(isinstance(word, str) for word in value):
        return shlex.join(value)
    if isinstance(value, str) and value.strip():
        return value
    return None


def _change_summaries(content: object, cwd: str, language: str) -> list[str]:
    """A tool call's diffs as a question says them: "adds 3 lines and removes 1 line in
    src/app.py", "creates notes.txt (4 lines)"; kept even when they come before the
    permission request (issue 21)."""
    if not isinstance(content, list):
        return []
    tr = translator(language)
    said: list[str] = []
    for item in content[:20]:
        if not isinstance(item, dict) or item.get("type") != "diff":
            continue
        path = get_str(item, "path")
        if path is None:
            continue
        name = _relative(path, cwd)
        new = item.get("newText") if isinstance(item.get("newText"), str) else ""
        old = item.get("oldText")
        if not isinstance(old, str):
            lines = len(str(new).splitlines())
            created = tr.ngettext(
                "creates {file} ({lines} line)", "creates {file} ({lines} lines)", lines
            )
            said.append(created.format(file=name, lines=lines))
            continue
        added = removed = 0
        for line in difflib.unified_diff(old.splitlines(), str(new).splitlines(), lineterm="", n=0):
            if line.startswith(("+++", "---")):
                continue
            added += line.startswith("+")
            removed += line.startswith("-")
        adds = tr.ngettext("adds {count} line", "adds {count} lines", added).format(count=added)
        removes = tr.ngettext("removes {count} line", "removes {count} lines", removed).format(
            count=removed
        )
        if added and removed:
            said.append(
                tr.gettext("{adds} and {removes} in {file}").format(
                    adds=adds, removes=removes, file=name
                )
            )
        else:
            change = adds if added else removes
            said.append(tr.gettext("{change} in {file}").format(change=change, file=name))
    return said


def _options(value: object) -> dict[str, str]:
    found: dict[str, str] = {}
    if isinstance(value, list):
        for option in value:
            kind, option_id = get_str(option, "kind"), get_str(option, "optionId")
            if kind and option_id and kind not in found:
                found[kind] = option_id
    return found


def _commands(value: object) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    if isinstance(value, list):
        for command in value:
            name = get_str(command, "name")
            if name:
                found.append((name, " ".join((get_str(command, "description") or "").split())))
    return found[:200]


__all__ = ["EXTENSION", "EXTENSION_CONTEXT", "NO_TIMEOUT_SECONDS", "AcpAdapter", "Permission"]
