"""The agent's steps: its tool calls (announced once, ended as done or failed), the
reviewer's decisions, and its plan ("Step 2 of 5: ...").

A titled call waits to be said until the agent moves on, and a running one for
``RUNNING_QUIET_SECONDS``, so that a question about it says it once.
"""

from __future__ import annotations

from announcer.formats.acp_session import AcpSessions, _Session, _Tool
from announcer.formats.acp_shapes import (
    _change_summaries,
    _content_text_all,
    _content_text_all_lines,
    _deleted_files,
    _diff_sentences,
    _exit_code,
    _first_error_line,
    _locations,
    _raw_command,
    _relative_text,
    _review_fields,
    _sentence,
)
from announcer.formats.base import AdapterOutput, JsonObject, get_str
from announcer.formats.speakable import clip
from announcer.i18n.translate import translator

#: how long a call that started running waits to be said, in case the agent asks about
#: it first (codex-acp starts a command, then asks for it): one announcement, the question
RUNNING_QUIET_SECONDS = 0.4
#: the tools with which Claude's adapter reports a subagent (``_meta.claudeCode.toolName``)
SUBAGENT_TOOLS = frozenset({"Agent", "Task"})
# Codex's approval reviewer ("Auto review", Guardian) reports as a tool call of its own.
_REVIEW_CALL_PREFIX = "guardian_assessment:"
_REVIEW_TITLE = "Guardian Review"


class AcpToolCalls(AcpSessions):
    """Tool calls, the agent's reviewer and the plan, as the user hears them."""

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
        if get_str(update, "_meta", "claudeCode", "toolName") in SUBAGENT_TOOLS:
            tool.subagent = True  # issue 33, item 3: its start and its end, a line each
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
        if tool.subagent:
            said = _sentence(self._t("Subagent started: {task}").format(task=clip(label, 200)))
            self.builder.tool_invoked(
                session.state, now, call_id, tool.kind, normal=said, terse=said, detailed=said
            )
            return
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
        if tool.subagent and status == "completed":
            said = _sentence(
                self._t("Subagent finished: {task}").format(task=clip(self._tool_label(tool), 200))
            )
            self.builder.tool_completed(
                session.state, now, call_id, "success", tool_name=tool.kind, normal=said,
                terse=said,
            )  # fmt: skip
            return
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

    def _ask_again_with_plan(self, session: _Session, call_id: str, plan: str, now: float) -> None:
        """A plan after its question (:class:`~announcer.formats.acp_questions.AcpQuestions`)."""
        raise NotImplementedError
