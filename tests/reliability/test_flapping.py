"""Issue 22 item 11: a producer that accepts the handshake and closes each time is said
lost at most twice, then one summary until the connection holds (engine/reconnect.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from announcer.engine.reconnect import Notice, ReconnectPolicy
from tests.producer.live import running, wait_for
from tests.reliability.flood_producer import LoopbackProducer, event
from tests.reliability.test_flood import heard, listening


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_flapping_connection_is_said_twice_then_summarised_until_it_holds() -> None:
    clock = Clock()
    policy = ReconnectPolicy(clock)
    notices: list[Notice | None] = []
    for _ in range(8):
        policy.opened()
        notices.append(policy.delivered())
        clock.now += 0.2
        notices.append(policy.failed().notice)
        clock.now += 1.0
    said = [n for n in notices if n is not None]
    assert said == [
        Notice.CONNECTED,
        Notice.LOST,
        Notice.RECONNECTED,
        Notice.LOST,
        Notice.RECONNECTED,
        Notice.FLAPPING,
    ]
    policy.opened()
    assert policy.delivered() is None  # not yet: it has to hold
    clock.now += policy.healthy_seconds
    assert policy.holding() is Notice.HOLDS
    assert policy.holding() is None  # said once
    assert policy.failed().notice is Notice.LOST  # a new story after it held


async def test_a_websocket_producer_that_keeps_hanging_up_is_said_at_most_twice(
    tmp_path: Path,
) -> None:
    connections = 0

    async def script(producer: LoopbackProducer, websocket: Any) -> None:
        nonlocal connections
        connections += 1
        await producer.send(websocket, event(0, "agent.session.started", summary_normal="Go."))
        await asyncio.sleep(0.05)
        await websocket.close()

    record = tmp_path / "speech.jsonl"
    async with LoopbackProducer(script) as producer:
        session, _recorder = listening(producer.url, record, paced=False)
        # the back-off is not this test's subject: retries from 0.05 s, doubling
        session.sources.new_policy = lambda clock: ReconnectPolicy(clock, first=0.05)
        async with running(session):
            await wait_for(lambda: connections >= 6, timeout=60)
            await wait_for(lambda: any("keeps dropping" in t for t in heard(record)), timeout=30)
    said = heard(record)
    assert sum("lost" in t for t in said) <= 2, said
    assert sum("Reconnected" in t for t in said) <= 2, said
    assert sum(t == "Flooder keeps dropping the connection; still trying." for t in said) == 1
