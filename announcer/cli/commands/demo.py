"""``announcer demo`` (also what plain ``announcer`` runs): try announcer with no setup.

It starts the built-in demo producer in this process on a free loopback port and
listens to it over a real WebSocket, exactly as ``announcer listen`` would: the
pretend agent plans a trip, asks before it books, asks every kind of question,
hands off and reports an error. ``--recorded`` (or any replay timing option)
replays the bundled banking session through the engine instead, without a network.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from importlib import resources
from pathlib import Path
from typing import Any

from announcer.cli.commands.replay import (
    add_replay_options,
    file_settings,
    replay,
    report_problems,
)
from announcer.cli.commands.replay import settings_from_args as replay_settings
from announcer.cli.launch import (
    default_ui,
    make_driver,
    run_session,
    speech_switcher,
    ui_choices,
)
from announcer.engine.settings import UserSettings
from announcer.producer.core import ProducerCore, ProducerOptions
from announcer.producer.scenario import Scenario, ScenarioError, load_scenario
from announcer.producer.server import ProducerServer
from announcer.runtime.session import LiveSession
from announcer.transports import TransportOptions

DEMO_SESSION = "banking_session.jsonl"
RECORDED_SPEED = 2.0
INTRO = (
    "announcer demo: a pretend agent plans a trip and asks you before it acts. "
    "Answer on the keyboard when asked; type :help for commands, Ctrl-C to stop."
)


def demo_lines() -> list[str]:
    text = resources.files("announcer.data").joinpath(DEMO_SESSION).read_text(encoding="utf-8")
    return text.splitlines()


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "demo",
        help="hear a live demo agent and answer it (the default command)",
        description=__doc__,
    )
    add_replay_options(parser, default_speed=None)
    live = parser.add_argument_group("live demo")
    live.add_argument("--recorded", action="store_true", help="replay the recorded session")
    live.add_argument("--scenario", default="tour", help="demo producer scenario name or file")
    live.add_argument("--ui", choices=ui_choices(), default=default_ui())
    live.add_argument("--auto-reject", action="store_true", help="reject every confirmation")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.speed is not None and args.speed <= 0:
        print("announcer demo: --speed: must be greater than 0", file=sys.stderr)
        return 2
    if args.recorded or args.no_delay or args.speed is not None:
        if args.speed is None:
            args.speed = RECORDED_SPEED
        engine = replay(demo_lines(), args, sys.stdout, file_settings(args))
        report_problems(engine, DEMO_SESSION)
        return 0
    try:
        scenario = load_scenario(args.scenario)
    except ScenarioError as exc:
        print(f"announcer demo: {exc}", file=sys.stderr)
        return 2
    settings = replay_settings(args, file_settings(args))
    if args.auto_reject:
        settings = settings.model_copy(update={"reply_policy": "auto_reject"})
    driver = make_driver(settings.backend, settings, ui=args.ui)
    if args.ui == "plain":
        print(INTRO, flush=True)
    return asyncio.run(_live(scenario, settings, driver, args.ui, getattr(args, "config", None)))


async def _live(
    scenario: Scenario, settings: UserSettings, driver: Any, ui: str, config: Path | None = None
) -> int:
    """Play the demo; when it is over the UI says so, and the user may run it again."""
    plain: Any = None
    if ui == "plain":
        from announcer.ui.plain import PlainUi

        plain = PlainUi()  # one reader of standard input for every run
    while True:
        core = ProducerCore(scenario, ProducerOptions())
        server = ProducerServer(core, "127.0.0.1", 0)
        await server.start()
        try:
            session = LiveSession(
                [f"ws://127.0.0.1:{server.port}/aaep/v1/ws"],
                settings,
                TransportOptions(),
                driver=driver,
                backend_factory=speech_switcher(ui, driver),
                exit_when_done=True,
                # The plain and Textual UIs say "The demo is over" and offer to run it again.
                offer_again=ui in ("plain", "tui"),
            )
            code = await run_session(session, ui, config=config, plain=plain)
        finally:
            await server.close()
        if not session.again_requested:
            return code
        settings = session.settings  # what the user changed meanwhile stays
