"""Agent CLI JSON Lines streams -> Universal Agent API events -> AAEP.

- Claude Code ``claude -p --output-format stream-json [--include-partial-messages]``
- Codex ``codex exec --json`` (current ``item.*`` form and the older 0.61/0.77 shapes)
- Gemini CLI ``gemini --output-format stream-json``
- OpenCode ``opencode run --format json``

Each line is classified into the stable kinds (TextOutput, ToolCall, ToolResult,
Status, Error); tool events carry the metadata-only tools facet. What we speak
comes from the agent's own message text and from our sentences about tool
activity, never from a raw backend line.
"""

from __future__ import annotations

import json
import re
from typing import Any

from announcer.formats.base import JsonObject, get_path, get_str
from announcer.formats.builder import parse_time
from announcer.formats.speakable import (
    clip,
    command_in_words,
    command_words,
    plain,
    shorten_paths,
    speak_duration_ms,
    speak_folder,
    speak_path,
    unwrap_shell,
)
from announcer.formats.wrapper import Hints, NativeStreamAdapter, tools_facet
from announcer.i18n.translate import translator


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


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


def sentence_of(text: str) -> str:
    """End an agent's message with a full stop so speech pauses after it."""
    text = text.strip()
    return text if not text or text[-1] in ".!?…" else text + "."


def _error_text(message: str) -> str:
    """Codex passes an API error body on as its message: say the body's own message."""
    if message.lstrip().startswith("{"):
        try:
            body = json.loads(message)
        except ValueError:
            return message
        inner = get_str(body, "error", "message") or get_str(body, "message")
        if inner:
            return inner
    return message


def _file_name(path: str) -> str:
    return re.split(r"[\\/]", path.rstrip("/\\"))[-1] or path


def _exit_code(text: str) -> int | None:
    match = _EXIT_CODE.match(text)
    return int(match.group(1)) if match else None


class _CliStreamAdapter(NativeStreamAdapter):
    """What the four CLI streams announce alike; each adapter passes only its own words."""

    def _status(self, message: str, hints: Hints, now: float) -> None:
        self.push(self.wrapper("Status", channel="status", message=message, hints=hints), now)

    def _error(self, message: str, hints: Hints, now: float) -> None:
        self.push(self.wrapper("Error", channel="error", message=message, hints=hints), now)

    def _started(self, hints: Hints, now: float, *, summary: str, terse: str) -> None:
        hints.lifecycle = "session_started"
        hints.summary = summary
        hints.terse = terse
        self._status("session started", hints, now)

    def _turn(self, lifecycle: str, summary: str, message: str, hints: Hints, now: float) -> None:
        hints.lifecycle = lifecycle
        hints.summary = summary
        self._status(message, hints, now)

    def _agent_error(
        self, message: str, hints: Hints, now: float, *, said: str | None = None, agent: str = ""
    ) -> None:
        """A non-fatal error or warning line, spoken with the agent's own message clipped."""
        said = said or self._t("{agent} error: {message}")
        hints.summary = said.format(agent=agent or self.agent_name, message=clip(message, 300))
        self._error(message, hints, now)

    def _failed(
        self, summary: str, message: str, hints: Hints, now: float, *, agent: str = ""
    ) -> None:
        hints.fatal = True
        hints.summary = summary
        hints.terse = self._t("{agent} failed.").format(agent=agent or self.agent_name)
        self._error(message, hints, now)

    def _took(self, duration: int | None) -> list[str]:
        if duration is None:
            return []
        return [
            self._t("took {duration}").format(duration=speak_duration_ms(duration, self.language))
        ]

    def _finished(
        self, details: list[str], hints: Hints, now: float, *, agent: str, note: str = ""
    ) -> None:
        """The session's end; ``note`` is a sentence every verbosity but terse adds."""
        hints.lifecycle = "session_completed"
        finished = self._t("{agent} finished.").format(agent=agent)
        hints.summary = f"{finished} {note}" if note else finished
        # not a bare "Done.": a tool's end sounds like that at terse verbosity
        hints.terse = finished
        hints.detailed = (
            self._t("{agent} finished, {details}.").format(agent=agent, details=", ".join(details))
            if details
            else finished
        )
        if note:
            hints.detailed = f"{hints.detailed} {note}"
        self._status("finished", hints, now)


