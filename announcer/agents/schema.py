"""What an agent file (announcer/agents/*.toml) may say, validated with pydantic.

Every field is data some layer reads: the ACP command and how to make it ask
(``announcer agent``), its quiet mode, its own CLI program and stream (``announcer
watch``, formats/detect.py, the stream adapters), its hooks (``announcer hook``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

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


class FirstLine(_Strict):
    """How a stream's first JSON line shows which agent prints it (``announcer watch``
    when the command does not say): its ``type`` is one of ``type``, each of ``equals``
    has that value, and at least one of ``has_any`` is a key (when any are given)."""

    type: tuple[str, ...] = Field(min_length=1)
    equals: dict[str, str] = Field(default_factory=dict)
    has_any: tuple[str, ...] = ()

    def matches(self, line: Mapping[str, object]) -> bool:
        if line.get("type") not in self.type:
            return False
        if any(line.get(key) != value for key, value in self.equals.items()):
            return False
        return not self.has_any or any(key in line for key in self.has_any)


class AgentHooks(_Strict):
    """The agent's hooks, answered by ``announcer hook NAME`` (docs/hooks.md).

    ``name`` is one of the agent's names and the name of its mapping file
    (announcer/formats/mappings/NAME.yaml); ``blocking`` are the hooks that wait for the
    user; ``hold_pre_tool_use`` when its PreToolUse cannot ask, so "running" waits to hear
    whether a PermissionRequest follows.
    """

    name: str = Field(min_length=1)
    blocking: tuple[str, ...] = ()
    hold_pre_tool_use: bool = False


class AgentCli(_Strict):
    """The agent's own command-line program, for ``announcer watch`` and ``announcer hook``.

    ``programs`` and ``packages`` are what a command line starts it by (also through npx,
    node or env); ``stream_format`` is the ``--format`` name of its JSON Lines stream and
    of its adapter in announcer/formats/cli_streams/, ``json_args`` what makes it print
    that stream, ``first_line`` how the stream's first line shows it, and ``agent_id`` the
    id its events carry (``stream_format`` unless given).
    """

    programs: tuple[str, ...] = Field(min_length=1)
    packages: tuple[str, ...] = ()
    stream_format: str = Field(min_length=1)
    json_args: tuple[str, ...] = ()
    first_line: FirstLine
    agent_id: str | None = None
    hooks: AgentHooks | None = None

    @property
    def stream_agent_id(self) -> str:
        """The ``producer.agent_id`` of the stream's events (``gemini-cli``)."""
        return self.agent_id or self.stream_format


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
