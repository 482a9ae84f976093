"""How far a producer's clock is from ours, and how late a question arrived (§6.4, §10.1.3).

A question's timeout runs from its ``timestamp`` on the producer's clock. Each event
gives one *offset*: our wall clock at arrival minus its timestamp, that is the
producer's clock skew plus the delivery delay. From the offsets seen before a question
two estimates are kept, because two different mistakes must be avoided:

* **Reject** stays possible whenever the producer may still be waiting. For that the
  *most lenient* skew counts: the largest recent offset (our own clock, 0, counted as
  one seen). A question is expired on arrival only when its own timestamp and timeout
  say so beyond every skew seen; an event stamped an hour ahead or behind, or a clock
  that steps and comes back, never makes a later question expired.
* **Accept** is never offered after the producer's deadline as far as we can tell: a
  late accept may race the producer's own default. For that the *best* skew counts:
  the least recent offset that a second witness confirms (another recent event, or our
  own clock, within the tolerance). A delay only adds to an offset, so the least
  delayed event tells the skew best, and a question delivered late, a stale
  redelivery or an event stamped far behind never lowers it; one event stamped ahead
  is confirmed by nobody and is ignored. A clock stepped ahead is followed at once
  (its events confirm each other); a clock set back, or one that stepped ahead for a
  few events and came back, once the window has forgotten those offsets: until then
  accept closes early, never late, and reject is unaffected.

Where the producer's clock disagrees with ours or is unknown, local arrival decides: a
question never gets more time than its timeout from its arrival (a timestamp ahead of
our clock is trusted no further), and a question that is the first thing its producer
sends is timed from its arrival.

A delay shared by every recent event (a backlog longer than the window) cannot be told
from a clock set back by timestamps alone: once the window holds only delayed events,
their least delay is taken for skew.

Pure: offsets come in, seconds of lateness go out.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Final

#: How many recent events' offsets estimate a producer's clock.
CLOCK_SAMPLES: Final = 32
#: Delivery jitter below this is not lateness (a question is not cut short by it).
LATE_TOLERANCE_SECONDS: Final = 2.0
#: A question late by its timestamp but not expired beyond any skew seen keeps at least
#: this long to be rejected while its producer may still be waiting.
MIN_ANSWER_SECONDS: Final = 10.0


@dataclass(frozen=True, slots=True)
class Lateness:
    """How long a question was already under way when it arrived, in seconds.

    ``reject`` is the lenient figure (the question's deadline for any answer, the
    timeout when it is expired on arrival); ``accept`` is the best figure, never
    smaller than ``reject`` (accept closes no later than reject).
    """

    reject: float = 0.0
    accept: float = 0.0


@dataclass(slots=True)
class ProducerClock:
    """The offsets (our wall clock minus the event's timestamp) of a producer's recent events."""

    recent: deque[float] = field(default_factory=lambda: deque(maxlen=CLOCK_SAMPLES))

    def observe(self, offset: float) -> None:
        self.recent.append(offset)

    @property
    def seen(self) -> bool:
        return bool(self.recent)

    def lenient_skew(self) -> float:
        """The skew under which a question looks least late: the largest seen, ours (0) too."""
        return max(0.0, *self.recent)

    def best_skew(self) -> float:
        """The least recent offset that a second witness confirms (§6.4).

        The least delayed event tells the skew best (a delay only adds to an offset),
        but only if another recent event, or our own clock, agrees with it within
        ``LATE_TOLERANCE_SECONDS``: one event stamped ahead is nobody's clock. Delayed
        deliveries and events stamped behind are larger, so they never count. When no
        offset is confirmed, the median (an even split goes to the one nearer ours).
        """
        values = sorted(self.recent)
        if not values:
            return 0.0
        for index, value in enumerate(values):
            neighbours = values[max(0, index - 1) : index] + values[index + 1 : index + 2]
            if abs(value) <= LATE_TOLERANCE_SECONDS or any(
                abs(value - other) <= LATE_TOLERANCE_SECONDS for other in neighbours
            ):
                return value
        middle = len(values) // 2
        if len(values) % 2:
            return values[middle]
        low, high = values[middle - 1], values[middle]
        return low if abs(low) <= abs(high) else high


def lateness(
    clock: ProducerClock | None, own_offset: float, timeout: float, first_event: bool
) -> Lateness:
    """How late a question with ``own_offset`` is, judged by the offsets seen before it.

    ``first_event``: nothing was seen from the producer before, so its clock is
    unknown (a recording replayed, a clock set to another zone): the question is timed
    from its local arrival, for accept too.
    """
    if timeout <= 0 or first_event or clock is None or not clock.seen:
        return Lateness()
    reject = _late(own_offset - clock.lenient_skew(), timeout)
    # No tolerance for accept: jitter closes it a moment early, never late.
    accept = min(max(0.0, own_offset - clock.best_skew()), timeout)
    return Lateness(reject=reject, accept=max(accept, reject))


def _late(late: float, timeout: float) -> float:
    """The lenient lateness: expired (the timeout) only beyond any skew seen, else time kept."""
    if late <= LATE_TOLERANCE_SECONDS:
        return 0.0
    if late >= timeout:
        return timeout  # its own timestamp and timeout say so, beyond any skew seen
    return min(late, max(0.0, timeout - MIN_ANSWER_SECONDS))
