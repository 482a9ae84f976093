"""Carry out the scheduler's Speak/Cancel commands on a speech backend.

The scheduler is sans-I/O; this adapter is the only place that calls a backend.
A backend may report completion from another thread or from inside ``speak``
itself, so completions are queued here rather than fed back re-entrantly:
the owner drains :meth:`take_completed` and passes each id to the engine's
``on_speech_done``. ``notify`` (optional) is called on every completion so an
event loop can wake up (e.g. ``loop.call_soon_threadsafe``).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable

from announcer.engine.speech_commands import Cancel, Speak, SpeechCommand
from announcer.speech.backend import SpeechBackend, VoiceSettings


class SpeechDriver:
    def __init__(
        self,
        backend: SpeechBackend,
        voice: VoiceSettings | None = None,
        notify: Callable[[], None] | None = None,
    ) -> None:
        self.backend = backend
        self.voice = voice or VoiceSettings()
        self._notify = notify
        self._completed: deque[int] = deque()
        self._lock = threading.Lock()
        self.spoken = 0
        self.cancelled = 0

    def execute(self, commands: Iterable[SpeechCommand]) -> None:
        for command in commands:
            if isinstance(command, Cancel):
                self.cancelled += 1
                self.backend.stop()
            elif isinstance(command, Speak):
                self.spoken += 1
                self.backend.speak(
                    command.announcement, self.voice, self._completion(command.utterance_id)
                )

    def _completion(self, utterance_id: int) -> Callable[[], None]:
        reported = False

        def done() -> None:
            nonlocal reported
            with self._lock:
                if reported:
                    return  # a backend must call on_done once; tolerate a second call
                reported = True
                self._completed.append(utterance_id)
            if self._notify is not None:
                self._notify()

        return done

    def take_completed(self) -> list[int]:
        with self._lock:
            done = list(self._completed)
            self._completed.clear()
        return done

    def run(
        self,
        commands: Iterable[SpeechCommand],
        on_speech_done: Callable[[int], list[SpeechCommand]],
    ) -> None:
        """Execute ``commands`` and feed synchronous completions back until quiet."""
        if commands:
            self.execute(commands)
        for _ in range(10_000):  # each round speaks something new; never loop forever
            if not self._completed:
                return
            finished = self.take_completed()
            if not finished:
                return
            for utterance_id in finished:
                self.execute(on_speech_done(utterance_id))
