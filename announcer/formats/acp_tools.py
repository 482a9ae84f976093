"""The agent's steps: its tool calls (announced once, ended as done or failed), the
reviewer's decisions, and its plan ("Step 2 of 5: ...").

A titled call waits to be said until the agent moves on, and a running one for
``RUNNING_QUIET_SECONDS``, so that a question about it says it once.
"""

from __future__ import annotations

from announcer.command_analysis import analyse, normalise
from announcer.formats.acp_session import AcpSessions, _Session, _Tool
from announcer.formats.acp_shapes import (
    _change_summaries,
    _content_text_all_lines,
    _deleted_files,
    _diff_sentences,
    _diffs,
    _error_place,
    _exit_code,
    _first_error_line,
    _locations,
    _output_texts,
    _plain_error,
    _raw_command,
    _relative_text,
    _review_fields,
    _sentence,
    _terminal_output,
)
from announcer.formats.base import AdapterOutput, JsonObject, get_str
from announcer.formats.builder_fields import (
    mark_changes,
    mark_kept_quiet,
    mark_outcome_said,
    mark_said_as_question,
    mark_suite_counts,
    mark_whole,
)
from announcer.formats.speakable import clip, unwrap_shell
from announcer.formats.suite_counts import SuiteCounts, suite_counts
from announcer.i18n.translate import translator

#: how long a call that started running waits to be said, in case the agent asks about
#: it first (codex-acp starts a command, then asks for it): one announcement, the question
RUNNING_QUIET_SECONDS = 0.4
#: the tools with which Claude's adapter reports a subagent (``_meta.claudeCode.toolName``)
SUBAGENT_TOOLS = frozenset({"Agent", "Task"})
# Codex's approval reviewer ("Auto review", Guardian) reports as a tool call of its own.
_REVIEW_CALL_PREFIX = "guardian_assessment:"
_REVIEW_TITLE = "Guardian Review"
#: ACP tool kinds that change something: run without the user's answer, who approved them
#: is said (issue 31, item 4)
_ACTS = frozenset({"execute", "edit", "delete", "move"})
#: claude-agent-acp's own bookkeeping tools (its toolName): never announced as a step, nor
#: their end (issue 31, item 12); a plan approval is still asked, and the new mode said
_INTERNAL_TOOLS = frozenset({"ToolSearch", "EnterPlanMode", "ExitPlanMode"})
#: how much of a command's output is kept to find its first error line
_OUTPUT_KEPT = 16_000


