"""Issue 22 item 11: the Textual UI under an AAEP flood keeps the connection and the
question sent after the flood is asked and answered: what the producer receives, what the
user sees. (The stall itself, a pong held behind frames our paused reader has not read,
is reproduced in tests/reliability/test_flood_keepalive.py, where a busy engine makes the
reader pause for certain.)"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from announcer.engine.prompts import UserAnswer
from announcer.engine.settings import UserSettings
from announcer.runtime.session import LiveSession
from announcer.speech.driver import SpeechDriver
from announcer.speech.paced import LoopClock, PacedBackend
from announcer.transports import TransportOptions
from announcer.ui.tui.app import AnnouncerApp
from tests.reliability.flood_producer import LoopbackProducer, confirmation, event

TIMEOUT = 180.0
CHUNKS = 4000


async def test_the_textual_ui_keeps_the_connection_and_the_question_after_a_flood() -> None:
    async def script(producer: LoopbackProducer, websocket: Any) -> None:
        await producer.send(websocket, event(0, "agent.session.started", summary_normal="Go."))
        for n in range(1, CHUNKS + 1):
            await producer.send(
                websocket,
                event(
                    n,
                    "agent.output.streaming",
                    chunk=f"Line {n} of the report. ",
                    position=0,
                    complete=False,
                    output_id="out_tui",
                ),
            )
        await producer.send(websocket, confirmation(CHUNKS + 1, "rpl_tuiflood"))
        await producer.wait_for_message("confirmation.reply", TIMEOUT)

    settings = UserSettings(pace_wpm=600)
    async with LoopbackProducer(script) as producer:
        backend = PacedBackend(LoopClock(asyncio.get_running_loop()), rate_wpm=600)
        session = LiveSession(
            [producer.url],
            settings,
            # a ping every 5 s, 5 s for its pong: this test is about the question after the
            # flood, not the pong (test_flood_keepalive); a 1 s pong was lost to a loaded CPU
            TransportOptions(stall_seconds=10.0),
            driver=SpeechDriver(backend),
        )
        app = AnnouncerApp(session)
        runner: asyncio.Future[int] | None = None

        async def until(pilot: Any, condition: Callable[[], bool], what: str) -> None:
            deadline = asyncio.get_running_loop().time() + TIMEOUT
            while not condition():
                assert asyncio.get_running_loop().time() < deadline, f"gave up on {what}"
                await pilot.pause(0.05)

        try:
            async with app.run_test() as pilot:
                runner = asyncio.ensure_future(session.run())
                await until(pilot, lambda: "rpl_tuiflood" in app.prompts, "the question")
                outcome = await session.answer_async(UserAnswer("rpl_tuiflood", decision="reject"))
                assert outcome.sent, outcome.message
                reply = await producer.wait_for_message("confirmation.reply", 30)
                await until(pilot, lambda: "rpl_tuiflood" not in app.prompts, "the dialog to close")
                await pilot.pause(0.2)
                shown = list(app.main_screen.transcript.entries)
        finally:
            session.stop()
            if runner is not None:
                await asyncio.wait_for(asyncio.shield(runner), 30)
    assert reply["reply_token"] == "rpl_tuiflood" and reply["decision"] == "reject"
    assert not any("lost" in line or "stalled" in line for line in shown), shown[-5:]
