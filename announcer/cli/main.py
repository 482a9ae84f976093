"""The ``announcer`` command: discovers subcommands and turns errors into sentences.

Each module in ``announcer.cli.commands`` that defines ``register(subparsers)``
adds one subcommand; ``register`` sets ``func`` (args -> exit status) as the
parser default. No traceback ever reaches the user: unexpected errors print a
one-line explanation and exit with status 1.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Sequence

from announcer import __version__
from announcer.cli import commands

# With no arguments, the user gets the built-in demo (README's main command).
DEFAULT_ARGV: list[str] = ["demo"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="announcer",
        description="Hear what an AI agent is doing and answer it from the keyboard.",
    )
    parser.add_argument("--version", action="version", version=f"announcer {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{commands.__name__}.{info.name}")
        register = getattr(module, "register", None)
        if callable(register):
            register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    if not args_list:
        args_list = list(DEFAULT_ARGV)
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
        return 0
    except Exception as exc:
        print(f"announcer: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
