"""``announcer agent [NAME...] [-- COMMAND...]``: talk to ACP agents by ear and keyboard.

Starts one or more Agent Client Protocol agents (a preset such as claude, codex, gemini,
goose, opencode or qwen; ``--list`` names them all with whether each is installed and
how to install it; an agent saved in the settings file as ``[producers.NAME] source =
"acp:COMMAND"``; or any command after ``--``) in the current folder. Each preset starts
its agent in a mode where it asks before it edits or runs anything. What they say goes
through the same engine as every other source; their permission requests are questions
you answer with a key; a message you type with no question open is sent to an agent.
With several agents, ``@NAME message`` picks the agent and ``:to NAME`` switches. In the
full-screen UI (``--ui tui``) Escape stops the turn and ``/`` lists slash commands; in
the plain UI ``:cancel`` and ``:commands`` do. See docs/agents.md.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shlex
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

#: the source form of an ACP agent, for ``listen`` and saved producers: ``acp:NAME``
#: (a preset) or ``acp:COMMAND ARGS`` (any agent)
ACP_SCHEME = "acp:"


#: the one-line help, here and in announcer/cli/main.py's command table
HELP = "talk to an ACP agent (a preset from --list, a saved agent, or -- COMMAND)"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from announcer.config.agents import presets

    parser = subparsers.add_parser(
        "agent",
        help=HELP,
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "words",
        nargs=argparse.REMAINDER,
        metavar="NAME... [-- COMMAND...]",
        help=f"presets ({', '.join(presets())}) or saved agents, several at once; "
        "and/or one command after --",
    )
    _add_options(parser)
    parser.set_defaults(func=run)


def _add_options(parser: argparse.ArgumentParser) -> None:
    from announcer.cli.commands.listen import default_ui, ui_choices
    from announcer.config import add_settings_flags

    parser.add_argument("--cwd", type=Path, default=None, help="the folder the agents work in")
    parser.add_argument(
        "--ui",
        choices=ui_choices(),
        default=default_ui(),
        help="tui (full screen with a message box, the default on an interactive terminal), "
        "plain (type messages and answers as lines) or none (listen only)",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log diagnostics to stderr")
    parser.add_argument(
        "--ssh",
        metavar="HOST",
        default=None,
        help="start the agents on HOST over 'ssh -T' (ACP on its standard input and output); "
        "speech and keys stay here. $ANNOUNCER_SSH_COMMAND is the ssh program and its options",
    )
    parser.add_argument(
        "--list",
        dest="list_presets",
        action="store_true",
        help="list the presets: whether each is installed here, and the command that installs it",
    )
    add_settings_flags(parser)


def split_words(args: argparse.Namespace) -> None:
    """``NAME... [options] [-- COMMAND...]`` into ``args.names`` and ``args.command``.

    argparse's REMAINDER keeps everything after the first NAME, options included, so the
    part before ``--`` is read again for its options (``agent codex --cwd DIR``); values
    already read keep theirs, since argparse only fills in defaults that are missing.
    """
    words = list(getattr(args, "words", None) or [])
    head, tail = (
        (words[: words.index("--")], words[words.index("--") + 1 :])
        if "--" in words
        else (words, [])
    )
    again = argparse.ArgumentParser(
        prog="announcer agent",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    again.add_argument("names", nargs="*", metavar="NAME", help="presets or saved agents")
    _add_options(again)
    again.parse_args(head, namespace=args)
    args.command = tail


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
    also says it aloud (:func:`say_missing`).
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


def agents_to_start(args: argparse.Namespace, settings: Any) -> list[AgentToStart] | str:
    """Every agent named on the command line, or a sentence saying what is wrong."""
    from announcer.config.agents import DEFAULT_AGENT, find_command, presets

    names: list[str] = list(getattr(args, "names", None) or [])
    if not hasattr(args, "names"):
        names = [args.name] if getattr(args, "name", None) else []
    command = list(args.command or [])  # only the first "--" separates; later ones are the agent's
    host = getattr(args, "ssh", None)
    if len(names) == 1 and not command and not _known(names[0], settings) and host is None:
        # "agent my-agent": a program on PATH, started as the agent
        program = names[0]
        if find_command(program) is None and not Path(program).exists():
            return (
                f"announcer agent: {program!r} is neither a preset ({', '.join(presets())}) "
                "nor a command found on PATH"
            )
        names, command = [], [program]
    if not names and not command:
        names = [DEFAULT_AGENT]
    found: list[AgentToStart] = []
    language = _language(settings)
    for name in names:
        one = resolve_agent(name, settings, host=host, language=language)
        if isinstance(one, str):
            return one
        found.append(one)
    if command:
        found.append(command_to_start(command, host=host))
    return unique_labels(found)


def command_to_start(
    command: list[str], *, host: str | None = None, label: str | None = None
) -> AgentToStart:
    """An agent given as a command line, started as written; when it is a preset's own
    program (``codex-acp``, ``gemini --acp``), with that preset's asking settings too,
    unless the command line or the environment already picks them (issue 21, item 3:
    started as a command, codex-acp 2.6.0 ran in Auto review, its reviewer deciding)."""
    from announcer.config.agents import preset_for_command

    short = label or Path(command[0]).name
    preset = preset_for_command(command)
    remote = host is not None
    if preset is None or preset.chooses_asking(command, os.environ):
        return AgentToStart(
            ssh_command(host, command) if host else command, short, short, remote=remote
        )
    words = [*command, *preset.ask.args]
    return AgentToStart(
        ssh_command(host, words, preset.ask.env) if host else words,
        short,
        short,
        env=None if host else preset.launch_env(),
        config_options=tuple(preset.ask.config.items()),
        mode=preset.ask.mode,
        remote=remote,
    )


def _language(settings: Any) -> str:
    """The catalog language of the user's settings (English without settings)."""
    if settings is None:
        return "en"
    from announcer.i18n.translate import catalog_language

    return catalog_language(settings.languages)


