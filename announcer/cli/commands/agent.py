"""``announcer agent [NAME] [-- COMMAND...]``: talk to an ACP agent by ear and keyboard.

Starts an Agent Client Protocol agent (Claude Code, Codex, Gemini CLI, goose, or any
command after ``--``) in the current folder. What it says goes through the same engine
as every other source; its permission requests are questions you answer with a key;
a message you type with no question open is sent to the agent. In the full-screen UI
Escape stops its turn and ``/`` lists its slash commands; in the plain UI ``:cancel`` and
``:commands`` do. See docs/agents.md.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from announcer.cli.commands.listen import default_ui, ui_choices
    from announcer.config import add_settings_flags
    from announcer.config.agents import AGENT_PRESETS

    parser = subparsers.add_parser(
        "agent",
        help="talk to an ACP agent (claude, codex, gemini, goose, or -- COMMAND)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "name",
        nargs="?",
        metavar="NAME",
        help=f"a preset: {', '.join(AGENT_PRESETS)}; or give the command after --",
    )
    parser.add_argument(
        "command", nargs=argparse.REMAINDER, metavar="-- COMMAND", help="any ACP agent command"
    )
    parser.add_argument("--cwd", type=Path, default=None, help="the folder the agent works in")
    parser.add_argument(
        "--ui",
        choices=ui_choices(),
        default=default_ui(),
        help="tui (full screen with a message box, the default on an interactive terminal), "
        "plain (type messages and answers as lines) or none (listen only)",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log diagnostics to stderr")
    add_settings_flags(parser)
    parser.set_defaults(func=run)


def agent_command(args: argparse.Namespace) -> tuple[list[str], str] | str:
    """The command line and the agent's name, or a sentence saying what is wrong."""
    from announcer.config.agents import AGENT_PRESETS, find_command

    command = [c for c in (args.command or []) if c != "--"]
    if args.name and args.name not in AGENT_PRESETS:
        # "agent -- my-agent --flag" (argparse takes the program as NAME) or "agent my-agent"
        command, args.name = [args.name, *command], None
        if find_command(command[0]) is None and not Path(command[0]).exists():
            return (
                f"announcer agent: {command[0]!r} is neither a preset ({', '.join(AGENT_PRESETS)}) "
                "nor a command found on PATH"
            )
    if command:
        return command, args.name or Path(command[0]).name
    preset = AGENT_PRESETS.get(args.name or "claude")
    assert preset is not None
    found = find_command(preset.command[0])
    if found is None:
        return (
            f"announcer agent: {preset.title} is not installed here ({preset.command[0]} is not "
            f"on PATH). Install it with: {preset.install}"
        )
    return [found, *preset.command[1:]], preset.title


def run(args: argparse.Namespace) -> int:
    import logging

    from announcer.cli.commands.listen import make_driver, run_session, settings_from_args
    from announcer.i18n.translate import catalog_language
    from announcer.runtime.session import LiveSession
    from announcer.transports import TransportError
    from announcer.transports.acp import AcpTransport

    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.ERROR,
        stream=sys.stderr,
        format="announcer: %(message)s",
    )
    resolved = agent_command(args)
    if isinstance(resolved, str):
        print(resolved, file=sys.stderr)
        return 2
    command, name = resolved
    args.auto_reject = False  # permissions are always asked: never answered for the user
    settings = settings_from_args(args)
    transport = AcpTransport(
        command,
        name=name,
        cwd=str(args.cwd) if args.cwd else None,
        language=catalog_language(settings.languages),
    )
    driver = make_driver(settings.backend, settings, ui=args.ui)
    session = LiveSession([], settings, transports=[transport], driver=driver)
    if args.ui == "plain":
        print(
            f"announcer agent: starting {name}. Type a message and press Enter; "
            ":cancel stops its turn, :help lists commands, Ctrl-C quits.",
            flush=True,
        )
    try:
        return asyncio.run(run_session(session, args.ui, config=args.config))
    except TransportError as exc:
        print(f"announcer agent: {exc}", file=sys.stderr)
        return 2
