"""Agent presets for ``announcer agent NAME``: the ACP agents announcer knows how to start.

One registry, as data: each preset is a TOML file in ``announcer/agents/`` (its id,
other names, the command that starts ACP mode, the package with its pinned version and
the one command that installs it, and what makes it ask before it acts). This module
reads and validates them once; every other place that names agents reads from here, or
is checked against it by tests/config/test_agent_files.py where it must start faster
than reading files allows (the hook client). ``announcer agent -- COMMAND...`` starts
any other ACP agent.
"""

from __future__ import annotations

import os
import re
import shutil
import tomllib
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

#: an exact version: no ranges, no tags (``1.2.3``, ``1.2.3-beta.1``)
EXACT_VERSION = re.compile(r"^\d+\.\d+\.\d+(?:-[0-9A-Za-z.]+)?$")
_ID = re.compile(r"^[a-z][a-z0-9_-]*$")


class AgentFileError(ValueError):
    """An agent file that cannot be used; the message names the file and the field."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class AgentPackage(_Strict):
    """Where the agent comes from, pinned, and the one line that installs that version."""

    registry: Literal["npm", "pypi", "github"]
    name: str = Field(min_length=1)
    version: str
    install: str = Field(min_length=1)

    @field_validator("version")
    @classmethod
    def _exact(cls, version: str) -> str:
        if not EXACT_VERSION.match(version):
            raise ValueError(f"must be one exact version such as 1.2.3, not {version!r}")
        return version


class AskBeforeActing(_Strict):
    """What makes the agent ask before it edits or runs anything.

    ``env`` and ``args`` are applied when the agent starts; ``config`` holds
    ``session/set_config_option`` values (option id -> value id, or true/false for a
    boolean option) to set once the session is open, with ``mode`` the ``session/set_mode``
    id for agents without config options.
    ``says`` is the sentence for the docs and ``agent --list``.
    """

    env: dict[str, str] = Field(default_factory=dict)
    args: tuple[str, ...] = ()
    #: a select option's value id, or a boolean option's value
    config: dict[str, str | bool] = Field(default_factory=dict)
    mode: str | None = None
    says: str = Field(min_length=1)


class QuietMode(_Strict):
    """The agent's own screen-reader or plain mode (issue 33, item 6), turned on at start.

    ``env`` is set for ``announcer agent`` and ``announcer watch`` (a value the user
    already set is kept, so ``NAME=0`` opts out); ``args`` follow the ACP command of
    ``announcer agent`` only, since watch never rewrites the user's command. Only what
    the lab saw the pinned CLI accept belongs here (tests/lab).
    """

    env: dict[str, str] = Field(default_factory=dict)
    args: tuple[str, ...] = ()
    says: str = Field(min_length=1)


class AgentCli(_Strict):
    """The agent's own command-line program, for ``announcer watch`` and ``announcer hook``."""

    programs: tuple[str, ...] = Field(min_length=1)
    packages: tuple[str, ...] = ()
    stream_format: str = Field(min_length=1)
    json_args: tuple[str, ...] = ()
    hooks: str | None = None


class AgentPreset(_Strict):
    """One agent file."""

    id: str
    aliases: tuple[str, ...] = ()
    title: str = Field(min_length=1)
    homepage: str = Field(min_length=1)
    command: tuple[str, ...] = Field(min_length=1)
    default_behaviour: str = Field(min_length=1)
    package: AgentPackage
    ask: AskBeforeActing
    cli: AgentCli | None = None
    quiet: QuietMode | None = None

    @field_validator("id")
    @classmethod
    def _lower_id(cls, value: str) -> str:
        if not _ID.match(value):
            raise ValueError("must be lower-case letters, digits, '-' or '_'")
        return value

    @property
    def name(self) -> str:
        return self.id

    @property
    def install(self) -> str:
        return self.package.install

    @property
    def names(self) -> tuple[str, ...]:
        """Every name it answers to: its id first, then its aliases."""
        return (self.id, *self.aliases)

    def launch_command(self, program: str | None = None) -> list[str]:
        """The command line that starts it asking: ``program`` (the found path) replaces
        the first word, and the asking arguments follow the preset's own."""
        return [program or self.command[0], *self.command[1:], *self.ask.args, *self.quiet_args()]

    def quiet_args(self, command: Sequence[str] = ()) -> list[str]:
        """The quiet mode's flags that ``command`` (the user's, if any) does not already give."""
        if self.quiet is None:
            return []
        return [word for word in self.quiet.args if word not in command]

    def quiet_env(self, environ: Mapping[str, str]) -> dict[str, str]:
        """The quiet mode's variables ``environ`` does not already set (the user's value wins)."""
        if self.quiet is None:
            return {}
        return {key: value for key, value in self.quiet.env.items() if key not in environ}

    def start_env(self, environ: Mapping[str, str] | None = None) -> dict[str, str]:
        """The variables announcer adds when it starts the agent: asking, then quiet mode."""
        base = os.environ if environ is None else environ
        return {**self.quiet_env(base), **self.ask.env}

    def chooses_asking(self, command: Sequence[str], environ: Mapping[str, str]) -> bool:
        """Whether a command line or environment of the user's already picks how the agent
        asks: one of the preset's asking flags (``--approval-mode``) or variables
        (``INITIAL_AGENT_MODE``) is there, so announcer adds none of its own."""
        flags = {word for word in self.ask.args if word.startswith("-")}
        if any(word.partition("=")[0] in flags for word in command[1:]):
            return True
        return any(key in environ for key in self.ask.env)

    def launch_env(self, base: Mapping[str, str] | None = None) -> dict[str, str] | None:
        """The environment to start it with, or None (inherit) when it needs nothing."""
        environ = os.environ if base is None else base
        added = self.start_env(environ)
        if not added:
            return None
        return {**environ, **added}


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
    return preset


def load_presets(files: Mapping[str, str]) -> dict[str, AgentPreset]:
    """File name -> text, validated together: no name is claimed by two files."""
    presets: dict[str, AgentPreset] = {}
    owner: dict[str, str] = {}
    for source in sorted(files):
        preset = parse_agent_file(files[source], source)
        for name in preset.names:
            key = name.casefold()
            if key in owner:
                raise AgentFileError(f"{source}: aliases: {name!r} is already {owner[key]}'s name")
            owner[key] = preset.id
        presets[preset.id] = preset
    return presets


def agent_files() -> dict[str, str]:
    """The packaged agent files: name -> text."""
    folder = resources.files("announcer.agents")
    return {
        f"announcer/agents/{entry.name}": entry.read_text(encoding="utf-8")
        for entry in folder.iterdir()
        if entry.name.endswith(".toml")
    }


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


def __getattr__(name: str) -> object:
    # AGENT_PRESETS, read on first use (the agent files are not read on import)
    if name == "AGENT_PRESETS":
        return presets()
    raise AttributeError(name)


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
