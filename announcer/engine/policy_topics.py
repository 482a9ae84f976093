"""What status news is about (edits, commands, reads, a plan), so that news the scheduler
folds, and news a flood made us skip unread, is summarised by kind ("2 edits, 1 command").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from announcer.engine.announcement import Announcement
from announcer.engine.scheduler import fold_category
from announcer.protocol.events import (
    AaepEvent,
    ProgressUpdated,
    ToolCompleted,
    ToolInvoked,
    short_type_of,
)

# What a tool's name says it does, so folded news is summarised by kind (ACP tool kinds,
# Claude Code and Codex tool names).
_TOOL_TOPICS: Final = {
    "edit": "edit",
    "write": "edit",
    "multiedit": "edit",
    "notebookedit": "edit",
    "apply_patch": "edit",
    "delete": "edit",
    "move": "edit",
    "execute": "command",
    "bash": "command",
    "shell": "command",
    "exec": "command",
    "exec_command": "command",
    "local_shell": "command",
    "read": "read",
    "search": "read",
    "grep": "read",
    "glob": "read",
    "ls": "read",
    "fetch": "read",
    "webfetch": "read",
    "websearch": "read",
}


def tool_topic(tool: str) -> str | None:
    """``edit``, ``command`` or ``read`` for a tool's name (MCP and dotted names too)."""
    return _TOOL_TOPICS.get(tool.rsplit("__", 1)[-1].rsplit(".", 1)[-1].lower())


def _plan_done(event: ProgressUpdated) -> bool:
    """Every step of a plan is done (issue 20: "All 4 steps done." is always said)."""
    progress = event.progress
    if progress.percent is not None and progress.percent >= 100:
        return True
    return (
        progress.step is not None
        and progress.total_steps is not None
        and progress.step > progress.total_steps
    )


def _topic_of(event: AaepEvent) -> str | None:
    """What status news is about, for the scheduler's summary of folded news by kind."""
    if isinstance(event, ToolCompleted) and event.status != "success":
        return "failed"  # a failure is always said
    if isinstance(event, (ToolInvoked, ToolCompleted)):
        return tool_topic(event.tool)
    if isinstance(event, ProgressUpdated):
        return "plan_done" if _plan_done(event) else "plan"
    return None


def frame_fold_category(frame: Mapping[str, Any]) -> str:
    """The kind news a flood made us skip unread is counted under ("2 edits, 1 command").

    Only the envelope is read (a skipped frame is never validated): its type and its
    tool's name, counted as the scheduler counts the news it folds (issue 20).
    """
    kind = frame.get("type")
    short = short_type_of(kind) if isinstance(kind, str) else "agent"
    tool = frame.get("tool")
    topic = tool_topic(tool) if isinstance(tool, str) else None
    return fold_category(Announcement(text="", kind=short, topic=topic))
