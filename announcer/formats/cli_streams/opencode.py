"""OpenCode's ``opencode run --format json`` stream -> AAEP events."""

from __future__ import annotations

from typing import Any

from announcer.formats.base import JsonObject, get_path, get_str
from announcer.formats.builder_fields import parse_time
from announcer.formats.cli_streams.common import _CliStreamAdapter
from announcer.formats.speakable import command_words
from announcer.formats.wrapper import Hints, tools_facet


class OpenCodeRunAdapter(_CliStreamAdapter):
    name = "opencode"

    def __init__(self) -> None:
        super().__init__()
        self._session: str | None = None

    def handle(self, obj: JsonObject, now: float) -> None:
        kind = get_str(obj, "type")
        self._session = (
            get_str(obj, "session_id")
            or get_str(obj, "sessionID")
            or get_str(obj, "part", "sessionID")
            or self._session  # a line without one carries forward
        )
        hints = Hints(session=self._session, at=parse_time(obj.get("timestamp")))
        part: Any = obj.get("part") if isinstance(obj.get("part"), dict) else {}
        if kind == "step_start":
            summary = self._t("{agent} is working.").format(agent=self.agent_name)
            self._turn("turn_started", summary, "step started", hints, now)
        elif kind == "step_finish":
            summary = self._t("{agent} finished a step.").format(agent=self.agent_name)
            self._turn("turn_completed", summary, "step finished", hints, now)
        elif kind == "text":
            text = get_path(obj, "text")
            if not isinstance(text, str):
                text = get_path(part, "text")
            if not isinstance(text, str):
                self.diagnose("missing_field", "a 'text' line without 'text'; dropped")
                return
            hints.item = get_str(part, "id")
            self.push(self.wrapper("TextOutput", channel="assistant", text=text, hints=hints), now)
        elif kind == "tool_use" and part:
            name = get_str(part, "tool")
            call = get_str(part, "callID") or get_str(part, "id")
            state = get_str(part, "state", "status") or "completed"
            hints.tool_label = get_str(part, "state", "title") or command_words(
                get_path(part, "state", "input"), self.language
            )
            start = tools_facet(
                "tool_use", "start", status="running", tool_name=name, tool_use_id=call
            )
            self.push(self.wrapper("ToolCall", channel="tool", data=start, hints=hints), now)
            if state in ("completed", "error"):
                failed = state == "error"
                message = get_str(part, "state", "error") if failed else None
                end = tools_facet(
                    "tool_use",
                    "fail" if failed else "complete",
                    status="failed" if failed else "completed",
                    tool_name=name,
                    tool_use_id=call,
                )
                self.push(
                    self.wrapper(
                        "ToolResult",
                        channel="tool",
                        message=message,
                        data=end,
                        hints=Hints(session=self._session),
                    ),
                    now,
                )
        elif kind == "error":
            message = (
                get_str(obj, "error", "data", "message")
                or get_str(obj, "error", "message")
                or get_str(obj, "message")
                or self._t("unknown error")
            )
            self._agent_error(message, hints, now)
        else:
            self.diagnose("unknown_type", f"unknown OpenCode event type {kind!r}; not announced")
