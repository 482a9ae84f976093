"""Gemini CLI's ``gemini --output-format stream-json`` stream -> AAEP events."""

from __future__ import annotations

from announcer.formats.base import JsonObject, get_path, get_str
from announcer.formats.builder_fields import parse_time
from announcer.formats.cli_streams.common import _CliStreamAdapter, _int
from announcer.formats.speakable import clip, command_words
from announcer.formats.wrapper import Hints, tools_facet
from announcer.i18n.translate import translator

_GEMINI = "Gemini"  # the short name people say, beside the agent name "Gemini CLI"


class GeminiStreamAdapter(_CliStreamAdapter):
    name = "gemini"

    def __init__(self) -> None:
        super().__init__()
        self._session: str | None = None
        self._message_seq = 0
        self._tool_names: dict[str, str] = {}

    def handle(self, obj: JsonObject, now: float) -> None:
        kind = get_str(obj, "type")
        self._session = get_str(obj, "session_id") or self._session
        hints = Hints(session=self._session, at=parse_time(obj.get("timestamp")))
        if kind == "init":
            hints.model = get_str(obj, "model")
            self._started(
                hints,
                now,
                summary=self._t("{agent} started.").format(agent=self.agent_name),
                terse=self._t("{agent} started.").format(agent=_GEMINI),
            )
        elif kind == "message":
            content = obj.get("content")
            if not isinstance(content, str):
                self.diagnose("missing_field", "a 'message' line without string 'content'; dropped")
                return
            role = get_str(obj, "role") or "assistant"
            if role != "assistant":
                self._message_seq += 1
                self.push(
                    self.wrapper("TextOutput", channel="user", text=content, hints=hints), now
                )
                return
            hints.item = f"message-{self._message_seq}"
            hints.final = obj.get("delta") is not True
            if hints.final:
                self._message_seq += 1
            self.push(
                self.wrapper("TextOutput", channel="assistant", text=content, hints=hints), now
            )
        elif kind == "tool_use":
            name = get_str(obj, "tool_name")
            tool_id = get_str(obj, "tool_id")
            if tool_id and name:
                self._tool_names[tool_id] = name
            self._message_seq += 1
            hints.tool_label = command_words(obj.get("parameters"), self.language)
            data = tools_facet(
                "tool_use", "start", status="running", tool_name=name, tool_use_id=tool_id
            )
            self.push(self.wrapper("ToolCall", channel="tool", data=data, hints=hints), now)
        elif kind == "tool_result":
            tool_id = get_str(obj, "tool_id")
            failed = get_str(obj, "status") not in (None, "success")
            message = get_str(obj, "error", "message") if failed else None
            data = tools_facet(
                "tool_result",
                "fail" if failed else "complete",
                status="failed" if failed else "completed",
                tool_name=self._tool_names.get(tool_id or ""),
                tool_use_id=tool_id,
            )
            self.push(
                self.wrapper("ToolResult", channel="tool", message=message, data=data, hints=hints),
                now,
            )
        elif kind == "error":
            message = get_str(obj, "message") or self._t("unknown error")
            severity = get_str(obj, "severity") or "error"
            said = (
                self._t("{agent} warning: {message}")
                if severity == "warning"
                else self._t("{agent} error: {message}")
            )
            self._agent_error(message, hints, now, said=said, agent=_GEMINI)
        elif kind == "result":
            status = get_str(obj, "status")
            duration = _int(get_path(obj, "stats", "duration_ms"))
            hints.duration_ms = duration
            if status == "success":
                calls = _int(get_path(obj, "stats", "tool_calls"))
                parts = self._took(duration)
                if calls is not None:
                    parts.append(
                        translator(self.language)
                        .ngettext("{count} tool call", "{count} tool calls", calls)
                        .format(count=calls)
                    )
                self._finished(parts, hints, now, agent=_GEMINI)
            else:
                message = get_str(obj, "error", "message") or self._t("the run failed")
                # the agent's message carries its own punctuation
                summary = self._t("{agent} stopped with an error: {message}").format(
                    agent=_GEMINI, message=clip(message, 300)
                )
                self._failed(summary, message, hints, now, agent=_GEMINI)
        else:
            self.diagnose("unknown_type", f"unknown Gemini CLI event type {kind!r}; not announced")
