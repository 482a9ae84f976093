"""The ``auto`` backend: the best output this machine has, and a fallback that loses nothing.

Order (issue 5): the user's screen reader if one is running, else a
speech-dispatcher server that already answers, else pyttsx3 if audio output
works, else text. ``FallbackBackend`` says once which one it picked; when a
backend fails to start or fails mid-session, it tells the user once, moves to
the next, and says the announcement in hand again there, so nothing is lost in
the switch.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from announcer.engine.announcement import Announcement
from announcer.speech.backend import (
    BackendCapabilities,
    BackendFailed,
    BackendUnavailable,
    ReportsFailures,
    SpeechBackend,
    VoiceSettings,
)

log = logging.getLogger(__name__)

BackendFactory = Callable[[], SpeechBackend]


def notify_stderr(message: str) -> None:
    print(f"announcer: {message}", file=sys.stderr, flush=True)


@dataclass
class _InFlight:
    announcement: Announcement
    voice: VoiceSettings
    on_done: Callable[[], None]
    done: bool = False


class FallbackBackend:
    """Wraps backends in order of preference; implements ``SpeechBackend`` itself."""

    name = "auto"

    def __init__(
        self,
        factories: Sequence[tuple[str, BackendFactory]],
        *,
        notify: Callable[[str], None] = notify_stderr,
    ) -> None:
        if not factories:
            raise ValueError("factories: at least one backend is needed")
        self._factories = list(factories)
        self._notify = notify
        self._index = -1
        self._lock = threading.RLock()
        self.active: SpeechBackend | None = None
        self.skipped: list[tuple[str, str]] = []  # (backend, why) in the order tried
        self._in_flight: _InFlight | None = None

    @property
    def active_name(self) -> str:
        return self.active.name if self.active is not None else "none"

    @property
    def capabilities(self) -> BackendCapabilities:
        if self.active is None:
            return BackendCapabilities(can_interrupt=False)
        return self.active.capabilities

    @capabilities.setter
    def capabilities(self, _value: BackendCapabilities) -> None:
        raise AttributeError("capabilities follow the active backend")

    # ---------------------------------------------------------------- switching

    def _start_next(self) -> None:
        """Start the first backend after the current one that works; raise if none does."""
        while self._index + 1 < len(self._factories):
            self._index += 1
            name, factory = self._factories[self._index]
            try:
                backend = factory()
                backend.start()
            except Exception as exc:
                reason = str(exc) or type(exc).__name__
                self.skipped.append((name, reason))
                log.info("speech backend %s unavailable: %s", name, reason)
                continue
            if isinstance(backend, ReportsFailures):
                backend.set_failure_listener(self._on_failure)
            self.active = backend
            return
        self.active = None
        tried = "; ".join(f"{name}: {why}" for name, why in self.skipped)
        raise BackendUnavailable(f"no speech output works here ({tried})")

    def start(self) -> None:
        with self._lock:
            self._start_next()
            assert self.active is not None
            self._notify(f"speaking through {self.active.name}" + self._skipped_note())

    def _skipped_note(self) -> str:
        if not self.skipped:
            return ""
        return " (" + "; ".join(f"{name}: {why}" for name, why in self.skipped) + ")"

    def _switch(self, reason: str) -> None:
        with self._lock:
            old = self.active
            old_name = old.name if old is not None else "speech"
            self.skipped.append((old_name, reason))
            if old is not None:
                if isinstance(old, ReportsFailures):
                    old.set_failure_listener(None)
                with contextlib.suppress(Exception):
                    old.close()
            self.active = None
            first_skip = len(self.skipped)
            try:
                self._start_next()
            except BackendUnavailable:
                self._notify(f"{old_name} failed ({reason}); no other speech output works")
                raise
            assert self.active is not None
            also = self.skipped[first_skip:]
            extra = (" (" + "; ".join(f"{n}: {w}" for n, w in also) + ")") if also else ""
            self._notify(f"{old_name} failed ({reason}); switching to {self.active.name}{extra}")

    def _on_failure(self, announcement: Announcement, failure: BackendFailed) -> None:
        """A backend failed mid-session: say the same announcement on the next one."""
        with self._lock:
            flight = self._in_flight
            current = flight is not None and flight.announcement is announcement
            try:
                self._switch(str(failure))
            except BackendUnavailable:
                if flight is not None and current:
                    self._complete(flight)
                return
            if flight is not None and current and not flight.done:
                self._speak_on_active(flight)
            else:
                # a superseded utterance: its caller already moved on
                log.info("speech backend failed on an utterance no longer in flight")

    # ---------------------------------------------------------------- speaking

    def _complete(self, flight: _InFlight) -> None:
        with self._lock:
            if flight.done:
                return
            flight.done = True
            if self._in_flight is flight:
                self._in_flight = None
        flight.on_done()

    def _speak_on_active(self, flight: _InFlight) -> None:
        while True:
            with self._lock:
                backend = self.active
                if backend is None:
                    raise BackendUnavailable("the auto backend was not started")
            try:
                backend.speak(flight.announcement, flight.voice, lambda: self._complete(flight))
                return
            except Exception as exc:
                try:
                    self._switch(str(exc) or type(exc).__name__)
                except BackendUnavailable:
                    self._complete(flight)
                    raise

    def speak(
        self, announcement: Announcement, voice: VoiceSettings, on_done: Callable[[], None]
    ) -> None:
        flight = _InFlight(announcement, voice, on_done)
        with self._lock:
            self._in_flight = flight
        self._speak_on_active(flight)

    def stop(self) -> None:
        with self._lock:
            backend = self.active
        if backend is not None:
            backend.stop()

    def is_speaking(self) -> bool:
        with self._lock:
            backend = self.active
        return backend is not None and backend.is_speaking()

    def close(self) -> None:
        with self._lock:
            backend, self.active = self.active, None
        if backend is not None:
            backend.close()
