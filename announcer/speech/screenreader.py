"""The user's own screen reader (NVDA, JAWS, VoiceOver, Orca) through accessible-output2.

Speaking through the screen reader keeps the voice, rate and braille display
the user already knows. accessible-output2 has no priorities and returns
silently when nothing is there, so this backend only picks a *running* screen
reader (never SAPI or a bare synthesiser, which ``pyttsx3`` covers) and says
clearly when none is found. Urgency maps onto the one knob it has: critical
and interrupting announcements pass ``interrupt=True`` (NVDA's "speak now").

Screen readers do not report when they finish, so ``on_done`` fires after the
time the words take at the user's rate; ``stop`` silences at once.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from announcer.engine.announcement import Announcement, Urgency, directed
from announcer.speech.backend import (
    BackendCapabilities,
    BackendFailed,
    BackendUnavailable,
    FailureListener,
    VoiceSettings,
)

log = logging.getLogger(__name__)

# accessible-output2 modules that are screen readers, per platform (SAPI 5 and
# bare espeak are synthesisers, not screen readers, and are left out on purpose)
SCREEN_READER_MODULES = {
    "win32": ("nvda", "jaws", "window_eyes", "system_access", "dolphin", "pc_talker", "zdsr"),
    "darwin": ("voiceover",),
    "linux": ("speech_dispatcher",),
}
SCREEN_READER_NAMES = {
    "win32": "NVDA, JAWS, Window-Eyes, System Access, Dolphin, PC-Talker, ZDSR",
    "darwin": "VoiceOver",
    "linux": "Orca",
}
DEFAULT_RATE_WPM = 180
NO_SCREEN_READER = "no screen reader is running (looked for {names})"


def orca_is_running(proc: Path = Path("/proc")) -> bool:
    """Orca speaks through speech-dispatcher; we only join it when Orca itself runs."""
    try:
        entries = list(proc.iterdir())
    except OSError:
        return False
    for entry in entries:
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if any(os.path.basename(part) == b"orca" for part in command[:2] if part):
            return True
    return False


def _platform_key() -> str:
    return "linux" if sys.platform.startswith("linux") else sys.platform


def installed_screen_readers() -> tuple[list[Any], str]:
    """Instances of accessible-output2's screen-reader outputs, and why some could not load."""
    key = _platform_key()
    modules = SCREEN_READER_MODULES.get(key, ())
    if key == "linux":
        if not orca_is_running():
            return [], "Orca is not running"
        from announcer.speech.speechd_backend import NOT_INSTALLED, import_speechd

        if import_speechd() is None:
            return [], NOT_INSTALLED
    try:
        import importlib

        importlib.import_module("accessible_output2.outputs")
    except Exception as exc:
        return [], f"accessible-output2 could not load ({exc})"
    outputs: list[Any] = []
    problems: list[str] = []
    for module_name in modules:
        captured = io.StringIO()
        try:
            # accessible-output2 prints its own errors; keep them out of our stdout
            with contextlib.redirect_stdout(captured):
                module = importlib.import_module(f"accessible_output2.outputs.{module_name}")
                outputs.append(module.output_class())
        except Exception as exc:
            problems.append(f"{module_name}: {exc}")
        if captured.getvalue().strip():
            problems.append(captured.getvalue().strip().splitlines()[-1])
    return outputs, "; ".join(problems)


class ScreenReaderBackend:
    name = "screenreader"
    capabilities = BackendCapabilities(
        can_interrupt=True, is_screen_reader=True, supports_braille=True
    )

    def __init__(self, outputs: Sequence[Any] | None = None, *, braille: bool = True) -> None:
        """``outputs`` replaces the accessible-output2 discovery (tests, other platforms)."""
        self._candidates = None if outputs is None else list(outputs)
        self.braille = braille
        self.output: Any = None
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self._on_done: Callable[[], None] | None = None
        self._listener: FailureListener | None = None

    @property
    def output_name(self) -> str:
        return str(getattr(self.output, "name", type(self.output).__name__))

    def start(self) -> None:
        problems = ""
        if self._candidates is None:
            candidates, problems = installed_screen_readers()
        else:
            candidates = self._candidates
        for output in candidates:
            try:
                active = bool(output.is_active())
            except Exception as exc:
                log.debug("screen reader %r: %s", output, exc)
                active = False
            if active:
                self.output = output
                return
        names = SCREEN_READER_NAMES.get(_platform_key(), "none known on this platform")
        raise BackendUnavailable(
            f"no screen reader is running ({problems})"
            if problems
            else NO_SCREEN_READER.format(names=names)
        )

    def close(self) -> None:
        self.stop()
        output, self.output = self.output, None
        close = getattr(output, "close", None)
        if callable(close):
            with contextlib.suppress(Exception):
                close()

    def set_failure_listener(self, listener: FailureListener | None) -> None:
        self._listener = listener

    def speak(
        self, announcement: Announcement, voice: VoiceSettings, on_done: Callable[[], None]
    ) -> None:
        if self.output is None:
            raise BackendUnavailable("the screenreader backend was not started")
        self.stop()
        interrupt = announcement.interrupt or announcement.urgency is Urgency.CRITICAL
        try:
            self.output.speak(announcement.text, interrupt=interrupt)
            if self.braille and callable(getattr(self.output, "braille", None)):
                # §11.4: a braille display shows the text in its declared direction
                self.output.braille(directed(announcement.text, announcement.direction))
        except Exception as exc:
            failure = BackendFailed(f"{self.output_name} stopped answering ({exc})")
            if self._listener is None:
                raise failure from exc
            self._listener(announcement, failure)
            return
        words = max(1, len(announcement.text.split()))
        seconds = words * 60 / (voice.rate_wpm or DEFAULT_RATE_WPM) + 0.3
        timer = threading.Timer(seconds, self._finish)
        timer.daemon = True
        with self._lock:
            self._on_done = on_done
            self._timer = timer
        timer.start()

    def _finish(self) -> None:
        with self._lock:
            on_done, self._on_done = self._on_done, None
            timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()
        if on_done is not None:
            on_done()

    def stop(self) -> None:
        with self._lock:
            speaking = self._on_done is not None
        if not speaking:
            return
        silence = getattr(self.output, "silence", None)
        if callable(silence):
            try:
                silence()
            except Exception as exc:
                log.warning("%s could not be silenced: %s", self.output_name, exc)
        self._finish()

    def is_speaking(self) -> bool:
        with self._lock:
            return self._on_done is not None
