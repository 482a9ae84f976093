"""Carry out the scheduler's Speak/Cancel commands on a speech backend.

The scheduler is sans-I/O; this adapter is the only place that calls a backend.
A backend may report completion from another thread or from inside ``speak``
itself, so completions are queued here rather than fed back re-entrantly:
the owner drains :meth:`take_completed` and passes each id to the engine's
``on_speech_done``. ``notify`` (optional) is called on every completion so an
event loop can wake up (e.g. ``loop.call_soon_threadsafe``).
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import replace
from functools import partial

from announcer.engine.announcement import Announcement
from announcer.engine.speech_commands import Cancel, Speak, SpeechCommand
from announcer.speech.backend import ReaderGone, SpeechBackend, VoiceSettings

log = logging.getLogger(__name__)


def _primary(language: str) -> str:
    return language.replace("_", "-").partition("-")[0].casefold()


class SpeechDriver:
    def __init__(
        self,
        backend: SpeechBackend,
        voice: VoiceSettings | None = None,
        notify: Callable[[], None] | None = None,
    ) -> None:
        self.backend = backend
        self.voice = voice or VoiceSettings()
        #: producer id -> (the engine voice its words are said with, the language that voice
        #: is for), when several agents speak (issue 33, item 4; announcer.engine.agent_voices)
        self.producer_voices: dict[str, tuple[str, str]] = {}
        self._notify = notify
        self._completed: deque[int] = deque()
        self._live: set[int] = set()
        self.spoken = 0
        self.cancelled = 0
        self.failed = 0

    def execute(self, commands: Iterable[SpeechCommand]) -> None:
        for command in commands:
            if type(command) is Cancel:
                self.cancelled += 1
                try:
                    self.backend.stop()
                except Exception as exc:
                    log.warning("speech could not be stopped: %s", exc)
            elif type(command) is Speak:
                self.spoken += 1
                done = self._completion(command.utterance_id)
                try:
                    voice = self.voice_for(command.announcement)
                    self.backend.speak(command.announcement, voice, done)
                except ReaderGone:
                    raise  # nobody reads the lines any more: the command ends (cli/main.py)
                except Exception as exc:
                    # A backend that cannot speak must not stall the queue behind it: the
                    # utterance ends here (the interface has shown it) and speech goes on.
                    self.failed += 1
                    log.warning("speech failed (%s); the announcement is shown only", exc)
                    done()

    def voice_for(self, announcement: Announcement) -> VoiceSettings:
        """The user's voice, or the agent's own when several agents speak; our own
        sentences (no producer, ``system.*``) keep the user's voice, and so do the agent's
        words in another language than its voice's (the language's own voice reads them)."""
        producer = announcement.producer_id
        if producer is None or announcement.kind.startswith("system."):
            return self.voice
        own = self.producer_voices.get(producer)
        if own is None or _primary(own[1]) != _primary(announcement.language):
            return self.voice
        return replace(self.voice, voice=own[0])

    def _completion(self, utterance_id: int) -> Callable[[], None]:
        self._live.add(utterance_id)
        return partial(self._done, utterance_id)

    def _done(self, utterance_id: int) -> None:
        # set.remove and deque.append are atomic under the GIL: safe from a backend thread.
        try:
            self._live.remove(utterance_id)
        except KeyError:
            return  # a backend must call on_done once; tolerate a second call
        self._completed.append(utterance_id)
        if self._notify is not None:
            self._notify()

    def abandon(self) -> list[int]:
        """Retire this driver (the user switched backends): the utterances still in flight.

        Their ends will never be reported; the caller tells the engine they are over.
        A late callback from the old backend is then ignored.
        """
        live = sorted(self._live)
        self._live.clear()
        return live

    @property
    def in_flight(self) -> int:
        """Utterances begun whose end the backend has not reported yet."""
        return len(self._live)

    def take_completed(self) -> list[int]:
        completed = self._completed
        done: list[int] = []
        while completed:
            done.append(completed.popleft())
        return done

    def say_and_wait(self, announcement: Announcement, timeout: float) -> bool:
        """Say one sentence with no engine behind it (before any starts); whether it ended.

        The backend reports the end from its own thread; after ``timeout`` seconds we go on.
        """
        self.execute([Speak(1, announcement)])
        deadline = time.monotonic() + timeout
        while not self.take_completed():
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.05)
        return True

    def run(
        self,
        commands: Iterable[SpeechCommand],
        on_speech_done: Callable[[int], list[SpeechCommand]],
    ) -> None:
        """Execute ``commands`` and feed synchronous completions back until quiet."""
        if commands:
            self.execute(commands)
        rounds = 0
        completed = self._completed
        # Each round speaks something new; a bound keeps a faulty backend from looping.
        while completed and rounds < 10_000:
            rounds += 1
            for utterance_id in self.take_completed():
                self.execute(on_speech_done(utterance_id))