def _known(name: str, settings: Any) -> bool:
    from announcer.config.agents import find_preset

    return find_preset(name) is not None or _saved_acp(name, settings) is not None


def _saved_acp(name: str, settings: Any) -> str | None:
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
    from announcer.config.agents import find_command, find_preset, presets
    from announcer.i18n.translate import translator

    saved = _saved_acp(name, settings)
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
            ssh_command(host, preset.launch_command(), preset.ask.env, missing=missing),
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
        )
        for agent in agents
    ]


def preset_lines(language: str) -> list[str]:
    """``agent --list``: each preset, whether it is installed here, and how it asks.

    One line per preset: its name, title and command, then either where it is found or
    the exact command that installs the pinned version.
    """
    from announcer.config.agents import find_command, presets
    from announcer.i18n.translate import translator

    _ = translator(language).gettext
    lines = []
    for preset in presets().values():
        found = find_command(preset.command[0])
        state = (
            _("installed: {path}").format(path=found)
            if found
            else _("not installed; install it with: {install}").format(install=preset.install)
        )
        command = shlex.join(preset.launch_command())
        lines.append(f"{preset.id} ({preset.title}, {command}): {state}. {preset.ask.says}")
    return lines


def say_missing(missing: MissingAgent, settings: Any, ui: str, language: str) -> None:
    """Say that a preset is not installed, and its install command, and wait until it is said.

    Bounded: a backend that never reports the end is left after the time the sentence
    takes at a slow rate, plus a margin.
    """
    import contextlib
    import time

    from announcer.cli.commands.listen import make_driver
    from announcer.engine.announcement import Announcement, Urgency
    from announcer.engine.speech_commands import Speak
    from announcer.i18n.translate import translator
    from announcer.speech.backend import speaking_seconds

    text = (
        translator(language)
        .gettext("{title} is not installed. Install it with: {install}")
        .format(title=missing.agent_title, install=missing.install)
    )
    try:
        driver = make_driver(settings.backend, settings, ui=ui)
    except SystemExit:
        return  # no speech here: the sentence is printed
    if driver is None:
        return
    announcement = Announcement(
        text, language, Urgency.CRITICAL, kind="system.agent", earcon="errored"
    )
    driver.execute([Speak(1, announcement)])
    deadline = time.monotonic() + speaking_seconds(text, 120) + 5.0
    while not driver.take_completed() and time.monotonic() < deadline:
        time.sleep(0.05)  # the backend reports the end from its own thread
    with contextlib.suppress(Exception):  # closing speech must not hide the message
        driver.backend.close()


def run(args: argparse.Namespace) -> int:
    import logging

    from announcer.cli.commands.listen import (
        make_driver,
        run_session,
        settings_from_args,
        speech_switcher,
    )
    from announcer.i18n.translate import catalog_language, translator
    from announcer.runtime.session import LiveSession
    from announcer.transports import TransportError

    split_words(args)
    from announcer.transports.processes import become_subreaper

    become_subreaper()  # a command an agent leaves behind stays ours to find and end
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.ERROR,
        stream=sys.stderr,
        format="announcer: %(message)s",
    )
    args.auto_reject = False  # permissions are always asked: never answered for the user
    settings = settings_from_args(args)
    language = catalog_language(settings.languages)
    if args.list_presets:
        print("\n".join(preset_lines(language)))
        return 0
    found = agents_to_start(args, settings)
    if isinstance(found, str):
        print(found, file=sys.stderr, flush=True)
        if isinstance(found, MissingAgent):
            say_missing(found, settings, args.ui, language)
        return 2
    from announcer.transports.base import TransportOptions

    options = TransportOptions()  # the agents' drops are counted where :diagnostics reads
    transports = acp_transports(
        found, cwd=args.cwd, language=language, named=len(found) > 1, options=options
    )
    driver = make_driver(settings.backend, settings, ui=args.ui)
    session = LiveSession(
        [],
        settings,
        transports=transports,
        options=options,
        driver=driver,
        backend_factory=speech_switcher(args.ui, driver),
    )
    if args.ui == "plain":
        if len(found) == 1:
            print(
                f"announcer agent: starting {found[0].name}. Type a message and press Enter; "
                ":cancel stops its turn, :help lists commands, Ctrl-C quits.",
                flush=True,
            )
        else:
            names = ", ".join(agent.label for agent in found)
            print(
                translator(language)
                .gettext(
                    "announcer agent: starting {names}. Type @ and a name, then your message "
                    "(@{first} hello); :to NAME switches, :help lists commands, Ctrl-C quits."
                )
                .format(names=names, first=found[0].label),
                flush=True,
            )
    try:
        return asyncio.run(run_session(session, args.ui, config=args.config))
    except TransportError as exc:
        print(f"announcer agent: {exc}", file=sys.stderr)
        return 2
    finally:
        for transport in transports:
            transport.kill_now()  # each agent's process group ends with announcer
