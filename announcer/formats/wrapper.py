"""The Universal Agent API ``AgentWrapperEvent`` as our middle layer, and its JSON Lines adapter.

Every agent CLI stream is first normalised into ``AgentWrapperEvent``s (kinds
TextOutput, ToolCall, ToolResult, Status, Error, Unknown), with the envelope
spec's v1 bounds enforced on ingest (``bounds.py``, docs/formats.md), and only then turned into AAEP
events. A few *hints* travel beside the wire fields (the native session id,
which output a text belongs to, lifecycle markers): they are ours, never
part of the envelope, and never hold raw backend lines.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from announcer.agents.catalogue import title_of
from announcer.formats.base import FormatAdapter, JsonObject, get_str
from announcer.formats.bounds import bound_channel, bound_data, bound_message, split_text
from announcer.formats.builder import AaepBuilder
from announcer.formats.builder_state import SessionState
from announcer.formats.speakable import clip, thought_parts

TOOLS_FACET = "agent_api.tools.structured.v1"
KINDS = ("TextOutput", "ToolCall", "ToolResult", "Status", "Error", "Unknown")
_KIND_BY_KEY = {k.lower(): k for k in KINDS} | {
    "text_output": "TextOutput",
    "tool_call": "ToolCall",
    "tool_result": "ToolResult",
}


@dataclass(slots=True)
class Hints:
    """What the native stream told us beyond the wire fields."""

    session: str | None = None
    item: str | None = None  # which output a TextOutput continues
    final: bool = True  # this TextOutput ends its item
    lifecycle: str | None = None  # session_started | session_completed | session_failed | ...
    fatal: bool = False  # an Error that ends the session
    summary: str | None = None  # our own spoken sentence for this event
    terse: str | None = None
    detailed: str | None = None
    tool_label: str | None = None  # spoken argument of a tool call (command, file, query)
    label: str | None = None  # a human name for the call ("Print hello"), when it has one
    at: float | None = None
    model: str | None = None
    duration_ms: int | None = None


@dataclass(slots=True)
class WrapperEvent:
    agent_kind: str
    kind: str
    channel: str | None = None
    text: str | None = None
    message: str | None = None
    data: Any = None
    hints: Hints = field(default_factory=Hints)


def tools_facet(
    kind: str,
    phase: str,
    *,
    status: str = "unknown",
    tool_name: str | None = None,
    tool_use_id: str | None = None,
    backend_item_id: str | None = None,
    thread_id: str | None = None,
    turn_id: str | None = None,
    exit_code: int | None = None,
) -> dict[str, Any]:
    """The metadata-only ``agent_api.tools.structured.v1`` facet (never inputs or outputs)."""
    return {
        "schema": TOOLS_FACET,
        "tool": {
            "backend_item_id": backend_item_id,
            "thread_id": thread_id,
            "turn_id": turn_id,
            "kind": kind,
            "phase": phase,
            "status": status,
            "exit_code": exit_code,
            "bytes": {"stdout": 0, "stderr": 0, "diff": 0, "result": 0},
            "tool_name": tool_name,
            "tool_use_id": tool_use_id,
        },
    }


def enforce_bounds(event: WrapperEvent) -> list[WrapperEvent]:
    """Apply the envelope spec's v1 bounds; oversized text becomes several events in order."""
    bounded = replace(
        event,
        channel=bound_channel(event.channel),
        message=bound_message(event.message),
        data=bound_data(event.data),
    )
    if bounded.kind != "TextOutput" or bounded.text is None:
        return [bounded]
    pieces = split_text(bounded.text)
    if len(pieces) == 1:
        return [bounded]
    out = []
    for index, piece in enumerate(pieces):
        last = index == len(pieces) - 1
        out.append(
            replace(
                bounded,
                text=piece,
                hints=replace(bounded.hints, final=bounded.hints.final and last),
            )
        )
    return out


def _facet_tool(data: object) -> dict[str, Any] | None:
    if (
        isinstance(data, dict)
        and data.get("schema") == TOOLS_FACET
        and isinstance(data.get("tool"), dict)
    ):
        tool: dict[str, Any] = data["tool"]
        return tool
    return None


