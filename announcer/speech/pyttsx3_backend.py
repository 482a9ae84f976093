"""Text to speech through pyttsx3, with playback that a critical message can cut.

pyttsx3 2.99 cannot be interrupted on Linux (its ``say`` blocks in ``aplay``,
``stop`` does nothing, several ``say`` calls speak only the last), but
``save_to_file`` synthesises a sentence in about 15 ms. So each utterance is
synthesised to a temporary WAV on ONE engine thread (pyttsx3 engines are not
thread-safe, and ``pyttsx3.init`` shares one engine per driver) and played by a
player process that ``stop`` kills (``announcer.speech.audio``).
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import logging
import queue
import re
import shutil
import sys
import tempfile
import textwrap
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from announcer.engine.announcement import Announcement
from announcer.speech.audio import (
    Playback,
    PlaybackOutcome,
    PlaybackResult,
    Player,
    find_audio_player,
    wav_info,
)
from announcer.speech.backend import (
    BackendCapabilities,
    BackendFailed,
    BackendUnavailable,
    FailureListener,
    VoiceSettings,
    Watchdog,
    paced_voice,
    speaking_seconds,
)
from announcer.speech.earcons import earcon_path
from announcer.speech.voices import VoiceResolver, match_language, speakable_text

log = logging.getLogger(__name__)

T = TypeVar("T")

ENGINE_START_TIMEOUT_S = 30.0
HISTORY_LENGTH = 64
WAV_HEADER_BYTES = 44
# Synthesis runs far faster than speech (espeak-ng: ~1/50 of the speaking time); one that
# takes longer than saying the text plus this is hung.
SYNTHESIS_SLACK_S = 5.0


@dataclass(frozen=True, slots=True)
class EngineVoice:
    id: str
    name: str
    languages: tuple[str, ...]


def _quiet_print(*_args: object, **_kwargs: object) -> None:
    """Stands in for ``print`` in pyttsx3's espeak driver, which announces every saved file
    on stdout and would corrupt the text/jsonl output that shares it."""


_CLAUSE_END = re.compile(r"(?<=[.!?;:])\s+")
FIRST_CHUNK_CHARS = 160
READ_AHEAD_S = 0.6  # synthesise the next part this long before the voice needs it
CHUNK_CHARS = 250  # ~30 ms of synthesis: the most a barge-in can wait for the engine


def speech_chunks(text: str) -> list[str]:
    """Split a text at sentence ends into chunks: a short first one, so the voice starts
    at once (espeak-ng takes ~1 s for 3,000 characters), then larger ones synthesised
    while the earlier ones play."""
    chunks: list[str] = []
    current = ""
    for sentence in _CLAUSE_END.split(" ".join(text.split())):
        for part in textwrap.wrap(sentence, CHUNK_CHARS) or []:
            limit = CHUNK_CHARS if chunks else FIRST_CHUNK_CHARS
            if current and len(current) + 1 + len(part) > limit:
                chunks.append(current)
                current = part
            else:
                current = f"{current} {part}" if current else part
    if current:
        chunks.append(current)
    return chunks


class Synthesizer:
    """The pyttsx3 engine, confined to one thread; other threads submit jobs."""

    def __init__(self, driver_name: str | None = None) -> None:
        self._driver_name = driver_name
        # (priority, order, job): a barge-in's first words jump ahead of the later parts
        # of a long text still being synthesised
        self._jobs: queue.PriorityQueue[tuple[int, int, Callable[[], None]]] = queue.PriorityQueue()
        self._order = itertools.count()
        self._thread: threading.Thread | None = None
        self._engine: Any = None
        self._defaults: dict[str, Any] = {}
        self._applied: dict[str, Any] = {}
        self._lock = threading.Lock()
        self._voices: list[EngineVoice] = []
        self._changed = False
        self._espeak_busy: Callable[[], Any] | None = None
        self._driver: Any = None  # pyttsx3's espeak driver, when that is the engine
        self._watchdog = Watchdog()

    def start(self) -> None:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="announcer-pyttsx3", daemon=True
                )
                self._thread.start()
        if threading.current_thread() is self._thread:
            self._ensure_engine()  # a fallback started from the engine thread itself
            return
        ready = self.submit(self._ensure_engine)
        try:
            ready.result(timeout=ENGINE_START_TIMEOUT_S)
        except BackendUnavailable:
            raise
        except Exception as exc:
            raise BackendUnavailable(f"pyttsx3 could not start its speech engine: {exc}") from exc

    def _run(self) -> None:
        while True:
            _, _, job = self._jobs.get()
            if job is _STOP:
                # Let go of the engine on the thread that made it, before the process ends.
                self._engine = None
                return
            job()

    def shut_down(self, timeout: float = 2.0) -> None:
        """End the engine thread once queued work has run (called at process exit).

        Left to the interpreter's teardown, a daemon thread still holding the espeak
        engine could leave the process hanging after its work was done.
        """
        thread = self._thread
        if thread is None or not thread.is_alive() or threading.current_thread() is thread:
            return
        self._jobs.put((3, next(self._order), _STOP))
        thread.join(timeout)

    def submit(
        self,
        work: Callable[[], T],
        priority: int = 0,
        wanted: Callable[[], bool] | None = None,
    ) -> Future[T]:
        """Run ``work`` on the engine thread; skipped (cancelled) if ``wanted()`` turns false."""
        future: Future[T] = Future()

        def job() -> None:
            if wanted is not None and not wanted():
                future.cancel()
            if not future.set_running_or_notify_cancel():
                return
            try:
                future.set_result(work())
            except BaseException as exc:
                future.set_exception(exc)

        self._jobs.put((priority, next(self._order), job))
        return future

    def _ensure_engine(self) -> None:
        if self._engine is not None:
            return
        try:
            import pyttsx3
        except ImportError as exc:
            raise BackendUnavailable("pyttsx3 is not installed") from exc
        try:
            engine = pyttsx3.init(self._driver_name) if self._driver_name else pyttsx3.init()
        except Exception as exc:
            hint = (
                " (install espeak-ng and libespeak-ng1)" if sys.platform.startswith("linux") else ""
            )
            raise BackendUnavailable(f"pyttsx3 found no speech engine{hint}: {exc}") from exc
        espeak_driver = sys.modules.get("pyttsx3.drivers.espeak")
        if espeak_driver is not None:
            espeak_driver.print = _quiet_print  # type: ignore[attr-defined]
            espeak_lib = sys.modules.get("pyttsx3.drivers._espeak")
            self._espeak_busy = getattr(espeak_lib, "IsPlaying", None)
            self._driver = getattr(getattr(engine, "proxy", None), "_driver", None)
            _guard_synth_callback(espeak_lib, self._driver)
        self._engine = engine
        for prop in ("voice", "rate", "volume", "pitch"):
            with contextlib.suppress(Exception):
                self._defaults[prop] = engine.getProperty(prop)
        self._applied = dict(self._defaults)
        voices = []
        for voice in engine.getProperty("voices") or []:
            languages = tuple(
                lang.decode("utf-8", "replace") if isinstance(lang, bytes) else str(lang)
                for lang in (getattr(voice, "languages", None) or [])
            )
            voices.append(EngineVoice(str(voice.id), str(voice.name), languages))
        self._voices = voices

    @property
    def voices(self) -> list[EngineVoice]:
        return list(self._voices)

    def _set(self, prop: str, value: Any) -> None:
        if value is None:
            value = self._defaults.get(prop)
            if value is None:
                return
        if self._applied.get(prop) == value:
            return
        try:
            self._engine.setProperty(prop, value)
            self._applied[prop] = value
            self._changed = True
        except (KeyError, ValueError, TypeError) as exc:
            log.warning("speech engine refused %s=%r: %s", prop, value, exc)

    def _synthesize_now(self, text: str, settings: VoiceSettings, path: Path) -> Path:
        self._ensure_engine()
        if not path.parent.is_dir():
            raise BackendFailed(f"cannot write speech audio into {path.parent}")
        deadline = SYNTHESIS_SLACK_S + speaking_seconds(text, settings.rate_wpm)
        self._set("voice", settings.voice)
        self._set("rate", settings.rate_wpm)
        self._set("volume", settings.volume)
        if "pitch" in self._defaults:
            # espeak-ng pitch runs 0-100 (50 is normal); ours runs 0.0-1.0
            self._set("pitch", None if settings.pitch is None else round(settings.pitch * 100))
        if self._changed:
            # espeak-ng queues parameter changes on its own thread and pyttsx3 cancels that
            # queue at the end of each utterance, so a new rate or voice was often lost;
            # waiting for the queue to drain makes every change land (measured: 16/16).
            self._settle(time.monotonic() + deadline)
        self._changed = False
        for attempt in (1, 2):
            self._guarded_render(text, path, deadline)
            if path.is_file() and path.stat().st_size > WAV_HEADER_BYTES:
                return path
            # espeak-ng now and then ends a message without handing over its audio;
            # saying it again almost always works, and the user hears it late, not never.
            log.warning("the speech engine produced no audio (attempt %d of 2)", attempt)
        raise BackendFailed("the speech engine produced no audio, twice")

    def _guarded_render(self, text: str, path: Path, deadline_s: float) -> None:
        """``_render`` under a watchdog: a hang past ``deadline_s`` becomes BackendFailed.

        pyttsx3's loop ends only when espeak-ng's callback says the message is done; when
        that callback fails (a full disk, an unwritable folder) or never comes, the loop
        would spin for ever and every later utterance would wait behind it.
        """
        driver = self._driver
        if driver is not None:
            driver._announcer_error = None
            # a stop left over from an earlier message would cancel this one at once
            driver._stopping = False
        hung = threading.Event()

        def expire() -> None:
            hung.set()
            end_loop = getattr(driver, "endLoop", None)
            if callable(end_loop):
                end_loop()

        self._watchdog.arm(deadline_s, expire)
        try:
            self._render(text, path)
            settled = self._settle(time.monotonic() + deadline_s)
        finally:
            self._watchdog.disarm()
        error = getattr(driver, "_announcer_error", None) if driver is not None else None
        if error is not None:
            raise BackendFailed(f"the speech engine could not save its audio ({error})")
        if hung.is_set() or not settled:
            raise BackendFailed(f"speech synthesis did not finish within {deadline_s:.0f} s")

    def _render(self, text: str, path: Path) -> None:
        """Have the engine write ``text`` as a WAV at ``path`` (the seam tests replace)."""
        self._engine.save_to_file(text, str(path))
        self._engine.runAndWait()

    def _settle(self, deadline: float) -> bool:
        """Wait, until ``deadline`` at most, for espeak-ng's own thread to be idle.

        espeak-ng synthesises on its own thread and pyttsx3's loop may return before a
        long text is done; the WAV is written when espeak-ng finishes the message.
        (``espeak_Synchronize`` does the same wait, but without a bound.)
        """
        busy = self._espeak_busy
        if busy is None:
            return True
        while busy():
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.005)
        return True

    def synthesize(
        self,
        text: str,
        settings: VoiceSettings,
        path: Path,
        *,
        later: bool = False,
        wanted: Callable[[], bool] | None = None,
    ) -> Future[Path]:
        """``later`` marks read-ahead work that any first chunk may overtake."""
        return self.submit(
            lambda: self._synthesize_now(text, settings, path), 1 if later else 0, wanted
        )

    def drain(self, timeout: float = ENGINE_START_TIMEOUT_S) -> None:
        """Wait until every job submitted so far has run (before deleting their files)."""
        if self._thread is None or threading.current_thread() is self._thread:
            return
        with contextlib.suppress(Exception):
            self.submit(lambda: None, priority=2).result(timeout=timeout)


def _STOP() -> None:
    """Marks the end of the engine thread's work (see Synthesizer.shut_down)."""


