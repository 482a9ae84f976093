"""Codex's ``codex exec --json`` stream (``item.*``, and the 0.61/0.77 shapes) -> AAEP events."""

from __future__ import annotations

import json
import re

from announcer.formats.base import JsonObject, get_str
from announcer.formats.cli_streams.common import _CliStreamAdapter, _int, sentence_of
from announcer.formats.speakable import (
    clip,
    command_words,
    plain,
    shorten_paths,
    speak_path,
    unwrap_shell,
)
from announcer.formats.wrapper import Hints, tools_facet
from announcer.i18n.translate import translator


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


_CODEX_TOOL_KINDS = {
    "command_execution",
    "file_change",
    "mcp_tool_call",
    "web_search",
    "collab_tool_call",
}


class CodexExecAdapter(_CliStreamAdapter):
    name = "codex"

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
