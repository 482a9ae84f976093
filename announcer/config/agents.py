"""Agent presets for ``announcer agent NAME``: the ACP agents announcer knows how to start.

One registry: a preset is a command line and the package that provides it, so
``announcer agent claude`` can say exactly what to install when the command is
missing. ``announcer agent -- COMMAND...`` starts any other ACP agent.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class AgentPreset:
    name: str
    title: str
    command: tuple[str, ...]
    install: str  # the one command that installs it, said when it is missing


AGENT_PRESETS: dict[str, AgentPreset] = {
    preset.name: preset
    for preset in (
        AgentPreset(
            "claude",
            "Claude Code",
            ("claude-code-acp",),
            "npm install -g @zed-industries/claude-code-acp",
        ),
        AgentPreset("codex", "Codex", ("codex-acp",), "npm install -g @zed-industries/codex-acp"),
        AgentPreset(
            "gemini",
            "Gemini CLI",
            ("gemini", "--experimental-acp"),
            "npm install -g @google/gemini-cli",
        ),
        AgentPreset("goose", "goose", ("goose", "acp"), "see https://block.github.io/goose"),
    )
}


def find_command(program: str, extra_dirs: tuple[Path, ...] = ()) -> str | None:
    """The program on PATH (or in ``extra_dirs``, e.g. a local node_modules/.bin), or None."""
    found = shutil.which(program)
    if found:
        return found
    for folder in extra_dirs:
        candidate = folder / program
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None
