"""Which agent stream format a command prints, or a first output line shows.

``announcer watch -- npx -y @anthropic-ai/claude-code -p ...`` runs Claude Code
through npx; ``env FOO=1 node .../codex.js exec --json`` runs Codex through env
and node. :func:`format_of_command` looks through such launchers to the agent;
:func:`format_of_line` tells the format from the stream's first JSON line when
the command does not say. Both read the agent files' ``[cli]`` tables
(announcer/agents/*.toml): a new agent stream needs no word here.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import PurePath

from announcer.agents.catalogue import stream_presets


@cache
def _agents() -> dict[str, str]:
    """An agent's program, npm package or stream name -> the format it prints with its
    JSON flags, from the agent files' ``[cli]`` tables (announcer/agents/*.toml)."""
    names: dict[str, str] = {}
    for stream, preset in stream_presets().items():
        assert preset.cli is not None
        for word in (*preset.cli.programs, *preset.cli.packages, stream):
            names[word] = stream
    return names


@cache
def _folders() -> frozenset[str]:
    """The names that tell the agent as a folder of a script's path: a package's folder
    (``.../opencode-ai/bin/...``), not a program's bare name (``~/codex/run.js``)."""
    clis = [preset.cli for preset in stream_presets().values() if preset.cli is not None]
    programs = {program for cli in clis for program in cli.programs}
    return frozenset(_agents()) - programs


# launchers whose first plain argument is the program (or package) they run
_RUNNERS = {"npx", "bunx", "pnpx", "node", "nodejs", "bun", "deno", "tsx", "ts-node"}
# launchers with a subcommand before the program: npm exec, pnpm dlx, yarn dlx, deno run
_SUBCOMMAND_RUNNERS = {
    "npm": {"exec", "x"},
    "pnpm": {"dlx", "exec"},
    "yarn": {"dlx", "exec"},
    "bun": {"x", "run"},
    "deno": {"run"},
}
# options of those launchers that take the next word as their value
_VALUE_OPTIONS = {"-p", "--package", "-c", "--call", "--prefix", "-r", "--require", "--import"}
_ENV_VALUE_OPTIONS = {"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}
_VERSION = re.compile(r"^(@?[^@]+)@[^/]*$")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def _agent_of(word: str) -> str | None:
    """``@openai/codex@0.169.0``, ``/usr/bin/claude``, ``.../@anthropic-ai/claude-code/cli.js``."""
    bare = word.removesuffix(".exe")
    match = _VERSION.match(bare)
    if match:
        bare = match.group(1)
    agents = _agents()
    if bare in agents:
        return agents[bare]
    path = PurePath(bare)
    name = path.name.lower()
    for suffix in (".js", ".mjs", ".cjs", ".ts"):
        name = name.removesuffix(suffix)
    if name in agents:
        return agents[name]
    parts = path.parts
    for index, part in enumerate(parts):  # a script inside an agent's npm package
        scoped = f"{part}/{parts[index + 1]}" if index + 1 < len(parts) else ""
        if scoped in agents:
            return agents[scoped]
        if part in _folders():
            return agents[part]
    return None


def format_of_command(command: list[str]) -> str | None:
    """The format ``command`` prints, looking through env, npx, npm exec and node."""
    words = list(command)
    for _ in range(8):  # launchers may nest (env ... npx ...); a bound keeps it finite
        if not words:
            return None
        name = PurePath(words[0]).name.removesuffix(".exe").lower()
        found = _agent_of(words[0])
        if found is not None:
            return found
        rest = words[1:]
        if name == "env":
            while rest and (rest[0].startswith("-") or _ASSIGNMENT.match(rest[0])):
                option = rest.pop(0)
                if option in _ENV_VALUE_OPTIONS and rest:
                    rest.pop(0)
                if option == "--":
                    break
            words = rest
            continue
        if name in _SUBCOMMAND_RUNNERS and rest and rest[0] in _SUBCOMMAND_RUNNERS[name]:
            rest = rest[1:]
        elif name not in _RUNNERS:
            return None
        program: str | None = None
        while rest:
            word = rest.pop(0)
            if word == "--":
                break
            if word.startswith("-"):
                if word in _VALUE_OPTIONS and rest:
                    value = rest.pop(0)
                    if word in ("-p", "--package") and _agent_of(value):
                        return _agent_of(value)
                elif word.startswith("--package="):
                    found = _agent_of(word.partition("=")[2])
                    if found:
                        return found
                continue
            program = word
            break
        if program is None:
            if not rest:
                return None
            program = rest.pop(0)
        words = [program, *rest]
    return None


def format_of_line(line: str | bytes) -> str | None:
    """The format whose first line this is, or None (not JSON, or not a first line we know)."""
    try:
        obj = json.loads(line)
    except ValueError:
        return None
    if not isinstance(obj, dict):
        return None
    for stream, preset in stream_presets().items():  # each agent file's [cli.first_line]
        if preset.cli is not None and preset.cli.first_line.matches(obj):
            return stream
    kind = obj.get("type")
    if "@context" in obj and isinstance(kind, str) and kind.startswith("aaep:"):
        return "aaep"
    return None


__all__ = ["format_of_command", "format_of_line"]
