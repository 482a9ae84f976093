"""The user's own screen reader and braille display, through prismatoid (accessible-output2 after).

Speaking through the screen reader keeps the voice, rate and braille display the user
already knows. prismatoid gives one API for NVDA, JAWS, VoiceOver, Orca, SAPI, OneCore
and Speech Dispatcher: speak (with interrupt), braille, stop and, where the backend can
tell, is-speaking. ``--speech screenreader`` uses prismatoid's best backend here;
``--speech screenreader:NAME`` the one named (``SCREEN_READER_TARGETS``). In the auto
chain only a *running screen reader* counts (``screen_readers_only``): a bare synthesiser
comes later in the chain (speechd, pyttsx3). accessible-output2 stays behind prismatoid
for a screen reader prismatoid cannot reach.

Priorities: critical and interrupting announcements pass ``interrupt=True`` (NVDA's
"speak now"). End of speech: polled from the backend when it reports is-speaking,
otherwise estimated from the words and the user's rate, so the pace rules hold either
way; ``stop`` silences at once. Braille: ``braille = "auto"`` writes to the display
when the backend has braille, ``"on"`` always tries, ``"off"`` never, except that a
question is always brailled: an answer must never depend on hearing it.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from announcer.engine.announcement import Announcement, Urgency, directed
from announcer.speech.backend import (
    BackendCapabilities,
    BackendFailed,
    BackendUnavailable,
    FailureListener,
    VoiceSettings,
)

log = logging.getLogger(__name__)

BrailleMode = Literal["auto", "on", "off"]
BRAILLE_MODES: tuple[BrailleMode, ...] = ("auto", "on", "off")

# ``--speech screenreader:NAME`` -> the prismatoid BackendId member it names
SCREEN_READER_TARGETS: dict[str, str] = {
    "nvda": "NVDA",
    "jaws": "JAWS",
    "voiceover": "VOICE_OVER",
    "orca": "ORCA",
    "speechd": "SPEECH_DISPATCHER",
    "sapi": "SAPI",
    "onecore": "ONE_CORE",
}
# prismatoid backends that are screen readers; the others (SAPI, OneCore, AVSpeech,
# Speech Dispatcher, UIA) are synthesisers or APIs that the auto chain reaches later.
PRISM_SCREEN_READERS = frozenset(
    {
        "NVDA",
        "JAWS",
        "VOICE_OVER",
        "ORCA",
        "ZDSR",
        "ZOOM_TEXT",
        "SYSTEM_ACCESS",
        "PC_TALKER",
        "BOY_PC_READER",
        "SENSE_READER",
        "WINDOW_EYES",
    }
)
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
# Announcement kinds that ask the user something: always brailled.
QUESTION_KINDS = frozenset({"confirmation", "clarification", "question", "permission"})
DEFAULT_RATE_WPM = 180
POLL_S = 0.05
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


def is_question(announcement: Announcement) -> bool:
    return announcement.kind in QUESTION_KINDS or announcement.earcon == "needs_you"


def braille_mode(value: bool | str) -> BrailleMode:
    """``True``/``False`` (older callers) or one of ``auto``, ``on``, ``off``."""
    if isinstance(value, bool):
        return "on" if value else "off"
    if value not in BRAILLE_MODES:
        raise ValueError(f"braille: must be one of {', '.join(BRAILLE_MODES)}, not {value!r}")
    return value


class PrismOutput:
    """One prismatoid backend, shaped like an accessible-output2 output (and more)."""

    def __init__(self, backend: Any, context: Any) -> None:
        self._backend = backend
        self._context = context  # the backend lives only as long as its context
        self.name = str(backend.name)
        features = backend.features
        self.supports_braille = bool(features.supports_braille)
        self.reports_speaking = bool(features.supports_is_speaking)

    def is_active(self) -> bool:
        return True  # prismatoid creates only a backend that is available now

    def speak(self, text: str, interrupt: bool = False) -> None:
        self._backend.speak(text, interrupt=interrupt)

    def braille(self, text: str) -> None:
        self._backend.braille(text)

    def silence(self) -> None:
        self._backend.stop()

    def is_speaking(self) -> bool:
        return bool(self._backend.speaking)


def prism_outputs(target: str | None, *, screen_readers_only: bool) -> tuple[list[Any], str]:
    """prismatoid backends to try, best first, and why some could not be had."""
    try:
        import prism
    except Exception as exc:  # a missing wheel for this system, a broken native library
        return [], f"prismatoid could not load ({exc})"
    try:
        context = prism.Context()
    except Exception as exc:
        return [], f"prismatoid could not start ({exc})"
    if target is not None:
        ids = [prism.BackendId[SCREEN_READER_TARGETS[target]]]
    elif screen_readers_only:
        ids = [context.id_of(i) for i in range(context.backends_count)]
        ids = [backend_id for backend_id in ids if backend_id.name in PRISM_SCREEN_READERS]
    else:
        try:
            return [PrismOutput(context.create_best(), context)], ""
        except Exception as exc:
            return [], f"prismatoid found no speech output ({exc})"
    outputs: list[Any] = []
    problems: list[str] = []
    for backend_id in ids:
        try:
            outputs.append(PrismOutput(context.create(backend_id), context))
        except Exception as exc:
            problems.append(f"{backend_id.name}: {exc}")
    return outputs, "; ".join(problems)


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


class _Utterance:
    """One call to ``speak``: ends once, by its end, a stop, or a newer utterance."""

    __slots__ = ("on_done",)

    def __init__(self, on_done: Callable[[], None]) -> None:
        self.on_done: Callable[[], None] | None = on_done


class ScreenReaderBackend:
    name = "screenreader"
    capabilities = BackendCapabilities(
        can_interrupt=True, is_screen_reader=True, supports_braille=True
    )

    def __init__(
        self,
        outputs: Sequence[Any] | None = None,
        *,
        target: str | None = None,
        screen_readers_only: bool = False,
        braille: bool | str = "auto",
        poll_s: float = POLL_S,
    ) -> None:
        """``outputs`` replaces the discovery (tests, and a screen reader found elsewhere);
        ``target`` is a name from ``SCREEN_READER_TARGETS``."""
        if target is not None and target not in SCREEN_READER_TARGETS:
            raise ValueError(
                f"screenreader:{target}: the name must be one of "
                + ", ".join(SCREEN_READER_TARGETS)
            )
        self._candidates = None if outputs is None else list(outputs)
        self.target = target
        self.screen_readers_only = screen_readers_only
        self.braille: BrailleMode = braille_mode(braille)
        self.output: Any = None
        self._poll_s = poll_s
        self._lock = threading.Lock()
        self._current: _Utterance | None = None
        self._timer: threading.Timer | None = None
        self._listener: FailureListener | None = None

    @property
    def output_name(self) -> str:
        return str(getattr(self.output, "name", type(self.output).__name__))

    def _discover(self) -> tuple[list[Any], list[str]]:
        problems = []
        candidates, why = prism_outputs(self.target, screen_readers_only=self.screen_readers_only)
        if why:
            problems.append(why)
        if self.target is None:
            others, why = installed_screen_readers()
            candidates += others
            if why:
                problems.append(why)
        return candidates, problems

    def start(self) -> None:
        problems: list[str] = []
        if self._candidates is None:
            candidates, problems = self._discover()
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
        if self.target is not None:
            raise BackendUnavailable(
                f"screenreader:{self.target} is not available here ({'; '.join(problems)})"
            )
        names = SCREEN_READER_NAMES.get(_platform_key(), "none known on this platform")
        raise BackendUnavailable(
            f"no screen reader is running ({'; '.join(problems)})"
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

    def wants_braille(self, announcement: Announcement) -> bool:
        if not callable(getattr(self.output, "braille", None)):
            return False
        if is_question(announcement) or self.braille == "on":
            return True
        return self.braille == "auto" and bool(getattr(self.output, "supports_braille", True))

    def speak(
        self, announcement: Announcement, voice: VoiceSettings, on_done: Callable[[], None]
    ) -> None:
        if self.output is None:
            raise BackendUnavailable("the screenreader backend was not started")
        self.stop()
        interrupt = announcement.interrupt or announcement.urgency is Urgency.CRITICAL
        try:
            self.output.speak(announcement.text, interrupt=interrupt)
        except Exception as exc:
            failure = BackendFailed(f"{self.output_name} stopped answering ({exc})")
            if self._listener is None:
                raise failure from exc
            self._listener(announcement, failure)
            return
        if self.wants_braille(announcement):
            try:
                # §11.4: a braille display shows the text in its declared direction
                self.output.braille(directed(announcement.text, announcement.direction))
            except Exception as exc:  # no display attached: speech goes on
                log.info("%s could not braille: %s", self.output_name, exc)
        words = max(1, len(announcement.text.split()))
        estimate = words * 60 / (voice.rate_wpm or DEFAULT_RATE_WPM) + 0.3
        utterance = _Utterance(on_done)
        with self._lock:
            self._current = utterance
        if getattr(self.output, "reports_speaking", False):
            threading.Thread(
                target=self._watch,
                args=(utterance, estimate),
                name="announcer-screenreader-end",
                daemon=True,
            ).start()
            return
        timer = threading.Timer(estimate, self._finish, args=(utterance,))
        timer.daemon = True
        with self._lock:
            self._timer = timer
        timer.start()

    def _watch(self, utterance: _Utterance, estimate: float) -> None:
        """Ends ``utterance`` when the backend stops speaking it (or never began, by
        the time its words would have taken)."""
        began = time.monotonic()
        seen_speaking = False
        while True:
            with self._lock:
                if self._current is not utterance:
                    return
            try:
                speaking = bool(self.output.is_speaking())
            except Exception as exc:
                log.info("%s could not say whether it speaks: %s", self.output_name, exc)
                speaking = time.monotonic() - began < estimate
            seen_speaking = seen_speaking or speaking
            if not speaking and (seen_speaking or time.monotonic() - began >= estimate):
                self._finish(utterance)
                return
            time.sleep(self._poll_s)

    def _finish(self, utterance: _Utterance | None = None) -> None:
        with self._lock:
            current = self._current
            if current is None or (utterance is not None and utterance is not current):
                return
            self._current = None
            timer, self._timer = self._timer, None
            on_done, current.on_done = current.on_done, None
        if timer is not None:
            timer.cancel()
        if on_done is not None:
            on_done()

    def stop(self) -> None:
        with self._lock:
            speaking = self._current is not None
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
            return self._current is not None


def speechd_socket() -> Path | None:
    """The Unix socket a running Speech Dispatcher listens on, as libspeechd finds it."""
    address = os.environ.get("SPEECHD_ADDRESS", "")
    if address.startswith("unix_socket:"):
        return Path(address.partition(":")[2])
    if address:
        return None  # inet_socket: libspeechd connects without autospawn
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    base = Path(runtime) if runtime else Path.home() / ".cache"
    return base / "speech-dispatcher" / "speechd.sock"


def speechd_answers(path: Path | None) -> bool:
    """True when a server accepts connections on ``path`` (never starts one)."""
    if sys.platform == "win32":
        return False  # Speech Dispatcher is a Linux service
    if path is None:
        return True  # an inet_socket address the user set: libspeechd will not spawn there
    import socket

    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(2.0)
        try:
            probe.connect(str(path))
        except OSError:
            return False
    return True


class PrismSpeechdBackend(ScreenReaderBackend):
    """Speech Dispatcher through prismatoid: for installs (uv, pipx) that cannot have
    Debian's ``python3-speechd``. Priorities reduce to interrupt or queue."""

    name = "speechd"
    capabilities = BackendCapabilities(can_interrupt=True, produces_audio=True)

    def __init__(self, *, autospawn: bool = True, braille: bool | str = "off") -> None:
        super().__init__(target="speechd", braille=braille)
        self.autospawn = autospawn

    def start(self) -> None:
        # libspeechd starts a server when none runs; the auto chain only joins a running one
        if not self.autospawn and not speechd_answers(speechd_socket()):
            raise BackendUnavailable("no speech-dispatcher server is running")
        super().start()
