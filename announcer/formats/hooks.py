"""Coding-agent hook payloads: made audible through a mapping file, and answered.

``MappedHookAdapter`` turns native hook payloads (one JSON object per line, as
Claude Code or Codex pass them to a hook command) into AEP with a mapping file,
then into AAEP with :class:`AepAdapter`.

For the blocking hooks (``PreToolUse``, ``PermissionRequest``) the bridge needs
a confirmation the user answers: :func:`hook_confirmation` builds it. The hook
process (``announcer/transports/hook_client.py``) writes the agent's hook output
JSON for the decision; without a decision the answer is ``ask`` (the agent shows
its own prompt): nothing here ever allows by default.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field
from typing import Any

from announcer.command_analysis import analyse
from announcer.formats.aep import AepAdapter
from announcer.formats.base import AdapterOutput, FormatAdapter, JsonObject, get_str
from announcer.formats.builder import AaepBuilder
from announcer.formats.builder_fields import mark_command, mark_literal
from announcer.formats.mapping import Mapping, builtin_mapping
from announcer.formats.speakable import command_in_words, command_words, speak_folder


class MappedHookAdapter(FormatAdapter):
    """Native hook payloads -> (mapping file) -> AEP -> AAEP."""

    def __init__(self, mapping: Mapping, name: str = "") -> None:
        super().__init__()
        self.mapping = mapping
        self.name = name or f"{mapping.agent}-hooks"
        self.aep = AepAdapter()

    def set_language(self, language: str) -> None:
        super().set_language(language)
        self.aep.set_language(self.language)

    def handle(self, obj: JsonObject, now: float) -> None:
        envelope = self.mapping.to_aep(obj, now)
        if envelope is None:
            hook = get_str(obj, "hook_event_name") or get_str(obj, "type")
            self.diagnose(
                "unmapped",
                f"no rule in the {self.mapping.agent} mapping for {hook!r}; not announced",
            )
            return
        self.aep.line_number = self.line_number
        out = self.aep.feed_object(envelope, now)
        for event in out.events:
            self.emit(event)
        for diagnostic in out.diagnostics:
            self.diagnose(diagnostic.code, diagnostic.message)

    def confirm(self, payload: JsonObject, now: float, timeout_seconds: int = 120) -> AdapterOutput:
        """A blocking hook (PreToolUse, PermissionRequest) as a confirmation in this session."""
        self._out = AdapterOutput()
        builder = self.aep.builder(self.mapping.agent, self.mapping.display_name)
        hook_confirmation(payload, now, builder=builder, timeout_seconds=timeout_seconds)
        for event in builder.take():
            self.emit(event)
        return self._take()

    def withdraw(self, payload: JsonObject, now: float, sentence: str) -> AdapterOutput:
        """The hook stopped waiting: move the session on so the question is withdrawn."""
        self._out = AdapterOutput()
        builder = self.aep.builder(self.mapping.agent, self.mapping.display_name)
        session = builder.session(get_str(payload, "session_id"))
        builder.state_changed(
            session,
            now,
            "thinking",
            normal=sentence,
            terse=builder._t("Not answered."),
            urgency="normal",
            force=True,
        )
        for event in builder.take():
            self.emit(event)
        return self._take()

    def _finish(self, now: float) -> None:
        out = self.aep.finish(now)
        for event in out.events:
            self.emit(event)


#: ``extra_context["on_no_answer"]`` of a hook confirmation: with no answer the agent
#: asks the user itself (engine/policy_questions.py says so instead of "it will be rejected").
NO_ANSWER_KEY = "on_no_answer"
NO_ANSWER_AGENT_ASKS = "agent_asks"
#: ... unless no one sits at the agent's own dialog (``claude -p``): then "ask" is a
#: denial, and the usual "it will be rejected" is the truth.
NO_ANSWER_AGENT_DENIES = "agent_denies"
#: Set by the hook bridge in a blocking payload when the agent said no one is at its
#: dialog (transports/hook_client.py ``agent_attended``, the same name there).
UNATTENDED_KEY = "announcer_unattended"


#: What the hook client had to cut to forward a payload: ``{"tool_input.command": 20028}``
#: (transports/hook_client.py ``CUT_KEY``, the same name there). A cut is never read in
#: full, so it is high risk (issue 29).
CUT_KEY = "announcer_cut"


def cut_lengths(payload: JsonObject) -> dict[str, int]:
    """Where the hook client cut the payload, and how long each part really was."""
    cuts = payload.get(CUT_KEY)
    if not isinstance(cuts, dict):
        return {}
    return {str(k): v for k, v in cuts.items() if isinstance(v, int) and not isinstance(v, bool)}


def unattended(payload: JsonObject) -> bool:
    """No one at the agent's own dialog: a hook's "ask" is a denial."""
    return payload.get(UNATTENDED_KEY) is True


def hook_confirmation(
    payload: JsonObject,
    now: float,
    *,
    builder: AaepBuilder | None = None,
    timeout_seconds: int = 120,
) -> JsonObject:
    """The AAEP ``agent.awaiting.confirmation`` for a PreToolUse / PermissionRequest payload.

    §6.4.1: default_decision is reject; the bridge turns "no answer" into ``ask``.
    With a ``builder`` the event joins that stream's session (and its sequence);
    without one it opens a session of its own (its session.started stays in the builder).
    """
    builder = builder or AaepBuilder("claude-code", "Claude Code")
    _t = builder._t
    agent_name = builder.agent_name
    session = builder.session(get_str(payload, "session_id"))
    tool = get_str(payload, "tool_name") or _t("a tool")
    tool_input = payload.get("tool_input")
    # What will run, judged and said by one rule (announcer.command_analysis): risk follows
    # the command, and a long one is said by its start, end and every dangerous part.
    command = _command_of(tool_input)
    cuts = cut_lengths(payload)
    command_cut = cuts.get("tool_input.command") or cuts.get("tool_input.cmd")
    if command is not None and command_cut:
        command = command.removesuffix("…")  # the client's mark, not part of what runs
    analysis = analyse(command, command_cut) if command is not None else None
    # anything else the client cut (a Write's content, an MCP tool's argument) was not
    # seen whole either: the question says so and takes two keys
    other_cut = any(
        path.startswith("tool_input") and path not in ("tool_input.command", "tool_input.cmd")
        for path in cuts
    ) or any(not path.startswith("tool_input") for path in cuts)
    what = (
        command_in_words(command, builder.language, command_cut)
        if command is not None and command_cut
        else command_words(tool_input, builder.language) or ""
    ).rstrip(".") or None
    spoken = builder.spoken_tool(tool)
    cwd = get_str(payload, "cwd")
    action = f"{spoken}: {what}" if what else spoken
    # "run" a command; "use" any other tool (Write, an MCP tool...)
    runs = isinstance(tool_input, dict) and isinstance(tool_input.get("command"), str)
    wants = (
        _t("{agent} wants to run {action}.") if runs else _t("{agent} wants to use {action}.")
    ).format(agent=agent_name, action=action)
    wants_where = (
        (
            _t("{agent} wants to run {action} in {folder}.")
            if runs
            else _t("{agent} wants to use {action} in {folder}.")
        ).format(agent=agent_name, action=action, folder=speak_folder(cwd))
        if cwd
        else wants
    )
    consequence = (
        _t("{agent} goes ahead in {folder} once you accept; reject and it will not.").format(
            agent=agent_name, folder=speak_folder(cwd)
        )
        if cwd
        else _t("{agent} goes ahead once you accept; reject and it will not.").format(
            agent=agent_name
        )
    )
    # the model's reason: `description` (Claude Code, Codex), `justification` (Codex escalation)
    description = (
        (get_str(tool_input, "description") or get_str(tool_input, "justification"))
        if isinstance(tool_input, dict)
        else None
    )
    allow = _t("Allow?")
    says = _t("It says: {description}.").format(description=description) if description else ""
    if other_cut:
        says = " ".join(
            part for part in (says, _t("Part of it was cut before announcer saw it.")) if part
        )
    # single-use tokens (§6.2): one per hook call, even when PreToolUse and
    # PermissionRequest both fire for the same tool_use_id
    seed = f"{payload.get('hook_event_name')}|{get_str(payload, 'tool_use_id') or now}|{tool}"
    extra: dict[str, Any] = {
        "hook_event_name": str(payload.get("hook_event_name")),
        "tool_name": tool,
    }
    if cwd:
        extra["cwd"] = cwd
    # No answer is not a rejection here: the hook answers "ask" and the agent asks the
    # user itself. The engine says so instead of "it will be rejected". In `claude -p`
    # no one is there to ask, so "ask" is a denial and "it will be rejected" is true.
    extra[NO_ANSWER_KEY] = NO_ANSWER_AGENT_DENIES if unattended(payload) else NO_ANSWER_AGENT_ASKS
    event = builder.confirmation(
        session,
        now,
        token_seed=seed,
        # the model's own reason (tool_input.description) is heard with the command
        action=" ".join(part for part in (wants, says) if part),
        consequence=consequence,
        normal=" ".join(part for part in (wants, says, allow) if part),
        terse=_t("Allow {tool}?").format(tool=spoken),
        detailed=" ".join(part for part in (wants_where, says, allow) if part),
        timeout_seconds=timeout_seconds,
        extra_context=extra,
        risk_level="high" if other_cut else analysis.risk if analysis is not None else "medium",
        irreversible=analysis.irreversible if analysis is not None else False,
    )
    if command is not None:
        mark_command(event, command, length=command_cut)
    else:
        mark_literal(event)  # a path or pattern is read as written
    # §6.1: the producer waits for input now; leaving this state withdraws the question (§6.8)
    session.state = "awaiting_input"
    return event


def _command_of(tool_input: object) -> str | None:
    """The shell command a tool call runs (Bash's ``command``, Codex's ``cmd``), if any."""
    if not isinstance(tool_input, dict):
        return None
    for key in ("command", "cmd"):
        value = tool_input.get(key)
        if isinstance(value, str) and value.strip():
            return value
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            return shlex.join(value)
    return None


def no_answer_sentence(_t: Any, agent: str, no_one_there: bool) -> str:
    """What the hook's "ask" after no answer means: the agent asks, or (``-p``) refuses."""
    if no_one_there:
        return str(_t("No answer in time: {agent} will not run it.")).format(agent=agent)
    return str(_t("No answer in time: {agent} will ask you itself.")).format(agent=agent)


