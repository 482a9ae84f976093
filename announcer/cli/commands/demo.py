"""``announcer demo``: hear the bundled banking session (also what ``announcer`` runs).

For now the demo replays a recorded session to the console through the real engine;
a later version runs a live demo producer with speech and the Textual UI.
"""

from __future__ import annotations

import argparse
import sys
from importlib import resources

from announcer.cli.commands.replay import add_replay_options, replay, report_problems

DEMO_SESSION = "banking_session.jsonl"


def demo_lines() -> list[str]:
    text = resources.files("announcer.data").joinpath(DEMO_SESSION).read_text(encoding="utf-8")
    return text.splitlines()


def run(args: argparse.Namespace) -> int:
    if args.speed is not None and args.speed <= 0:
        print("announcer demo: --speed: must be greater than 0", file=sys.stderr)
        return 2
    engine = replay(demo_lines(), args, sys.stdout)
    report_problems(engine, DEMO_SESSION)
    return 0


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "demo",
        help="replay the bundled banking session (the default command)",
        description=__doc__,
    )
    add_replay_options(parser, default_speed=2.0)
    parser.set_defaults(func=run)
