"""speech-dispatcher, spoken to directly so urgency becomes its priority classes.

The Python bindings (``speechd``) ship with Debian's ``python3-speechd``, not on
PyPI. When the virtual environment cannot import them, this module borrows them
from the system's dist-packages (appended to ``sys.path``, so nothing there
shadows our own dependencies); the bindings are pure Python and use only the
standard library.

Urgency maps to SSIP priorities, the model screen-reader users know from Orca:
critical -> ``important`` (never discarded, interrupts), normal -> ``message``
(queued, never discarded) or ``text`` for streamed agent output the user may
skip, background -> ``notification`` (dropped if anything else speaks) or
``progress`` for progress reports.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from announcer.engine.announcement import Announcement, Urgency
from announcer.speech.backend import (
    BackendCapabilities,
    BackendFailed,
    BackendUnavailable,
    FailureListener,
    VoiceSettings,
    paced_voice,
)
from announcer.speech.voices import VoiceResolver, without_marks

log = logging.getLogger(__name__)

SYSTEM_DIST_PACKAGES = ("/usr/lib/python3/dist-packages", "/usr/local/lib/python3/dist-packages")
NOT_INSTALLED = (
    "speech-dispatcher's Python bindings are not installed "
    "(on Debian: apt-get install speech-dispatcher python3-speechd)"
)


def import_speechd() -> ModuleType | None:
    try:
        return importlib.import_module("speechd")
    except ImportError:
        pass
    for directory in SYSTEM_DIST_PACKAGES:
        if not (Path(directory) / "speechd").is_dir():
            continue
        added = directory not in sys.path
        if added:
            sys.path.append(directory)
        try:
            return importlib.import_module("speechd")
        except ImportError:
            continue
        finally:
            if added:
                sys.path.remove(directory)
    return None


def priority_for(announcement: Announcement) -> str:
    """The SSIP priority class for an announcement (values of ``speechd.Priority``)."""
    if announcement.urgency is Urgency.CRITICAL:
        return "important"
    if announcement.urgency is Urgency.BACKGROUND:
        return "progress" if "progress" in announcement.kind else "notification"
    if announcement.kind.startswith("agent.output"):
        return "text"
    return "message"


def _scale(value: float, lo: float, hi: float) -> int:
    """Map ``lo..hi`` onto SSIP's -100..100."""
    fraction = (value - lo) / (hi - lo)
    return max(-100, min(100, round(fraction * 200 - 100)))


def ssip_rate(rate_wpm: int) -> int:
    """Words per minute to SSIP -100..100: its espeak-ng module spans ~80-450 wpm, 0 is ~180."""
    if rate_wpm <= 180:
        value = (rate_wpm - 180) / (180 - 80) * 100
    else:
        value = (rate_wpm - 180) / (450 - 180) * 100
    return max(-100, min(100, round(value)))


@dataclass(eq=False)
class _Message:
    announcement: Announcement
    on_done: Callable[[], None]
    finished: bool = False
    began: bool = False
    watchdog: threading.Timer | None = None


