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
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from announcer.command_analysis import analyse, higher_risk
from announcer.formats.acp_forms import Form, FormField, next_question, parse_form, take_answer
from announcer.formats.base import AdapterOutput, FormatAdapter, JsonObject, get_str
from announcer.formats.builder import (
    AaepBuilder,
    SessionState,
    mark_command,
    mark_literal,
    mark_plan,
)
from announcer.formats.speakable import clip, command_in_words
from announcer.i18n.translate import translator

#: how long a call that started running waits to be said, in case the agent asks about
#: it first (codex-acp starts a command, then asks for it): one announcement, the question
RUNNING_QUIET_SECONDS = 0.4
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
# Updates after which a titled call waiting to be said is said (the agent moved on).
_MOVES_ON = frozenset(
    {"agent_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update", "plan"}
)
# Names of an "always" option that say nothing more than the key does.
_GENERIC_ALWAYS = frozenset({"always allow", "allow always", "always", "allow all", "yes, always"})
# Codex's approval reviewer ("Auto review", Guardian) reports as a tool call of its own.
_REVIEW_CALL_PREFIX = "guardian_assessment:"
_REVIEW_TITLE = "Guardian Review"
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
    rejected: bool = False  # the user rejected it: its failure report is not a failure
    deletes: list[str] = field(default_factory=list)  # files its diff deletes
    plan: str = ""  # a plan approval's plan (ExitPlanMode), sent before the question
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
    # the agent's modes (id, name) and config options (``configOptions``), by id
    modes: list[tuple[str, str]] = field(default_factory=list)
    config: dict[str, ConfigOption] = field(default_factory=dict)
    reviewed: set[str] = field(default_factory=set)  # the reviewer's decisions already said
    denied: list[str] = field(default_factory=list)  # actions the reviewer denied (recent)
    rejected_in_turn: str | None = None  # what the user rejected in this turn, if anything
    cancelled_by_user: bool = False  # :cancel in this turn
    # Titled calls not yet announced: said when the agent moves on, unless it asks first.
    due: list[str] = field(default_factory=list)
    # Running calls not yet announced, and since when: said after a short quiet time.
    running: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ConfigOption:
    """One of the agent's session settings (ACP ``configOptions``): model, mode, effort..."""

    id: str
    name: str
    category: str
    current: str
    choices: tuple[tuple[str, str], ...] = ()  # (value, name) of a select

    def said_value(self, value: str | None = None) -> str:
        value = self.current if value is None else value
        return next((name for v, name in self.choices if v == value), value)

    def find(self, wanted: str) -> str | None:
        """The value the user means by ``wanted``: a value or a name, any case."""
        folded = " ".join(wanted.split()).casefold()
        for value, name in self.choices:
            if folded in (value.casefold(), name.casefold()):
                return value
        if self.choices == (("true", "on"), ("false", "off")):
            return {"on": "true", "off": "false", "yes": "true", "no": "false"}.get(folded)
        return None


