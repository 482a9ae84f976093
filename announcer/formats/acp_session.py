"""What one ACP connection holds, and the steps every room of the mapping uses.

Its sessions (each with its tool calls, plan step, modes and settings), the questions
the agent asked and their options; opening a session, running one step of the mapping
(a bug of ours is a diagnostic, never the agent's end) and saying a gathered thought.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from announcer.formats.acp_forms import Form
from announcer.formats.acp_shapes import (
    _ALLOW_ALWAYS,
    _ALLOW_ONCE,
    _REJECT_ALWAYS,
    _REJECT_ONCE,
    ConfigOption,
)
from announcer.formats.base import AdapterOutput, FormatAdapter, JsonObject
from announcer.formats.builder import AaepBuilder
from announcer.formats.builder_fields import mark_kept_quiet
from announcer.formats.builder_state import SessionState
from announcer.formats.speakable import clip


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
    # the session's sequence number right after its question: no news came between the
    # question and the call's end while it is still the session's next (issue 31 item 11)
    asked_seq: int | None = None
    rejected: bool = False  # the user rejected it: its failure report is not a failure
    deletes: list[str] = field(default_factory=list)  # files its diff deletes
    changed_files: list[str] = field(default_factory=list)  # files its diffs change
    plan: str = ""  # a plan approval's plan (ExitPlanMode), sent before the question
    # what its diffs do, kept from the update that brought them (they often come before
    # the permission request): "adds 3 lines and removes 1 in src/app.py"
    changes: list[str] = field(default_factory=list)
    command: str | None = None  # the command it runs (rawInput.command)
    output: str = ""  # what it printed, as the adapter streamed it (bounded)
    internal: bool = False  # the agent's own bookkeeping (ToolSearch): never said
    subagent: bool = False  # a subagent the agent started (Claude's Agent/Task tool)


@dataclass(slots=True)
class _Session:
    """What one ACP session has said so far."""

    state: SessionState
    cwd: str
    turn: int = 0
    in_turn: bool = False  # a prompt was sent and its turn has not ended
    thought: list[str] = field(default_factory=list)
    # the turn and ``messageId`` of the last message chunk said (issue 31, item 13)
    message: tuple[int, str | None] | None = None
    tools: dict[str, _Tool] = field(default_factory=dict)
    plan_step: tuple[int, str] | None = None
    plan_said: set[str] = field(default_factory=set)  # plan steps said as under way
    mode: str | None = None
    commands: list[tuple[str, str]] = field(default_factory=list)
    # the prompts the agent suggests the user send next (issue 33, item 5), newest list
    suggestions: list[str] = field(default_factory=list)
    suggestion_due: bool = False  # the newest suggestions are still to be said
    # the agent's modes (id, name) and config options (``configOptions``), by id
    modes: list[tuple[str, str]] = field(default_factory=list)
    config: dict[str, ConfigOption] = field(default_factory=dict)
    reviewed: set[str] = field(default_factory=set)  # the reviewer's decisions already said
    denied: list[str] = field(default_factory=list)  # actions the reviewer denied (recent)
    reviewer_allowed: list[str] = field(default_factory=list)  # and those it allowed
    reviewing: dict[str, str] = field(default_factory=dict)  # review call id -> its action
    rejected_in_turn: str | None = None  # what the user rejected in this turn, if anything
    cancelled_by_user: bool = False  # :cancel in this turn
    # None: no settings known (every change said); False: known while the session starts,
    # not said yet (changes are the start settings); True: the settings line was said
    settings_said: bool | None = None
    # the user's message waited for the agent to start (issue 31, item 11): its start news
    # must not delay the answer; the settings line, said after the first turn, or None
    settings_after_turn: tuple[str, str] | None = None
    message_waited: bool = False
    # Titled calls not yet announced: said when the agent moves on, unless it asks first.
    due: list[str] = field(default_factory=list)
    # Running calls not yet announced, and since when: said after a short quiet time.
    running: dict[str, float] = field(default_factory=dict)
    # ACP compactions (``compaction_update``) by id -> the last status said
    compactions: dict[str, str] = field(default_factory=dict)
    # the context window was said to be nearly full (``usage_update``), until it is not
    context_full_said: bool = False


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


class AcpSessions(FormatAdapter):
    """One ACP connection's sessions and questions; the rooms above build on it."""

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
        # calls the user allowed, to open quietly after the answer (session, call id)
        self._opened_after: list[tuple[str, str]] = []
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

    def _open(
        self, session_id: str, cwd: str, now: float, message_waiting: bool = False
    ) -> _Session:
        session = self.sessions.get(session_id)
        if session is None:
            state = self.builder.session(session_id)
            session = _Session(state, cwd, message_waited=message_waiting)
            self.sessions[session_id] = session
            self.builder.session_started(
                state,
                now,
                normal=self._t("{agent} is ready.").format(agent=self.agent_name),
                terse=self._t("{agent} ready.").format(agent=self.agent_name),
            )
            started = self.builder.events[-1] if self.builder.events else None
            if message_waiting and started and started["type"] == "aaep:agent.session.started":
                # issue 31, item 11: the user's message waits for it and goes now; its
                # answer says the agent is ready. Not said before it (nor after).
                mark_kept_quiet(self.builder.events[-1])
        elif cwd and not session.cwd:
            # an update came before session/new's answer was read: its folder is known now,
            # so paths are said relative from here on
            session.cwd = cwd
        return session

    def _say_sentence(
        self, session: _Session, now: float, sentence: str, urgency: str = "normal"
    ) -> None:
        """One sentence of announcer's own about the session, said whole at every
        verbosity (a finished step, percent 100: never folded by the progress rate)."""
        self.builder.progress(
            session.state,
            now,
            description=sentence,
            percent=100,
            normal=sentence,
            terse=sentence,
            urgency=urgency,
        )

    def _session(self, session_id: str | None, now: float) -> _Session:
        session = self.sessions.get(session_id) if session_id else None
        if session is None:
            return self._open(session_id or "unknown", "", now)
        self.builder.current = session.state
        return session

    def _latest_session(self) -> str | None:
        return next(reversed(self.sessions), None) if self.sessions else None

    def _latest_cwd(self) -> str:
        return next((s.cwd for s in reversed(self.sessions.values()) if s.cwd), "")

    def _output_key(self, session: _Session) -> str:
        return f"turn-{session.turn}"

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

    def aaep_session_id(self, session_id: str) -> str | None:
        """The AAEP id of the ACP session ``session_id``, if it is open."""
        session = self.sessions.get(session_id)
        return session.state.session_id if session is not None else None

    def suggestions(self, session_id: str) -> list[str]:
        """The prompts the agent last suggested (``prompt_suggestions_update``, or the
        ``_meta.promptSuggestions`` of a ``session_info_update``), as text to show."""
        session = self.sessions.get(session_id)
        return list(session.suggestions) if session is not None else []

    def commands(self, session_id: str) -> list[tuple[str, str]]:
        """The agent's slash commands (``available_commands_update``), name and description."""
        session = self.sessions.get(session_id)
        return list(session.commands) if session is not None else []