class WrapperTranslator:
    """AgentWrapperEvent -> AAEP events, through one :class:`AaepBuilder`."""

    def __init__(self, builder: AaepBuilder) -> None:
        self.builder = builder
        self._text_seq = 0
        self._open_text: dict[str, str] = {}  # session native id -> open item key

    def _session(self, hints: Hints) -> SessionState:
        if hints.model:
            self.builder.model = hints.model
        if hints.session is None:
            return self.builder.session(None)
        return self.builder.session(hints.session)

    def _close_text(self, sess: SessionState, now: float) -> None:
        key = self._open_text.pop(sess.native_id, None)
        if key is not None and key in sess.outputs:
            self.builder.output(sess, now, key, "", complete=True)

    def translate(self, event: WrapperEvent, now: float) -> list[str]:
        """Feed one (already bounded) event; returns diagnostics as (code: message) strings."""
        b = self.builder
        h = event.hints
        sess = self._session(h)
        at = h.at
        if event.kind == "TextOutput":
            if event.channel == "user":
                b.state_changed(
                    sess,
                    now,
                    "thinking",
                    normal=b._t("Working on your prompt."),
                    terse=b._t("Thinking."),
                    detailed=b._t("Working on your prompt: {text}").format(
                        text=clip(event.text or "", 200)
                    ),
                    at=at,
                )
                return []
            if event.channel in ("reasoning", "thinking"):
                # "**Header**\n\nbody": the headline at normal verbosity, the body at detailed
                head, body = thought_parts(event.text or "")
                b.thinking(sess, now, clip(head, 200), detail=clip(body, 600) or None, at=at)
                return []
            key = h.item or self._open_text.get(sess.native_id)
            if key is None:
                self._text_seq += 1
                key = f"text-{self._text_seq}"
            previous = self._open_text.get(sess.native_id)
            if previous is not None and previous != key:
                self._close_text(sess, now)
            b.output(sess, now, key, event.text or "", complete=h.final, at=at)
            if h.final:
                self._open_text.pop(sess.native_id, None)
            else:
                self._open_text[sess.native_id] = key
            return []
        self._close_text(sess, now)
        if event.kind in ("ToolCall", "ToolResult"):
            return self._tool(event, sess, now)
        if event.kind == "Status":
            return self._status(event, sess, now)
        if event.kind == "Error":
            text = h.summary or (
                b._t("Error: {message}").format(message=event.message)
                if event.message
                else b._t("The agent reported an error.")
            )
            if h.fatal:
                b.session_errored(
                    sess,
                    now,
                    normal=text,
                    terse=h.terse or b._t("Error."),
                    detailed=h.detailed,
                    at=at,
                )
            else:
                b.progress(
                    sess,
                    now,
                    description=clip(event.message or text, 4096),
                    normal=text,
                    terse=h.terse or b._t("Warning."),
                    urgency="normal",
                    at=at,
                )
            return []
        return ["unknown_kind: an event the backend could not classify; not announced"]

    def _tool(self, event: WrapperEvent, sess: SessionState, now: float) -> list[str]:
        b, h = self.builder, event.hints
        facet = _facet_tool(event.data)
        if facet is None:
            if event.data == {"dropped": {"reason": "oversize"}}:
                facet = {}
            else:
                return [
                    "missing_tools_facet: a tool event without agent_api.tools.structured.v1 data"
                ]
        name = facet.get("tool_name") if isinstance(facet.get("tool_name"), str) else None
        kind = facet.get("kind") if isinstance(facet.get("kind"), str) else None
        call = facet.get("tool_use_id") or facet.get("backend_item_id")
        call_id = call if isinstance(call, str) else None
        phase = facet.get("phase", "start" if event.kind == "ToolCall" else "complete")
        exit_code = facet.get("exit_code")
        if phase in ("start", "delta"):
            b.tool_invoked(
                sess,
                now,
                call_id,
                name or kind,
                normal=h.summary,
                terse=h.terse,
                detailed=h.detailed,
                args_summary=h.tool_label,
                label=h.label,
                at=h.at,
            )
            return []
        failed = (
            phase == "fail"
            or facet.get("status") == "failed"
            or (isinstance(exit_code, int) and not isinstance(exit_code, bool) and exit_code != 0)
        )
        if failed:
            err = event.message or (
                b._t("exit code {code}").format(code=exit_code)
                if isinstance(exit_code, int)
                else None
            )
            b.tool_completed(
                sess,
                now,
                call_id,
                "error",
                tool_name=name,
                normal=h.summary,
                terse=h.terse,
                detailed=h.detailed,
                error_message=err,
                at=h.at,
            )
        else:
            b.tool_completed(
                sess,
                now,
                call_id,
                "success",
                tool_name=name,
                normal=h.summary,
                terse=h.terse,
                detailed=h.detailed,
                at=h.at,
            )
        return []

    def _status(self, event: WrapperEvent, sess: SessionState, now: float) -> list[str]:
        b, h = self.builder, event.hints
        at = h.at
        if h.lifecycle == "session_started":
            b.session_started(
                sess, now, normal=h.summary, terse=h.terse, detailed=h.detailed, at=at
            )
        elif h.lifecycle == "session_completed":
            b.session_completed(
                sess,
                now,
                normal=h.summary or b._t("Finished."),
                terse=h.terse or b._t("Done."),
                detailed=h.detailed,
                duration_ms=h.duration_ms,
                at=at,
            )
        elif h.lifecycle == "turn_started":
            b.state_changed(
                sess,
                now,
                "thinking",
                normal=h.summary or b._t("Working."),
                terse=b._t("Working."),
                at=at,
            )
        elif h.lifecycle == "turn_completed":
            b.state_changed(
                sess,
                now,
                "idle",
                normal=h.summary or b._t("Turn finished."),
                terse=b._t("Turn finished."),
                urgency="normal",
                at=at,
            )
        elif event.message:
            b.progress(
                sess,
                now,
                description=clip(event.message, 4096),
                normal=h.summary or event.message,
                terse=h.terse,
                at=at,
            )
        else:
            return ["empty_status: a Status event without a message; not announced"]
        return []

    def finish(self, now: float) -> None:
        for sess in list(self.builder.sessions.values()):
            self._close_text(sess, now)
        self.builder.close_all(now)


