"""``announcer agent [NAME...] [-- COMMAND...]``: talk to ACP agents by ear and keyboard.

Starts one or more Agent Client Protocol agents (Claude Code, Codex, Gemini CLI, goose,
an agent saved in the settings file as ``[producers.NAME] source = "acp:COMMAND"``, or
any command after ``--``) in the current folder. What they say goes through the same
engine as every other source; their permission requests are questions you answer with
a key; a message you type with no question open is sent to an agent. With several
agents, ``@NAME message`` picks the agent and ``:to NAME`` switches. In the full-screen
UI (``--ui tui``) Escape stops the turn and ``/`` lists slash commands; in the plain UI
``:cancel`` and ``:commands`` do. See docs/agents.md.
"""

from __future__ import annotations

import argparse
import asyncio
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: the source form of an ACP agent, for ``listen`` and saved producers: ``acp:NAME``
#: (a preset) or ``acp:COMMAND ARGS`` (any agent)
ACP_SCHEME = "acp:"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from announcer.config.agents import AGENT_PRESETS

    parser = subparsers.add_parser(
        "agent",
        help="talk to an ACP agent (claude, codex, gemini, goose, or -- COMMAND)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "words",
        nargs=argparse.REMAINDER,
        metavar="NAME... [-- COMMAND...]",
        help=f"presets ({', '.join(AGENT_PRESETS)}) or saved agents, several at once; "
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


def agents_to_start(args: argparse.Namespace, settings: Any) -> list[AgentToStart] | str:
    """Every agent named on the command line, or a sentence saying what is wrong."""
    from announcer.config.agents import AGENT_PRESETS, find_command

    names: list[str] = list(getattr(args, "names", None) or [])
    if not hasattr(args, "names"):
        names = [args.name] if getattr(args, "name", None) else []
    command = list(args.command or [])  # only the first "--" separates; later ones are the agent's
    if len(names) == 1 and not command and not _known(names[0], settings):
        # "agent my-agent": a program on PATH, started as the agent
        program = names[0]
        if find_command(program) is None and not Path(program).exists():
            return (
                f"announcer agent: {program!r} is neither a preset ({', '.join(AGENT_PRESETS)}) "
                "nor a command found on PATH"
            )
        names, command = [], [program]
    if not names and not command:
        names = ["claude"]
    found: list[AgentToStart] = []
    for name in names:
        one = resolve_agent(name, settings)
        if isinstance(one, str):
            return one
        found.append(one)
    if command:
        label = Path(command[0]).name
        found.append(AgentToStart(command, label, label))
    return unique_labels(found)


def _known(name: str, settings: Any) -> bool:
    from announcer.config.agents import AGENT_PRESETS

    return name.casefold() in AGENT_PRESETS or _saved_acp(name, settings) is not None


def _saved_acp(name: str, settings: Any) -> str | None:
    """A saved producer whose source is ``acp:...``: what follows the scheme."""
    if settings is None:
        return None
    from announcer.config import find_producer

    saved = find_producer(settings, name)
    if saved is None or not saved.source.startswith(ACP_SCHEME):
        return None
    return saved.source.removeprefix(ACP_SCHEME)


def resolve_agent(name: str, settings: Any, label: str | None = None) -> AgentToStart | str:
    """A preset, a saved ``acp:`` producer, or (from ``acp:COMMAND``) a command line."""
    from announcer.config.agents import AGENT_PRESETS, find_command

    saved = _saved_acp(name, settings)
    if saved is not None:
        return resolve_agent(saved, None, label or name)
    preset = AGENT_PRESETS.get(name.casefold())
    if preset is not None:
        program = find_command(preset.command[0])
        if program is None:
            return (
                f"announcer agent: {preset.title} is not installed here ({preset.command[0]} is "
                f"not on PATH). Install it with: {preset.install}"
            )
        return AgentToStart([program, *preset.command[1:]], preset.title, label or preset.name)
    try:
        command = shlex.split(name)
    except ValueError as exc:
        return f"announcer: {ACP_SCHEME}{name}: {exc}"
    if not command or (find_command(command[0]) is None and not Path(command[0]).exists()):
        return (
            f"announcer agent: {name!r} is neither a preset ({', '.join(AGENT_PRESETS)}), "
            "nor a saved agent, nor a command found on PATH"
        )
    short = label or Path(command[0]).name
    return AgentToStart(command, short, short)


def unique_labels(found: list[AgentToStart]) -> list[AgentToStart]:
    """Two agents never share a short name: "claude", "claude 2" (what @NAME picks)."""
    seen: dict[str, int] = {}
    unique: list[AgentToStart] = []
    for agent in found:
        key = agent.label.casefold()
        seen[key] = seen.get(key, 0) + 1
        if seen[key] > 1:
            label = f"{agent.label}{seen[key]}"
            agent = AgentToStart(agent.command, label, label)
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
            options=options,
        )
        for agent in agents
    ]


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
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.ERROR,
        stream=sys.stderr,
        format="announcer: %(message)s",
    )
    args.auto_reject = False  # permissions are always asked: never answered for the user
    settings = settings_from_args(args)
    found = agents_to_start(args, settings)
    if isinstance(found, str):
        print(found, file=sys.stderr)
        return 2
    from announcer.transports.base import TransportOptions

    language = catalog_language(settings.languages)
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
