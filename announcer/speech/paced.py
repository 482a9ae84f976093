"""The ``paced`` backend: silent speech that takes as long as a real voice would.

Tests and benchmarks need speech at the speed of a voice (issue 14: with instant
speech, a 21-second-late acknowledgement is invisible), yet must not wait for it.
So each utterance lasts :func:`announcer.engine.scheduler.estimated_seconds` at the
user's rate (``rate_wpm``, else ``pace_wpm``; a ``VoiceSettings.rate_wpm`` passed to
``speak`` wins): words counted by spaces, or one per six characters when that is
more, plus a quarter second per utterance. Time comes from an injected
:class:`Clock`: :class:`SimulatedClock` jumps straight to the next deadline (tests,
``benchmarks/pace.py``), :class:`LoopClock` follows an asyncio loop (real or
simulated time), :class:`ThreadClock` is the wall clock (``--speech paced``).

Every utterance is kept in :attr:`PacedBackend.utterances` (what was heard, when,
for how long, whether it was cut off) and, given a stream, written as the
documented jsonl speech record (docs/architecture.md).
"""

from __future__ import annotations

import heapq
import itertools
import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TextIO

from announcer.engine.announcement import Announcement
from announcer.engine.scheduler import estimated_seconds
from announcer.speech.backend import BackendCapabilities, VoiceSettings, paced_voice
from announcer.speech.jsonl import speech_record

if TYPE_CHECKING:
    import asyncio

DEFAULT_RATE_WPM = 180
UTTERANCES_KEPT = 100_000


class TimerHandle(Protocol):
    def cancel(self) -> None: ...


class Clock(Protocol):
    """Seconds on a monotonic scale, and a way to be called back at one of them."""

    def now(self) -> float: ...

    def call_at(self, when: float, callback: Callable[[], None]) -> TimerHandle: ...


class _Timer:
    __slots__ = ("callback", "cancelled", "when")

    def __init__(self, when: float, callback: Callable[[], None]) -> None:
        self.when = when
        self.callback = callback
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class SimulatedClock:
    """Time that moves only when told to, so a minute of speech takes microseconds."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = start
        self._timers: list[tuple[float, int, _Timer]] = []
        self._counter = itertools.count()

    def now(self) -> float:
        return self._now

    def call_at(self, when: float, callback: Callable[[], None]) -> _Timer:
        timer = _Timer(when, callback)
        heapq.heappush(self._timers, (when, next(self._counter), timer))
        return timer

    def next_deadline(self) -> float | None:
        timers = self._timers
        while timers and timers[0][2].cancelled:
            heapq.heappop(timers)
        return timers[0][0] if timers else None

    def advance_to(self, when: float) -> None:
        """Run every callback due by ``when``, each at its own time, then stand at ``when``."""
        timers = self._timers
        while timers and timers[0][0] <= when:
            due, _, timer = heapq.heappop(timers)
            if timer.cancelled:
                continue
            self._now = max(self._now, due)
            timer.callback()
        self._now = max(self._now, when)


class LoopClock:
    """An asyncio event loop's clock (``loop.time``), real or simulated."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop

    def now(self) -> float:
        return self._loop.time()

    def call_at(self, when: float, callback: Callable[[], None]) -> TimerHandle:
        return self._loop.call_at(when, callback)


class ThreadClock:
    """The wall clock (``time.monotonic``); callbacks run on a timer thread."""

    def now(self) -> float:
        return time.monotonic()

    def call_at(self, when: float, callback: Callable[[], None]) -> TimerHandle:
        timer = threading.Timer(max(0.0, when - time.monotonic()), callback)
        timer.daemon = True
        timer.start()
        return timer


@dataclass(slots=True)
class PacedUtterance:
    """One utterance as the user heard it: from ``started`` for ``seconds``, or until cut."""

    announcement: Announcement
    started: float
    seconds: float
    ended: float | None = None
    stopped: bool = False


class PacedBackend:
    name = "paced"
    capabilities = BackendCapabilities(can_interrupt=True)

    def __init__(
        self,
        clock: Clock | None = None,
        *,
        rate_wpm: int | None = None,
        stream: TextIO | None = None,
    ) -> None:
        self.clock: Clock = clock if clock is not None else ThreadClock()
        self.rate_wpm = rate_wpm or DEFAULT_RATE_WPM
        self._stream = stream
        self._origin = self.clock.now()
        self._lock = threading.Lock()
        self._current: tuple[PacedUtterance, TimerHandle, Callable[[], None]] | None = None
        self.utterances: deque[PacedUtterance] = deque(maxlen=UTTERANCES_KEPT)

    def start(self) -> None:
        self._origin = self.clock.now()

    def speak(
        self, announcement: Announcement, voice: VoiceSettings, on_done: Callable[[], None]
    ) -> None:
        # A new utterance replaces the one in progress, as a player would.
        self.stop()
        now = self.clock.now()
        # A faster pace for the agent's piled-up words (issue 20).
        rate = paced_voice(VoiceSettings(rate_wpm=voice.rate_wpm or self.rate_wpm), announcement)
        seconds = estimated_seconds(announcement.text, rate.rate_wpm or self.rate_wpm)
        utterance = PacedUtterance(announcement, now, seconds)
        with self._lock:
            self.utterances.append(utterance)
            timer = self.clock.call_at(now + seconds, lambda: self._finish(utterance))
            self._current = (utterance, timer, on_done)
        self._write("speak", announcement, now, voice)

    def _finish(self, utterance: PacedUtterance) -> None:
        with self._lock:
            current = self._current
            if current is None or current[0] is not utterance:
                return
            self._current = None
        utterance.ended = self.clock.now()
        current[2]()

    def stop(self) -> None:
        with self._lock:
            current = self._current
            self._current = None
        if current is None:
            return
        utterance, timer, on_done = current
        timer.cancel()
        utterance.ended = self.clock.now()
        utterance.stopped = True
        self._write("cancel", utterance.announcement, utterance.ended)
        on_done()

    def is_speaking(self) -> bool:
        return self._current is not None

    def close(self) -> None:
        self.stop()
        if self._stream is not None:
            self._stream.flush()

    def _write(
        self,
        action: str,
        announcement: Announcement,
        at: float,
        voice: VoiceSettings | None = None,
    ) -> None:
        if self._stream is None:
            return
        record = speech_record(action, announcement, at - self._origin, voice)
        self._stream.write(json.dumps(record, ensure_ascii=False) + "\n")
        self._stream.flush()
