"""The interface every speech or screen-reader backend implements.

Backends are adapters: they may use threads and subprocesses. The sans-I/O
scheduler decides *what* to say and *when* to stop; a backend only carries it
out and calls ``on_done`` when an utterance has finished or was stopped.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from announcer.engine.announcement import Announcement

log = logging.getLogger(__name__)


class BackendUnavailable(RuntimeError):
    """Raised by ``start`` with a plain sentence saying why (shown to the user)."""


@dataclass(frozen=True, slots=True)
class VoiceSettings:
    voice: str | None = None
    rate_wpm: int | None = None
    pitch: float | None = None
    volume: float | None = None


def paced_voice(settings: VoiceSettings, announcement: Announcement) -> VoiceSettings:
    """``settings`` at the announcement's ``rate_factor`` (issue 20: the scheduler speeds
    up the agent's piled-up words within the user's maximum). A voice at the engine's own
    rate (no ``rate_wpm``) keeps it."""
    factor = announcement.rate_factor
    if factor <= 1.0 or settings.rate_wpm is None:
        return settings
    return dataclasses.replace(settings, rate_wpm=min(600, round(settings.rate_wpm * factor)))


@dataclass(frozen=True, slots=True)
class BackendCapabilities:
    can_interrupt: bool
    has_priorities: bool = False
    is_screen_reader: bool = False
    supports_braille: bool = False
    produces_audio: bool = False


@runtime_checkable
class SpeechBackend(Protocol):
    name: str
    capabilities: BackendCapabilities

    def start(self) -> None:
        """Acquire the device or engine; raise BackendUnavailable if it cannot."""

    def speak(
        self,
        announcement: Announcement,
        voice: VoiceSettings,
        on_done: Callable[[], None],
    ) -> None:
        """Begin speaking; call ``on_done`` exactly once when finished or stopped."""

    def stop(self) -> None:
        """Silence the current utterance as fast as the backend allows."""

    def is_speaking(self) -> bool: ...

    def close(self) -> None: ...


class BackendFailed(RuntimeError):
    """A backend that worked stopped working mid-session (the device vanished, a server died)."""


class ReaderGone(BrokenPipeError):
    """Whoever read the printed announcements has closed the pipe (``announcer demo | head``).

    Not a failing voice to fall back from: nobody is left to hear, so the command ends
    quietly (issue 30 item 8) instead of warning once per announcement until the end.
    """


#: (the announcement that failed, or None when the backend failed between utterances)
FailureListener = Callable[[Announcement | None, BackendFailed], None]

# A standard "word" is 5 letters and a space; speech rates are quoted in such words.
CHARS_PER_WORD = 6
DEFAULT_RATE_WPM = 175
# Time allowed beyond the words themselves: an earcon, a player starting, a loaded machine.
UTTERANCE_SLACK_S = 10.0


def speaking_seconds(text: str, rate_wpm: int | None = None) -> float:
    """How long ``text`` takes to say at ``rate_wpm`` (an estimate from its length)."""
    rate = min(max(rate_wpm or DEFAULT_RATE_WPM, 60), 1000)
    return max(1.0, len(text) / CHARS_PER_WORD) * 60.0 / rate


def utterance_deadline_s(text: str, rate_wpm: int | None = None) -> float:
    """The longest a working backend may take to say ``text``: past this it is hung.

    Twice the speaking time plus slack, so a slow voice or a busy machine is not
    mistaken for a hang, while a hang still ends in seconds for a short message.
    """
    return UTTERANCE_SLACK_S + 2.0 * speaking_seconds(text, rate_wpm)


@runtime_checkable
class ReportsFailures(Protocol):
    """Optional: a backend that can fail after ``speak`` returned says so here.

    When a backend reports a failure for an announcement it does NOT call that
    announcement's ``on_done``: the listener (``FallbackBackend``) takes over the
    announcement so it is not lost, and completes it on the next backend.
    """

    def set_failure_listener(self, listener: FailureListener | None) -> None: ...


class Watchdog:
    """One thread that calls ``on_expire`` if the armed deadline passes before ``disarm``.

    Armed and disarmed around every utterance or synthesis: a lock and a notify, where a
    timer thread each time would cost a thread start on the path to the first sample.
    One deadline at a time: arming again replaces the last one.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._deadline: float | None = None
        self._on_expire: Callable[[], None] | None = None
        self._thread: threading.Thread | None = None

    def arm(self, seconds: float, on_expire: Callable[[], None]) -> None:
        with self._cond:
            self._deadline = time.monotonic() + seconds
            self._on_expire = on_expire
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="announcer-speech-watchdog", daemon=True
                )
                self._thread.start()
            self._cond.notify()

    def disarm(self) -> None:
        with self._cond:
            self._deadline = None
            self._on_expire = None

    def _run(self) -> None:
        while True:
            with self._cond:
                if self._deadline is None:
                    self._cond.wait()
                    continue
                remaining = self._deadline - time.monotonic()
                if remaining > 0:
                    self._cond.wait(remaining)
                    continue
                on_expire, self._on_expire, self._deadline = self._on_expire, None, None
            if on_expire is not None:
                try:
                    on_expire()
                except Exception:
                    log.exception("a speech watchdog failed")