class NativeStreamAdapter(FormatAdapter):
    """Base for adapters that go native line -> AgentWrapperEvents -> AAEP."""

    agent_kind = ""
    agent_id = ""
    agent_name = ""

    def __init__(self) -> None:
        super().__init__()
        self.builder = AaepBuilder(self.agent_id, self.agent_name)
        self.translator = WrapperTranslator(self.builder)

    def set_language(self, language: str) -> None:
        super().set_language(language)
        self.builder.language = self.language

    def push(self, event: WrapperEvent, now: float) -> None:
        for bounded in enforce_bounds(event):
            for problem in self.translator.translate(bounded, now):
                code, _, message = problem.partition(": ")
                self.diagnose(code, message)
        for aaep in self.builder.take():
            self.emit(aaep)

    def wrapper(self, kind: str, **fields: Any) -> WrapperEvent:
        hints = fields.pop("hints", None) or Hints()
        return WrapperEvent(self.agent_kind, kind, hints=hints, **fields)

    def _finish(self, now: float) -> None:
        self.translator.finish(now)
        for aaep in self.builder.take():
            self.emit(aaep)


class AgentWrapperAdapter(NativeStreamAdapter):
    """``--format agent-wrapper``: AgentWrapperEvent JSON Lines (Universal Agent API)."""

    name = "agent-wrapper"
    agent_kind = "agent_wrapper"
    agent_id = "agent-wrapper"
    agent_name = "Agent"

    def handle(self, obj: JsonObject, now: float) -> None:
        raw_kind = obj.get("kind")
        kind = (
            _KIND_BY_KEY.get(raw_kind.replace(" ", "").lower())
            if isinstance(raw_kind, str)
            else None
        )
        if kind is None:
            self.diagnose(
                "invalid_kind", "field 'kind' must be one of " + ", ".join(KINDS) + "; dropped"
            )
            return
        agent_kind = get_str(obj, "agent_kind")
        if agent_kind is None:
            self.diagnose(
                "missing_agent_kind", "field 'agent_kind' must be a non-empty string; dropped"
            )
            return
        if self.builder.agent_id == "agent-wrapper":
            self.builder.agent_id = agent_kind
            # an agent file's title for any of its names (gemini_cli: Gemini CLI)
            self.builder.agent_name = title_of(agent_kind) or agent_kind.replace("_", " ").title()
        fields: dict[str, Any] = {}
        for key in ("channel", "text", "message"):
            value = obj.get(key)
            if value is not None and not isinstance(value, str):
                self.diagnose("invalid_field", f"field '{key}' must be a string; ignored")
                value = None
            fields[key] = value
        event = WrapperEvent(agent_kind, kind, data=obj.get("data"), **fields)
        # TextOutput events continue one output until something else happens
        event.hints.final = False
        if kind == "TextOutput" and event.text is None:
            self.diagnose("missing_text", "a TextOutput event without 'text'; dropped")
            return
        if kind == "Error" and event.channel == "error" and isinstance(obj.get("data"), dict):
            event.hints.fatal = bool(obj["data"].get("fatal"))
        self.push(event, now)
