"""How late a question really is, with each producer's clock skew taken out (§6.4).

The estimates themselves are pure (:mod:`announcer.engine.clock`); this part of the
engine's :class:`ClockSkew` keeps one :class:`~announcer.engine.clock.ProducerClock` per
connection and producer and judges each question by the offsets seen before it.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from announcer.engine.clock import (
    CLOCK_SAMPLES,
    LATE_TOLERANCE_SECONDS,
    MIN_ANSWER_SECONDS,
    Lateness,
    ProducerClock,
    lateness,
)
from announcer.engine.engine_records import PROMPT_EVENTS
from announcer.protocol.events import AaepEvent, AwaitingClarification, AwaitingConfirmation

__all__ = ["CLOCK_SAMPLES", "LATE_TOLERANCE_SECONDS", "MIN_ANSWER_SECONDS", "ClockSkew"]


class ClockSkew:
    """Learns each producer's clock offset and judges a question's lateness by it."""

    def __init__(self, wall_clock: Callable[[], datetime]) -> None:
        self.wall_clock = wall_clock
        # Per connection and producer (each has its own clock): recent (our wall clock -
        # event timestamp) in seconds, to take clock skew out of lateness (§6.4).
        self._clocks: dict[tuple[str, str], ProducerClock] = {}
        # A question's event id -> how late it was, judged by the clock seen before it.
        self._late_before: dict[str, Lateness] = {}

    def observe(self, event: AaepEvent, source_id: str) -> None:
        """Remember how far behind our wall clock this producer's timestamps run (§6.4).

        A question is judged by the offsets seen before it (``announcer.engine.clock``):
        its own timestamp must not take part in judging whether it is late.
        """
        key = (source_id, event.producer.agent_id)
        clock = self._clocks.get(key)
        if clock is None:
            if len(self._clocks) > 1024:
                self._clocks.clear()
            clock = self._clocks[key] = ProducerClock()
        offset = (self.wall_clock() - event.timestamp).total_seconds()
        if isinstance(event, PROMPT_EVENTS):
            if len(self._late_before) > 1024:
                self._late_before.clear()
            self._late_before[event.event_id] = lateness(
                clock, offset, float(event.timeout_seconds), first_event=not clock.seen
            )
        clock.observe(offset)

    def lateness(
        self, event: AwaitingConfirmation | AwaitingClarification, source_id: str
    ) -> Lateness:
        """How long ``event`` was under way before it arrived (§6.4, §10.1.3).

        ``reject``: expired on arrival only beyond any skew seen, else at least
        ``MIN_ANSWER_SECONDS`` left while the producer may still wait; ``accept``: by the
        best estimate of the producer's clock, so accept is not offered after its
        deadline (``announcer.engine.clock``).
        """
        late = self._late_before.pop(event.event_id, None)
        if late is not None:
            return late
        clock = self._clocks.get((source_id, event.producer.agent_id))
        offset = (self.wall_clock() - event.timestamp).total_seconds()
        return lateness(clock, offset, float(event.timeout_seconds), first_event=clock is None)
