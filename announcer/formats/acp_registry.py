"""The ACP agent registry (``agentclientprotocol/registry``), read and chosen from, sans-I/O.

The registry lists ACP agents, each as an ``agent.json`` (id, name, version, description,
and a ``distribution``: an ``npx`` or ``uvx`` package with its arguments and environment,
or per-platform ``binary`` archives), gathered into one ``registry.json``; announcer also
reads a ``quarantine.json`` of agents known to be broken. This module turns their text
into models and chooses how one agent is started; reading files and URLs and the cache
are the adapter's (``announcer/cli/acp_registry.py``).

One malformed entry never hides the others: it is set aside with a sentence naming the
entry, the field and the rule it breaks, and ``agent --list`` says it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from announcer.protocol.sanitise import one_line

#: the platform names the registry's binary archives use
PLATFORMS = (
    "darwin-aarch64",
    "darwin-x86_64",
    "linux-aarch64",
    "linux-x86_64",
    "windows-aarch64",
    "windows-x86_64",
)
_ID = re.compile(r"^[a-z][a-z0-9-]*$")
_VERSION = re.compile(r"^[0-9]+\.[0-9]+\.[0-9]+")
_SHA256 = re.compile(r"^[0-9a-fA-F]{64}$")
#: the most entries read from one registry (a hostile one cannot fill memory)
MAX_ENTRIES = 2000


class RegistryError(ValueError):
    """A registry that cannot be read at all; the message names the source and the rule."""


class _Entry(BaseModel):
    # fields the registry may add later are ignored; those we read are checked
    model_config = ConfigDict(extra="ignore", frozen=True)


def _words(value: tuple[str, ...]) -> tuple[str, ...]:
    if any("\x00" in word for word in value):
        raise ValueError("must not hold a NUL character")
    return value


class PackageDistribution(_Entry):
    """``npx`` or ``uvx``: a package (with an optional version) run with its arguments."""

    package: str = Field(min_length=1, max_length=300)
    args: tuple[str, ...] = ()
    env: dict[str, str] = Field(default_factory=dict)

    @field_validator("package")
    @classmethod
    def _one_word(cls, value: str) -> str:
        if value.startswith("-") or any(c.isspace() or c == "\x00" for c in value):
            raise ValueError("must be one package name, not starting with '-', without spaces")
        return value

    @field_validator("args")
    @classmethod
    def _plain_args(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return _words(value)

    def program(self) -> str:
        """The program the package most likely installs: its name without scope or version
        (``@zed-industries/claude-code-acp@0.16.0`` -> ``claude-code-acp``)."""
        name = self.package
        scoped = name.startswith("@")
        body = name[1:] if scoped else name
        body = re.split(r"@|==|>=|<=|~=|!=|\[", body, maxsplit=1)[0]
        return body.rsplit("/", 1)[-1]


class BinaryTarget(_Entry):
    """One platform's archive: where it is, the command inside it, and optionally its sha256."""

    archive: str = Field(min_length=1)
    cmd: str = Field(min_length=1)
    args: tuple[str, ...] = ()
    env: dict[str, str] = Field(default_factory=dict)
    sha256: str | None = None

    @field_validator("archive")
    @classmethod
    def _https(cls, value: str) -> str:
        if not value.startswith(("https://", "http://")):
            raise ValueError("must be an http(s) address")
        return value

    @field_validator("sha256")
    @classmethod
    def _hex(cls, value: str | None) -> str | None:
        if value is not None and not _SHA256.match(value):
            raise ValueError("must be 64 hexadecimal digits")
        return value.lower() if value else value

    @field_validator("args")
    @classmethod
    def _plain_args(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return _words(value)

    def program(self) -> str:
        """The command's own name (``./opencode.exe`` -> ``opencode``)."""
        name = self.cmd.replace("\\", "/").rsplit("/", 1)[-1]
        return name[:-4] if name.casefold().endswith(".exe") else name


class Distribution(_Entry):
    """How the agent is had: at least one of ``binary``, ``npx``, ``uvx``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    binary: dict[str, BinaryTarget] | None = None
    npx: PackageDistribution | None = None
    uvx: PackageDistribution | None = None

    @field_validator("binary")
    @classmethod
    def _platforms(cls, value: dict[str, BinaryTarget] | None) -> dict[str, BinaryTarget] | None:
        if value is None:
            return None
        if not value:
            raise ValueError("must name at least one platform")
        unknown = sorted(set(value) - set(PLATFORMS))
        if unknown:
            raise ValueError(f"unknown platform {unknown[0]!r}; known: {', '.join(PLATFORMS)}")
        return value

    @model_validator(mode="after")
    def _one_at_least(self) -> Distribution:
        if not self.kinds():
            raise ValueError("must give npx, uvx or binary")
        return self

    def kinds(self) -> list[str]:
        return [k for k in ("npx", "uvx", "binary") if getattr(self, k) is not None]


class RegistryAgent(_Entry):
    """One ``agent.json``."""

    id: str
    name: str = Field(min_length=1, max_length=200)
    version: str
    description: str = Field(min_length=1, max_length=2000)
    repository: str | None = None
    distribution: Distribution

    @field_validator("name", "description")
    @classmethod
    def _printable(cls, value: str) -> str:
        # the registry's words are printed and said: literal, nothing that acts on a terminal
        cleaned = one_line(value)
        if not cleaned:
            raise ValueError("must hold readable text")
        return cleaned

    @field_validator("id")
    @classmethod
    def _lower_id(cls, value: str) -> str:
        if not _ID.match(value) or len(value) > 100:
            raise ValueError("must be lower-case letters, digits and '-', starting with a letter")
        return value

    @field_validator("version")
    @classmethod
    def _semver(cls, value: str) -> str:
        if not _VERSION.match(value) or one_line(value) != value or len(value) > 100:
            raise ValueError(f"must be a version such as 1.2.3, not {value[:40]!r}")
        return value


@dataclass(frozen=True, slots=True)
class Registry:
    """What one registry gave: its agents by id, what was set aside, and the quarantine."""

    source: str
    agents: dict[str, RegistryAgent] = field(default_factory=dict)
    #: one sentence per entry that could not be read (entry, field, rule)
    problems: tuple[str, ...] = ()
    #: quarantined agent id -> the reason given (may be empty)
    quarantine: dict[str, str] = field(default_factory=dict)

    def find(self, name: str) -> RegistryAgent | None:
        """The agent with this id (any case), or None."""
        return self.agents.get(name.casefold())


def _describe(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "(top level)"
    message = str(first["msg"]).removeprefix("Value error, ")
    return f"{where}: {message}"


def _load_json(text: str, source: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as exc:
        raise RegistryError(f"{source}: not valid JSON: {exc}") from None


def parse_registry(text: str, source: str, quarantine: str | None = None) -> Registry:
    """A ``registry.json`` (``{"version", "agents": [...]}``) or one ``agent.json``.

    Raises :class:`RegistryError` only when nothing can be read; a bad entry becomes a
    problem sentence and the rest are kept.
    """
    data = _load_json(text, source)
    if isinstance(data, dict) and "agents" in data:
        entries = data["agents"]
        if not isinstance(entries, list):
            raise RegistryError(f"{source}: agents: must be a list of agents")
        where = "agents"
    elif isinstance(data, dict) and "id" in data:
        entries, where = [data], ""
    else:
        raise RegistryError(
            f'{source}: must be a registry ({{"agents": [...]}}) or one agent ({{"id": ...}})'
        )
    return parse_entries(
        [(f"{where}[{i}]" if where else "", e) for i, e in enumerate(entries)],
        source,
        quarantine,
    )


def parse_entries(
    entries: list[tuple[str, Any]], source: str, quarantine: str | None = None
) -> Registry:
    """Entries as (where, parsed JSON): several ``agent.json`` files, or a registry's list."""
    agents: dict[str, RegistryAgent] = {}
    problems: list[str] = []
    if len(entries) > MAX_ENTRIES:
        problems.append(
            f"{source}: {len(entries) - MAX_ENTRIES} entries past {MAX_ENTRIES} left out"
        )
        entries = entries[:MAX_ENTRIES]
    for where, entry in entries:
        if isinstance(entry, str):  # what reading it said (a file that is not JSON)
            problems.append(f"{source}: {where}: {one_line(entry)[:300]}")
            continue
        named = entry.get("id") if isinstance(entry, dict) else None
        label = f"{where} ({named!r})" if where and isinstance(named, str) else where or repr(named)
        try:
            agent = RegistryAgent.model_validate(entry)
        except ValidationError as exc:
            problems.append(f"{source}: {label}: {_describe(exc)}")
            continue
        except ValueError as exc:
            problems.append(f"{source}: {label}: {exc}")
            continue
        if agent.id in agents:
            problems.append(
                f"{source}: {label}: id: {agent.id!r} is listed twice; the first is kept"
            )
            continue
        agents[agent.id] = agent
    held = parse_quarantine(quarantine, source) if quarantine is not None else ({}, [])
    return Registry(source, agents, tuple(problems + held[1]), held[0])


def parse_quarantine(text: str, source: str) -> tuple[dict[str, str], list[str]]:
    """``quarantine.json``: agent id -> reason, and any problems reading it.

    Read in any of three shapes: ``{"id": "reason"}``, ``["id", ...]``, or
    ``{"agents": [{"id": ..., "reason": ...}]}`` (a list of ids or objects).
    """
    where = f"{source} quarantine"
    try:
        data = json.loads(text)
    except ValueError as exc:
        return {}, [f"{where}: not valid JSON: {exc}"]
    if isinstance(data, dict) and isinstance(data.get("agents"), list):
        data = data["agents"]
    found: dict[str, str] = {}
    problems: list[str] = []
    items: list[tuple[object, object]]
    if isinstance(data, dict):
        items = list(data.items())
    elif isinstance(data, list):
        items = [
            (e.get("id"), e.get("reason", "")) if isinstance(e, dict) else (e, "") for e in data
        ]
    else:
        return {}, [f"{where}: must be a list of ids or an object of id -> reason"]
    for agent_id, reason in items[:MAX_ENTRIES]:
        if not isinstance(agent_id, str) or not _ID.match(agent_id):
            problems.append(f"{where}: id: {agent_id!r} is not an agent id")
            continue
        found[agent_id] = one_line(reason)[:300] if isinstance(reason, str) else ""
    return found, problems


# -- choosing how to start one agent ---------------------------------------------------


@dataclass(frozen=True, slots=True)
class Launch:
    """How to start a registry agent: the command line and what it adds to the environment.

    ``how``: ``path`` (its program is already installed), ``npx``, ``uvx``, or
    ``download`` (its archive, fetched only when asked and checked against ``archive.sha256``;
    ``command`` then names the program inside the unpacked archive).
    """

    agent: RegistryAgent
    how: Literal["path", "npx", "uvx", "download"]
    command: tuple[str, ...]
    env: Mapping[str, str]
    archive: BinaryTarget | None = None


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a registry agent is not started: ``quarantined`` (with the registry's reason),
    ``download`` (only an archive, and no download was asked), ``no_sha256`` (asked, but the
    registry gives no checksum to match), ``no_runner`` (neither its program, npx nor uvx is
    here, and it has no archive for this platform)."""

    agent: RegistryAgent
    reason: Literal["quarantined", "download", "no_sha256", "no_runner"]
    detail: str = ""


def choose_launch(
    agent: RegistryAgent,
    *,
    platform: str,
    which: Callable[[str], str | None],
    download: bool = False,
    quarantine: Mapping[str, str] | None = None,
) -> Launch | Refusal:
    """The one way to start ``agent`` here, or why not.

    A program already on PATH first (the binary's command, or the npx/uvx package's own
    program), with the arguments and environment of the distribution that names it; then
    ``npx --yes PACKAGE ARGS`` or ``uvx PACKAGE ARGS``; an archive only when ``download``
    is asked and the registry gives its sha256. ``which`` finds a program (shutil.which).
    """
    if quarantine and agent.id in quarantine:
        return Refusal(agent, "quarantined", quarantine[agent.id])
    dist = agent.distribution
    target = (dist.binary or {}).get(platform)
    candidates: list[tuple[str, tuple[str, ...], Mapping[str, str]]] = []
    if target is not None:
        candidates.append((target.program(), target.args, target.env))
    for package in (dist.npx, dist.uvx):
        if package is not None:
            candidates.append((package.program(), package.args, package.env))
    for program, args, env in candidates:
        found = which(program)
        if found:
            return Launch(agent, "path", (found, *args), dict(env))
    if dist.npx is not None and (npx := which("npx")):
        return Launch(agent, "npx", (npx, "--yes", dist.npx.package, *dist.npx.args), dist.npx.env)
    if dist.uvx is not None and (uvx := which("uvx")):
        return Launch(agent, "uvx", (uvx, dist.uvx.package, *dist.uvx.args), dist.uvx.env)
    if target is not None:
        if not download:
            return Refusal(agent, "download", target.archive)
        if target.sha256 is None:
            return Refusal(agent, "no_sha256", target.archive)
        return Launch(agent, "download", (target.cmd, *target.args), target.env, target)
    return Refusal(agent, "no_runner", ", ".join(dist.kinds()))


def platform_key(system: str, machine: str) -> str:
    """The registry's name for this platform (``Linux``, ``x86_64`` -> ``linux-x86_64``)."""
    os_name = {"linux": "linux", "darwin": "darwin", "windows": "windows"}.get(
        system.casefold(), system.casefold()
    )
    arch = machine.casefold()
    arch = {"amd64": "x86_64", "x64": "x86_64", "arm64": "aarch64"}.get(arch, arch)
    return f"{os_name}-{arch}"
