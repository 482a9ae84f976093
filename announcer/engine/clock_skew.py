"""How late a question really is, with each producer's clock skew taken out (§6.4)."""

from __future__ import annotations

from collections import deque
from typing import Final

from announcer.engine.engine_state import _PROMPTS, EngineState
from announcer.protocol.events import AaepEvent, AwaitingClarification, AwaitingConfirmation

# Clock skew (§6.4): how many recent events of a connection estimate its clock offset.
CLOCK_SAMPLES: Final = 32
# Delivery jitter below this is not lateness (a question is not cut short by it).
LATE_TOLERANCE_SECONDS: Final = 2.0
# A question late by its timestamp but not expired beyond any skew seen keeps at least
# this long to be answered (or rejected) while its producer may still be waiting.
MIN_ANSWER_SECONDS: Final = 10.0


class ClockSkew(EngineState):
    """Learns each producer's clock offset and judges a question's lateness by it."""

    def _observe_clock(self, event: AaepEvent, source_id: str) -> None:
        """Remember how far behind our wall clock this producer's timestamps run (§6.4).

        For a question, the skews seen before it are kept with it: its own timestamp
        must not take part in judging whether it is late.
        """
        key = (source_id, event.producer.agent_id)
        offsets = self._clock_offsets.get(key)
        if offsets is None:
            if len(self._clock_offsets) > 1024:
                self._clock_offsets.clear()
            offsets = self._clock_offsets[key] = deque(maxlen=CLOCK_SAMPLES)
        if isinstance(event, _PROMPTS) and offsets:
            if len(self._skew_before) > 1024:
                self._skew_before.clear()
            self._skew_before[event.event_id] = _most_lenient_skew(offsets)
        offsets.append((self.wall_clock() - event.timestamp).total_seconds())

    def _lateness(
        self, event: AwaitingConfirmation | AwaitingClarification, source_id: str
    ) -> float:
        """How long ``event`` was under way before it arrived, skew taken out (§6.4, §10.1.3).

        It cannot be poisoned by one odd timestamp: a question is late only by what its
        own timestamp exceeds every clock offset seen from its producer by (ours
        included: a producer whose clock agrees with ours is trusted), so an event
        stamped an hour ahead, or a clock that stepped and came back, makes no later
        question late. Where the producer's clock disagrees with what was seen, local
        arrival time decides. A question is expired on arrival (the whole timeout is
        returned) only when it is late beyond any skew seen; otherwise at least
        ``MIN_ANSWER_SECONDS`` are left, so a reject stays possible while the producer
        may still be waiting.
        """
        skew = self._skew_before.pop(event.event_id, None)
        if skew is None:
            offsets = self._clock_offsets.get((source_id, event.producer.agent_id))
            skew = _most_lenient_skew(offsets) if offsets and len(offsets) > 1 else None
        if skew is None:
            return 0.0  # the first thing a producer sends: a slow clock, not lateness
        late = (self.wall_clock() - event.timestamp).total_seconds() - skew
        timeout = float(event.timeout_seconds)
        if late <= LATE_TOLERANCE_SECONDS or timeout <= 0:
            return 0.0
        if late >= timeout:
            return timeout  # its own timestamp and timeout say so, beyond any skew seen
        return min(late, max(0.0, timeout - MIN_ANSWER_SECONDS))


def _most_lenient_skew(offsets: deque[float]) -> float:
    """The largest recent (our clock - producer's timestamp), never below our own 0.

    The skew under which an event looks least late: an outlier stamped ahead (a small
    or negative offset) never makes a later event look late; our own clock counts as
    one seen, so an event stamped by a clock that agrees with ours is never late.
    """
    return max(0.0, *offsets)