def claude_code_hooks_adapter() -> MappedHookAdapter:
    return MappedHookAdapter(builtin_mapping("claude-code"), "claude-code-hooks")


def codex_hooks_adapter() -> MappedHookAdapter:
    return MappedHookAdapter(builtin_mapping("codex"), "codex-hooks")


# -- the bridge's desk: what is said around the questions it asks --------------------

#: Codex runs its PreToolUse hook, then (when the call needs approval) PermissionRequest.
#: "Running X" waits this long for that question, so a call that only waits for the
#: user is never announced as running.
HOLD_PRE_TOOL_USE_SECONDS = 1.0
#: A Notification that only repeats "needs your permission" this soon after we asked.
REDUNDANT_NOTICE_SECONDS = 10.0
#: Calls and sessions remembered per agent; the oldest go first (a hook that never
#: reports back must not grow memory for ever).
MAX_REMEMBERED = 1024

CallKey = tuple[str, str, str]


def call_key(payload: JsonObject) -> CallKey:
    """Session, tool and input: how a PermissionRequest (no tool_use_id) meets its call."""
    try:
        tool_input = json.dumps(payload.get("tool_input"), sort_keys=True, default=str)
    except (TypeError, ValueError, RecursionError):
        tool_input = ""
    return (
        get_str(payload, "session_id") or "",
        get_str(payload, "tool_name") or "",
        tool_input,
    )