def _guard_synth_callback(espeak_lib: Any, driver: Any) -> None:
    """Make a failure inside pyttsx3's espeak callback end its loop and be reported.

    pyttsx3 writes the WAV inside espeak-ng's callback; when that write fails (disk
    full, folder unwritable) it raises there, ctypes prints and swallows the error, and
    the loop waiting for the callback's "done" never ends. The guard keeps the error
    for ``Synthesizer._guarded_render`` and ends the loop as pyttsx3 would have.
    """
    on_synth = getattr(driver, "_onSynth", None)
    register = getattr(espeak_lib, "SetSynthCallback", None)
    if on_synth is None or register is None or getattr(driver, "_announcer_guarded", False):
        return

    def guarded(wav: Any, samples: int, events: Any) -> int:
        try:
            return int(on_synth(wav, samples, events) or 0)
        except Exception as exc:
            driver._announcer_error = exc
            driver._speaking = False
            driver._data_buffer = b""
            driver.endLoop()
            return 0

    driver._announcer_error = None
    driver._announcer_guarded = True
    register(guarded)


_shared: Synthesizer | None = None
_shared_lock = threading.Lock()


def shared_synthesizer() -> Synthesizer:
    """One engine thread per process: ``pyttsx3.init`` hands every caller the same engine."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = Synthesizer()
            atexit.register(_shared.shut_down)
        return _shared


@dataclass(eq=False)
class _Utterance:
    number: int
    announcement: Announcement
    on_done: Callable[[], None]
    wav: Path | None = None
    playback: Playback | None = None
    stopped: bool = False
    finished: bool = False
    files: list[Path] = field(default_factory=list)
    # long texts: the chunks still to synthesise while the first ones play
    pending: list[str] = field(default_factory=list)
    later_wavs: list[Path] = field(default_factory=list)
    audio_ends_at: float = 0.0  # monotonic time the audio queued so far runs out
    read_ahead: threading.Timer | None = None
    settings: VoiceSettings = field(default_factory=VoiceSettings)


class Pyttsx3Backend:
    """Speaks through pyttsx3; ``stop`` kills the player, so barge-in takes milliseconds.

    One utterance at a time: ``speak`` while speaking stops the current one first
    (its ``on_done`` fires), which is what a barge-in needs.
    """

    name = "pyttsx3"
    capabilities = BackendCapabilities(can_interrupt=True, produces_audio=True)

    def __init__(
        self,
        player: Player | None = None,
        *,
        earcons: bool = True,
        resolver: VoiceResolver | None = None,
        synthesizer: Synthesizer | None = None,
        user_voice: VoiceSettings | None = None,
        user_voices: dict[str, str] | None = None,
        temp_dir: Path | None = None,
    ) -> None:
        self.player = player
        self.earcons = earcons
        self._temp_dir = temp_dir  # where the utterances' WAVs go (default: the system's)
        self._resolver = resolver
        self._user_voice = user_voice
        self._user_voices = user_voices
        self._synth = synthesizer or shared_synthesizer()
        self._lock = threading.Lock()
        self._numbers = itertools.count(1)
        self._current: _Utterance | None = None
        self._work_dir: Path | None = None
        self._listener: FailureListener | None = None
        # (announcement, wav) of the latest utterances that reached the player (tests, review)
        self.history: deque[tuple[Announcement, Path | None]] = deque(maxlen=HISTORY_LENGTH)

    # ---------------------------------------------------------------- lifecycle

    def start(self) -> None:
        if self.player is None:
            player, reason = find_audio_player()
            if player is None:
                raise BackendUnavailable(f"no audio output: {reason}")
            self.player = player
        self._synth.start()
        if self._resolver is None:
            self._resolver = VoiceResolver(
                "pyttsx3",
                user=self._user_voice,
                user_voices=self._user_voices,
                installed=[v.id for v in self._synth.voices],
            )
        try:
            self._work_dir = Path(tempfile.mkdtemp(prefix="announcer-tts-", dir=self._temp_dir))
        except OSError as exc:
            raise BackendUnavailable(f"cannot make a folder for speech audio: {exc}") from exc

    def close(self) -> None:
        self.stop()
        self._synth.drain()
        close_player = getattr(self.player, "close", None)
        if callable(close_player):
            close_player()
        if self._work_dir is not None:
            shutil.rmtree(self._work_dir, ignore_errors=True)
            self._work_dir = None

    def set_failure_listener(self, listener: FailureListener | None) -> None:
        self._listener = listener

    def installed_voices(self, language: str) -> list[str]:
        """The engine voices that speak ``language`` (its primary subtag), for giving each
        of several agents a voice of its own (announcer.engine.agent_voices)."""
        primary = language.partition("-")[0].casefold()
        return [
            voice.id
            for voice in self._synth.voices
            if any(
                lang.replace("_", "-").partition("-")[0].casefold() == primary
                for lang in voice.languages
            )
        ]

    def voice_for(self, language: str, voice: VoiceSettings | None = None) -> VoiceSettings:
        if self._resolver is None:
            raise BackendUnavailable("the pyttsx3 backend was not started")
        choice = self._resolver.choose(language, voice)
        if choice.settings.voice is None:
            # no profile for this language: any installed engine voice that speaks it
            by_language = {lang: v.id for v in self._synth.voices for lang in v.languages}
            tag = match_language(language, by_language)
            if tag is not None:
                return VoiceSettings(
                    by_language[tag],
                    choice.settings.rate_wpm,
                    choice.settings.pitch,
                    choice.settings.volume,
                )
        return choice.settings

    def text_for(self, text: str, language: str) -> str:
        """``text`` as this engine's voice for ``language`` can read it (voices.speakable_text)."""
        if self._resolver is None:
            raise BackendUnavailable("the pyttsx3 backend was not started")
        profile = self._resolver.choose(language).profile
        spoken = [lang for v in self._synth.voices for lang in v.languages]
        return speakable_text(text, language, profile, spoken)

    # ---------------------------------------------------------------- speaking

    def speak(
        self, announcement: Announcement, voice: VoiceSettings, on_done: Callable[[], None]
    ) -> None:
        if self._work_dir is None or self.player is None:
            raise BackendUnavailable("the pyttsx3 backend was not started")
        self.stop()
        utterance = _Utterance(next(self._numbers), announcement, on_done)
        with self._lock:
            self._current = utterance
        earcon = earcon_path(announcement.earcon) if self.earcons else None
        if earcon is not None:
            utterance.files.append(earcon)
        chunks = speech_chunks(self.text_for(announcement.text, announcement.language))
        if chunks:
            utterance.wav = self._work_dir / f"utterance-{utterance.number}.wav"
            utterance.settings = paced_voice(
                self.voice_for(announcement.language, voice), announcement
            )
            utterance.pending = chunks[1:]
            future = self._synth.synthesize(
                chunks[0], utterance.settings, utterance.wav, wanted=lambda: not utterance.stopped
            )
            future.add_done_callback(lambda done: self._synthesized(utterance, done))
        else:
            self._play(utterance)

    def _synthesized(self, utterance: _Utterance, future: Future[Path]) -> None:
        if future.cancelled():  # stopped before the engine got to it
            self._finish(utterance)
            return
        error = future.exception()
        if error is not None:
            if utterance.stopped:
                self._finish(utterance)
            else:
                self._fail(utterance, f"speech synthesis failed: {error}")
            return
        assert utterance.wav is not None
        utterance.files.append(utterance.wav)
        self._play(utterance)
        if utterance.pending:
            self._schedule_next(utterance)

    def _schedule_next(self, utterance: _Utterance) -> None:
        """Synthesise the next part shortly before the queued audio runs out, not at once:
        the engine then stays free for a barge-in's first words almost all the time."""
        if utterance.stopped or utterance.finished:
            return
        delay = utterance.audio_ends_at - READ_AHEAD_S - time.monotonic()
        if delay <= 0:
            self._synthesize_next(utterance)
            return
        timer = threading.Timer(delay, self._synthesize_next, args=(utterance,))
        timer.daemon = True
        utterance.read_ahead = timer
        timer.start()

    def _queue_audio(self, utterance: _Utterance, files: list[Path]) -> None:
        seconds = 0.0
        for path in files:
            with contextlib.suppress(OSError, EOFError, ValueError):
                seconds += wav_info(path).duration_s
        utterance.audio_ends_at = max(utterance.audio_ends_at, time.monotonic()) + seconds

    def _synthesize_next(self, utterance: _Utterance) -> None:
        """Synthesise the next chunk of a long text while the previous one plays."""
        work_dir = self._work_dir
        playback = utterance.playback
        if utterance.stopped or utterance.finished or playback is None or work_dir is None:
            return  # a read-ahead timer may fire after the utterance or the backend ended
        if not utterance.pending:
            playback.end()
            return
        text = utterance.pending.pop(0)
        path = work_dir / f"utterance-{utterance.number}.{len(utterance.later_wavs) + 2}.wav"
        utterance.later_wavs.append(path)

        def synthesized(future: Future[Path]) -> None:
            if utterance.stopped or future.cancelled():
                return
            error = future.exception()
            if error is not None:
                log.warning("pyttsx3 backend: a later part could not be synthesised: %s", error)
                playback.end()
                return
            self._queue_audio(utterance, [path])
            playback.append(path)
            self._schedule_next(utterance)

        self._synth.synthesize(
            text, utterance.settings, path, later=True, wanted=lambda: not utterance.stopped
        ).add_done_callback(synthesized)

    def _play(self, utterance: _Utterance) -> None:
        assert self.player is not None
        with self._lock:
            if utterance.stopped:
                start = False
            else:
                start = bool(utterance.files)
                if start:
                    self._queue_audio(utterance, utterance.files)
                    self.history.append((utterance.announcement, utterance.wav))
                    utterance.playback = self.player.play(
                        list(utterance.files),
                        lambda result: self._played(utterance, result),
                        open_ended=bool(utterance.pending),
                    )
        if not start:
            self._discard(utterance)
            self._finish(utterance)

    def _played(self, utterance: _Utterance, result: PlaybackResult) -> None:
        if result.outcome is PlaybackOutcome.FAILED and not utterance.stopped:
            self._fail(utterance, result.reason)
        else:
            self._finish(utterance)

    def _fail(self, utterance: _Utterance, reason: str) -> None:
        listener = self._listener
        if listener is None:
            log.warning("pyttsx3 backend: %s", reason)
            self._finish(utterance)
            return
        if not self._close(utterance):
            return
        listener(utterance.announcement, BackendFailed(reason))

    def _finish(self, utterance: _Utterance) -> None:
        if not self._close(utterance):
            return
        try:
            utterance.on_done()
        except Exception:
            log.exception("on_done callback failed")

    def _close(self, utterance: _Utterance) -> bool:
        """Ends an utterance exactly once; False when it had already ended (no second report)."""
        with self._lock:
            if utterance.finished:
                return False
            utterance.finished = True
            if self._current is utterance:
                self._current = None
            if utterance.read_ahead is not None:
                utterance.read_ahead.cancel()  # no later part of an ended utterance
        self._discard(utterance)
        return True

    @staticmethod
    def _discard(utterance: _Utterance) -> None:
        for wav in [utterance.wav, *utterance.later_wavs]:
            if wav is not None:
                with contextlib.suppress(OSError):
                    wav.unlink()

    def stop(self) -> None:
        with self._lock:
            utterance = self._current
            if utterance is None:
                return
            utterance.stopped = True
            playback = utterance.playback
            if utterance.read_ahead is not None:
                utterance.read_ahead.cancel()
        if playback is not None:
            playback.stop()
        # synthesis still running, or the player already gone: done now, not later
        self._finish(utterance)

    def is_speaking(self) -> bool:
        with self._lock:
            return self._current is not None
