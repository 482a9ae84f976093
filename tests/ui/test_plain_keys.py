"""The plain line UI on the live runtime: the spoken question names the answers it takes.

A real producer on loopback asks one confirmation over a WebSocket; the engine's
speech goes to a jsonl record; the answer is typed on a real pipe, as a user
types at a terminal, and checked where it matters: at the producer.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
from collections.abc import Callable
from pathlib import Path

from announcer.engine.settings import UserSettings
from announcer.producer.core import ProducerCore, ProducerOptions
from announcer.producer.scenario import load_scenario
from announcer.producer.server import ProducerServer
from announcer.runtime.session import LiveSession
from announcer.speech.driver import SpeechDriver
from announcer.speech.jsonl import JsonlBackend
from announcer.ui.plain import PlainUi

SCENARIO = Path(__file__).parent / "scenarios" / "tui_confirm.json"
TIMEOUT = 60.0


async def until(condition: Callable[[], bool], what: str) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + TIMEOUT
    while not condition():
        if loop.time() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        await asyncio.sleep(0.05)


async def test_the_spoken_question_names_the_typed_answers_and_they_work() -> None:
    core = ProducerCore(load_scenario(str(SCENARIO)), ProducerOptions(speed=0.05))
    server = ProducerServer(core, "127.0.0.1", 0, paths="aaep")
    await server.start()
    records = io.StringIO()
    session = LiveSession(
        [f"ws://127.0.0.1:{server.port}/aaep/v1/ws"],
        UserSettings(),
        driver=SpeechDriver(JsonlBackend(records)),
    )
    read_end, write_end = os.pipe()
    out = io.StringIO()
    with os.fdopen(read_end, encoding="utf-8") as typed, os.fdopen(write_end, "w") as keyboard:
        ui = PlainUi(out=out, inp=typed)

        def armed() -> bool:
            at = ui.guard.armed_at()
            return at is not None and session.now() >= at

        try:
            ui.attach(session)
            runner = asyncio.ensure_future(session.run())
            line = "Accept or reject: Send the quarterly report to Alice? [a/r] (TUI test producer)"
            await until(lambda: line in out.getvalue(), "the question, named on its prompt line")
            spoken = [
                json.loads(line)["text"]
                for line in records.getvalue().splitlines()
                if '"speak"' in line
            ]
            [question] = [text for text in spoken if "Send the quarterly report" in text]
            assert question.endswith("Type A to accept or R to reject, then press Enter.")
            assert "Press" not in question  # no single-key help the line UI does not take
            assert core.replies == []
            await until(armed, "the keys to arm")
            keyboard.write("a\n")
            keyboard.flush()
            step = "Accept: Send the quarterly report to Alice? Type c then Enter to confirm"
            await until(lambda: step in out.getvalue(), "the second step of an irreversible accept")
            assert core.replies == []
            keyboard.write("c\n")
            keyboard.flush()
            await until(lambda: bool(core.replies), "the reply at the producer")
            [reply] = core.replies
            assert reply.type == "confirmation.reply" and reply.decision == "accept"
            session.stop()
            await asyncio.wait_for(runner, TIMEOUT)
        finally:
            session.stop()
            await server.close()