@dataclass(frozen=True, slots=True)
class Permission:
    """A question the agent asked: which request it answers and the agent's own options."""

    request_key: str
    session_id: str
    tool_call_id: str | None
    options: dict[str, str]  # kind -> optionId, the first of each kind
    named: tuple[tuple[str, str, str], ...] = ()  # every option: (optionId, name, kind)
    #: the request as the agent sent it, to ask again (a plan that came after it)
    params: JsonObject | None = field(default=None, compare=False)
    #: the plan the question read (a plan approval), "" for none
    plan: str = ""

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
        # open elicitations (the agent's own questions), by the reply token now asked
        self.forms: dict[str, Form] = {}
        self._said_after: list[tuple[str, str]] = []  # rejects to say (session, action)
        # questions asked again under a new token (old token, new token), for the transport
        self._asked_again: list[tuple[str, str]] = []

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
                    normal=self._t("{agent} stopped unexpectedly: {reason}").format(
                        agent=self.agent_name, reason=reason
                    ),
                    terse=self._t("{agent} stopped unexpectedly.").format(agent=self.agent_name),
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
            form = self.forms.pop(reply_token, None)
            owner = permission.session_id if permission else form.session_id if form else None
            if owner is None:
                return
            session = self.sessions.get(owner)
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
        if session is not None and decision != "accept" and option is not None:
            # A reject is the user's own decision: said as such, never as a failure.
            what = (tool.title if tool is not None else "") or self._t("the request")
            if tool is not None:
                tool.rejected = True
            session.rejected_in_turn = what
            self._said_after.append((permission.session_id, what))
        return option

    def _plan_and_options(
        self, call: JsonObject, options: object, known_plan: str = ""
    ) -> tuple[str, str]:
        """The plan of a plan approval, by steps, and what each of the agent's options means.

        Every option is named with the answer that picks it ("Accept: Yes, manually approve
        edits"); an "always" option says that from now on the agent will not ask.
        """
        plan = get_str(call, "rawInput", "plan") or known_plan
        said_plan = ""
        if plan.strip():
            steps = _plan_steps(plan)
            said_plan = (
                translator(self.language)
                .ngettext(
                    "The plan has {count} step: {steps}",
                    "The plan has {count} steps: {steps}",
                    len(steps),
                )
                .format(
                    count=len(steps),
                    steps=" ".join(
                        f"{i}. {_sentence(step)}" for i, step in enumerate(steps[:8], 1)
                    ),
                )
            )
            if len(steps) > 8:
                said_plan += " …"
        named = _named_options(options)
        always = [name for _, name, kind in named if kind == _ALLOW_ALWAYS]
        specific = [n for n in always if n.casefold() not in _GENERIC_ALWAYS]
        if not plan.strip() and len(always) < 2 and not specific:
            return said_plan, ""  # plain allow/reject/always: the keys say it all
        parts: list[str] = []
        for decision, wanted in (
            (self._t("Accept"), _ALLOW_ONCE),
            (self._t("Reject"), _REJECT_ONCE),
        ):
            name = next((n for _, n, kind in named if kind == wanted), None)
            if name:
                parts.append(f"{decision}: {name}")
        if always:
            parts.append(
                self._t("Always: {options}; from now on it does not ask about this").format(
                    options=self._t(" or ").join(always[:4])
                )
            )
        never = next((n for _, n, kind in named if kind == _REJECT_ALWAYS), None)
        if never:
            parts.append(self._t("Never: {option}").format(option=never))
        return said_plan, _sentence("; ".join(parts))

    def always_choices(self, reply_token: str) -> list[tuple[str, str]]:
        """The agent's allow-always options (id, name) for a question, when there are several."""
        permission = self.permissions.get(reply_token)
        if permission is None:
            return []
        always = [(o, n) for o, n, kind in permission.named if kind == _ALLOW_ALWAYS]
        return always if len(always) > 1 else []

    def ask_which_always(self, reply_token: str, now: float) -> AdapterOutput:
        """``always`` with several allow-always options: ask which one (never a guess).

        The question stays open; its follow-up is a one-field form whose answer
        :meth:`elicitation_answered` returns as ``{"action": "accept", "content":
        {"option": OPTION_ID}}``, or decline (a reject) or cancel.
        """

        def step() -> None:
            permission = self.permissions.pop(reply_token, None)
            if permission is None:
                return
            choices = [(o, n) for o, n, kind in permission.named if kind == _ALLOW_ALWAYS]
            field_ = FormField(
                "option", "choice", self._t("Which always answer?"), required=True,
                options=choices,
            )  # fmt: skip
            form = Form(
                f"always-{permission.request_key}",
                permission.session_id,
                self._t("The agent offers several always answers."),
                [field_],
                permission.tool_call_id,
            )
            form.permission = permission
            self._ask_form(self._session(permission.session_id, now), form, now)

        return self._run(step)

    def answer_said(self, now: float) -> AdapterOutput:
        """What follows the user's answer: "You rejected: rm -rf build."."""

        def step() -> None:
            said, self._said_after = self._said_after, []
            for session_id, what in said:
                session = self.sessions.get(session_id)
                if session is None or session.state.ended:
                    continue
                sentence = _sentence(self._t("You rejected: {action}").format(action=what))
                self.builder.progress(
                    session.state,
                    now,
                    description=sentence,
                    percent=100,
                    normal=sentence,
                    terse=sentence,
                    urgency="normal",
                )

        return self._run(step)

    def turn_cancelled(self, session_id: str) -> None:
        """The user asked to stop the turn (``:cancel``): its end is said as their cancel."""
        session = self.sessions.get(session_id)
        if session is not None:
            session.cancelled_by_user = True

    # -- the agent's own questions (ACP elicitation/create) ---------------------------------

    def elicitation_requested(
        self, request_key: str, params: JsonObject, now: float
    ) -> AdapterOutput:
        """``elicitation/create``: the first clarification of the form, or the URL's question.

        The reply token of the question asked is in the output; the form stays open until
        :meth:`elicitation_answered` returns the agent's response (never answered here).
        """
        return self._run(lambda: self._elicit(request_key, params, now))

    def elicitation_answered(
        self, reply_token: str, response: object, now: float
    ) -> tuple[AdapterOutput, JsonObject | None]:
        """The user's reply to one question of a form.

        Returns the ACP response (``accept`` with content, ``decline`` or ``cancel``) once
        the form is done; otherwise None, and the output holds the next question (the next
        field, the review, or the same field again with the reason).
        """
        result: list[JsonObject] = []

        def step() -> None:
            form = self.forms.pop(reply_token, None)
            if form is None:
                return
            done = take_answer(form, response, self._t)
            if done is not None:
                result.append(done)
                return
            self._ask_form(self._session(form.session_id, now), form, now)

        out = self._run(step)
        return out, (result[0] if result else None)

    def form_token(self, request_key: str) -> str | None:
        """The reply token of the question now asked for an elicitation, if still open."""
        return next((t for t, f in self.forms.items() if f.request_key == request_key), None)

    def _elicit(self, request_key: str, params: JsonObject, now: float) -> None:
        form = parse_form(request_key, params)
        form.session_id = form.session_id or self._latest_session() or ""
        session = self._session(form.session_id or None, now)
        self._say_thought(session, now)
        if form.tool_call_id is not None:
            # A tool that asks (AskUserQuestion, request_user_input) is announced once, as
            # the question: never before it, nor "done" after the answer.
            if form.tool_call_id in session.due:
                session.due.remove(form.tool_call_id)
            tool = session.tools.setdefault(form.tool_call_id, _Tool())
            tool.asked = tool.announced = tool.finished = True
        self._announce_due(session, now)
        self._ask_form(session, form, now)

    def _latest_session(self) -> str | None:
        return next(reversed(self.sessions), None) if self.sessions else None

    def _ask_form(self, session: _Session, form: Form, now: float) -> None:
        if form.url is None and not form.fields:
            form.reviewing = True  # nothing to fill in: still said, and sent only if confirmed
        question = next_question(form, self.agent_name, self._t)
        form.asked += 1
        event = self.builder.clarification(
            session.state,
            now,
            token_seed=f"elicitation-{form.request_key}-{form.asked}",
            question=question.text,
            terse=question.terse,
            choices=question.choices,
            timeout_seconds=NO_TIMEOUT_SECONDS,
        )
        kinds = list(question.kinds)
        if len(event.get("choices") or []) < 2:
            event.pop("choices", None)
            kinds = [k for k in kinds if k != "multiple_choice"] or ["freetext"]
        event["accepted_response_kinds"] = kinds
        event["@context"] = [event["@context"], EXTENSION_CONTEXT]
        ours: dict[str, Any] = {"no_timeout": True}
        if question.secret:
            ours["secret"] = True  # the answer is not read back (engine.prompts.is_secret)
        event.setdefault("extensions", {})[EXTENSION] = ours
        self.forms[str(event["reply_token"])] = form

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
        elif cwd and not session.cwd:
            # an update came before session/new's answer was read: its folder is known now,
            # so paths are said relative from here on
            session.cwd = cwd
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
        if session.due and kind in _MOVES_ON:
            # The agent moved on without asking: the titled call is said now. Silent
            # updates (usage, commands, settings, notices) are not moving on.
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
        elif kind == "config_option_update":
            self._config(session, update.get("configOptions"), now)
        elif kind == "notice":
            self._notice(session, update, now)
        elif kind == "available_commands_update":
            session.commands = _commands(update.get("availableCommands"))
        elif kind in (
            "user_message_chunk",
            "usage_update",
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
        if call_id.startswith(_REVIEW_CALL_PREFIX) or get_str(update, "title") == _REVIEW_TITLE:
            self._review(session, call_id, update, now)
            return
        tool = session.tools.get(call_id)
        if tool is None:
            tool = session.tools[call_id] = _Tool()
        title = get_str(update, "title")
        if title:
            tool.title = _relative_text(" ".join(title.split()), session.cwd)
        tool.kind = get_str(update, "kind") or tool.kind
        plan = get_str(update, "rawInput", "plan")
        if plan:
            tool.plan = plan[:20_000]
            self._ask_again_with_plan(session, call_id, tool.plan, now)
        for deleted in _deleted_files(update.get("content"), session.cwd):
            if deleted not in tool.deletes:
                tool.deletes.append(deleted)
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
        if not tool.announced and status in ("completed", "failed"):
            if call_id in session.due:
                session.due.remove(call_id)
            session.running.pop(call_id, None)
            self._announce_tool(session, call_id, tool, now)
        elif not tool.announced and not tool.asked and status == "in_progress":
            # Running, but the agent may still ask for it (codex-acp starts a command, then
            # asks): said after RUNNING_QUIET_SECONDS unless a question says it first.
            if call_id in session.due:
                session.due.remove(call_id)
            session.running.setdefault(call_id, now)
        elif not tool.announced and not tool.asked and tool.title and call_id not in session.due:
            # Wait: the agent may ask permission for it next, and one question says it all.
            session.due.append(call_id)
        if status in ("completed", "failed") and not tool.finished:
            self._finish_tool(session, call_id, tool, status, update, now)

    def _review(self, session: _Session, call_id: str, update: JsonObject, now: float) -> None:
        """The agent's own reviewer decided an approval (Codex's Guardian, "Auto review").

        Said plainly as the reviewer's decision, never as the user's: "Codex's reviewer
        allowed: rm notes.txt". Nothing is said while it reviews.
        """
        status = get_str(update, "status")
        if status not in ("completed", "failed") or call_id in session.reviewed:
            return
        session.reviewed.add(call_id)
        fields = _review_fields(_content_text_all_lines(update.get("content")))
        action = fields.get("action", "")
        for prefix in ("shell ", "exec "):
            action = action.removeprefix(prefix)
        action = action or self._t("an action")
        verdict = fields.get("status", "").casefold()
        allowed = status == "completed" and verdict in ("", "approved")
        if not allowed:
            session.denied = [*session.denied[-9:], action]
        if allowed:
            said = self._t("{agent}'s reviewer allowed: {action}")
        else:
            said = self._t("{agent}'s reviewer denied: {action}")
        normal = _sentence(said.format(agent=self.agent_name, action=clip(action, 300)))
        detailed = normal
        if fields.get("rationale"):
            detailed += " " + self._t("Its reason: {reason}").format(
                reason=clip(fields["rationale"], 600)
            )
        # A finished step of its own (percent 100: never folded by the progress rate).
        # Never phrased as the user's decision.
        self.builder.progress(
            session.state,
            now,
            description=clip(detailed, 4096),
            percent=100,
            normal=normal,
            terse=normal,
            urgency="normal",
        )

    def _announce_due(self, session: _Session, now: float, keep: str | None = None) -> None:
        for call_id in [c for c in session.due if c != keep]:
            session.due.remove(call_id)
            tool = session.tools.get(call_id)
            if tool is not None and not tool.announced and not tool.asked:
                self._announce_tool(session, call_id, tool, now)
        self._announce_running(session, now, keep=keep)

    def _announce_running(
        self, session: _Session, now: float, keep: str | None = None, quiet: float = 0.0
    ) -> None:
        """Running calls no question claimed: said once they ran ``quiet`` seconds."""
        for call_id, since in list(session.running.items()):
            if call_id == keep or now - since < quiet:
                continue
            del session.running[call_id]
            tool = session.tools.get(call_id)
            if tool is not None and not tool.announced and not tool.asked:
                self._announce_tool(session, call_id, tool, now)

    def running_due(self) -> bool:
        """Whether a running call waits to be said (the transport then calls
        :meth:`flush_running` after ``RUNNING_QUIET_SECONDS``)."""
        return any(session.running for session in self.sessions.values())

    def flush_running(self, now: float) -> AdapterOutput:
        """Say the running calls no question claimed within ``RUNNING_QUIET_SECONDS``."""

        def step() -> None:
            for session in self.sessions.values():
                if session.running and not session.state.ended:
                    self.builder.current = session.state
                    self._announce_running(session, now, quiet=RUNNING_QUIET_SECONDS)

        return self._run(step)

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
        tr = translator(self.language)
        changes = _diff_sentences(update.get("content"), session.cwd, tr.ngettext, tr.gettext)
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
        elif tool.rejected:
            return  # the user rejected it: "You rejected: ..." was said, never a failure
        elif tool.title and any(tool.title in action for action in session.denied):
            return  # the agent's reviewer denied it, and said so: not a failure of its own
        else:
            reason = _content_text_all(update.get("content")) or get_str(
                update, "rawOutput", "error"
            )
            code = _exit_code(update.get("rawOutput"))
            if code is not None:
                first = _first_error_line(update.get("rawOutput"), reason or "")
                reason = self._t("exit code {code}: {line}").format(code=code, line=first)
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
        if any(o.category == "mode" for o in session.config.values()):
            return  # the mode is also a config option: its change is said from that update
        name = dict(session.modes).get(mode) or mode.replace("_", " ")
        self._setting_said(session, self._t("Mode: {mode}.").format(mode=name), now)

    def _setting_said(self, session: _Session, said: str, now: float) -> None:
        """A mode or setting that changed: a finished step (percent 100), which the
        progress rate never folds away: who asks before acting is never news to skip."""
        self.builder.progress(
            session.state, now, description=said, percent=100, normal=said, urgency="normal"
        )

    def _notice(self, session: _Session, update: JsonObject, now: float) -> None:
        """ACP session notice (an adapter's status, billing or warning), said by severity.

        Never read as the agent's words: it is the adapter's own advisory, with its own
        lead ("Warning from Claude: ..."). info is background news; warning and error are
        said at once, an error at critical urgency; an unknown severity as a notice.
        """
        title = " ".join((get_str(update, "title") or "").split())
        description = " ".join((get_str(update, "description") or "").split())
        if not title and not description:
            self.diagnose("acp_notice", "a notice without a title; dropped")
            return
        text = clip(f"{_sentence(title)} {description}".strip(), 600)
        severity = get_str(update, "severity") or ""
        if severity == "error":
            said, urgency = self._t("Error from {agent}: {notice}"), "critical"
        elif severity == "warning":
            said, urgency = self._t("Warning from {agent}: {notice}"), "normal"
        else:
            said, urgency = self._t("Notice from {agent}: {notice}"), "background"
        sentence = _sentence(said.format(agent=self.agent_name, notice=text))
        self.builder.progress(
            session.state,
            now,
            description=sentence,
            percent=None if urgency == "background" else 100,
            normal=sentence,
            terse=sentence,
            urgency=urgency,
        )

    # -- modes and config options (ACP session modes, session config options) -----------

    def settings_known(
        self, session_id: str, modes: object, config_options: object, now: float, say: bool = True
    ) -> AdapterOutput:
        """``session/new`` answered with the agent's modes and config options: say them once."""

        def step() -> None:
            session = self._session(session_id, now)
            if isinstance(modes, dict):
                session.modes = _mode_list(modes.get("availableModes"))
                session.mode = get_str(modes, "currentModeId")
            session.config = _config_options(config_options)
            said = self._settings_sentence(session)
            if said and say:
                self.builder.progress(
                    session.state,
                    now,
                    description=clip(said, 4096),
                    normal=said,
                    terse=said,
                    urgency="normal",
                )

        return self._run(step)

    def settings(self, session_id: str) -> tuple[list[tuple[str, str]], dict[str, ConfigOption]]:
        """The session's modes and config options, for ``:mode``, ``:model`` and the picker."""
        session = self.sessions.get(session_id)
        if session is None:
            return [], {}
        return list(session.modes), dict(session.config)

    def setting_plan(
        self, session_id: str, kind: str, wanted: str
    ) -> tuple[str, str, str | bool] | str:
        """What ``:mode NAME`` / ``:model NAME`` asks of the agent, or the sentence to say.

        ``("config", option id, value)`` for ``session/set_config_option`` (preferred),
        ``("mode", "", mode id)`` for ``session/set_mode`` (the fallback). With no
        ``wanted`` (or one the agent does not offer), the sentence names the current value
        and the choices. ``kind`` is ``mode``, ``model`` or a config option's own id.
        """
        session = self.sessions.get(session_id)
        if session is None:
            return self._t("{agent} has no session yet.").format(agent=self.agent_name)
        option = session.config.get(kind) or next(
            (o for o in session.config.values() if o.category == kind), None
        )
        if option is not None:
            listing = self._t("{setting}: {value}. Choices: {choices}.").format(
                setting=option.name,
                value=option.said_value(),
                choices=", ".join(name for _, name in option.choices[:30]),
            )
            if not wanted:
                return listing
            value = option.find(wanted)
            if value is None and kind == "mode":
                # ``:mode plan`` with Codex: "Plan" is its collaboration mode, not its mode
                other = [
                    o for o in session.config.values()
                    if o is not option and o.category != "model" and o.find(wanted) is not None
                ]  # fmt: skip
                if len(other) == 1:
                    option, value = other[0], other[0].find(wanted)
            if value is None:
                return (
                    self._t("{agent} offers no such choice: {wanted}.").format(
                        agent=self.agent_name, wanted=clip(wanted, 100)
                    )
                    + " "
                    + listing
                )
            if option.choices == (("true", "on"), ("false", "off")):
                return ("config", option.id, value == "true")
            return ("config", option.id, value)
        if kind == "mode" and session.modes:
            current = dict(session.modes).get(session.mode or "", session.mode or "?")
            listing = self._t("{setting}: {value}. Choices: {choices}.").format(
                setting=self._t("Mode"),
                value=current,
                choices=", ".join(name for _, name in session.modes),
            )
            folded = " ".join(wanted.split()).casefold()
            found = next(
                (m for m, name in session.modes if folded in (m.casefold(), name.casefold())),
                None,
            )
            if not wanted:
                return listing
            if found is None:
                return (
                    self._t("{agent} offers no such choice: {wanted}.").format(
                        agent=self.agent_name, wanted=clip(wanted, 100)
                    )
                    + " "
                    + listing
                )
            return ("mode", "", found)
        return self._t("{agent} offers no choice of {setting}.").format(
            agent=self.agent_name, setting=kind
        )

    def login_hint(self, methods: object, command: list[str]) -> str:
        """What to do when the agent says it needs a login (ACP ``authMethods``).

        A terminal method is the agent's own command with its arguments, to run in a
        terminal; an environment-variable method names its variables; any other is said
        by its name and description. announcer never types a credential itself.
        """
        import shlex

        steps: list[str] = []
        for method in methods if isinstance(methods, list) else []:
            if not isinstance(method, dict):
                continue
            name = clip(get_str(method, "name") or get_str(method, "id") or "", 80)
            description = clip(get_str(method, "description") or "", 160)
            args = method.get("args")
            if method.get("type") == "terminal" and isinstance(args, list):
                line = shlex.join([*command, *(str(a) for a in args[:20])])
                steps.append(
                    self._t("for {method}, run in a terminal: {command}").format(
                        method=name, command=line
                    )
                )
            elif method.get("type") == "env_var" and isinstance(method.get("vars"), list):
                names = [get_str(v, "name") for v in method["vars"][:5]]
                steps.append(
                    self._t("for {method}, set {variables}").format(
                        method=name, variables=", ".join(n for n in names if n)
                    )
                )
            elif name:
                steps.append(f"{name}: {description}" if description else name)
        if not steps:
            return self._t("{agent} needs you to log in; it did not say how.").format(
                agent=self.agent_name
            )
        return self._t("{agent} needs you to log in: {steps}.").format(
            agent=self.agent_name, steps="; ".join(steps[:4])
        )

    def sessions_said(self, sessions: list[tuple[str, str]]) -> str:
        """``:sessions``: the agent's sessions, numbered as ``:sessions N`` resumes them."""
        if not sessions:
            return self._t("{agent} has no sessions to resume.").format(agent=self.agent_name)
        listed = "; ".join(f"{i}. {clip(title, 120)}" for i, (_, title) in enumerate(sessions, 1))
        return self._t("Sessions of {agent}: {sessions}.").format(
            agent=self.agent_name, sessions=listed
        )

    def sessions_refused(self, why: str) -> str:
        """Why ``:sessions`` cannot list or resume: ``list``, ``resume``, ``busy``, ``number``."""
        sentences = {
            "list": self._t("{agent} cannot list its sessions."),
            "resume": self._t("{agent} cannot resume a session."),
            "busy": self._t("{agent} is working; stop its turn first."),
            "number": self._t("No such session; type :sessions to list them."),
        }
        return sentences.get(why, sentences["list"]).format(agent=self.agent_name)

    def session_resumed(self, session_id: str, title: str, now: float) -> AdapterOutput:
        """``session/resume`` answered: the conversation goes on in that session."""

        def step() -> None:
            session = self._open(session_id, self._latest_cwd(), now)
            self.builder.progress(
                session.state,
                now,
                description=clip(title, 4096) or session_id,
                percent=100,
                normal=self._t("Resumed: {title}.").format(title=clip(title, 200) or session_id),
                urgency="normal",
            )

        return self._run(step)

    def _latest_cwd(self) -> str:
        return next((s.cwd for s in reversed(self.sessions.values()) if s.cwd), "")

    def setting_refused(self, kind: str, value: str, reason: str) -> str:
        """The sentence said when the agent did not take a setting."""
        said = self._t("{agent} did not change {setting} to {value}.").format(
            agent=self.agent_name, setting=kind, value=clip(value, 100)
        )
        return f"{said} {clip(reason, 200)}".strip()

    def setting_rows(self, session_id: str) -> list[tuple[str, str, str, bool]]:
        """Every choice of the agent's settings, for a picker: (setting, value, label, now).

        Config options first (a select's every choice, a boolean's on and off); the session
        modes when no config option is the mode. ``setting`` is what :meth:`setting_plan`
        takes as ``kind``.
        """
        session = self.sessions.get(session_id)
        if session is None:
            return []
        rows: list[tuple[str, str, str, bool]] = []
        for option in session.config.values():
            for value, name in option.choices[:50]:
                rows.append((option.id, value, f"{option.name}: {name}", value == option.current))
        if not any(o.category == "mode" for o in session.config.values()):
            for mode_id, name in session.modes:
                label = f"{self._t('Mode')}: {name}"
                rows.append(("mode", mode_id, label, mode_id == session.mode))
        return rows[:200]

    def current_mode(self, session_id: str) -> str | None:
        session = self.sessions.get(session_id)
        return session.mode if session is not None else None

    def _settings_sentence(self, session: _Session) -> str:
        parts: list[str] = []
        mode_option = next((o for o in session.config.values() if o.category == "mode"), None)
        if session.mode and mode_option is None:
            name = dict(session.modes).get(session.mode) or session.mode
            parts.append(self._t("Mode: {mode}.").format(mode=name))
        for option in list(session.config.values())[:8]:
            parts.append(
                self._t("{setting}: {value}.").format(
                    setting=option.name, value=option.said_value()
                )
            )
        return " ".join(parts)

    def _config(self, session: _Session, value: object, now: float) -> None:
        """``config_option_update``: each setting whose value changed is said."""
        fresh = _config_options(value)
        if not fresh:
            return
        changed = [
            option
            for key, option in fresh.items()
            if key in session.config and session.config[key].current != option.current
        ]
        session.config = fresh
        for option in changed[:8]:
            said = self._t("{setting} is now {value}.").format(
                setting=option.name, value=option.said_value()
            )
            self._setting_said(session, said, now)

    def config_changed(self, session_id: str, config_options: object, now: float) -> AdapterOutput:
        """``session/set_config_option`` answered with every option: say what changed."""
        return self._run(lambda: self._config(self._session(session_id, now), config_options, now))

    def mode_changed(self, session_id: str, mode_id: str, now: float) -> AdapterOutput:
        """``session/set_mode`` answered: the mode is said (once, if the agent says it too)."""
        return self._run(lambda: self._mode(self._session(session_id, now), mode_id, now))

    def _end_turn(self, session_id: str, stop_reason: str | None, now: float) -> None:
        session = self._session(session_id, now)
        self._say_thought(session, now)
        self._announce_due(session, now)
        self.builder.output(session.state, now, self._output_key(session), "", complete=True)
        # Adapters do not always report the end of a call that ran without asking.
        for call_id, tool in session.tools.items():
            if tool.announced and not tool.finished:
                tool.finished = True
                # Its end was never reported: after a cancel it may well still run.
                ended = (
                    self._t("{tool} may still be running; its end was not reported.")
                    if stop_reason == "cancelled"
                    else self._t("{tool} ended with the turn.")
                )
                self.builder.tool_completed(
                    session.state,
                    now,
                    call_id,
                    "success",
                    tool_name=tool.kind,
                    normal=ended.format(tool=self._tool_label(tool)),
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
        rejected, session.rejected_in_turn = session.rejected_in_turn, None
        if stop_reason == "cancelled" and rejected and not session.cancelled_by_user:
            # The adapter ends the turn as "cancelled" after a reject: not the user's cancel.
            said = self._t("{agent} stopped the turn after you rejected: {action}").format(
                agent="{agent}", action=rejected.replace("{", "{{").replace("}", "}}")
            )
        session.cancelled_by_user = False
        # The agent now waits for the user: always said (never folded into a short cycle),
        # since silence while an agent waits is what users of agent tools hate most.
        self.builder.state_changed(
            session.state,
            now,
            "awaiting_input",
            normal=_sentence(said.format(agent=self.agent_name)),
            terse=self._t("Your turn."),
            urgency="normal",
            force=True,
        )

    def _ask_again_with_plan(self, session: _Session, call_id: str, plan: str, now: float) -> None:
        """A plan that comes after its approval question reaches it (claude-agent-acp sends
        the plan in a tool_call_update that, under load, may follow the request): the open
        question is withdrawn and asked again with the plan, under a new reply token, so no
        key answers a plan approval whose plan was never read."""
        for token, permission in list(self.permissions.items()):
            if (
                permission.tool_call_id != call_id
                or permission.params is None
                or permission.plan == plan
                or self.sessions.get(permission.session_id) is not session
            ):
                continue
            del self.permissions[token]
            again = self._t("{agent} sent its plan: the question again, with it.").format(
                agent=self.agent_name
            )
            self.builder.state_changed(
                session.state,
                now,
                "thinking",
                normal=again,
                terse=again,
                urgency="normal",
                force=True,
            )
            new_token = self._permission(f"{permission.request_key}+plan", permission.params, now)
            if new_token is not None:
                self._asked_again.append((token, new_token))

    def take_asked_again(self) -> list[tuple[str, str]]:
        """Questions asked again since the last call: (old reply token, new reply token).
        The transport's waiting answer moves to the new token; the old one answers nothing."""
        asked, self._asked_again = self._asked_again, []
        return asked

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
        if tool.deletes:  # a delete is said as one: high risk, cannot be undone
            risk = "high"
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
        if tool.deletes:
            consequence = self._t("It deletes {files}; this cannot be undone.").format(
                files=", ".join(tool.deletes[:3])
            )
        reason = _permission_reason(params, call, title)
        if reason and description and _same_words(reason, description):
            reason = ""  # already said as the call's description
        if reason:  # the agent's own reason is part of the question
            consequence = f"{_sentence(consequence)} " + self._t("Its reason: {reason}").format(
                reason=clip(reason, 300)
            )
        plan, choices = self._plan_and_options(call, params.get("options"), tool.plan)
        if plan:  # a plan approval reads the plan (Claude's ExitPlanMode)
            consequence = plan
        if choices:
            consequence = f"{_sentence(consequence)} {choices}"
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
            or bool(tool.deletes)
            or (analysis is not None and analysis.irreversible),
            timeout_seconds=NO_TIMEOUT_SECONDS,
        )
        event["allowed_replies"] = allowed
        whole_plan = get_str(call, "rawInput", "plan") or tool.plan
        if whole_plan.strip():  # the whole plan, also in the detailed summary
            event["summary_detailed"] = clip(
                f"{event['summary_normal']} {' '.join(whole_plan.split())}", 16_000
            )
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
        if whole_plan.strip():  # the whole plan: shown, and read whole on a key (W)
            mark_plan(event, whole_plan)
        session.state.state = "awaiting_input"  # §6.8: a later change away from it withdraws
        token = str(event["reply_token"])
        self.permissions[token] = Permission(
            request_key,
            get_str(params, "sessionId") or "",
            call_id,
            options,
            tuple(_named_options(params.get("options"))),
            params=params,
            plan=whole_plan,
        )
        return token


@dataclass(frozen=True, slots=True)
class TerminalLogin:
    """An ACP terminal login (Authentication, "terminal" methods): the agent's own program
    run by the user in their terminal with the method's arguments and environment."""

    method_id: str
    name: str
    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()


_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _program_name(path: str) -> str:
    """``/usr/bin/opencode`` and ``C:\\npm\\opencode.cmd`` are both ``opencode``."""
    name = re.split(r"[\\/]", path)[-1]
    return re.sub(r"\.(?:cmd|exe|bat)$", "", name, flags=re.IGNORECASE)


def _login_args(value: object) -> tuple[str, ...] | None:
    if not isinstance(value, list) or len(value) > 20:
        return None
    if not all(isinstance(word, str) and 0 < len(word) <= 200 for word in value):
        return None
    return tuple(value)


def _login_env(value: object) -> tuple[tuple[str, str], ...]:
    """``env`` as v1 sends it (a map) or v2 (a list of name and value)."""
    pairs: list[tuple[object, object]] = []
    if isinstance(value, dict):
        pairs = list(value.items())
    elif isinstance(value, list):
        pairs = [(v.get("name"), v.get("value")) for v in value if isinstance(v, dict)]
    return tuple(
        (name, val)
        for name, val in pairs[:20]
        if isinstance(name, str) and _ENV_NAME.match(name) and isinstance(val, str)
    )


def terminal_logins(methods: object, command: Sequence[str]) -> list[TerminalLogin]:
    """The terminal logins among an agent's ``authMethods``, each as the command to run.

    A ``terminal`` method's ``args`` follow the agent's own command line (the ACP spec: the
    method never names a program). Older adapters say it in ``_meta``: qwen's ``{"type":
    "terminal", "args"}``, opencode's ``{"terminal-auth": {"command", "args"}}``; those
    arguments follow the agent's program alone (its command line starts ACP mode), and a
    ``terminal-auth`` command is taken only when it is that same program.
    """
    if not command:
        return []
    program = command[0]
    found: list[TerminalLogin] = []
    for method in methods if isinstance(methods, list) else []:
        if not isinstance(method, dict):
            continue
        method_id = get_str(method, "id") or ""
        name = clip(get_str(method, "name") or method_id, 80)
        meta = method.get("_meta") if isinstance(method.get("_meta"), dict) else {}
        assert isinstance(meta, dict)
        legacy = meta.get("terminal-auth") if isinstance(meta.get("terminal-auth"), dict) else {}
        assert isinstance(legacy, dict)
        argv: tuple[str, ...] | None = None
        if method.get("type") == "terminal":
            args = _login_args(method.get("args", []))
            argv = (*command, *args) if args is not None else None
        elif meta.get("type") == "terminal":
            args = _login_args(meta.get("args", []))
            argv = (program, *args) if args is not None else None
        elif isinstance(legacy.get("command"), str) and (
            _program_name(str(legacy["command"])) == _program_name(program)
        ):
            args = _login_args(legacy.get("args", []))
            argv = (program, *args) if args is not None else None
        if argv is not None and method_id:
            found.append(TerminalLogin(method_id, name, argv, _login_env(method.get("env"))))
    return found[:4]


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


def _content_text_all_lines(content: object) -> list[str]:
    """The lines of a tool call's text content, as written."""
    lines: list[str] = []
    if isinstance(content, list):
        for item in content[:20]:
            if isinstance(item, dict) and item.get("type") == "content":
                text = _content_text(item.get("content"))
                if text:
                    lines += text.splitlines()[:50]
    return lines


def _review_fields(lines: list[str]) -> dict[str, str]:
    """``Status: Approved`` / ``Action: ...`` / ``Rationale: ...`` lines of a review."""
    found: dict[str, str] = {}
    for line in lines:
        key, colon, value = line.partition(":")
        if colon and key.strip().casefold() in ("status", "action", "rationale"):
            found.setdefault(key.strip().casefold(), " ".join(value.split()))
    return found


def _same_words(one: str, other: str) -> bool:
    return (
        " ".join(one.split()).rstrip(".").casefold()
        == " ".join(other.split()).rstrip(".").casefold()
    )


def _permission_reason(params: JsonObject, call: JsonObject, title: str) -> str:
    """Why the agent asks: its description (v2), ``_meta`` justification, or its text."""
    candidates: list[object] = [params.get("description")]
    for meta in (params.get("_meta"), call.get("_meta")):
        if isinstance(meta, dict):
            prompt = meta.get("permission_prompt")
            if isinstance(prompt, dict):
                candidates.append(prompt.get("description"))
            candidates += [meta.get("justification"), meta.get("reason")]
    candidates.append(_content_text_all(call.get("content")))
    for candidate in candidates:
        if isinstance(candidate, str):
            text = " ".join(candidate.split())
            text = text.removeprefix("Reason:").strip()
            if text and text != title and not text.startswith("```"):
                return text
    return ""


def _is_deletion(item: dict[str, Any]) -> bool:
    """A diff that deletes its file: marked so (codex-acp ``_meta.kind``), or all text gone."""
    meta = item.get("_meta")
    if isinstance(meta, dict) and meta.get("kind") == "delete":
        return True
    old, new = item.get("oldText"), item.get("newText")
    return (
        isinstance(old, str)
        and bool(old)
        and new == ""
        and (not isinstance(meta, dict) or meta.get("kind") in (None, "delete"))
    )


def _deleted_files(content: object, cwd: str) -> list[str]:
    found: list[str] = []
    if isinstance(content, list):
        for item in content[:100]:
            if isinstance(item, dict) and item.get("type") == "diff" and _is_deletion(item):
                path = get_str(item, "path")
                if path:
                    found.append(_relative(path, cwd))
    return found


def _relative_text(text: str, cwd: str) -> str:
    """A title with the working folder's absolute paths made relative ("Read src/a.py")."""
    if not cwd or not posixpath.isabs(cwd) or cwd == "/":
        return text
    base = cwd.rstrip("/")
    return text.replace(base + "/", "").replace(f" {base} ", " . ")


def _exit_code(raw: object) -> int | None:
    """The exit code a command's raw output names (``exitCode``, ``exit_code``), if any."""
    if not isinstance(raw, dict):
        return None
    for key in ("exitCode", "exit_code", "code"):
        value = raw.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value != 0:
            return value
    return None


def _first_error_line(raw: object, reason: str) -> str:
    """The first line that says what went wrong: stderr first, then the reported text."""
    texts = []
    if isinstance(raw, dict):
        texts += [raw.get(k) for k in ("stderr", "formatted_output", "aggregated_output", "output")]
    texts.append(reason)
    for text in texts:
        if isinstance(text, str):
            for line in text.splitlines():
                if line.strip() and not line.strip().startswith("```"):
                    return clip(line.strip(), 200)
    return "?"


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


def _diff_sentences(
    content: object, cwd: str, ngettext: Any, gettext: Any = lambda text: text
) -> list[str]:
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
        if _is_deletion(item):
            said.append(gettext("deletes {file}").format(file=name))
            continue
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


def _named_options(value: object) -> list[tuple[str, str, str]]:
    """Every option of a permission request: (optionId, name, kind), bounded."""
    found: list[tuple[str, str, str]] = []
    if isinstance(value, list):
        for option in value[:20]:
            kind, option_id = get_str(option, "kind"), get_str(option, "optionId")
            if kind and option_id:
                name = " ".join((get_str(option, "name") or option_id).split())
                found.append((option_id, clip(name, 200), kind))
    return found


def _plan_steps(plan: str) -> list[str]:
    """A markdown plan as its steps: list items, else non-empty lines, marks dropped."""
    lines = [line.strip() for line in plan.splitlines() if line.strip()]
    items = [
        re.sub(r"^(?:[-*+]|\d+[.)])\s+", "", line)
        for line in lines
        if re.match(r"^(?:[-*+]|\d+[.)])\s+", line)
    ]
    chosen = items or [line.lstrip("# ") for line in lines]
    return [clip(step, 300) for step in chosen[:100]]


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
        if _is_deletion(item):  # a delete is said as a delete (issue 21, item 7)
            said.append(tr.gettext("deletes {file}").format(file=name))
            continue
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


def _mode_list(value: object) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    if isinstance(value, list):
        for mode in value[:50]:
            mode_id = get_str(mode, "id")
            if mode_id:
                found.append((mode_id, clip(get_str(mode, "name") or mode_id, 120)))
    return found


def _config_options(value: object) -> dict[str, ConfigOption]:
    """ACP ``configOptions``: selects (flat or grouped) and booleans, bounded."""
    found: dict[str, ConfigOption] = {}
    if not isinstance(value, list):
        return found
    for option in value[:50]:
        option_id = get_str(option, "id")
        if not option_id or not isinstance(option, dict):
            continue
        name = clip(get_str(option, "name") or option_id, 120)
        category = get_str(option, "category") or ""
        current = option.get("currentValue")
        if isinstance(current, bool) or option.get("type") == "boolean":
            found[option_id] = ConfigOption(
                option_id, name, category, "true" if current else "false",
                (("true", "on"), ("false", "off")),
            )  # fmt: skip
            continue
        choices: list[tuple[str, str]] = []
        for entry in option.get("options") or []:
            inner = entry.get("options") if isinstance(entry, dict) else None
            for item in inner if isinstance(inner, list) else [entry]:
                item_value = get_str(item, "value")
                if item_value:
                    choices.append((item_value, clip(get_str(item, "name") or item_value, 120)))
        found[option_id] = ConfigOption(
            option_id, name, category, str(current or ""), tuple(choices[:100])
        )
    return found


def _commands(value: object) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    if isinstance(value, list):
        for command in value:
            name = get_str(command, "name")
            if name:
                found.append((name, " ".join((get_str(command, "description") or "").split())))
    return found[:200]


__all__ = [
    "EXTENSION",
    "EXTENSION_CONTEXT",
    "NO_TIMEOUT_SECONDS",
    "AcpAdapter",
    "ConfigOption",
    "Permission",
]