class ClaudeCodeStreamAdapter(_CliStreamAdapter):
    name = "claude-code"
    agent_kind = "claude_code"
    agent_id = "claude-code"
    agent_name = "Claude Code"

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


_GEMINI = "Gemini"  # the short name people say, beside the agent name "Gemini CLI"
_CODEX_TOOL_KINDS = {
    "command_execution",
    "file_change",
    "mcp_tool_call",
    "web_search",
    "collab_tool_call",
}


class CodexExecAdapter(_CliStreamAdapter):
    name = "codex"
    agent_kind = "codex"
    agent_id = "codex"
    agent_name = "Codex"

    def __init__(self) -> None:
        super().__init__()
        self._thread: str | None = None
        self._spoken: dict[str, str] = {}  # agent_message item id -> text already spoken
        self._thought: set[str] = set()
        self._done_tools: set[str] = set()
        # a top-level error waits one line: followed by turn.failed it is the failure,
        # said once; otherwise (a retry notice) it is a warning
        self._pending_error: str | None = None
        self._failed_turn = False  # turn.failed said; later errors of the run are not news
        # a turn's end waits one line: at the stream's end it is the session's end, said
        # once ("Codex finished."), not "finished the turn" and then "finished"
        self._turn_done: Hints | None = None

    def handle(self, obj: JsonObject, now: float) -> None:
        kind = get_str(obj, "type")
        thread = get_str(obj, "thread_id")
        if thread and self._thread is None:
            self._thread = thread
        hints = Hints(session=self._thread)
        turn_done, self._turn_done = self._turn_done, None
        if turn_done is not None:
            summary = self._t("{agent} finished the turn.").format(agent=self.agent_name)
            self._turn("turn_completed", summary, "turn completed", turn_done, now)
        pending, self._pending_error = self._pending_error, None
        if pending is not None and kind != "turn.failed":
            self._warning(pending, Hints(session=self._thread), now)
        if (
            self._failed_turn
            and kind in ("error", "turn.failed", "item.completed")
            and (kind != "item.completed" or get_str(obj, "item", "type") == "error")
        ):
            self.diagnose("after_failure", f"a {kind!r} line after the turn failed; not said")
            return
        if kind in ("thread.started", "thread.resumed"):
            resumed = kind == "thread.resumed"
            who = self.agent_name
            self._started(
                hints,
                now,
                summary=(
                    self._t("{agent} resumed the session.")
                    if resumed
                    else self._t("{agent} started.")
                ).format(agent=who),
                terse=(
                    self._t("{agent} resumed.") if resumed else self._t("{agent} started.")
                ).format(agent=who),
            )
        elif kind == "turn.started":
            summary = self._t("{agent} is working.").format(agent=self.agent_name)
            self._turn("turn_started", summary, "turn started", hints, now)
        elif kind == "turn.completed":
            self._turn_done = hints
        elif kind == "turn.failed":
            message = (
                get_str(obj, "error", "message")
                or get_str(obj, "message")
                or pending
                or self._t("the turn failed")
            )
            summary = self._t("{agent} failed: {reason}").format(
                agent=self.agent_name, reason=sentence_of(clip(_error_text(message), 300))
            )
            self._failed_turn = True
            self._failed(summary, message, hints, now)
        elif kind == "error":
            self._pending_error = (
                get_str(obj, "message")
                or get_str(obj, "error", "message")
                or self._t("unknown error")
            )
        elif kind in (
            "item.started",
            "item.created",
            "item.updated",
            "item.completed",
            "item.delta",
        ):
            self._item(obj, kind, hints, now)
        else:
            self.diagnose("unknown_type", f"unknown Codex event type {kind!r}; not announced")

    def _item(self, obj: JsonObject, kind: str, hints: Hints, now: float) -> None:
        item = obj.get("item") if isinstance(obj.get("item"), dict) else obj
        assert isinstance(item, dict)
        item_type = get_str(item, "type") if item is not obj else get_str(obj, "item_type")
        item_id = (
            get_str(item, "id") if item is not obj else get_str(obj, "item_id")
        ) or f"line-{self.line_number}"
        status = get_str(item, "status") or (
            "completed" if kind == "item.completed" else "in_progress"
        )
        done = kind == "item.completed" or status in (
            "completed",
            "failed",
            "declined",
            "cancelled",
        )
        text = get_str(item, "text") or get_str(item, "content") or get_str(item, "content", "text")
        if item_type == "agent_message":
            if kind == "item.delta":
                delta = get_str(obj, "delta", "text_delta") or get_str(obj, "delta", "text") or ""
                self._say(item_id, self._spoken.get(item_id, "") + delta, False, hints, now)
            elif text is not None:
                self._say(item_id, text, done, hints, now)
            elif done and item_id in self._spoken:
                self._say(item_id, self._spoken[item_id], True, hints, now)
        elif item_type == "reasoning":
            if text and item_id not in self._thought:
                self._thought.add(item_id)
                self.push(
                    self.wrapper("TextOutput", channel="reasoning", text=text, hints=hints), now
                )
        elif item_type in _CODEX_TOOL_KINDS:
            self._tool(item, item_type, item_id, status, done, text, hints, now)
        elif item_type == "todo_list":
            items = item.get("items")
            if isinstance(items, list) and items:
                finished = sum(
                    1 for i in items if isinstance(i, dict) and i.get("completed") is True
                )
                hints.summary = (
                    translator(self.language)
                    .ngettext(
                        "Plan: {count} step, {done} done.",
                        "Plan: {count} steps, {done} done.",
                        len(items),
                    )
                    .format(count=len(items), done=finished)
                )
                self._status(hints.summary, hints, now)
            elif text:
                hints.summary = self._t("Plan: {text}").format(text=clip(plain(text), 200))
                self._status(text, hints, now)
        elif item_type == "error":
            # error items are warnings (model metadata missing, a retry): Codex goes on
            message = get_str(item, "message") or text or self._t("unknown error")
            self._warning(message, hints, now)
        else:
            self.diagnose("unknown_item", f"Codex item type {item_type!r}; not announced")

    def _warning(self, message: str, hints: Hints, now: float) -> None:
        said = self._t("{agent} warning: {message}")
        self._agent_error(shorten_paths(_error_text(message)), hints, now, said=said)

    def _say(self, item_id: str, full: str, final: bool, hints: Hints, now: float) -> None:
        """Speak only what is new; a rewritten message is spoken again as a new output."""
        spoken = self._spoken.get(item_id, "")
        key = item_id
        if full.startswith(spoken):
            new = full[len(spoken) :]
        else:
            if not final:
                return  # a rewrite still in progress: wait for the final text
            hints.item = item_id
            hints.final = True
            self.push(self.wrapper("TextOutput", channel="assistant", text="", hints=hints), now)
            key, new = f"{item_id}#rewrite", full
        self._spoken[item_id] = full
        h = Hints(session=hints.session, item=key, final=final)
        if new or final:
            self.push(self.wrapper("TextOutput", channel="assistant", text=new, hints=h), now)

    def _tool(
        self,
        item: JsonObject,
        item_type: str,
        item_id: str,
        status: str,
        done: bool,
        text: str | None,
        hints: Hints,
        now: float,
    ) -> None:
        if item_id in self._done_tools:
            return
        name: str | None = item_type
        label: str | None = None
        # what the end of the call says when it is not the tool's name ("Apply patch")
        ended: tuple[str, str | None] | None = None
        if item_type == "command_execution":
            name = "shell"
            label = clip(
                unwrap_shell(get_str(item, "command") or "")
                or command_words(item.get("input"), self.language)
                or text
                or "",
                120,
            )
        elif item_type == "file_change":
            changes = item.get("changes")
            listed = (
                [c for c in changes if isinstance(c, dict) and isinstance(c.get("path"), str)]
                if isinstance(changes, list)
                else []
            )
            paths = [c["path"] for c in listed]
            if paths:
                # the file's name at normal verbosity; its folder too at detailed
                names = ", ".join(_file_name(p) for p in paths[:3])
                label = ", ".join(speak_path(p, self.language) for p in paths[:3])
                if len(paths) > 3:
                    names = self._t("{names} and more").format(names=names)
                    label = self._t("{names} and more").format(names=label)
                kinds = {get_str(c, "kind") for c in listed}
                wording = (
                    self._t("Creating {files}.")
                    if kinds == {"add"}
                    else self._t("Deleting {files}.")
                    if kinds == {"delete"}
                    else self._t("Editing {files}.")
                )
                hints.summary = hints.terse = wording.format(files=names)
                hints.detailed = wording.format(files=label)
                # Codex's end of a patch names the files too: a listener behind the news
                # may have had the start skipped, and "Apply patch finished." names nothing
                done_wording = (
                    self._t("Created {files}.")
                    if kinds == {"add"}
                    else self._t("Deleted {files}.")
                    if kinds == {"delete"}
                    else self._t("Edited {files}.")
                )
                ended = (done_wording.format(files=names), done_wording.format(files=label))
                label = names
            else:
                label = clip(text or "", 160)
                hints.summary = (
                    self._t("Editing files: {files}.").format(files=label)
                    if label
                    else self._t("Editing files.")
                )
                ended = (self._t("Files edited."), None)
            name = "apply_patch"
        elif item_type == "mcp_tool_call":
            server, tool = get_str(item, "server"), get_str(item, "tool")
            name = (
                f"{server}.{tool}"
                if server and tool
                else (tool or get_str(item, "input", "name") or "mcp_tool")
            )
            label = clip(text, 120) if text else None
        elif item_type == "web_search":
            name = "web_search"
            label = clip(get_str(item, "query") or text or "", 120)
        elif item_type == "collab_tool_call":
            # Codex's subagents (multi_agent_v1): spawn_agent carries only the long prompt
            # written for the subagent, so it is heard at detailed verbosity alone
            name = get_str(item, "tool") or "collab_tool"
            prompt = clip(get_str(item, "prompt") or "", 120)
            if name == "spawn_agent":
                hints.summary = self._t("Starting a subagent.")
                hints.terse = self._t("Subagent.")
                if prompt:
                    hints.detailed = self._t("Starting a subagent: {description}.").format(
                        description=prompt
                    )
            elif name == "wait_agent":
                hints.summary = self._t("Waiting for the subagent.")
        thread = self._thread
        start = tools_facet(
            item_type,
            "start",
            status="running",
            tool_name=name,
            backend_item_id=item_id,
            thread_id=thread,
        )
        hints.tool_label = label or None
        self.push(self.wrapper("ToolCall", channel="tool", data=start, hints=hints), now)
        if not done:
            return
        self._done_tools.add(item_id)
        exit_code = _int(item.get("exit_code"))
        failed = status in ("failed", "declined") or (exit_code is not None and exit_code != 0)
        end = tools_facet(
            item_type,
            "fail" if failed else "complete",
            status="failed" if failed else "completed",
            tool_name=name,
            backend_item_id=item_id,
            thread_id=thread,
            exit_code=exit_code,
        )
        message = f"{status}" if status == "declined" else None
        done_hints = Hints(session=hints.session)
        if ended is not None and not failed:
            done_hints.summary = done_hints.terse = ended[0]
            done_hints.detailed = ended[1]
        if item_type == "collab_tool_call" and not failed:
            if name == "spawn_agent":
                done_hints.summary = self._t("The subagent started.")
            elif name == "wait_agent":
                done_hints.summary = self._t("The subagent finished.")
            done_hints.terse = done_hints.summary
        if status == "declined":
            # a reviewer (Codex's approval reviewer or the user) said no: not a failure
            spoken = self.builder.spoken_tool(name or item_type)
            done_hints.summary = self._t("{tool} was declined by the reviewer.").format(tool=spoken)
            done_hints.terse = self._t("{tool} declined.").format(tool=spoken)
        self.push(
            self.wrapper("ToolResult", channel="tool", message=message, data=end, hints=done_hints),
            now,
        )

    def _finish(self, now: float) -> None:
        self._turn_done = None  # the end of the stream says it: "Codex finished."
        pending, self._pending_error = self._pending_error, None
        if pending is not None:
            self._warning(pending, Hints(session=self._thread), now)
        for sess in self.builder.sessions.values():
            if sess.started and not sess.ended:
                self.translator.finish(now)
                finished = self._t("{agent} finished.").format(agent=self.agent_name)
                self.builder.session_completed(sess, now, normal=finished, terse=finished)
        super()._finish(now)


class GeminiStreamAdapter(_CliStreamAdapter):
    name = "gemini"
    agent_kind = "gemini_cli"
    agent_id = "gemini-cli"
    agent_name = "Gemini CLI"

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


class OpenCodeRunAdapter(_CliStreamAdapter):
    name = "opencode"
    agent_kind = "opencode"
    agent_id = "opencode"
    agent_name = "OpenCode"

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
