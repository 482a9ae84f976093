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
import shlex
import sys
from pathlib import Path
from typing import Any

from announcer.cli.acp_agents import (
    AgentToStart,
    MissingAgent,
    acp_transports,
    command_to_start,
    find_command,
    registry_agent,
    resolve_agent,
    saved_acp,
    unique_labels,
)

#: the one-line help, here and in announcer/cli/main.py's command table
HELP = "talk to an ACP agent (a preset from --list, a saved agent, or -- COMMAND)"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from announcer.agents.catalogue import presets

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
    from announcer.cli.launch import default_ui, ui_choices
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
        help="list the presets: whether each is installed here, and the command that installs it; "
        "with a registry, its agents too",
    )
    parser.add_argument(
        "--registry",
        metavar="FILE|URL",
        default=None,
        help="an ACP agent registry (registry.json, a folder of agent.json files, or an "
        "https:// address) whose agents --list offers and NAME starts; the setting "
        "agent_registry gives one for every run",
    )
    parser.add_argument(
        "--download",
        action="store_true",
        help="let a registry agent that comes only as an archive be downloaded, and run only "
        "if its sha256 matches the registry's",
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


def agents_to_start(args: argparse.Namespace, settings: Any) -> list[AgentToStart] | str:
    """Every agent named on the command line, or a sentence saying what is wrong."""
    from announcer.agents.catalogue import DEFAULT_AGENT, presets

    names: list[str] = list(getattr(args, "names", None) or [])
    if not hasattr(args, "names"):
        names = [args.name] if getattr(args, "name", None) else []
    command = list(args.command or [])  # only the first "--" separates; later ones are the agent's
    host = getattr(args, "ssh", None)
    registry = _Registry(args, settings)
    if (
        len(names) == 1
        and not command
        and not _known(names[0], settings)
        and host is None
        and registry.find(names[0]) is None
    ):
        # "agent my-agent": a program on PATH, started as the agent
        program = names[0]
        if find_command(program) is None and not Path(program).exists():
            if registry.problem is not None:
                return registry.problem
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
        one = (
            registry.agent_to_start(name, language)
            if host is None and not _known(name, settings) and registry.find(name) is not None
            else resolve_agent(name, settings, host=host, language=language)
        )
        if isinstance(one, str):
            return one
        found.append(one)
    if command:
        found.append(command_to_start(command, host=host))
    return unique_labels(found)


class _Registry:
    """The registry of ``--registry`` or the setting ``agent_registry``, read once when a
    name is not a preset (or for ``--list``); a registry that cannot be read is said
    (``problem``) and offers nothing."""

    def __init__(self, args: argparse.Namespace, settings: Any) -> None:
        self.source: str | None = getattr(args, "registry", None) or (
            getattr(settings, "agent_registry", None) if settings is not None else None
        )
        self.download = bool(getattr(args, "download", False))
        self._read: Any = None
        self.problem: str | None = None

    def read(self) -> Any:
        """The :class:`ReadRegistry`, or None (no registry, or it could not be read)."""
        if self.source is None or self._read is not None or self.problem is not None:
            return self._read
        from announcer.cli.acp_registry import read_registry
        from announcer.formats.acp_registry import RegistryError

        try:
            self._read = read_registry(self.source)
        except RegistryError as exc:
            self.problem = f"announcer agent: registry {exc}"
        return self._read

    def find(self, name: str) -> Any:
        read = self.read()
        return read.registry.find(name) if read is not None else None

    def launch(self, agent: Any) -> Any:
        import platform
        import shutil

        from announcer.formats.acp_registry import choose_launch, platform_key

        return choose_launch(
            agent,
            platform=platform_key(platform.system(), platform.machine()),
            which=shutil.which,
            download=self.download,
            quarantine=self.read().registry.quarantine,
        )

    def agent_to_start(self, name: str, language: str) -> AgentToStart | str:
        from announcer.formats.acp_registry import Launch, RegistryError

        agent = self.find(name)
        chosen = self.launch(agent)
        if isinstance(chosen, Launch) and chosen.how == "download" and chosen.archive:
            from dataclasses import replace

            from announcer.cli.acp_registry import unpacked_program

            try:
                program = unpacked_program(chosen.archive, agent.id, agent.version)
            except RegistryError as exc:
                return f"announcer agent: {agent.name}: {exc}"
            chosen = replace(chosen, command=(str(program), *chosen.command[1:]))
        return registry_agent(chosen, None, language)


def _language(settings: Any) -> str:
    """The catalog language of the user's settings (English without settings)."""
    if settings is None:
        return "en"
    from announcer.i18n.translate import catalog_language

    return catalog_language(settings.languages)


def _known(name: str, settings: Any) -> bool:
    from announcer.agents.catalogue import find_preset

    return find_preset(name) is not None or saved_acp(name, settings) is not None


def preset_lines(language: str) -> list[str]:
    """``agent --list``: each preset, whether it is installed here, and how it asks.

    One line per preset: its name, title and command, then either where it is found or
    the exact command that installs the pinned version.
    """
    from announcer.agents.catalogue import presets
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


def registry_lines(registry: Any, language: str) -> list[str]:
    """``agent --list --registry``: each registry agent, how it would start here (or why
    not), quarantined ones said to be; then each entry that could not be read."""
    from announcer.agents.catalogue import find_preset
    from announcer.formats.acp_registry import Launch
    from announcer.i18n.translate import translator

    _ = translator(language).gettext
    read = registry.read()
    lines = [_("Registry {source}:").format(source=registry.source)]
    if read.cached_age is not None:
        lines[0] += " " + _("(a copy from {minutes} minutes ago)").format(
            minutes=int(read.cached_age // 60)
        )
    for agent in read.registry.agents.values():
        head = f"{agent.id} ({agent.name} {agent.version}, {agent.description})"
        preset = find_preset(agent.id)
        chosen = registry.launch(agent)
        if preset is not None:
            state = _("announcer's preset {preset} starts it asking first").format(preset=preset.id)
        elif isinstance(chosen, Launch):
            state = _("starts with: {command}; no preset: it may act without asking").format(
                command=shlex.join(chosen.command)
            )
        else:
            state = str(registry_agent(chosen, None, language)).removeprefix("announcer agent: ")
        if agent.id in read.registry.quarantine and preset is None:
            state = _("quarantined: {reason}").format(
                reason=read.registry.quarantine[agent.id] or _("no reason given")
            )
        lines.append(f"{head}: {state}")
    lines += [_("Not read: {problem}").format(problem=p) for p in read.registry.problems]
    from announcer.protocol.sanitise import one_line

    return [one_line(line) for line in lines]  # the registry's words, never terminal controls


def say_missing(missing: MissingAgent, settings: Any, ui: str, language: str) -> None:
    """Say that a preset is not installed, and its install command, and wait until it is said.

    Bounded: a backend that never reports the end is left after the time the sentence
    takes at a slow rate, plus a margin.
    """
    import contextlib

    from announcer.cli.launch import make_driver
    from announcer.engine.announcement import Announcement, Urgency
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
    driver.say_and_wait(announcement, speaking_seconds(text, 120) + 5.0)
    with contextlib.suppress(Exception):  # closing speech must not hide the message
        driver.backend.close()


def run(args: argparse.Namespace) -> int:
    import logging

    from announcer.cli.launch import (
        make_driver,
        run_session,
        settings_from_args,
        speech_switcher,
    )
    from announcer.i18n.translate import catalog_language, translator
    from announcer.runtime.session import LiveSession
    from announcer.transports import TransportError

    split_words(args)
    import asyncio

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
        registry = _Registry(args, settings)
        registry.read()
        if registry.problem is not None:
            print(registry.problem, file=sys.stderr)
            return 2
        if registry.source is not None:
            print("\n".join(registry_lines(registry, language)))
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