class SpeechdBackend:
    """SSIP commands wait for the server's answer, and a server whose audio output is
    stuck stops answering: every command therefore runs on one command thread, so
    ``speak`` and ``stop`` never block the caller, and a silent server becomes a
    reported failure (the fallback moves on) instead of a hang."""

    name = "speechd"
    capabilities = BackendCapabilities(can_interrupt=True, has_priorities=True, produces_audio=True)

    # a message that neither ends nor is cancelled this long after its expected
    # duration means the server's audio output is stuck: a mid-session failure
    STALL_GRACE_S = 15.0
    COMMAND_TIMEOUT_S = 10.0

    def __init__(
        self,
        *,
        address: str | None = None,
        autospawn: bool = True,
        resolver: VoiceResolver | None = None,
        user_voice: VoiceSettings | None = None,
        user_voices: dict[str, str] | None = None,
    ) -> None:
        self.address = address
        self.autospawn = autospawn
        self._resolver = resolver or VoiceResolver(
            "speechd", user=user_voice, user_voices=user_voices
        )
        self._client: Any = None
        self._speechd: Any = None
        self._lock = threading.Lock()
        self._current: _Message | None = None
        self._listener: FailureListener | None = None
        self._applied: dict[str, Any] = {}
        self._commands = ThreadPoolExecutor(1, thread_name_prefix="announcer-speechd")
        self._dead: str | None = None  # why the server is gone, once it is

    def start(self) -> None:
        speechd = import_speechd()
        if speechd is None:
            raise BackendUnavailable(NOT_INSTALLED)
        try:
            client = speechd.SSIPClient(
                "announcer",
                component="announcements",
                address=self.address,
                autospawn=self.autospawn,
            )
        except Exception as exc:
            original = getattr(exc, "original_exception", None)
            cause = (original() if callable(original) else original) or exc
            detail = " ".join(str(cause).split()) or type(cause).__name__
            raise BackendUnavailable(f"no speech-dispatcher server answers ({detail})") from exc
        self._speechd = speechd
        self._client = client
        self._dead = None
        # The bindings' reader thread ends when the server closes the connection (killed,
        # crashed, restarted): that is the moment speech stopped, so it is said then, not
        # at a watchdog's end (issue 29 item 4). Without the thread, the watchdog remains.
        reader = getattr(getattr(client, "_conn", None), "_communication_thread", None)
        if isinstance(reader, threading.Thread):
            threading.Thread(
                target=self._watch_server,
                args=(client, reader),
                name="announcer-speechd-watch",
                daemon=True,
            ).start()

    def _watch_server(self, client: Any, reader: threading.Thread) -> None:
        reader.join()
        if self._client is not client:
            return  # we closed it ourselves
        reason = "speech-dispatcher closed the connection"
        self._dead = reason
        with self._lock:
            message = self._current
        if message is not None:
            self._fail(message, reason)
            return
        listener = self._listener
        if listener is not None:
            listener(None, BackendFailed(reason))  # between utterances: said now, all the same

    def close(self) -> None:
        self.stop()
        client, self._client = self._client, None
        if client is not None:
            closing = self._commands.submit(client.close)
            with contextlib.suppress(Exception):
                closing.result(timeout=self.COMMAND_TIMEOUT_S)
        self._commands.shutdown(wait=False, cancel_futures=True)

    def flush(self, timeout: float | None = None) -> None:
        """Wait until every command sent so far has been answered (tests, shutdown)."""
        self._commands.submit(lambda: None).result(timeout=timeout)

    def set_failure_listener(self, listener: FailureListener | None) -> None:
        self._listener = listener

    def voices(self) -> list[tuple[str, str, str]]:
        """(name, language, variant) of every synthesis voice the server offers."""
        if self._client is None:
            return []
        return [tuple(v) for v in self._client.list_synthesis_voices()]

    def _apply(self, client: Any, announcement: Announcement, voice: VoiceSettings) -> None:
        settings = paced_voice(
            self._resolver.choose(announcement.language, voice).settings, announcement
        )
        wanted: dict[str, Any] = {
            "priority": priority_for(announcement),
            "language": announcement.language,
            "voice": settings.voice,
            "rate": None if settings.rate_wpm is None else ssip_rate(settings.rate_wpm),
            "pitch": None if settings.pitch is None else _scale(settings.pitch, 0.0, 1.0),
            "volume": None if settings.volume is None else _scale(settings.volume, 0.0, 1.0),
        }
        setters: dict[str, Callable[[Any], Any]] = {
            "priority": client.set_priority,
            "language": client.set_language,
            "voice": client.set_synthesis_voice,
            "rate": client.set_rate,
            "pitch": client.set_pitch,
            "volume": client.set_volume,
        }
        for key, value in wanted.items():
            if value is None or self._applied.get(key) == value:
                continue
            try:
                setters[key](value)
                self._applied[key] = value
            except Exception as exc:  # a voice or language the server lacks is not fatal
                log.warning("speech-dispatcher refused %s=%r: %s", key, value, exc)

    def speak(
        self, announcement: Announcement, voice: VoiceSettings, on_done: Callable[[], None]
    ) -> None:
        if self._client is None:
            raise BackendUnavailable("the speechd backend was not started")
        if self._dead is not None:
            raise BackendFailed(self._dead)
        self.stop()
        if not announcement.text.strip():
            on_done()
            return
        message = _Message(announcement, on_done)
        with self._lock:
            self._current = message
        cb = self._speechd.CallbackType

        def callback(kind: str, **_: Any) -> None:
            if kind == cb.BEGIN:
                message.began = True
            elif kind in (cb.END, cb.CANCEL):
                self._finish(message)

        profile = self._resolver.choose(announcement.language).profile
        text = announcement.text
        if profile is not None and profile.without_marks:
            text = without_marks(text, profile.letters)  # no voice reads its marks (Yoruba)

        def send() -> None:
            client = self._client
            if client is None:
                return  # closed before it went out (stop() finished it): nothing failed
            self._apply(client, announcement, voice)
            client.speak(text, callback=callback, event_types=(cb.BEGIN, cb.END, cb.CANCEL))

        def sent(done: Future[None]) -> None:
            error = done.exception()
            if error is not None:
                detail = " ".join(str(error).split()) or type(error).__name__
                self._fail(message, f"speech-dispatcher stopped answering ({detail})")

        self._commands.submit(send).add_done_callback(sent)
        words = max(1, len(announcement.text.split()))
        expected_s = words / 150 * 60
        message.watchdog = threading.Timer(
            expected_s * 2 + self.STALL_GRACE_S,
            lambda: self._fail(
                message, "speech-dispatcher never finished speaking (is its audio output working?)"
            ),
        )
        message.watchdog.daemon = True
        message.watchdog.start()

    def _take(self, message: _Message) -> bool:
        with self._lock:
            if message.finished:
                return False
            message.finished = True
            if self._current is message:
                self._current = None
        if message.watchdog is not None:
            message.watchdog.cancel()
        return True

    def _finish(self, message: _Message) -> None:
        if self._take(message):
            try:
                message.on_done()
            except Exception:
                log.exception("on_done callback failed")

    def _fail(self, message: _Message, reason: str) -> None:
        listener = self._listener
        if listener is None:
            log.warning("speechd backend: %s", reason)
            self._finish(message)
        elif self._take(message):
            listener(message.announcement, BackendFailed(reason))

    def stop(self) -> None:
        with self._lock:
            message = self._current
        if message is None or self._client is None:
            return
        client = self._client

        def cancel() -> None:
            try:
                client.cancel()
            except Exception as exc:
                log.warning("speech-dispatcher cancel failed: %s", exc)

        self._commands.submit(cancel)
        # done now: the CANCEL event may come late, or never for a message not yet begun
        self._finish(message)

    def is_speaking(self) -> bool:
        with self._lock:
            return self._current is not None
