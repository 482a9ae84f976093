"""Issue 22 item 11: under a flood our own paused reader holds the producer's pong behind
unread frames; that is not a stalled producer. The connection stays, and the question sent
after the flood is asked and answered (the Textual UI lost it)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from announcer.cli.launch import make_driver
from announcer.engine.pipeline import Engine
from announcer.engine.prompts import UserAnswer
from announcer.engine.settings import UserSettings
from announcer.runtime.session import LiveSession
from announcer.transports import TransportOptions
from tests.producer.live import Recorder, running
from tests.reliability.flood_producer import LoopbackProducer, confirmation, event
from tests.reliability.test_flood import heard

CHUNKS = 6000


#: what each frame costs a busy engine: the reader pauses for at least CHUNKS times this
#: (9 s), three times the 3 s a pong is given, so a pong held behind the unread frames is
#: always a stall, while a loaded CPU still has 3 s to answer a ping (no verdict on load)
FRAME_COST = 0.0015


class SlowEngine(Engine):
    """An engine on a busy UI thread: every frame costs a little time."""

    def receive(self, raw_frame: Any, source_id: str, now: float) -> Any:
        time.sleep(FRAME_COST)
        return super().receive(raw_frame, source_id, now)


async def test_a_flood_behind_a_paused_reader_does_not_drop_the_connection(
    tmp_path: Path,
) -> None:
    async def script(producer: LoopbackProducer, websocket: Any) -> None:
        await producer.send(websocket, event(0, "agent.session.started", summary_normal="Go."))
        for n in range(1, CHUNKS + 1):
            await producer.send(
                websocket,
                event(
                    n,
                    "agent.output.streaming",
                    chunk="word ",
                    position=(n - 1) * 5,
                    complete=False,
                    output_id="out_flood",
                ),
            )
        await producer.send(websocket, confirmation(CHUNKS + 1, "rpl_afterflood"))
        await producer.wait_for_message("confirmation.reply", 180)

    record = tmp_path / "speech.jsonl"
    settings = UserSettings(pace_wpm=600)
    async with LoopbackProducer(script) as producer:
        session = LiveSession(
            [producer.url],
            settings,
            TransportOptions(stall_seconds=6.0),  # a ping every 3 s, 3 s for its pong
            driver=make_driver(f"jsonl:{record}", settings),
            engine=SlowEngine(settings, paced=True),
        )
        recorder = Recorder()
        session.subscribe(recorder)
        async with running(session):
            prompt = await recorder.wait_prompt(timeout=180)
            outcome = await session.answer_async(UserAnswer(prompt.reply_token, decision="reject"))
            assert outcome.sent, outcome.message
            reply = await producer.wait_for_message("confirmation.reply", 30)
    assert reply["reply_token"] == "rpl_afterflood"
    said = heard(record)
    assert not any("lost" in text or "stalled" in text for text in said), said[-5:]
