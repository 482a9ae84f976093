"""The ``announcer`` command: registers subcommands lazily and turns errors into sentences.

Each module in ``announcer.cli.commands`` that defines ``register(subparsers)``
adds one subcommand; ``register`` sets ``func`` (args -> exit status) as the
parser default. ``COMMANDS`` names each module with its one-line help, so only
the command being run is imported: ``--help``, ``validate`` and ``hook`` start
without Textual or the engine (a coding agent runs ``announcer hook`` on every
tool call). tests/cli/test_lean_commands.py keeps ``COMMANDS`` true to the modules.
No traceback ever reaches the user: unexpected errors print a one-line
explanation and exit with status 1.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
from collections.abc import Sequence

from announcer import __version__

# With no arguments, the user gets the built-in demo (README's main command).
DEFAULT_ARGV: list[str] = ["demo"]

# command -> (module defining register(subparsers), the help it registers)
COMMANDS: dict[str, tuple[str, str]] = {
    "agent": (
        "announcer.cli.commands.agent",
        "talk to an ACP agent (a preset from --list, a saved agent, or -- COMMAND)",
    ),
    "config": (
        "announcer.cli.commands.config",
        "show or change where and how announcer keeps your settings",
    ),
    "demo": (
        "announcer.cli.commands.demo",
        "hear a live demo agent and answer it (the default command)",
    ),
    "demo-producer": (
        "announcer.cli.commands.demo_producer",
        "run the built-in demo AAEP producer on loopback",
    ),
    "hook": (
        "announcer.cli.commands.hook",
        "coding-agent hook bridge: approve Claude Code and Codex tool calls by keyboard",
    ),
    "listen": ("announcer.cli.commands.listen", "listen to live AAEP producers and answer them"),
    "replay": (
        "announcer.cli.commands.replay",
        "play a recorded AAEP session (JSON Lines) as announcements",
    ),
    "validate": (
        "announcer.cli.commands.validate",
        "check AAEP events, handshake and reply messages",
    ),
    "voices": (
        "announcer.cli.commands.voices",
        "list speech backends with their status and the voice for each language",
    ),
    "watch": ("announcer.cli.commands.watch", "run an agent CLI and announce what it does"),
}


# ``announcer --ui plain`` runs the demo (with_default_command): its options are named
# in the program's own help, where ``./run --help`` shows them (issue 30 item 8). Static
# text, so ``--help`` imports no command; tests/cli checks each exists on ``demo``.
DEMO_EPILOG = """\
With no COMMAND, announcer runs the demo, and the demo's options work without naming it
(announcer --ui plain --language es). The ones most often wanted:
  --ui {tui,plain,none}   the interface: full screen, or plain lines (braille, pipes)
  --language TAGS         languages you understand, most preferred first (yo-NG,en)
  --verbosity {terse,normal,detailed}
                          how much to say
  --speech NAME[:ARG]     where speech goes (auto, speechd, text, jsonl:PATH, ...)
  --pace WPM              words per minute you can follow
  --recorded              replay the recorded session instead of the live demo
All of them: announcer demo --help."""


def chosen_command(argv: Sequence[str]) -> str | None:
    """The subcommand named in ``argv`` (the first word that is not an option), if any."""
    for word in argv:
        if word == "--":
            return None
        if not word.startswith("-"):
            return word if word in COMMANDS else None
    return None


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser; with ``argv``, only the command it names is imported and fully registered."""
    parser = argparse.ArgumentParser(
        prog="announcer",
        description="Hear what an AI agent is doing and answer it from the keyboard.",
        epilog=DEMO_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"announcer {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    words = list(argv) if argv is not None else []
    wanted = chosen_command(words) if argv is not None else None
    # `announcer --help hook` prints the top-level help: it lists every command
    top_help = wanted is not None and any(
        word in ("-h", "--help") for word in words[: words.index(wanted)]
    )
    for name, (module_name, help_text) in COMMANDS.items():
        if argv is None or name == wanted:
            importlib.import_module(module_name).register(subparsers)
        elif wanted is None or top_help:  # for --help and "invalid choice": name and help only
            subparsers.add_parser(name, help=help_text)
    return parser


def with_default_command(words: list[str]) -> list[str]:
    """The demo's options work without naming it: ``announcer --ui plain``,
    ``announcer --language es`` (as plain ``announcer`` runs the demo).

    ``--help`` and ``--version`` stay the program's own; a first word that is not an
    option is left for the parser to refuse ("invalid choice") or run.
    """
    if not words:
        return list(DEFAULT_ARGV)
    if chosen_command(words) is not None or not words[0].startswith("-") or words[0] == "--":
        return words
    if any(word in ("-h", "--help", "--version") for word in words):
        return words
    return [*DEFAULT_ARGV, *words]


def main(argv: Sequence[str] | None = None) -> int:
    args_list = with_default_command(list(sys.argv[1:] if argv is None else argv))
    parser = build_parser(args_list)
    args = parser.parse_args(args_list)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        return 2
    try:
        return int(func(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader of standard output has gone (``announcer demo | head``): end quietly.
        # Python's own flush at exit would fail on the closed pipe and print a traceback.
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as exc:
        with contextlib.suppress(OSError):  # the terminal may be gone (SIGHUP)
            print(f"announcer: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    finally:
        end_started_agents()


def end_started_agents() -> None:
    """Nothing an agent started outlives announcer, however the command ended.

    Only when an agent was started: commands that start none never import the module.
    """
    processes = sys.modules.get("announcer.transports.processes")
    if processes is not None:
        processes.end_all_started()