def _reviewed_action(action: str) -> str:
    """A reviewer's action or a call's command as run: "exec /bin/bash -lc 'rm -rf build'"
    is "rm -rf build"."""
    action = " ".join(action.split())
    for prefix in ("shell ", "exec "):
        action = action.removeprefix(prefix)
    return unwrap_shell(action)


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
        if get_str(update, "_meta", "claudeCode", "toolName") in _INTERNAL_TOOLS:
            tool.internal = True  # the agent's own bookkeeping: never said as a step
        if get_str(update, "_meta", "claudeCode", "toolName") in SUBAGENT_TOOLS:
            tool.subagent = True  # issue 33, item 3: its start and its end, a line each
        plan = get_str(update, "rawInput", "plan")
        if plan:
            tool.plan = plan[:20_000]
            self._ask_again_with_plan(session, call_id, tool.plan, now)
        for deleted in _deleted_files(update.get("content"), session.cwd):
            if deleted not in tool.deletes:
                tool.deletes.append(deleted)
        for name, _item in _diffs(update.get("content"), session.cwd, limit=20):
            if name not in tool.deletes and name not in tool.changed_files:
                tool.changed_files.append(name)
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
        printed = _terminal_output(update.get("_meta"))
        if printed and len(tool.output) < _OUTPUT_KEPT:  # codex-acp streams what it printed
            tool.output = (tool.output + printed)[:_OUTPUT_KEPT]
        status = get_str(update, "status")
        if tool.internal:  # its question, if any, and the mode it sets say what matters
            tool.announced = tool.finished = tool.finished or status in ("completed", "failed")
            if call_id in session.due:
                session.due.remove(call_id)
            return
        if not tool.announced and not tool.title and status in ("completed", "failed"):
            # a late update of a call the turn already closed, or one never titled: nothing
            # to say about it (never "A other step.", issue 31 item 13)
            tool.announced = tool.finished = True
            return
        if not tool.announced and status in ("completed", "failed"):
            if call_id in session.due:
                session.due.remove(call_id)
            session.running.pop(call_id, None)
            if tool.asked or self._reviewed_as(session, tool, session.denied):
                pass  # its question or its reviewer said it: only its end is said
            else:
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
            # the line just before named it: its question (and the user's answer), or its
            # own start; a plain "<call>: done." then says nothing new (issue 31 item 11:
            # Gemini's command said again after "Sent: accept."; issue 30 item 8)
            named = tool.asked_seq == session.state.next_seq or (
                tool.announced and self.builder.right_after_its_start(session.state, call_id)
            )
            if not tool.announced:
                self._open_quietly(session, call_id, tool, now)
            self._finish_tool(session, call_id, tool, status, update, now, named=named)

    def _review(self, session: _Session, call_id: str, update: JsonObject, now: float) -> None:
        """The agent's own reviewer decided an approval (Codex's Guardian, "Auto review").

        Said plainly as the reviewer's decision, never as the user's: "Codex's reviewer
        allowed: rm notes.txt". Nothing is said while it reviews.
        """
        status = get_str(update, "status")
        fields = _review_fields(_content_text_all_lines(update.get("content")))
        action = _reviewed_action(fields.get("action", ""))
        if status not in ("completed", "failed"):
            if action and call_id not in session.reviewed:
                session.reviewing[call_id] = action  # its call waits for the verdict
            return
        session.reviewing.pop(call_id, None)
        if call_id in session.reviewed:
            return
        session.reviewed.add(call_id)
        action = action or self._t("an action")
        verdict = fields.get("status", "").casefold()
        allowed = status == "completed" and verdict in ("", "approved")
        if not allowed:
            session.denied = [*session.denied[-9:], action]
        else:
            session.reviewer_allowed = [*session.reviewer_allowed[-9:], action]
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
            tool = session.tools.get(call_id)
            if tool is not None and self._under_review(session, tool):
                continue  # the reviewer's verdict says it, and whether it may run
            del session.running[call_id]
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
        if tool.title:
            return tool.title
        if tool.kind in ("other", ""):
            return self._t("a step")
        return self._t("a {kind} step").format(kind=tool.kind)

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
        terse = label
        hidden = self._hidden_in(tool)
        if hidden:  # a disguised file name is never said as if it were plain
            where += ". " + self._hidden_sentence(hidden).rstrip(".")
        who = self._approved_without_you(session, tool)
        if who:  # the point first: a status line may be cut at the listener's pace
            said = self._t("{who} approved: {action}")
            normal = said.format(who=who, action=normal + where)
            detailed = said.format(who=who, action=detailed + where)
            terse, where = said.format(who=who, action=label), ""
        self.builder.tool_invoked(
            session.state,
            now,
            call_id,
            tool.kind,
            normal=_sentence(normal + where),
            terse=_sentence(terse),
            detailed=_sentence(detailed + where),
            # the call alone, as written ("ls src", not "Ls src."), without who approved
            # it: what a digest and a "still working" notice name (issue 33)
            description=label,
        )

    def _hidden_in(self, tool: _Tool, title: str = "") -> int:
        """How many invisible characters (a right-to-left override, a zero-width space) the
        call's title and paths hold: the sanitiser takes them out, so the listener is told
        (issue 31, item 15), as for a command (announcer.command_analysis)."""
        texts = [title or tool.title, *tool.locations, *tool.deletes, *tool.changed_files]
        return sum(normalise(text)[1] for text in texts if text)

    def _hidden_sentence(self, count: int) -> str:
        tr = translator(self.language)
        return tr.ngettext(
            "It had {count} hidden character, taken out here.",
            "It had {count} hidden characters, taken out here.",
            count,
        ).format(count=count)

    def _fail_in_one_sentence(
        self, session: _Session, call_id: str, tool: _Tool, said: str, now: float
    ) -> None:
        """A call that ended without running (the agent stopped, its reviewer denied it):
        its start kept for the record if it was never said, then ``said``, its outcome."""
        if not tool.announced:
            self._open_quietly(session, call_id, tool, now)
        self.builder.tool_completed(
            session.state,
            now,
            call_id,
            "error",
            tool_name=tool.kind,
            normal=_sentence(said),
            terse=_sentence(said),
            error_message=said,
        )
        mark_outcome_said(self.builder.events[-1])

    def _open_quietly(self, session: _Session, call_id: str, tool: _Tool, now: float) -> None:
        """A call said by its question or its reviewer: its start is kept for the record
        (§4.5.2, a completion has its call) and not said again."""
        tool.announced = True
        label = self._tool_label(tool)
        self.builder.tool_invoked(
            session.state, now, call_id, tool.kind, normal=label, description=label
        )
        mark_said_as_question(self.builder.events[-1])

    def _under_review(self, session: _Session, tool: _Tool) -> bool:
        return self._reviewed_as(session, tool, list(session.reviewing.values()))

    def _reviewed_as(self, session: _Session, tool: _Tool, actions: list[str]) -> bool:
        """Whether the call is one of the reviewer's ``actions`` (its command or title)."""
        names = [_reviewed_action(n) for n in (tool.command or "", tool.title) if n]
        return any(name and name in action for name in names for action in actions)

    def _approved_without_you(self, session: _Session, tool: _Tool) -> str:
        """Who approved a call that changes things and ran without the user's answer (issue
        31, item 4): the agent's own mode ("Qwen Code's Auto mode"), or the agent; "" when
        the user was asked, or its reviewer said so already."""
        if tool.asked or tool.kind not in _ACTS or self._under_review(session, tool):
            return ""
        if tool.kind == "execute" and tool.command and analyse(tool.command).risk == "low":
            return ""  # a command that only reads (ls, git status): nothing to approve
        if self._reviewed_as(session, tool, session.reviewer_allowed + session.denied):
            return ""  # "Codex's reviewer allowed: ..." named who approved it
        mode = self._mode_name(session)
        if mode:
            return self._t("{agent}'s {mode} mode").format(agent=self.agent_name, mode=mode)
        return self.agent_name

    def _mode_name(self, session: _Session) -> str:
        """The session's permission mode as the agent names it, or ""."""
        option = next((o for o in session.config.values() if o.category == "mode"), None)
        if option is not None and option.current:
            return option.said_value()
        return next((name for mode_id, name in session.modes if mode_id == session.mode), "")

    def _where(self, tool: _Tool) -> str:
        """The files a call touches, when its title does not already name them ("Read
        src/app.py", never "Read src/app.py in src/app.py")."""
        files = [f for f in tool.locations[:3] if f not in tool.title]
        if not files:
            return ""
        return " " + self._t("in {files}").format(files=", ".join(files))

    def _finish_tool(
        self,
        session: _Session,
        call_id: str,
        tool: _Tool,
        status: str,
        update: JsonObject,
        now: float,
        named: bool = False,
    ) -> None:
        """A call's end. ``named``: the line just before named the call, so a success with
        nothing more to say than "done" is not said (the event is still sent)."""
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
            only_done = not changes
            terse = self._t("Done.")
            if not changes and (tool.deletes or tool.changed_files):
                # codex-acp sends its diffs only before the question (issue 31, item 8)
                said, only_done = self._files_done(tool), False
            counts = self._suite_counts(tool, update)
            if only_done and counts is not None and counts.passed is not None:
                # a test run's outcome is news even right after its start: its counts
                said = self._t("{command}: {passed} passed, {failed} failed").format(
                    command=label, passed=counts.passed, failed=counts.failed
                )
                terse, only_done = _sentence(said), False
            self.builder.tool_completed(
                session.state,
                now,
                call_id,
                "success",
                tool_name=tool.kind,
                normal=_sentence(said),
                terse=terse,
            )
            if not changes and tool.changes:  # its diffs came before: the digest has them
                mark_changes(self.builder.events[-1], "; ".join(tool.changes))
            self._mark_suite_counts(tool, update)
            if named and only_done:
                mark_kept_quiet(self.builder.events[-1])
        elif tool.rejected:
            return  # the user rejected it: "You rejected: ..." was said, never a failure
        elif self._reviewed_as(session, tool, session.denied):
            # the agent's reviewer denied it: it never ran, and that is said (issue 31, 5)
            said = self._t("{tool} did not run: {agent}'s reviewer denied it.").format(
                tool=self._failed_name(tool), agent=self.agent_name
            )
            self._fail_in_one_sentence(session, call_id, tool, said, now)
        else:
            self._say_failure(session, call_id, tool, update, now)

    def _files_done(self, tool: _Tool) -> str:
        """What an edit did to its files, deletes first: "Deleted old_notes.txt; changed
        README.md, src/app.py."."""
        changed = [f for f in tool.changed_files if f not in tool.deletes]
        deleted, edited = ", ".join(tool.deletes[:5]), ", ".join(changed[:5])
        if deleted and edited:
            return self._t("Deleted {deleted}; changed {changed}.").format(
                deleted=deleted, changed=edited
            )
        if deleted:
            return self._t("Deleted {files}.").format(files=deleted)
        return self._t("Changed {files}.").format(files=edited)

    def _say_failure(
        self, session: _Session, call_id: str, tool: _Tool, update: JsonObject, now: float
    ) -> None:
        """A failed call with what the listener needs: its exit code and its first error
        line, said ("sh build.sh failed, exit code 2: src/parser.c line 1: error: ..."),
        from wherever the adapter put them (codex-acp: ``_meta.terminal_exit`` and the
        output deltas; claude-agent-acp: "Exit code 2" and the output in ``rawOutput``)."""
        raw = update.get("rawOutput")
        written = "\n".join(_content_text_all_lines(update.get("content")))
        error = get_str(update, "rawOutput", "error") or ""
        code = _exit_code(raw, update.get("_meta"))
        first = _first_error_line(raw, f"{written}\n{error}", tool.output)
        line = _error_place(_plain_error(first, session.cwd), self._t) if first else ""
        name = self._failed_name(tool)
        if code is not None and line:
            said = self._t("{tool} failed, exit code {code}: {line}")
        elif code is not None:
            said = self._t("{tool} failed, exit code {code}.")
        elif line:
            said = self._t("{tool} failed: {reason}")
        else:
            said = self._t("{tool} failed.")
        normal = _sentence(
            said.format(tool=name, code=code, line=clip(line, 200), reason=clip(line, 200))
        )
        terse = (
            self._t("Failed, exit code {code}.").format(code=code)
            if code is not None
            else self._t("Failed.")
        )
        self.builder.tool_completed(
            session.state,
            now,
            call_id,
            "error",
            tool_name=tool.kind,
            normal=normal,
            terse=terse,
            error_message=clip(line or self._t("the agent reported a failure"), 4096),
        )
        mark_outcome_said(self.builder.events[-1])
        self._mark_suite_counts(tool, update)

    def _mark_suite_counts(self, tool: _Tool, update: JsonObject) -> None:
        """A command's test summary, for the turn's digest (issue 33 item 2)."""
        counts = self._suite_counts(tool, update)
        if counts is not None:
            mark_suite_counts(self.builder.events[-1], counts.passed, counts.failed)

    @staticmethod
    def _suite_counts(tool: _Tool, update: JsonObject) -> SuiteCounts | None:
        """The test summary a command printed, wherever its adapter put the output."""
        if tool.kind != "execute":
            return None
        raw = update.get("rawOutput")
        written = "\n".join(_content_text_all_lines(update.get("content")))
        texts = _output_texts(raw, tool.output, written)
        if isinstance(raw, dict) and isinstance(raw.get("stdout"), str):
            texts.insert(0, raw["stdout"])
        for text in texts:
            counts = suite_counts(text)
            if counts is not None:
                return counts
        return None

    def _failed_name(self, tool: _Tool) -> str:
        """What failed: the agent's description, else the command it ran (codex-acp titles
        a command by its last word, "build.sh"; a sentence never starts with a command,
        which would be capitalised), else its title."""
        if tool.description:
            return tool.description
        command = unwrap_shell(" ".join((tool.command or "").split()))
        if not command and tool.kind == "execute":
            command = tool.title  # Claude's adapters title a command by itself
        if command and len(command) <= 80:
            return self._t("the command {command}").format(command=command)
        return self._tool_label(tool)

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
            terse = said
            contents = [" ".join(str(e.get("content") or "").split()) for e in steps]
            if any(c and c not in session.plan_said for c in contents):
                # a quick plan: steps never said as under way are said now, the agent's
                # own words, whole (issue 31, item 9)
                said += " " + self._t("The steps: {steps}").format(
                    steps="; ".join(clip(c, 120) for c in contents[:8] if c)
                )
                said = _sentence(said + (" …" if len(contents) > 8 else ""))
            self.builder.progress(
                session.state,
                now,
                percent=100,
                step=len(steps),
                total_steps=len(steps),
                normal=said,
                terse=terse,
                urgency="normal",
            )
            if said != terse:
                mark_whole(self.builder.events[-1])
            return
        content = " ".join(str(steps[current].get("content") or "").split())
        key = (current, content)
        if session.plan_step == key:
            return
        session.plan_step = key
        session.plan_said.add(content)
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
