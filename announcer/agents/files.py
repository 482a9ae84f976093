"""The agent files as plain TOML tables, read with the standard library alone.

Claude Code and Codex start ``announcer hook NAME`` on every tool call, so the hook
process reads its agents here without pydantic (tests/cli/test_lean_commands.py);
:mod:`announcer.agents.catalogue` validates the same files for everyone else, and
tests/agents check that both readings agree.
"""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

#: the folder of this module, where the agent files are installed beside it (also in the
#: PyInstaller bundle); not importlib.resources, which costs the hook process 20 modules
FOLDER = Path(__file__).resolve().parent


def agent_files() -> dict[str, str]:
    """The packaged agent files: name -> text."""
    return {
        f"announcer/agents/{path.name}": path.read_text(encoding="utf-8")
        for path in sorted(FOLDER.glob("*.toml"))
    }


class HookAgent(NamedTuple):  # a NamedTuple: dataclasses costs the hook process 5 ms
    """An agent whose hooks announcer answers: ``announcer hook NAME``."""

    name: str  # the hook's name, one of the agent's names (``claude-code``)
    title: str  # what the user hears and reads (``Claude Code``)
    blocking: tuple[str, ...]  # the hooks that wait for the user's answer
    hold_pre_tool_use: bool  # PreToolUse waits to hear whether a question follows


def _hooks_of(table: dict[str, Any]) -> HookAgent | None:
    cli = table.get("cli")
    hooks = cli.get("hooks") if isinstance(cli, dict) else None
    if not isinstance(hooks, dict):
        return None
    return HookAgent(
        str(hooks["name"]),
        str(table["title"]),
        tuple(str(name) for name in hooks.get("blocking", ())),
        bool(hooks.get("hold_pre_tool_use", False)),
    )


@cache
def hook_agents() -> dict[str, HookAgent]:
    """Every agent with hooks, by hook name, in the files' order (claude before codex)."""
    found: dict[str, HookAgent] = {}
    files = agent_files()
    for source in sorted(files):
        # only files with a [cli.hooks] table are parsed: the hook process starts on every
        # tool call (tests/agents/test_catalogue_names.py checks this reading against pydantic's)
        if "[cli.hooks]" not in files[source]:
            continue
        agent = _hooks_of(tomllib.loads(files[source]))
        if agent is not None:
            found[agent.name] = agent
    return found


__all__ = ["HookAgent", "agent_files", "hook_agents"]
