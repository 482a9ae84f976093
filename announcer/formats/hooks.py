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

from typing import Any

from announcer.formats.aep import AepAdapter
from announcer.formats.base import AdapterOutput, FormatAdapter, JsonObject, get_str
from announcer.formats.builder import AaepBuilder
from announcer.formats.mapping import Mapping, builtin_mapping
from announcer.formats.speakable import command_words, speak_folder


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


# The agents whose hook payloads we map (the hook process itself, which decides what
# blocks and prints the agent's answer, is transports/hook_client.py).
HOOK_AGENTS = ("claude-code", "codex")


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
    what = command_words(tool_input, builder.language)
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
    description = get_str(tool_input, "description") if isinstance(tool_input, dict) else None
    allow = _t("Allow?")
    says = _t("It says: {description}.").format(description=description) if description else ""
    # single-use tokens (§6.2): one per hook call, even when PreToolUse and
    # PermissionRequest both fire for the same tool_use_id
    seed = f"{payload.get('hook_event_name')}|{get_str(payload, 'tool_use_id') or now}|{tool}"
    extra: dict[str, Any] = {
        "hook_event_name": str(payload.get("hook_event_name")),
        "tool_name": tool,
    }
    if cwd:
        extra["cwd"] = cwd
    return builder.confirmation(
        session,
        now,
        token_seed=seed,
        action=wants,
        consequence=consequence,
        normal=f"{wants} {allow}",
        terse=_t("Allow {tool}?").format(tool=spoken),
        detailed=" ".join(part for part in (wants_where, says, allow) if part),
        timeout_seconds=timeout_seconds,
        extra_context=extra,
    )


def claude_code_hooks_adapter() -> MappedHookAdapter:
    return MappedHookAdapter(builtin_mapping("claude-code"), "claude-code-hooks")


def codex_hooks_adapter() -> MappedHookAdapter:
    return MappedHookAdapter(builtin_mapping("codex"), "codex-hooks")
