"""Issue 12 item 1 in the Textual UI on the live runtime: a real producer over WS and SSE.

R1 ("Send 5 dollars to Alice", low risk) is withdrawn by the producer and R2 ("Delete
the production database", irreversible) opens in its place. A key pressed just after
(meant for R1) must not answer R2; once R2 was heard, accepting it takes `a` then Enter.
Checked where it matters: what the producer received and what the user heard (the
jsonl speech record).
"""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import Callable

import pytest

from announcer.engine.settings import UserSettings
from announcer.producer.core import ProducerCore, ProducerOptions
from announcer.producer.scenario import load_scenario
from announcer.producer.server import ProducerServer
from announcer.runtime.session import LiveSession
from announcer.speech.driver import SpeechDriver
from announcer.speech.jsonl import JsonlBackend
from announcer.ui.tui.app import AnnouncerApp
from announcer.ui.tui.modals import ConfirmScreen
from tests.producer.live import scenario_path

TIMEOUT = 60.0
# Wide, so a loaded machine cannot make "just after" late; the user waits it out.
ARMING = 3.0
REPLACED = "Nothing was sent: the question changed just before your key."


async def until(pilot, condition: Callable[[], bool], what: str) -> None:  # type: ignore[no-untyped-def]
    loop = asyncio.get_running_loop()
    deadline = loop.time() + TIMEOUT
    while not condition():
        if loop.time() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        await pilot.pause(0.05)


@pytest.mark.parametrize("transport", ["ws", "sse"])
async def test_a_key_for_the_withdrawn_question_never_accepts_its_replacement(
    transport: str,
) -> None:
    core = ProducerCore(load_scenario(scenario_path("replaced")), ProducerOptions(speed=0.1))
    server = ProducerServer(core, "127.0.0.1", 0, paths="aaep")
    await server.start()
    source = (
        f"ws://127.0.0.1:{server.port}/aaep/v1/ws"
        if transport == "ws"
        else f"http://127.0.0.1:{server.port}"
    )
    records = io.StringIO()
    session = LiveSession(
        [source],
        UserSettings(answer_arming_seconds=ARMING),
        driver=SpeechDriver(JsonlBackend(records)),
    )
    app = AnnouncerApp(session)

    def heard() -> list[str]:
        lines = records.getvalue().splitlines()
        return [json.loads(line)["text"] for line in lines if '"speak"' in line]

    def showing(action: str) -> Callable[[], bool]:
        def check() -> bool:
            screen = app.screen
            return isinstance(screen, ConfirmScreen) and screen.view.action.startswith(action)

        return check

    def armed() -> bool:
        at = app.key_guard.armed_at()
        return at is not None and session.now() >= at

    try:
        async with app.run_test() as pilot:
            runner = asyncio.ensure_future(session.run())
            await until(pilot, showing("Send 5 dollars"), "R1's dialog")
            await until(pilot, showing("Delete the production database"), "R2 in R1's place")
            r2 = app.screen
            assert isinstance(r2, ConfirmScreen)
            await pilot.press("a", "enter")  # meant for R1
            await until(pilot, lambda: any(t.startswith(REPLACED) for t in heard()), "refusal")
            assert core.replies == []  # the producer received nothing
            refusal = next(t for t in heard() if t.startswith(REPLACED))
            assert "Delete the production database" in refusal  # the new question, again
            await until(pilot, armed, "R2's keys to arm")
            await pilot.press("a")
            await until(
                pilot,
                lambda: any(t.startswith("Accept: Delete the production") for t in heard()),
                "the confirm step",
            )
            assert core.replies == []
            await pilot.press("enter")
            await until(pilot, lambda: bool(core.replies), "the reply at the producer")
            [reply] = core.replies
            assert reply.decision == "accept"
            assert reply.reply_token == r2.prompt.reply_token
            await until(
                pilot,
                lambda: "Accepted: Delete the production database. Sent." in heard(),
                "the outcome, spoken",
            )
            session.stop()
            await asyncio.wait_for(runner, TIMEOUT)
    finally:
        session.stop()
        await server.close()
