"""§5.4.4, §9.5.2(3): a producer that grants less than asked is taken at its word.

The scripted producer (announcer.producer's core) over real WebSocket and SSE sockets caps
the rate at 20 events a second; the user asks for 100. The lower rate is accepted, not
argued with (no renegotiation), said once, and what the producer is then held to is the
rate it granted: a burst of 60 events breaks 20 a second but not 100.
"""

from __future__ import annotations

import pytest

from announcer.engine.settings import UserSettings
from announcer.producer.core import PRODUCER_MAX_EVENTS_PER_SECOND
from tests.producer.live import wait_for
from tests.support.scripted import KINDS, OpenScriptedLive, event, started

ASKED = 100


@pytest.mark.parametrize("kind", KINDS)
async def test_a_lower_rate_granted_is_accepted_said_and_held_to(
    kind: str, scripted_live: OpenScriptedLive
) -> None:
    assert PRODUCER_MAX_EVENTS_PER_SECOND < ASKED
    settings = UserSettings(pace_wpm=600, max_events_per_second=ASKED)
    sid = "sess_lower"
    burst = [
        event("agent.tool.invoked", sid, n, tool="read_file", summary_normal=f"Reading {n}.")
        for n in range(1, 61)
    ]
    async with scripted_live(kind, record=True, settings=settings) as live:
        [sub] = list(live.core.subscriptions.values())
        granted = sub.capabilities["max_events_per_second"]
        assert granted == PRODUCER_MAX_EVENTS_PER_SECOND  # less than the 100 asked
        await live.hears(f"agreed, but it will send at most {granted} events a second")
        live.core.push(started(sid, 0), *burst)
        await wait_for(
            lambda: any(
                "rate.exceeded" in r.reasons for r in live.session.engine.diagnostics.recent()
            )
        )
        assert live.core.renegotiations == 0  # the lower terms are taken, not argued with
        assert live.session.status.connection == "connected"
    [logged] = [r for r in live.session.engine.diagnostics.recent() if "rate.exceeded" in r.reasons]
    assert f"faster than the {granted} events a second" in " ".join(logged.details)
