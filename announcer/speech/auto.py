"""The ``auto`` backend: the best output this machine has, and a fallback that loses nothing.

Order (issue 5): the user's screen reader if one is running, else a
speech-dispatcher server that already answers, else pyttsx3 if audio output
works, else text. ``FallbackBackend`` says once which one it picked; when a
backend fails to start or fails mid-session, it tells the user once, moves to
the next, and says the announcement in hand again there, so nothing is lost in
the switch. A watchdog per utterance (a bound from its length and rate) turns a
backend that hangs into one that failed. When no output is left, announcements
are completed at once, never waited on: the interface still shows them, and the
speech queue never stalls behind a silent backend.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

from announcer.engine.announcement import Announcement
from announcer.speech.backend import (
    BackendCapabilities,
    BackendFailed,
    BackendUnavailable,
    ReportsFailures,
    SpeechBackend,
    VoiceSettings,
    Watchdog,
    utterance_deadline_s,
)

log = logging.getLogger(__name__)

BackendFactory = Callable[[], SpeechBackend]


def notify_stderr(message: str) -> None:
    print(f"announcer: {message}", file=sys.stderr, flush=True)


class HeldNotices:
    """What the fallback says about speech output, for an interface that shows it itself.

    Under the Textual UI a line on standard error lands raw underneath the app, where
    nobody reads it (issue 14). The first notice comes before the app exists, so notices
    are held until the app listens, then passed on as they come, from any thread.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: list[str] = []
        self._listener: Callable[[str], None] | None = None

    def __call__(self, message: str) -> None:
        with self._lock:
            listener = self._listener
            if listener is None:
                self._held.append(message)
                return
        listener(message)

    def listen(self, listener: Callable[[str], None]) -> None:
        """Hand over the notices held so far, then each one as it comes."""
        with self._lock:
            held, self._held = self._held, []
            self._listener = listener
        for message in held:
            listener(message)


@dataclass(eq=False)
class _InFlight:
    announcement: Announcement
    voice: VoiceSettings
    on_done: Callable[[], None]
    done: bool = False
    # the backend saying it now: an end reported by any other (one given up on) is ignored
    backend: SpeechBackend | None = None


