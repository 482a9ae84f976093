"""When to reconnect and what to tell the user about it: pure logic, one rule for every transport.

A connection is only "up" once its stream really delivers (an event arrived, or it
stayed open for ``settle_seconds``); a handshake alone proves nothing, since a
producer may accept and hang up at once (§8.2.5, Appendix B.1.5/B.2.5). The user
hears the loss once and the recovery once; while it keeps failing, a sparse
reminder says so and how to stop. Delays grow exponentially with jitter up to a
cap and only start small again after a connection stayed healthy for
``healthy_seconds``, so a producer that accepts and closes, answers HTTP 500 or
ends its stream at once is retried ever more slowly instead of in a hot loop.

The clock and the random source are injected, so every rule is testable without
waiting (the runtime passes ``time.monotonic`` and ``random.Random()``).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum


class Notice(Enum):
    """What the user should be told; the runtime words it in the user's language."""

    CONNECTED = "connected"  # the first time this source delivers
    RECONNECTED = "reconnected"  # delivering again after a loss the user heard about
    LOST = "lost"  # a delivering connection broke
    CANNOT_CONNECT = "cannot_connect"  # never delivered yet, first failure
    STILL_FAILING = "still_failing"  # the sparse reminder while it keeps failing
    # the connection keeps dropping (said twice already): one summary until it holds
    FLAPPING = "flapping"
    HOLDS = "holds"  # after FLAPPING: the connection has held for ``healthy_seconds``


#: A connection that keeps dropping is said lost at most this often before one summary.
LOSSES_SAID = 2


@dataclass(frozen=True, slots=True)
class Retry:
    """After a failure: wait ``delay`` seconds, tell the user ``notice`` (if any)."""

    delay: float
    notice: Notice | None
    failures: int  # consecutive failures since the last healthy connection
    #: attempts since the connection was last up that the producer accepted (the stream
    #: opened) before it closed them: a producer that accepts and hangs up is not one that
    #: cannot be reached (issue 29, item 15)
    accepted: int = 0


@dataclass(slots=True)
class Backoff:
    """Exponential delays with jitter: the first retry within a second, then doubling to a cap.

    Half of each delay is fixed and half random, so it is never zero (no hot loop) and
    many subscribers do not hammer a restarted producer at the same instant.
    """

    first: float = 0.5
    factor: float = 2.0
    cap: float = 30.0
    attempts: int = 0
    rng: random.Random = field(default_factory=random.Random)

    def next_delay(self) -> float:
        ceiling = min(self.cap, self.first * self.factor ** min(self.attempts, 64))
        self.attempts += 1
        return ceiling / 2 + self.rng.uniform(0, ceiling / 2)

    def reset(self) -> None:
        self.attempts = 0


@dataclass(slots=True)
class ReconnectPolicy:
    """One source's connection story: call :meth:`opened`, :meth:`delivered`,
    :meth:`settled` and :meth:`failed` as things happen; each says what to announce."""

    clock: Callable[[], float]
    rng: random.Random = field(default_factory=random.Random)
    first: float = 0.5
    cap: float = 30.0
    #: an open stream counts as delivering after this long even if the producer is quiet
    settle_seconds: float = 2.0
    #: the backoff starts small again only after a connection delivered this long
    healthy_seconds: float = 10.0
    #: while failing, a reminder at most this often
    remind_every: float = 60.0
    backoff: Backoff = field(init=False)
    failures: int = 0
    _opened_at: float | None = None
    _up_since: float | None = None
    _ever_up: bool = False
    _loss_told: bool = False
    _failing_since: float | None = None
    _last_reminder: float | None = None
    #: losses said since the connection last held (issue 22: a flapping producer is said
    #: at most ``LOSSES_SAID`` times, then one FLAPPING summary until it holds)
    _losses_said: int = 0
    _flapping_said: bool = False
    #: attempts the producer accepted (opened) since the connection was last up
    _accepted: int = 0

    def __post_init__(self) -> None:
        self.backoff = Backoff(first=self.first, cap=self.cap, rng=self.rng)

    @property
    def up(self) -> bool:
        return self._up_since is not None

    def opened(self) -> None:
        """The stream is open (SSE: the event stream answered; others: after the handshake)."""
        self._opened_at = self.clock()
        self._accepted += 1

    def delivered(self) -> Notice | None:
        """A frame arrived on the open stream: the connection is proven."""
        return self._go_up()

    def settled(self) -> Notice | None:
        """The runtime's timer fired ``settle_seconds`` after :meth:`opened` and the stream is
        still open: it is up, even if the producer has had nothing to say."""
        return self._go_up()

    def _go_up(self) -> Notice | None:
        if self._up_since is not None or self._opened_at is None:
            return None
        self._up_since = self.clock()
        self._accepted = 0
        first = not self._ever_up
        told = self._loss_told
        self._ever_up = True
        self._loss_told = False
        self._failing_since = None
        self._last_reminder = None
        if first:
            return Notice.CONNECTED
        if self._flapping_said:
            return None  # said once it holds (:meth:`holding`)
        return Notice.RECONNECTED if told else None

    def holding(self) -> Notice | None:
        """The runtime's timer, ``healthy_seconds`` after the connection came up: if it is
        still up it holds; after a FLAPPING summary, that is said (HOLDS) once."""
        if self._up_since is None or self.clock() - self._up_since < self.healthy_seconds:
            return None
        self._losses_said = 0
        if self._flapping_said:
            self._flapping_said = False
            return Notice.HOLDS
        return None

    def failed(self) -> Retry:
        """The attempt or the connection failed: how long to wait and what to say."""
        now = self.clock()
        if self._up_since is not None and now - self._up_since >= self.healthy_seconds:
            self.backoff.reset()
            self.failures = 0
            self._losses_said = 0
            self._flapping_said = False
        was_up = self._up_since is not None
        self._up_since = None
        self._opened_at = None
        self.failures += 1
        notice: Notice | None = None
        if not self._loss_told:
            self._loss_told = True
            self._failing_since = now
            self._last_reminder = now
            notice = Notice.LOST if (was_up or self._ever_up) else Notice.CANNOT_CONNECT
            if notice is Notice.LOST:
                if self._flapping_said:
                    notice = None  # already summarised: still trying, said once
                elif self._losses_said >= LOSSES_SAID:
                    self._flapping_said = True
                    notice = Notice.FLAPPING
                else:
                    self._losses_said += 1
        elif self._last_reminder is not None and now - self._last_reminder >= self.remind_every:
            self._last_reminder = now
            notice = Notice.STILL_FAILING
        return Retry(self.backoff.next_delay(), notice, self.failures, self._accepted)

    def failing_for(self) -> float:
        """Seconds since the loss the user was told about (0 when connected)."""
        return 0.0 if self._failing_since is None else self.clock() - self._failing_since
