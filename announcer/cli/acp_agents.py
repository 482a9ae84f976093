"""Which ACP agents to start, for ``announcer agent`` and ``listen acp:NAME``: a preset,
an agent saved in the settings file, or a command line, here or over ssh; and one ACP
transport for each.

Shared by both commands, which never import each other (pyproject.toml's
import-linter contract "Commands are independent of each other").
"""

from __future__ import annotations

import os
import shlex
import shutil
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any


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


#: the source form of an ACP agent, for ``listen`` and saved producers: ``acp:NAME``
#: (a preset) or ``acp:COMMAND ARGS`` (any agent)
ACP_SCHEME = "acp:"


@dataclass(frozen=True, slots=True)
class AgentToStart:
    """One agent of the run: its command line, its name, and the short name typed after @."""

    command: list[str]
    name: str
    label: str
    #: the environment to start it with (None: announcer's own); a preset's asking settings
    env: dict[str, str] | None = None
    #: ``session/set_config_option`` values (option id -> value) and the ``session/set_mode``
    #: fallback that keep a preset's agent asking before it acts, set once the session opens
    config_options: tuple[tuple[str, str | bool], ...] = ()
    mode: str | None = None
    #: started on another machine (``--ssh``): its terminal login is said, not run here
    remote: bool = False
    #: a registry agent with no preset of ours: its title, for "No preset for ..." said
    #: once its session is open (it runs in whatever mode it starts in)
    no_preset: str | None = None

    def start_settings(self) -> dict[str, str | bool]:
        """What to set once its session is open, by config option id (``mode`` also names
        the ``session/set_mode`` fallback): the preset's config options, else its mode."""
        settings: dict[str, str | bool] = dict(self.config_options)
        if self.mode is not None:
            settings.setdefault("mode", self.mode)
        return settings


class MissingAgent(str):
    """A preset whose command is not installed: the sentence printed, with what to say.

    A ``str`` so that every caller that prints what is wrong prints this too; ``agent``
    also says it aloud (``say_missing`` in cli/commands/agent.py).
    """

    agent_title: str  # not ``title``: that is str's own method
    install: str

    def __new__(cls, title: str, program: str, install: str) -> MissingAgent:
        sentence = (
            f"announcer agent: {title} is not installed here ({program} is not on PATH). "
            f"Install it with: {install}"
        )
        made = super().__new__(cls, sentence)
        made.agent_title = title
        made.install = install
        return made


def saved_acp(name: str, settings: Any) -> str | None:
    """A saved producer whose source is ``acp:...``: what follows the scheme."""
    if settings is None:
        return None
    from announcer.config import find_producer

    saved = find_producer(settings, name)
    if saved is None or not saved.source.startswith(ACP_SCHEME):
        return None
    return saved.source.removeprefix(ACP_SCHEME)


#: the prefix of a remote agent in the settings file: ``source = "acp:ssh:HOST NAME"``
SSH_SCHEME = "ssh:"
#: the ssh program, with any options, from the environment (like git's GIT_SSH_COMMAND)
SSH_COMMAND_VARIABLE = "ANNOUNCER_SSH_COMMAND"


def ssh_command(
    host: str,
    words: list[str],
    env: dict[str, str] | None = None,
    *,
    missing: str | None = None,
) -> list[str]:
    """``ssh -T HOST 'COMMAND'``: the agent's command line run on ``host``, ACP on its stdio.

    The remote shell reads one string, so every word (and each ``NAME=value`` the agent
    needs, through ``env``) is quoted for it. ``missing``: what the host says on standard
    error when the program is not installed there (heard as the agent's last words).
    ``BatchMode``: a password prompt would fight the interface for the terminal, so a host
    that needs one fails with ssh's own reason.
    """
    assignments = [f"{key}={value}" for key, value in (env or {}).items()]
    command = ["env", *assignments, *words] if assignments else list(words)
    if missing is not None:
        # POSIX sh on the host, whatever the login shell: the sentence and the program
        # are arguments, never part of the script, so nothing in them is run
        check = (
            'm=$1; p=$2; shift 2; command -v "$p" >/dev/null 2>&1 '
            '|| { printf \'%s\\n\' "$m" >&2; exit 127; }; exec "$@"'
        )
        command = ["sh", "-c", check, "sh", missing, words[0], *command]
    ssh = shlex.split(os.environ.get(SSH_COMMAND_VARIABLE) or "ssh")
    return [*ssh, "-T", "-o", "BatchMode=yes", "--", host, shlex.join(command)]


