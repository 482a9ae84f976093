"""Tool calls and progress as AAEP events (§4.2): a call invoked and completed,
joined by its native id, said by name and argument; a step of progress.
"""

from __future__ import annotations

from typing import Any

from announcer.formats.builder_fields import (
    MAX_SUMMARY,
    TERSE_ARGUMENT,
    digest,
    mark_kept_quiet,
    sentence,
    summaries,
    tool_identifier,
)
from announcer.formats.builder_state import BuilderState, OpenTool, SessionState
from announcer.formats.speakable import clip


class BuilderTools(BuilderState):
    """``agent.tool.invoked``, ``agent.tool.completed`` and ``agent.progress.updated``."""

    def tool_invoked(
        self,
        sess: SessionState,
        now: float,
        native_call_id: str | None,
        tool_name: str | None,
        *,
        normal: str | None = None,
        terse: str | None = None,
        detailed: str | None = None,
        args_summary: str | None = None,
        label: str | None = None,
        description: str | None = None,
        at: float | None = None,
        urgency: str = "normal",
    ) -> None:
        """``label`` names the call for the ear when ``args_summary`` (raw) does not;
        ``description`` (§4.3.1) names the call alone, whatever its summaries add (who
        approved it): what a digest or a "still working" notice says it is."""
        tool = tool_identifier(tool_name)
        key = native_call_id or f"anonymous-{sess.tool_count}"
        if key in sess.open_tools:
            return  # the same call announced twice (start then update): say it once
        call_id = "call_" + digest(self.salt, sess.session_id, key, length=24)
        opened = OpenTool(tool, call_id, at if at is not None else now, label=label or args_summary)
        for other in sess.open_tools.values():
            if other.tool == tool:  # parallel calls of one tool: each end must say which
                other.overlapped = opened.overlapped = True
        sess.open_tools[key] = opened
        sess.tool_count += 1
        spoken = self.spoken_tool(tool_name or tool)
        fields: dict[str, Any] = {"tool": tool, "tool_call_id": call_id}
        running = (
            self._t("Running {tool}: {details}.").format(tool=spoken, details=args_summary)
            if args_summary
            else self._t("Running {tool}.").format(tool=spoken)
        )
        if terse is None:
            # "Bash." alone does not say which call; a short argument fits a terse line
            short = label or args_summary
            terse = (
                self._t("{tool}: {details}.").format(tool=spoken, details=short)
                if short and len(short) <= TERSE_ARGUMENT
                else f"{spoken}."
            )
        fields.update(summaries(normal or running, terse, detailed))
        if args_summary:
            fields["args_summary"] = clip(args_summary, MAX_SUMMARY)
        if description:
            fields["description"] = clip(description, 200)
        self._emit(sess, "tool.invoked", now, fields, urgency=urgency, at=at)

    def tool_completed(
        self,
        sess: SessionState,
        now: float,
        native_call_id: str | None,
        status: str,
        *,
        tool_name: str | None = None,
        normal: str | None = None,
        terse: str | None = None,
        detailed: str | None = None,
        error_message: str | None = None,
        duration_ms: int | None = None,
        at: float | None = None,
    ) -> None:
        key = native_call_id
        if key is None and sess.open_tools:
            key = next(reversed(sess.open_tools))  # the only/most recent open call
        # "Running Bash: ls." was the line just before: "Bash finished: ls." says nothing
        # new (issue 30 item 8), so a success named by our own words is kept quiet
        quiet = (
            status == "success"
            and normal is None
            and key is not None
            and self.right_after_its_start(sess, key)
        )
        opened = sess.open_tools.pop(key, None) if key is not None else None
        if opened is None:
            # a result without its call (the stream started mid-way): announce the call
            # quietly first so the pair stays whole (§4.5.2), then say the result
            key = key or f"orphan-{sess.next_seq}"
            spoken = self.spoken_tool(tool_name) if tool_name else self._t("A tool")
            self.tool_invoked(
                sess,
                now,
                key,
                tool_name,
                normal=self._t("{tool} was running.").format(tool=spoken),
                at=at,
                urgency="background",
            )
            opened = sess.open_tools.pop(key)
        else:
            spoken = self.spoken_tool(opened.tool)
            if duration_ms is None:
                elapsed = (at if at is not None else now) - opened.started
                duration_ms = int(elapsed * 1000) if elapsed >= 0 else None
        tool, call_id = opened.tool, opened.call_id
        # several calls of one tool at once: "Bash finished." three times says nothing
        ambiguous = bool(opened.label) and opened.overlapped
        # Subscribers lead a failed completion with "<tool> failed." themselves (§4.3.2
        # status), so a failure's summary says why, without naming the tool again (at any
        # verbosity: "Bash failed. Bash failed: ..." is heard twice).
        if normal is None:
            if status == "success":
                # Issue 30 item 8: "Bash finished." said nothing the line before it did not
                # (and nothing at all when other news came between): the call is named by
                # what it ran, which also tells apart parallel calls of one tool; right
                # after its own start, it is sent but not said.
                normal = (
                    self._t("{tool} finished: {details}.").format(
                        tool=spoken, details=clip(opened.label, TERSE_ARGUMENT)
                    )
                    if opened.label
                    else self._t("{tool} finished.").format(tool=spoken)
                )
            elif status == "timeout":
                normal = self._t("It did not finish in time.")
            else:
                normal = (
                    sentence(error_message) if error_message else self._t("It reported an error.")
                )
        fields: dict[str, Any] = {"tool": tool, "status": status, "tool_call_id": call_id}
        if terse is None:
            # our own "Done." would sound like the end of the session
            terse = (
                self._t("{tool} done: {details}.").format(tool=spoken, details=opened.label)
                if status == "success" and ambiguous
                else self._t("{tool} done.").format(tool=spoken)
                if status == "success"
                else self._t("{tool} failed.").format(tool=spoken)
                if status == "error"
                else self._t("{tool} timed out.").format(tool=spoken)
            )
        fields.update(summaries(normal, terse, detailed))
        if status != "success":
            # §4.3.2: a failure explains itself, even when the agent gave no reason we may say
            fields["error_message"] = clip(
                error_message or self._t("{tool} did not succeed").format(tool=spoken), 4096
            )
        if duration_ms is not None and 0 <= duration_ms <= 86_400_000:
            fields["duration_ms"] = duration_ms
        # a failed tool matters to the user; a succeeded one is background news
        urgency = "background" if status == "success" else "normal"
        event = self._emit(sess, "tool.completed", now, fields, urgency=urgency, at=at)
        if quiet:
            mark_kept_quiet(event)

    def progress(
        self,
        sess: SessionState,
        now: float,
        *,
        description: str | None = None,
        percent: float | None = None,
        step: int | None = None,
        total_steps: int | None = None,
        normal: str | None = None,
        terse: str | None = None,
        urgency: str = "background",
        at: float | None = None,
    ) -> None:
        progress: dict[str, Any] = {}
        if percent is not None and 0 <= percent <= 100:
            progress["percent"] = percent
        if step is not None and step >= 1:
            progress["step"] = step
        if total_steps is not None and total_steps >= 1 and (step is None or step <= total_steps):
            progress["total_steps"] = total_steps
        if description:
            progress["description"] = clip(description, 4096)
        if not progress:
            progress["description"] = clip(normal or self._t("Working."), 4096)
        fields: dict[str, Any] = {"progress": progress}
        if normal:
            fields.update(summaries(normal, terse))
        self._emit(sess, "progress.updated", now, fields, urgency=urgency, at=at)
