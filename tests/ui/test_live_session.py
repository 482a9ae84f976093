"""The app on the live runtime: a real producer on loopback, answered with Pilot key presses.

The demo producer runs in the test's loop; ``LiveSession`` connects over a
real WebSocket and runs beside the app on the same loop, as
``announcer listen --ui tui`` does. Each clarification kind is answered from
the keyboard and checked where it matters: at the producer.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import Callable

import pytest

pytest.importorskip("announcer.runtime.session", reason="the live runtime is not on this branch")
pytest.importorskip("announcer.producer.server", reason="the demo producer is not on this branch")

from pathlib import Path

from announcer.engine.settings import UserSettings
from announcer.producer.core import ProducerCore, ProducerOptions
from announcer.producer.scenario import load_scenario
from announcer.producer.server import ProducerServer
from announcer.runtime.session import LiveSession
from announcer.speech.driver import SpeechDriver
from announcer.speech.jsonl import JsonlBackend
from announcer.ui.tui.app import AnnouncerApp
from announcer.ui.tui.modals import ClarifyScreen
from tests.support.producers import ws_url
from tests.support.waiting import until_on_pilot as until

SCENARIO = Path(__file__).parent / "scenarios" / "tui_clarify.json"
TIMEOUT = 60.0


async def test_every_clarification_kind_answered_from_the_keyboard() -> None:
    core = ProducerCore(load_scenario(str(SCENARIO)), ProducerOptions(speed=0.05))
    server = ProducerServer(core, "127.0.0.1", 0, paths="aaep")
    await server.start()
    records = io.StringIO()
    session = LiveSession(
        [ws_url(server)],
        UserSettings(),
        driver=SpeechDriver(JsonlBackend(records)),
    )
    app = AnnouncerApp(session)

    def asking(question: str) -> Callable[[], bool]:
        def check() -> bool:
            screen = app.screen
            return (
                isinstance(screen, ClarifyScreen)
                and screen.view.question == question
                and screen.focused is not None  # ready for keys
                and armed()  # the keys wait until the question was heard (issue 12)
            )

        def armed() -> bool:
            at = app.key_guard.armed_at()
            return at is not None and session.now() >= at

        return check

    try:
        async with app.run_test() as pilot:
            runner = asyncio.ensure_future(session.run())
            await until(pilot, asking("What name should the booking use?"), "the name question")
            await pilot.press(*"Ada [b]Lovelace[/b]", "enter")
            await until(pilot, asking("Include breakfast?"), "the yes/no question")
            await pilot.press("y")
            await until(pilot, asking("Which room?"), "the choice")
            await pilot.press("2", "enter")
            await until(pilot, asking("How many nights?"), "the number question")
            await pilot.press("x", "3", "enter")
            await until(pilot, lambda: len(core.replies) == 4, "four replies at the producer")
            assert [r.response for r in core.replies] == ["Ada [b]Lovelace[/b]", True, "double", 3]
            assert all(r.type == "clarification.reply" for r in core.replies)
            transcript = app.main_screen.transcript
            await until(pilot, lambda: any("Nights: 3" in x for x in transcript.entries), "output")
            assert any(
                "Only a number is accepted here" in line for line in records.getvalue().splitlines()
            )
            session.stop()
            await asyncio.wait_for(runner, TIMEOUT)
    finally:
        session.stop()
        await server.close()