def resolve_agent(
    name: str,
    settings: Any,
    label: str | None = None,
    *,
    host: str | None = None,
    language: str = "en",
) -> AgentToStart | str:
    """A preset, a saved ``acp:`` producer, or (from ``acp:COMMAND``) a command line.

    ``host``: start it there over ssh (``--ssh HOST``, or ``acp:ssh:HOST NAME`` saved);
    ``language``: of what the host says when a preset is not installed there.
    """
    from announcer.agents.catalogue import find_preset, presets
    from announcer.i18n.translate import translator

    saved = saved_acp(name, settings)
    if saved is not None:
        return resolve_agent(saved, None, label or name, host=host, language=language)
    if name.startswith(SSH_SCHEME):
        remote_host, _, rest = name.removeprefix(SSH_SCHEME).partition(" ")
        if not remote_host or not rest.strip():
            return f"announcer: {ACP_SCHEME}{name}: give a host and an agent, ssh:HOST NAME"
        return resolve_agent(rest.strip(), None, label, host=remote_host, language=language)
    preset = find_preset(name)
    if preset is not None and host is not None:
        missing = (
            translator(language)
            .gettext("{title} is not installed on {host}. Install it there with: {install}")
            .format(title=preset.title, host=host, install=preset.install)
        )
        return AgentToStart(
            ssh_command(host, preset.launch_command(), preset.start_env({}), missing=missing),
            preset.title,
            label or preset.id,
            config_options=tuple(preset.ask.config.items()),
            mode=preset.ask.mode,
            remote=True,
        )
    if preset is not None:
        program = find_command(preset.command[0])
        if program is None:
            return MissingAgent(preset.title, preset.command[0], preset.install)
        return AgentToStart(
            preset.launch_command(program),
            preset.title,
            label or preset.id,
            env=preset.launch_env(),
            config_options=tuple(preset.ask.config.items()),
            mode=preset.ask.mode,
        )
    try:
        command = shlex.split(name)
    except ValueError as exc:
        return f"announcer: {ACP_SCHEME}{name}: {exc}"
    if command and host is not None:
        return command_to_start(command, host=host, label=label)
    if not command or (find_command(command[0]) is None and not Path(command[0]).exists()):
        return (
            f"announcer agent: {name!r} is neither a preset ({', '.join(presets())}), "
            "nor a saved agent, nor a command found on PATH"
        )
    return command_to_start(command, label=label)


def command_to_start(
    command: list[str], *, host: str | None = None, label: str | None = None
) -> AgentToStart:
    """An agent given as a command line, started as written; when it is a preset's own
    program (``codex-acp``, ``gemini --acp``), with that preset's asking settings too,
    unless the command line or the environment already picks them (issue 21, item 3:
    started as a command, codex-acp 2.6.0 ran in Auto review, its reviewer deciding)."""
    from announcer.agents.catalogue import preset_for_command

    short = label or Path(command[0]).name
    preset = preset_for_command(command)
    remote = host is not None
    if preset is None or preset.chooses_asking(command, os.environ):
        return AgentToStart(
            ssh_command(host, command) if host else command, short, short, remote=remote
        )
    words = [*command, *preset.ask.args, *preset.quiet_args(command)]
    return AgentToStart(
        ssh_command(host, words, preset.start_env({})) if host else words,
        short,
        short,
        env=None if host else preset.launch_env(),
        config_options=tuple(preset.ask.config.items()),
        mode=preset.ask.mode,
        remote=remote,
    )


def unique_labels(found: list[AgentToStart]) -> list[AgentToStart]:
    """Two agents never share a short name: "claude", "claude 2" (what @NAME picks)."""
    seen: dict[str, int] = {}
    unique: list[AgentToStart] = []
    for agent in found:
        key = agent.label.casefold()
        seen[key] = seen.get(key, 0) + 1
        if seen[key] > 1:
            label = f"{agent.label}{seen[key]}"
            agent = replace(agent, name=label, label=label)
        unique.append(agent)
    return unique


def acp_transports(
    agents: list[AgentToStart],
    *,
    cwd: Path | None,
    language: str,
    named: bool,
    options: Any = None,
) -> list[Any]:
    """One transport per agent. ``named``: several sources, so each goes by its short name."""
    from announcer.transports.acp import AcpTransport

    return [
        AcpTransport(
            agent.command,
            name=agent.name,
            label=agent.label if named else None,
            cwd=str(cwd) if cwd else None,
            language=language,
            env=agent.env,
            options=options,
            # the preset's asking settings, set once its session is open (issue 21, item 3)
            start_settings=agent.start_settings(),
            local=not agent.remote,
            no_preset=agent.no_preset,
        )
        for agent in agents
    ]


def registry_agent(launch_or_refusal: Any, label: str | None, language: str) -> AgentToStart | str:
    """A registry agent's :class:`Launch` as an agent to start, or the sentence that says
    why it is not started (a :class:`Refusal`: quarantined, only an archive, ...).

    It has no preset of ours, so nothing is set to make it ask: it runs in the mode it
    starts in, and the user is told so once its session is open (``no_preset``).
    """
    from announcer.formats.acp_registry import Refusal
    from announcer.i18n.translate import translator

    _ = translator(language).gettext
    if isinstance(launch_or_refusal, Refusal):
        agent = launch_or_refusal.agent
        detail = launch_or_refusal.detail
        sentences = {
            "quarantined": _("{name} is quarantined in the registry ({reason}); not started."),
            "download": _(
                "{name} comes only as an archive ({archive}); announcer downloads it only "
                "when asked: add --download."
            ),
            "no_sha256": _(
                "{name}: the registry gives no sha256 for its archive, so announcer will "
                "not download it."
            ),
            "no_runner": _(
                "{name} needs npx (Node.js) or uvx (uv), and neither is on PATH "
                "(it offers: {kinds})."
            ),
        }
        said = sentences[launch_or_refusal.reason].format(
            name=agent.name,
            reason=detail or _("no reason given"),
            archive=detail,
            kinds=detail,
        )
        return f"announcer agent: {said}"
    agent = launch_or_refusal.agent
    env = {**os.environ, **launch_or_refusal.env} if launch_or_refusal.env else None
    return AgentToStart(
        list(launch_or_refusal.command),
        agent.name,
        label or agent.id,
        env=env,
        no_preset=agent.name,
    )
