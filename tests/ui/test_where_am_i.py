""" "Where am I" tells the session's real state, from a real producer over a WebSocket."""

from __future__ import annotations

import asyncio
import io
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
from tests.support.speech_record import spoken_in as spoken
from tests.support.waiting import until_on_pilot as until

SCENARIO = Path(__file__).parent / "scenarios" / "tui_clarify.json"
TIMEOUT = 60.0


async def test_where_am_i_says_the_agent_waits_for_an_answer_not_idle() -> None:
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
    try:
        async with app.run_test() as pilot:
            runner = asyncio.ensure_future(session.run())
            await until(
                pilot,
                lambda: isinstance(app.screen, ClarifyScreen) and app.screen.focused is not None,
                "the first question",
            )
            await pilot.press("f3")  # where am I, from inside the dialog
            await until(
                pilot, lambda: any("Connection connected" in t for t in spoken(records)), "F3"
            )
            where = next(t for t in spoken(records) if "Connection connected" in t)
            assert "Session waiting for your answer." in where, where
            assert "idle" not in where
            status = str(app.main_screen.status_widget.content)
            assert "waiting for your answer" in status
            session.stop()
            await asyncio.wait_for(runner, TIMEOUT)
    finally:
        session.stop()
        await server.close()