class FallbackBackend:
    """Wraps backends in order of preference; implements ``SpeechBackend`` itself."""

    name = "auto"

    def __init__(
        self,
        factories: Sequence[tuple[str, BackendFactory]],
        *,
        notify: Callable[[str], None] = notify_stderr,
        deadline: Callable[[str, int | None], float] = utterance_deadline_s,
        translate: Callable[[str], str] | None = None,
        chosen: bool = False,
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
        self._deadline = deadline
        # the user's catalog for the sentences said about switching (English by default)
        self._t: Callable[[str], str] = translate or (lambda message: message)
        self._watchdog = Watchdog()
        self._watched: _InFlight | None = None  # the flight the watchdog is armed for
        self.exhausted = False  # every backend failed: announcements are completed unspoken
        #: the user chose the first output (``--speech speechd``): it must start, and it is
        #: not announced; the others are only where it falls back to (issue 29 item 4)
        self.chosen = chosen
        #: told, from any thread, a short sentence when a voice takes over mid-session, so
        #: the switch is spoken by what can still speak (the session queues it)
        self.on_switch: Callable[[str], None] | None = None

    @property
    def notices(self) -> HeldNotices | None:
        """Where this backend's notices wait for an interface to show them, if anywhere."""
        return self._notify if isinstance(self._notify, HeldNotices) else None

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
                if self.chosen and self._index == 0:
                    self._index = -1
                    raise  # the output the user named does not work: said as it is
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
            if self.chosen:
                return  # the user's own choice: nothing to announce
            self._notify(
                self._t("speaking through {name}").format(name=self._label(self.active))
                + self._skipped_note()
            )

    def _label(self, backend: SpeechBackend) -> str:
        """The backend's name, and which screen reader it found (``screenreader (NVDA)``)."""
        found = getattr(backend, "output_name", None) if getattr(backend, "output", None) else None
        name = self._t(backend.name)
        return f"{name} ({found})" if isinstance(found, str) and found else name

    def _skipped_note(self) -> str:
        if not self.skipped:
            return ""
        return " (" + "; ".join(f"{name}: {why}" for name, why in self.skipped) + ")"

    def _switch(self, reason: str) -> None:
        reason = " ".join(reason.split())  # one line, whatever the failing program wrote
        with self._lock:
            old = self.active
            old_name = old.name if old is not None else "speech"
            self.skipped.append((old_name, reason))
            if old is not None:
                if isinstance(old, ReportsFailures):
                    old.set_failure_listener(None)
                _close_in_background(old)
            self.active = None
            first_skip = len(self.skipped)
            try:
                self._start_next()
            except BackendUnavailable:
                self.exhausted = True
                self._notify(
                    self._t("{name} failed ({reason}); no other speech output works").format(
                        name=self._t(old_name), reason=reason
                    )
                )
                raise
            assert self.active is not None
            also = self.skipped[first_skip:]
            extra = (" (" + "; ".join(f"{n}: {w}" for n, w in also) + ")") if also else ""
            self._notify(
                self._t("{name} failed ({reason}); switching to {new}").format(
                    name=self._t(old_name), reason=reason, new=self._label(self.active)
                )
                + extra
            )
            listener = self.on_switch
            capabilities = self.active.capabilities
            if listener is not None and (
                capabilities.produces_audio or capabilities.is_screen_reader
            ):
                # printed above; now also said, by the voice that took over
                listener(
                    self._t("{name} stopped working; now speaking through {new}.").format(
                        name=self._t(old_name), new=self._label(self.active)
                    )
                )

    def _on_failure(self, announcement: Announcement | None, failure: BackendFailed) -> None:
        """A backend failed mid-session: say the same announcement on the next one."""
        with self._lock:
            flight = self._in_flight
            current = announcement is not None and (
                flight is not None and flight.announcement is announcement
            )
            self._fail_over(flight if current else None, str(failure))

    def _fail_over(self, flight: _InFlight | None, reason: str) -> None:
        """Leave the active backend; say ``flight`` (if still unsaid) on the next one."""
        with self._lock:
            if flight is not None:
                flight.backend = None  # the failed backend's late "done" is not ours
            try:
                self._switch(reason)
            except BackendUnavailable:
                if flight is not None:
                    self._complete(flight)
                return
            if flight is not None and not flight.done:
                self._speak_on_active(flight)
            else:
                # a superseded utterance: its caller already moved on
                log.info("speech backend failed on an utterance no longer in flight")

    def _expired(self, flight: _InFlight, backend: SpeechBackend, seconds: float) -> None:
        """The watchdog: ``backend`` has not ended ``flight`` in time, so it is hung."""
        with self._lock:
            if flight.done or flight.backend is not backend or self.active is not backend:
                return
            log.warning("%s hung: no end of speech within %.0f s", backend.name, seconds)
            reason = self._t("no end of speech within {seconds} s").format(seconds=round(seconds))
            self._fail_over(flight, reason)

    # ---------------------------------------------------------------- speaking

    def _complete(self, flight: _InFlight, backend: SpeechBackend | None = None) -> None:
        with self._lock:
            if flight.done or (backend is not None and flight.backend is not backend):
                return
            flight.done = True
            if self._in_flight is flight:
                self._in_flight = None
            if self._watched is flight:
                self._watched = None
                self._watchdog.disarm()
        flight.on_done()

    def _speak_on_active(self, flight: _InFlight) -> None:
        while True:
            with self._lock:
                backend = self.active
                if backend is None:
                    # nothing left to speak with: never leave the caller waiting
                    self._complete(flight)
                    return
                flight.backend = backend
                seconds = self._deadline(flight.announcement.text, flight.voice.rate_wpm)
            try:
                backend.speak(
                    flight.announcement, flight.voice, partial(self._complete, flight, backend)
                )
            except Exception as exc:
                with self._lock:
                    flight.backend = None
                try:
                    self._switch(str(exc) or type(exc).__name__)
                except BackendUnavailable:
                    self._complete(flight)
                    return
                continue
            with self._lock:
                if not flight.done and flight.backend is backend:
                    self._watched = flight
                    self._watchdog.arm(seconds, partial(self._expired, flight, backend, seconds))
            return

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
            self._watched = None
            self._watchdog.disarm()
        if backend is not None:
            backend.close()


def _close_in_background(backend: SpeechBackend) -> None:
    """Close a backend given up on without waiting for it: a hung one may never return."""

    def close() -> None:
        try:
            backend.close()
        except Exception:
            log.info("closing the failed speech backend %s raised", backend.name, exc_info=True)

    threading.Thread(target=close, name=f"announcer-close-{backend.name}", daemon=True).start()


@dataclass(frozen=True, slots=True)
class NoVoiceCause:
    """Why no voice works, for the notice that tells the user how to get one.

    ``kind``: ``no_audio_device`` (the voice is installed, the sound card is not
    there or cannot be opened), ``missing_package`` (``package`` is not installed;
    ``install`` is how to get it), or ``unknown``. ``detail``: the reason as the
    output itself gave it.
    """

    kind: str
    detail: str = ""
    package: str = ""
    install: str = ""


# What a local voice's failure says, and the Debian packages missing then (the command
# that installs them on this system comes from announcer.platform.speech_install).
_MISSING_PACKAGES = (
    ("install alsa-utils", ("alsa-utils",)),
    ("install espeak-ng", ("espeak-ng", "libespeak-ng1")),
    ("python3-speechd", ("speech-dispatcher",)),
)


def _install_command(packages: Sequence[str]) -> str:
    from announcer.platform.speech_install import speech_install_hint

    return speech_install_hint(missing=list(packages)) or " ".join(packages)


def why_no_voice(skipped: Sequence[tuple[str, str]]) -> NoVoiceCause:
    """The real cause among the outputs ``auto`` tried (``FallbackBackend.skipped``).

    The local voice (pyttsx3 with espeak-ng) decides: a screen reader that is not
    running, or a speech-dispatcher server that is not started, is the normal case.
    """
    reasons = dict(skipped)
    local = reasons.get("pyttsx3", "")
    if "pyttsx3 is not installed" in local:  # a Python package: announcer's own install
        return NoVoiceCause("missing_package", local, "pyttsx3", "pip install pyttsx3")
    for words, packages in _MISSING_PACKAGES:
        if words in local:
            package = ", ".join(packages)
            return NoVoiceCause("missing_package", local, package, _install_command(packages))
    if local.startswith("no audio output"):
        return NoVoiceCause("no_audio_device", local.removeprefix("no audio output: "))
    for _name, reason in skipped:
        for words, packages in _MISSING_PACKAGES:
            if words in reason:
                package = ", ".join(packages)
                return NoVoiceCause("missing_package", reason, package, _install_command(packages))
    return NoVoiceCause("unknown", local)
