"""The one front end that drives the engine: feed it, carry out its speech, tick when due.

:class:`~announcer.engine.pipeline.Engine` is sans-I/O: every input returns speech
commands, a finished utterance must be reported back, and time passes only when
someone calls ``tick``. :class:`EngineHost` is the one place that does that loop,
as websockets' ``asyncio.connection.Connection`` is the one place that feeds its
sans-I/O ``Protocol`` and sends what it returns. Every driver of the engine (the
live session, ``replay``, ``watch``, the test and benchmark drivers) goes through
it; ``tests/runtime/test_engine_host.py`` fails if another module runs the loop
itself.

The host owns no clock and no thread: the caller gives it ``clock`` and decides when
to :meth:`drain` finished speech (a backend reports the end of an utterance from its
own thread; the driver queues it) and when to :meth:`tick`. With an asyncio loop,
:meth:`keep_ticking` arms a timer at :meth:`next_wakeup` after every step instead.
Without a speech driver every utterance ends as soon as it starts (no voice: the
words are shown, and the next one follows at once).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from announcer.engine.announcement import Announcement
from announcer.engine.pipeline import Engine
from announcer.engine.prompts import UserAnswer
from announcer.engine.replies import ReplyOutcome
from announcer.engine.speech_commands import Speak, SpeechCommand
from announcer.protocol.decode import decode_event_object
from announcer.protocol.events import AaepEvent
from announcer.speech.driver import SpeechDriver

log = logging.getLogger(__name__)

#: a Speak about to be carried out -> the Speak to carry out (named, shown, recorded)
SpeakHook = Callable[[Speak], Speak]
Frame = bytes | bytearray | str | Mapping[str, Any]
# One step's speech may start more speech (an utterance that ends at once lets the next
# one start); a bound keeps a faulty backend from looping for ever.
MAX_ROUNDS = 10_000


class EngineHost:
    """Feeds one engine, carries out its speech commands, reports finished speech back.

    ``on_speak`` sees every utterance as it starts (the live session names the speaker
    and tells the UIs; ``replay`` prints it) and may return it changed. ``after_step``
    is called once each step has run to quiet (a driver re-reads the open questions).
    """

    def __init__(
        self,
        engine: Engine,
        driver: SpeechDriver | None,
        clock: Callable[[], float],
        *,
        on_speak: SpeakHook | None = None,
        after_step: Callable[[], None] | None = None,
    ) -> None:
        self.engine = engine
        self.driver = driver
        self.clock = clock
        self.on_speak = on_speak
        self.after_step = after_step
        self._loop: asyncio.AbstractEventLoop | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._max_delay: float | None = None
        self._loop_clock = False
        self._on_due: Callable[[], None] | None = None
        self._depth = 0

    # -- inputs: each returns nothing; what the engine decides is carried out at once ----

    def receive(self, frame: Frame, source_id: str, now: float | None = None) -> None:
        """One frame from a source (§3.9: the engine decodes and validates it)."""
        at = self.clock() if now is None else now
        self.run(self.engine.receive(frame, source_id, at))

    def receive_event(self, event: AaepEvent, source_id: str) -> None:
        self.run(self.engine.receive_event(event, source_id, self.clock()))

    def receive_mapped(
        self, event: Mapping[str, Any], source_id: str, now: float | None = None
    ) -> None:
        """An event a mapping in this process built (ACP, hooks, a CLI stream), as the
        object it is: validated as a model (§3.7-§3.9 all the same) and handed to the
        engine as one, never written to JSON text and read again (issue 32, step 2).
        One that fails validation goes the frame's way, where its problem is counted and
        logged like any invalid frame's."""
        at = self.clock() if now is None else now
        result = decode_event_object(event)
        if result.kind != "event" or not isinstance(result.message, AaepEvent):
            self.run(self.engine.receive(event, source_id, at))
            return
        if result.diagnostics:
            self.engine.diagnostics.record(result, source=source_id, now=at)
        self.run(self.engine.receive_event(result.message, source_id, at))

    def source_closed(self, source_id: str) -> None:
        self.run(self.engine.source_closed(source_id, self.clock()))

    def subscription_closed(self, source_id: str) -> None:
        self.run(self.engine.subscription_closed(source_id, self.clock()))

    def say(self, announcement: Announcement) -> None:
        """Our own words share the engine's speech queue, so urgency orders them too."""
        self.run(self.engine.scheduler.submit(announcement, self.clock()))

    def silence(self) -> None:
        self.run(self.engine.silence(self.clock()))

    def user_wrote(self, session_id: str) -> None:
        """The user's message went to this session's agent (issue 31, item 11)."""
        self.engine.user_wrote(session_id, self.clock())

    def present(self, reply_token: str) -> None:
        self.run(self.engine.present(reply_token, self.clock()))

    def digest(self) -> None:
        """Say what happened in the turn running now, else in the last (issue 33, item 2)."""
        self.run(self.engine.say_digest(self.clock()))

    def count_skipped_urgent(
        self, producer_id: str, name: str, count: int, source_id: str | None
    ) -> None:
        self.run(
            self.engine.count_skipped_urgent(producer_id, name, count, source_id, self.clock())
        )

    def answer(self, answer: UserAnswer, decided_at: datetime | None = None) -> ReplyOutcome:
        """The engine checks the answer; the question it ends stops being read out."""
        outcome = self.engine.answer(answer, self.clock(), decided_at)
        self.run(self.engine.take_speech())
        return outcome

    # -- time -----------------------------------------------------------------------------

    def tick(self) -> None:
        self.run(self.engine.tick(self.clock()))

    def next_wakeup(self) -> float | None:
        """The earliest moment on ``clock`` at which :meth:`tick` has work, or None."""
        return self.engine.next_wakeup()

    def tick_if_due(self) -> bool:
        """Tick when the engine's next moment has come; whether it had."""
        wake = self.engine.next_wakeup()
        if wake is None or wake > self.clock():
            return False
        self.tick()
        return True

    def keep_ticking(
        self,
        loop: asyncio.AbstractEventLoop,
        *,
        loop_clock: bool = False,
        max_delay: float | None = None,
        on_due: Callable[[], None] | None = None,
    ) -> None:
        """From now on a timer on ``loop`` ticks at :meth:`next_wakeup` (re-armed each step).

        Finished speech is drained on ``loop`` too, whichever thread reports it.
        ``loop_clock``: ``clock`` is the loop's own time (the timer is set at the very
        moment); else ``max_delay`` may cap the wait. ``on_due`` replaces :meth:`tick`
        (a driver that also reads what the tick changed).
        """
        self._loop = loop
        self._loop_clock = loop_clock
        self._max_delay = max_delay
        self._on_due = on_due
        if self.driver is not None:
            self.driver._notify = self.wake_threadsafe
        self._arm()

    def wake_threadsafe(self) -> None:
        """A backend finished an utterance, maybe on its own thread: drain it on the loop."""
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self.drain)

    def _arm(self) -> None:
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        wake = self.engine.next_wakeup()
        if wake is None:
            return
        if self._loop_clock:
            self._timer = loop.call_at(max(wake, self.clock()), self._timer_fired)
            return
        delay = max(0.0, wake - self.clock())
        if self._max_delay is not None:
            delay = min(delay, self._max_delay)
        self._timer = loop.call_later(delay, self._timer_fired)

    def _timer_fired(self) -> None:
        self._timer = None
        (self._on_due or self.tick)()

    def stop_ticking(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._loop = None

    # -- speech -----------------------------------------------------------------------------

    def drain(self) -> bool:
        """Report every utterance the backend finished; whether there was any."""
        if self.driver is None:
            return False
        progressed = False
        for _ in range(MAX_ROUNDS):
            ended = self.driver.take_completed()
            if not ended:
                break
            progressed = True
            for utterance_id in ended:
                self.run(self.engine.on_speech_done(utterance_id, self.clock()))
        return progressed

    def replace_driver(self, driver: SpeechDriver) -> None:
        """Speak through ``driver`` from now on; what the old one was saying is cut.

        The old backend is stopped and closed; the engine hears that its utterances
        ended and goes on with the new voice.
        """
        old, self.driver = self.driver, driver
        if old is None:
            return
        with contextlib.suppress(Exception):
            old.backend.stop()
        ended = old.take_completed() + old.abandon()
        with contextlib.suppress(Exception):
            old.backend.close()
        for utterance_id in ended:
            self.run(self.engine.on_speech_done(utterance_id, self.clock()))

    @property
    def in_flight(self) -> int:
        """Utterances begun whose end the backend has not reported yet."""
        return self.driver.in_flight if self.driver is not None else 0

    def run(self, commands: list[SpeechCommand]) -> None:
        """Carry out ``commands``, and what finished speech lets start, until quiet."""
        self._depth += 1
        try:
            self._run(commands)
        finally:
            self._depth -= 1
        if self._depth == 0:
            self._arm()
            if self.after_step is not None:
                self.after_step()

    def _run(self, commands: list[SpeechCommand]) -> None:
        pending = list(commands)
        driver = self.driver
        for _ in range(MAX_ROUNDS):
            if not pending:
                break
            follow: list[SpeechCommand] = []
            for command in pending:
                if type(command) is Speak:
                    if self.on_speak is not None:
                        command = self.on_speak(command)
                    if driver is None:  # no voice: it ends as it starts
                        follow += self.engine.on_speech_done(command.utterance_id, self.clock())
                        continue
                if driver is not None:
                    driver.execute([command])
            if driver is not None:  # a backend that finished at once (text, screen readers)
                for utterance_id in driver.take_completed():
                    follow += self.engine.on_speech_done(utterance_id, self.clock())
            pending = follow
        else:
            if pending:
                log.warning("speech kept starting more speech; %d commands left", len(pending))