@dataclass(slots=True)
class _Question:
    key: CallKey
    payload: JsonObject
    asked_at: float
    held: JsonObject | None = None  # Codex's PreToolUse for this call, said once allowed


@dataclass(slots=True)
class _Held:
    payload: JsonObject
    due: float


def _bound(remembered: dict[Any, Any]) -> None:
    while len(remembered) > MAX_REMEMBERED:
        del remembered[next(iter(remembered))]


@dataclass(slots=True)
class HookDesk:
    """One agent's hooks as the bridge hears them: pure, clocked by the caller.

    - A question (PreToolUse, PermissionRequest) is a confirmation; when the call is
      then decided elsewhere (PostToolUse or PostToolUseFailure for the same session,
      tool and input, or Stop for the session) the question is withdrawn, so no key
      can answer a stale question.
    - An answer moves the session out of ``awaiting_input`` (§6.8, §6.7.2), with
      "Allowed." or "Denied."; an allowed call is then announced as running.
    - Codex's PreToolUse waits :data:`HOLD_PRE_TOOL_USE_SECONDS` for a question about
      the same call: a call that only waits for the user is not "running".
    - A call heard only once it finished gets its command said with it.
    - "Claude needs your permission" right after we asked is dropped, and counted.
    """

    adapter: MappedHookAdapter
    hold_pre_tool_use: bool = False
    questions: dict[str, _Question] = field(default_factory=dict)
    held: dict[CallKey, _Held] = field(default_factory=dict)
    opened: dict[CallKey, str] = field(default_factory=dict)  # allowed call -> builder key
    last_asked: dict[str, float] = field(default_factory=dict)  # session -> when we asked
    dropped: dict[str, int] = field(default_factory=dict)
    _calls: int = 0

    @property
    def builder(self) -> AaepBuilder:
        mapping = self.adapter.mapping
        return self.adapter.aep.builder(mapping.agent, mapping.display_name)

    def _feed(self, payload: JsonObject, now: float) -> list[JsonObject]:
        return self.adapter.feed_object(payload, now).events

    # -- questions --------------------------------------------------------------------

    def ask(
        self, payload: JsonObject, now: float, timeout_seconds: int
    ) -> tuple[str | None, list[JsonObject]]:
        """The confirmation for a blocking hook: (reply_token, events)."""
        key = call_key(payload)
        events = self._release(now, session=key[0], keep=key)
        out = self.adapter.confirm(payload, now, timeout_seconds=timeout_seconds)
        events += out.events
        token = next(
            (
                e.get("reply_token")
                for e in out.events
                if e.get("type") == "aaep:agent.awaiting.confirmation"
            ),
            None,
        )
        if not isinstance(token, str):
            return None, events
        held = self.held.pop(key, None)
        self.questions[token] = _Question(key, payload, now, held.payload if held else None)
        self.last_asked.pop(key[0], None)
        self.last_asked[key[0]] = now
        _bound(self.last_asked)
        return token, events

    def answered(
        self, token: str, decision: str | None, now: float, *, say_timeout: bool = True
    ) -> list[JsonObject]:
        """The user allowed or denied (or, with None, did not answer in time).

        ``say_timeout=False`` when the question went through the engine: its own timer
        (at or before ours: the question's ``timeout_seconds`` is rounded down) closes
        it and says the time ran out, so nothing more is sent; the agent's next event
        moves the state on from ``awaiting_input``.
        """
        question = self.questions.pop(token, None)
        if question is None:
            return []  # withdrawn already: said then
        b = self.builder
        _t = b._t
        sess = b.session(question.key[0] or None)
        agent = b.agent_name
        if decision == "allow":
            b.state_changed(
                sess, now, "calling_tool", normal=_t("Allowed."), urgency="normal", force=True
            )
            events = b.take()
            if question.held is not None:
                events += self._feed(question.held, now)  # "Running Bash: ..." is true now
            else:
                events += self._open_call(question.key, question.payload, now)
            return events
        if decision == "deny":
            b.state_changed(
                sess, now, "thinking", normal=_t("Denied."), urgency="normal", force=True
            )
            return b.take()
        if not say_timeout:
            return []
        b.state_changed(
            sess,
            now,
            "thinking",
            normal=no_answer_sentence(_t, agent, unattended(question.payload)),
            terse=_t("Not answered."),
            urgency="normal",
            force=True,
        )
        return b.take()

    def hung_up(self, token: str, now: float) -> list[JsonObject]:
        """The hook's process ended (killed) while it waited: nothing reached it, so the
        question is withdrawn in words, never "Allowed"."""
        if token not in self.questions:
            return []  # answered, or withdrawn already
        b = self.builder
        sentence = b._t("{agent} stopped waiting; nothing was sent.")
        return self._withdraw(token, sentence.format(agent=b.agent_name), now)

    def _withdraw(self, token: str, sentence: str, now: float) -> list[JsonObject]:
        question = self.questions.pop(token)
        b = self.builder
        sess = b.session(question.key[0] or None)
        b.state_changed(
            sess,
            now,
            "thinking",
            normal=sentence,
            terse=b._t("Withdrawn."),
            urgency="normal",
            force=True,
        )
        return b.take()

    def _open_call(self, key: CallKey, payload: JsonObject, now: float) -> list[JsonObject]:
        """An allowed call with no tool_use_id yet: announce it, and pair it by its input."""
        b = self.builder
        sess = b.session(key[0] or None)
        self._calls += 1
        native = f"hook-call-{self._calls}"
        b.tool_invoked(
            sess,
            now,
            native,
            get_str(payload, "tool_name"),
            args_summary=command_words(payload.get("tool_input"), b.language),
        )
        self.opened[key] = native
        _bound(self.opened)
        return b.take()

    # -- everything else ----------------------------------------------------------------

    def hook(self, payload: JsonObject, now: float) -> tuple[list[JsonObject], list[str]]:
        """An announce-only hook: (events, tokens of questions it withdrew)."""
        hook = get_str(payload, "hook_event_name") or ""
        key = call_key(payload)
        session = key[0]
        if hook == "PreToolUse" and self.hold_pre_tool_use:
            events = self._release(now)
            if len(self.held) >= MAX_REMEMBERED:  # said now rather than held
                return events + self._feed(payload, now), []
            self.held[key] = _Held(payload, now + HOLD_PRE_TOOL_USE_SECONDS)
            return events, []
        if hook == "Notification" and self._redundant_notice(payload, now):
            self.dropped["repeats the question just asked"] = (
                self.dropped.get("repeats the question just asked", 0) + 1
            )
            return [], []
        events = self._release(now, session=session)  # what happened first is said first
        withdrawn: list[str] = []
        b = self.builder
        agent = b.agent_name
        if hook in ("PostToolUse", "PostToolUseFailure"):
            for token, question in list(self.questions.items()):
                if question.key == key:
                    events += self._withdraw(
                        token,
                        b._t("Answered in {agent} itself.").format(agent=agent),
                        now,
                    )
                    withdrawn.append(token)
            events += self._pair(payload, key, now)
        elif hook in ("Stop", "SessionEnd"):
            for token, question in list(self.questions.items()):
                if question.key[0] == session:
                    events += self._withdraw(
                        token,
                        b._t("{agent} went on without your answer.").format(agent=agent),
                        now,
                    )
                    withdrawn.append(token)
        events += self._feed(payload, now)
        return events, withdrawn

    def _pair(self, payload: JsonObject, key: CallKey, now: float) -> list[JsonObject]:
        """Before a result: its call, said with its command, unless it was said already."""
        tool_use_id = get_str(payload, "tool_use_id")
        b = self.builder
        sess = b.session(key[0] or None)
        if tool_use_id is None or tool_use_id in sess.open_tools:
            return []
        native = self.opened.pop(key, None)
        if native is not None and native in sess.open_tools:
            sess.open_tools[tool_use_id] = sess.open_tools.pop(native)  # the same call
            return []
        b.tool_invoked(
            sess,
            now,
            tool_use_id,
            get_str(payload, "tool_name"),
            args_summary=command_words(payload.get("tool_input"), b.language),
            urgency="background",
        )
        return b.take()

    def _redundant_notice(self, payload: JsonObject, now: float) -> bool:
        kind = get_str(payload, "notification_type") or ""
        message = (get_str(payload, "message") or "").lower()
        if kind != "permission_prompt" and "permission" not in message:
            return False
        session = get_str(payload, "session_id") or ""
        asked = self.last_asked.get(session)
        open_here = any(q.key[0] == session for q in self.questions.values())
        return open_here or (asked is not None and now - asked < REDUNDANT_NOTICE_SECONDS)

    def _release(
        self, now: float, *, session: str | None = None, keep: CallKey | None = None
    ) -> list[JsonObject]:
        """Held PreToolUse payloads that are due (or of ``session``), except ``keep``."""
        events: list[JsonObject] = []
        for key, held in list(self.held.items()):
            if key == keep:
                continue
            if held.due <= now or (session is not None and key[0] == session):
                del self.held[key]
                events += self._feed(held.payload, now)
        return events

    def due(self, now: float) -> list[JsonObject]:
        return self._release(now)

    def next_due(self) -> float | None:
        return min((held.due for held in self.held.values()), default=None)
