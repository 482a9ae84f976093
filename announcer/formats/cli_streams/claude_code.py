"""Claude Code's ``claude -p --output-format stream-json`` stream -> AAEP events."""

from __future__ import annotations

import json
import re

from announcer.formats.base import JsonObject, get_path, get_str
from announcer.formats.cli_streams.common import _CliStreamAdapter, _int, sentence_of
from announcer.formats.speakable import (
    clip,
    command_in_words,
    command_words,
    shorten_paths,
    speak_folder,
)
from announcer.formats.wrapper import Hints, tools_facet
from announcer.i18n.translate import translator


def _block_text(content: object) -> str:
    """Text of a Claude content field: a string or a list of text blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(
            b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)
        )
    return ""


_EXIT_CODE = re.compile(r"^\s*(?:Exit code|exit status)[: ]+(\d{1,3})\b", re.IGNORECASE)


def _exit_code(text: str) -> int | None:
    match = _EXIT_CODE.match(text)
    return int(match.group(1)) if match else None


class ClaudeCodeStreamAdapter(_CliStreamAdapter):
    name = "claude-code"

    def __init__(self) -> None:
        super().__init__()
        self._streamed_text = False  # --include-partial-messages already spoke this message
        self._stream_item = 0
        # --include-partial-messages: a tool_use block's id, name and input JSON so far
        self._block_tools: dict[int, tuple[str, str | None, list[str]]] = {}
        self._announced: set[str] = set()  # tool_use ids already said
        self._subagents: dict[str, str] = {}  # Agent/Task tool_use id -> its description
        self._denied: set[str] = set()  # tool_use ids said as denied
        self._last_session: str | None = None

    _SUBAGENT_TOOLS = ("Agent", "Task")

    def handle(self, obj: JsonObject, now: float) -> None:
        kind = get_str(obj, "type")
        session = get_str(obj, "session_id")
        if kind in ("user", "assistant", "result") and session is None:
            self.diagnose("missing_field", f"a '{kind}' line without 'session_id'; dropped")
            return
        hints = Hints(session=session)
        self._last_session = session or self._last_session
        known = self.builder.sessions.get(session) if session else None
        if known is not None and known.ended and kind != "result":
            # Claude Code goes on after its result (a background subagent finished): the
            # same session, resumed, not a new one
            resumed = self._t("{agent} resumed the session.").format(agent=self.agent_name)
            terse = self._t("{agent} resumed.").format(agent=self.agent_name)
            self._started(Hints(session=session), now, summary=resumed, terse=terse)
        if kind == "system":
            self._system(obj, hints, now)
        elif kind == "assistant":
            self._message(obj, hints, now, assistant=True)
        elif kind == "user":
            self._message(obj, hints, now, assistant=False)
        elif kind == "stream_event":
            self._stream_event(obj, hints, now)
        elif kind == "result":
            self._result(obj, hints, now)
        else:
            self.diagnose("unknown_type", f"unknown Claude Code line type {kind!r}; not announced")

    def _system(self, obj: JsonObject, hints: Hints, now: float) -> None:
        subtype = get_str(obj, "subtype")
        if subtype == "permission_denied":
            self._permission_denied(obj, hints, now)
            return
        if subtype == "task_notification":
            self._subagent_ended(obj, hints, now)
            return
        if subtype != "init":
            self.diagnose("ignored", f"system line subtype {subtype!r} has nothing to announce")
            return
        hints.model = get_str(obj, "model")
        cwd = get_str(obj, "cwd")
        started = self._t("{agent} started.").format(agent=self.agent_name)
        self._started(
            hints,
            now,
            summary=self._t("{agent} started in {folder}.").format(
                agent=self.agent_name, folder=speak_folder(cwd)
            )
            if cwd
            else started,
            terse=started,
        )

    def _message(self, obj: JsonObject, hints: Hints, now: float, *, assistant: bool) -> None:
        content = get_path(obj, "message", "content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if not isinstance(content, list):
            self.diagnose("missing_field", "a message line without 'message.content'; dropped")
            return
        message_id = get_str(obj, "message", "id") or f"line-{self.line_number}"
        streamed, self._streamed_text = self._streamed_text, False
        # a subagent's own words go to the main agent, not to the user; its tools are news
        subagent = get_str(obj, "parent_tool_use_id") is not None
        for index, block in enumerate(content):
            if not isinstance(block, dict):
                self.diagnose("invalid_field", "a content block that is not an object; skipped")
                continue
            btype = block.get("type")
            h = Hints(session=hints.session)
            if btype == "text" and isinstance(block.get("text"), str):
                if assistant and streamed:
                    continue  # already spoken from the text deltas
                if subagent:
                    self.diagnose("subagent_text", "a subagent's message; not announced")
                    continue
                h.item = f"{message_id}:{self.line_number}:{index}"  # one line per block
                channel = "assistant" if assistant else "user"
                self.push(
                    self.wrapper("TextOutput", channel=channel, text=block["text"], hints=h), now
                )
            elif btype == "thinking" and isinstance(block.get("thinking"), str):
                self.push(
                    self.wrapper(
                        "TextOutput", channel="reasoning", text=block["thinking"], hints=h
                    ),
                    now,
                )
            elif btype == "tool_use":
                name = block.get("name") if isinstance(block.get("name"), str) else None
                self._tool_use(get_str(block, "id"), name, block.get("input"), h, now)
            elif btype == "tool_result":
                self._tool_result(obj, block, h, now)
            else:
                self.diagnose("unknown_block", f"content block type {btype!r}; not announced")

    def _stream_event(self, obj: JsonObject, hints: Hints, now: float) -> None:
        event = obj.get("event")
        if not isinstance(event, dict):
            self.diagnose("missing_field", "a stream_event line without 'event'; dropped")
            return
        etype = event.get("type")
        index = _int(event.get("index")) or 0
        if etype == "message_start":
            self._stream_item += 1
        elif etype == "content_block_start":
            block = event.get("content_block")
            btype = get_str(block, "type")
            if btype == "tool_use":
                # the input arrives in the deltas: the call is said once it is whole (at the
                # assistant message or the block's end), never as a bare "Running Bash."
                tool_id = get_str(block, "id")
                if tool_id:
                    self._block_tools[index] = (tool_id, get_str(block, "name"), [])
            elif btype == "tool_result":
                data = tools_facet(
                    "tool_result",
                    "complete",
                    status="completed",
                    tool_use_id=get_str(block, "tool_use_id"),
                )
                self.push(self.wrapper("ToolResult", channel="tool", data=data, hints=hints), now)
        elif etype == "content_block_delta":
            delta = event.get("delta")
            dtype = get_str(delta, "type")
            if dtype == "text_delta" and isinstance(get_path(delta, "text"), str):
                self._streamed_text = True
                hints.item = f"stream-{self._stream_item}:{index}"
                hints.final = False
                text = get_path(delta, "text")
                self.push(
                    self.wrapper("TextOutput", channel="assistant", text=text, hints=hints), now
                )
            elif dtype == "input_json_delta" and index in self._block_tools:
                piece = get_path(delta, "partial_json")
                if isinstance(piece, str):
                    self._block_tools[index][2].append(piece)
            # thinking_delta: the whole thought comes in the assistant message
        elif etype in ("content_block_stop", "message_stop"):
            hints.item = f"stream-{self._stream_item}:{index}"
            if etype == "content_block_stop" and index in self._block_tools:
                tool_id, name, pieces = self._block_tools.pop(index)
                try:
                    tool_input = json.loads("".join(pieces) or "{}")
                except ValueError:
                    tool_input = {}
                self._tool_use(tool_id, name, tool_input, hints, now)
                return
            if hints.item in self.builder.session(hints.session).outputs:
                self.push(
                    self.wrapper("TextOutput", channel="assistant", text="", hints=hints), now
                )

    def _finish(self, now: float) -> None:
        # a tool block the stream never finished: say the call, so its end is not lost
        for index in sorted(self._block_tools):
            tool_id, name, pieces = self._block_tools.pop(index)
            try:
                tool_input = json.loads("".join(pieces) or "{}")
            except ValueError:
                tool_input = {}
            self._tool_use(tool_id, name, tool_input, Hints(session=self._last_session), now)
        super()._finish(now)

    def _tool_use(
        self, tool_id: str | None, name: str | None, tool_input: object, h: Hints, now: float
    ) -> None:
        """Announce a call once, with the words a listener wants by verbosity."""
        if tool_id is not None:
            if tool_id in self._announced:
                return  # the partial stream's block, then the assistant message: say it once
            self._announced.add(tool_id)
        arguments = tool_input if isinstance(tool_input, dict) else {}
        description = arguments.get("description")
        description = clip(description, 120) if isinstance(description, str) else None
        command = arguments.get("command")
        if name in self._SUBAGENT_TOOLS:
            # the short description, never the long prompt written for the subagent
            what = description or clip(str(arguments.get("prompt") or ""), 80) or None
            if tool_id is not None and what:
                self._subagents[tool_id] = what
            h.summary = (
                self._t("Starting a subagent: {description}.").format(description=what)
                if what
                else self._t("Starting a subagent.")
            )
            h.label = what
        elif description and isinstance(command, str) and command.strip():
            # Claude Code sends a human description of each command: the command itself
            # (shell syntax, often long) only at detailed verbosity
            shown = command_in_words(command, self.language)
            spoken = self.builder.spoken_tool(name or "tool")
            h.summary = self._t("Running {tool}: {details}.").format(
                tool=spoken, details=description
            )
            h.detailed = self._t("Running {tool}: {details}. Command: {command}").format(
                tool=spoken, details=description, command=shown
            )
            h.tool_label = command_in_words(command, self.language)
            h.label = description
        else:
            h.tool_label = command_words(tool_input, self.language)
        data = tools_facet(
            "tool_use", "start", status="running", tool_name=name, tool_use_id=tool_id
        )
        self.push(self.wrapper("ToolCall", channel="tool", data=data, hints=h), now)

    def _tool_result(self, obj: JsonObject, block: JsonObject, h: Hints, now: float) -> None:
        tool_id = get_str(block, "tool_use_id")
        if tool_id in self._denied:
            return  # already said as denied (system/permission_denied)
        failed = block.get("is_error") is True
        # the result is the tool's raw output: never spoken; only an exit code is kept
        exit_code = _exit_code(_block_text(block.get("content"))) if failed else None
        if tool_id in self._subagents and not failed:
            what = self._subagents[tool_id]
            if get_str(obj, "tool_use_result", "status") == "async_launched":
                h.summary = self._t("The subagent works in the background: {description}.")
            else:
                del self._subagents[tool_id]
                h.summary = self._t("Subagent finished: {description}.")
            h.summary = h.summary.format(description=what)
            h.terse = h.summary
        data = tools_facet(
            "tool_result",
            "fail" if failed else "complete",
            status="failed" if failed else "completed",
            tool_use_id=tool_id,
            exit_code=exit_code,
        )
        self.push(self.wrapper("ToolResult", channel="tool", data=data, hints=h), now)

    def _permission_denied(self, obj: JsonObject, hints: Hints, now: float) -> None:
        """Claude Code's own permission rules refused a call: a denial, not a failure."""
        tool_id = get_str(obj, "tool_use_id")
        name = get_str(obj, "tool_name")
        spoken = self.builder.spoken_tool(name or "tool")
        denied = self._t("{tool} was denied by the {agent} permission settings.").format(
            tool=spoken, agent=self.agent_name
        )
        reason = get_str(obj, "decision_reason") or get_str(obj, "message")
        hints.summary = denied
        hints.terse = self._t("{tool} denied.").format(tool=spoken)
        if reason:
            hints.detailed = f"{denied} {sentence_of(shorten_paths(clip(reason, 300)))}"
        if tool_id is not None:
            self._denied.add(tool_id)
        data = tools_facet(
            "tool_result", "fail", status="failed", tool_name=name, tool_use_id=tool_id
        )
        self.push(
            self.wrapper("ToolResult", channel="tool", message=reason, data=data, hints=hints), now
        )

    def _subagent_ended(self, obj: JsonObject, hints: Hints, now: float) -> None:
        """A background subagent's end (``task_notification``)."""
        tool_id = get_str(obj, "tool_use_id") or ""
        what = self._subagents.pop(tool_id, None) or get_str(obj, "description")
        status = get_str(obj, "status") or "completed"
        if status == "completed":
            said = (
                self._t("Subagent finished: {description}.").format(description=what)
                if what
                else self._t("The subagent finished.")
            )
        else:
            said = (
                self._t("Subagent stopped: {description}.").format(description=what)
                if what
                else self._t("The subagent stopped.")
            )
        hints.summary = said
        hints.terse = said
        self._status(said, hints, now)

    def _result(self, obj: JsonObject, hints: Hints, now: float) -> None:
        known = self.builder.sessions.get(get_str(obj, "session_id") or "")
        if known is not None and known.ended:
            # a background subagent makes Claude Code print a second result, with nothing
            # between the two: the end was said
            self.diagnose("duplicate_result", "a second 'result' for the session; not announced")
            return
        subtype = get_str(obj, "subtype") or ""
        # is_error wins over a "success" subtype: an inconsistent result is not a success
        failed = obj.get("is_error") is True or subtype.startswith("error")
        duration = _int(obj.get("duration_ms"))
        turns = _int(obj.get("num_turns"))
        cost = obj.get("total_cost_usd")
        details = self._took(duration)
        if turns is not None:
            details.append(
                translator(self.language)
                .ngettext("{count} turn", "{count} turns", turns)
                .format(count=turns)
            )
        if isinstance(cost, int | float) and not isinstance(cost, bool):
            details.append(self._t("cost {amount} dollars").format(amount=f"{cost:.2f}"))
        hints.duration_ms = duration
        if failed:
            reason = (
                subtype.replace("error_", "").replace("_", " ")
                if subtype.startswith("error_")
                else None
            )
            summary = (
                self._t("{agent} stopped with an error: {reason}.").format(
                    agent=self.agent_name, reason=reason
                )
                if reason
                else self._t("{agent} stopped with an error.").format(agent=self.agent_name)
            )
            self._failed(summary, summary, hints, now)
            return
        # denials that were not said when they happened (no system/permission_denied line)
        unsaid = [
            get_str(d, "tool_name") or "tool"
            for d in obj.get("permission_denials") or []
            if isinstance(d, dict) and get_str(d, "tool_use_id") not in self._denied
        ]
        note = ""
        if unsaid:
            names = ", ".join(dict.fromkeys(self.builder.spoken_tool(n) for n in unsaid))
            note = (
                translator(self.language)
                .ngettext(
                    "{count} tool call was denied: {tools}.",
                    "{count} tool calls were denied: {tools}.",
                    len(unsaid),
                )
                .format(count=len(unsaid), tools=names)
            )
        self._finished(details, hints, now, agent=self.agent_name, note=note)
