"""The agent catalogue: every agent file (announcer/agents/*.toml) read, validated and asked.

One registry, as data: each agent is a TOML file beside this module (its id, other
names, the command that starts ACP mode, the package with its pinned version and the
one command that installs it, what makes it ask before it acts, its quiet mode, its own
CLI program, stream and hooks). This module reads and validates them once; every layer
that names agents asks it (``announcer agent``, ``announcer watch``, formats/detect.py,
the CLI stream adapters, the hook bridge). ``announcer agent -- COMMAND...`` starts any
other ACP agent.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path

from pydantic import ValidationError

from announcer.agents.files import agent_files
from announcer.agents.schema import (
    EXACT_VERSION,
    AgentCli,
    AgentFileError,
    AgentHooks,
    AgentPackage,
    AgentPreset,
    AskBeforeActing,
    FirstLine,
    QuietMode,
)


def _describe(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "(top level)"
    return f"{where}: {first['msg']}"


def parse_agent_file(text: str, source: str) -> AgentPreset:
    """One agent file's text, validated; :class:`AgentFileError` names ``source`` and the field."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise AgentFileError(f"{source}: not valid TOML: {exc}") from None
    try:
        preset = AgentPreset.model_validate(data)
    except ValidationError as exc:
        raise AgentFileError(f"{source}: {_describe(exc)}") from None
    stem = Path(source).stem
    if preset.id != stem:
        raise AgentFileError(f"{source}: id: must be the file's name, {stem!r}")
    if preset.package.version not in preset.package.install:
        raise AgentFileError(
            f"{source}: package.install: must install the pinned version {preset.package.version}"
        )
    hooks = preset.cli.hooks if preset.cli else None
    if hooks is not None and hooks.name.casefold() not in (n.casefold() for n in preset.names):
        raise AgentFileError(f"{source}: cli.hooks.name: must be one of the agent's names")
    return preset


def load_presets(files: Mapping[str, str]) -> dict[str, AgentPreset]:
    """File name -> text, validated together: no name, and no stream, is claimed by two files."""
    presets: dict[str, AgentPreset] = {}
    owner: dict[str, str] = {}
    streams: dict[str, str] = {}
    for source in sorted(files):
        preset = parse_agent_file(files[source], source)
        for name in preset.names:
            key = name.casefold()
            if key in owner:
                raise AgentFileError(f"{source}: aliases: {name!r} is already {owner[key]}'s name")
            owner[key] = preset.id
        if preset.cli is not None:
            fmt = preset.cli.stream_format
            if fmt in streams:
                raise AgentFileError(
                    f"{source}: cli.stream_format: {fmt!r} is already {streams[fmt]}'s stream"
                )
            streams[fmt] = preset.id
        presets[preset.id] = preset
    return presets


@cache
def presets() -> dict[str, AgentPreset]:
    """Every preset by id, read once; claude first (the default agent), then by id."""
    found = load_presets(agent_files())
    order = sorted(found, key=lambda key: (key != DEFAULT_AGENT, key))
    return {key: found[key] for key in order}


#: the preset ``announcer agent`` starts when given no name
DEFAULT_AGENT = "claude"


def find_preset(name: str) -> AgentPreset | None:
    """The preset with this id or alias (any case), or None."""
    key = name.casefold()
    for preset in presets().values():
        if key in (n.casefold() for n in preset.names):
            return preset
    return None


#: what a program's name may end with on Windows, where npm installs a ``.cmd`` shim
_PROGRAM_SUFFIXES = (".cmd", ".exe", ".bat", ".ps1")


def preset_for_command(command: Sequence[str]) -> AgentPreset | None:
    """The preset whose own program this command line starts, or None.

    ``codex-acp``, ``/opt/bin/gemini --acp --debug``: the program's name (wherever it
    lives) and the preset's ACP words right after it. ``announcer agent -- codex-acp`` is
    the Codex preset's agent, and should ask as that preset makes it ask (issue 21, 3).
    """
    if not command:
        return None
    program = Path(command[0]).name
    for suffix in _PROGRAM_SUFFIXES:
        if program.casefold().endswith(suffix):
            program = program[: -len(suffix)]
    for preset in presets().values():
        words = preset.command
        if program == words[0] and tuple(command[1 : len(words)]) == words[1:]:
            return preset
    return None


def stream_presets() -> dict[str, AgentPreset]:
    """The presets with a CLI stream, by the stream's ``--format`` name (``claude-code``)."""
    return {p.cli.stream_format: p for p in presets().values() if p.cli is not None}


def hook_presets() -> dict[str, AgentPreset]:
    """The presets with hooks, by hook name (``claude-code``, ``codex``)."""
    return {p.cli.hooks.name: p for p in presets().values() if p.cli and p.cli.hooks}


def title_of(name: str) -> str | None:
    """The title of the agent with this id or alias (``gemini_cli`` -> ``Gemini CLI``), or None."""
    preset = find_preset(name)
    return preset.title if preset is not None else None


__all__ = [
    "DEFAULT_AGENT",
    "EXACT_VERSION",
    "AgentCli",
    "AgentFileError",
    "AgentHooks",
    "AgentPackage",
    "AgentPreset",
    "AskBeforeActing",
    "FirstLine",
    "QuietMode",
    "agent_files",
    "find_preset",
    "hook_presets",
    "load_presets",
    "parse_agent_file",
    "preset_for_command",
    "presets",
    "stream_presets",
    "title_of",
]
