"""Save what the user would hear: one numbered WAV per utterance plus the jsonl record.

``--speech wav:DIR`` gets ``0001.wav``, ``0002.wav`` ... in speaking order (the
earcon, when there is one, is joined in front of the words, as the user would
hear it) and ``speech.jsonl`` with one record per line in the documented
format (docs/architecture.md), ``speak`` for every utterance and ``cancel``
when one is stopped. Tests listen to a session through this backend; users
keep a session as audio with it.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import IO

from announcer.engine.announcement import Announcement
from announcer.speech.audio import concatenate_wavs
from announcer.speech.backend import (
    BackendCapabilities,
    BackendFailed,
    BackendUnavailable,
    FailureListener,
    VoiceSettings,
)
from announcer.speech.earcons import earcon_path
from announcer.speech.jsonl import speech_record
from announcer.speech.pyttsx3_backend import Synthesizer, shared_synthesizer
from announcer.speech.voices import VoiceResolver, match_language, speakable_text

log = logging.getLogger(__name__)

RECORD_NAME = "speech.jsonl"


class WavBackend:
    name = "wav"
    capabilities = BackendCapabilities(can_interrupt=True, produces_audio=True)

    def __init__(
        self,
        audio_dir: Path,
        *,
        earcons: bool = True,
        synthesizer: Synthesizer | None = None,
        user_voice: VoiceSettings | None = None,
        user_voices: dict[str, str] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.audio_dir = Path(audio_dir)
        self.earcons = earcons
        self._synth = synthesizer or shared_synthesizer()
        self._user_voice = user_voice
        self._user_voices = user_voices
        self._clock = clock
        self._t0 = 0.0
        self._numbers = itertools.count(1)
        self._lock = threading.Lock()
        self._record: IO[str] | None = None
        self._current: tuple[Announcement, Callable[[], None]] | None = None
        self._resolver: VoiceResolver | None = None
        self._listener: FailureListener | None = None
        #: told why, when no fallback listens (``--speech wav:DIR`` alone): once per run
        #: of failures, so a full disk is never silent (issue 29, item 14)
        self.notify: Callable[[str], None] | None = None
        self._failing = False

    @property
    def record_path(self) -> Path:
        return self.audio_dir / RECORD_NAME

    def start(self) -> None:
        try:
            self.audio_dir.mkdir(parents=True, exist_ok=True)
            self._record = self.record_path.open("a", encoding="utf-8", buffering=1)
        except OSError as exc:
            raise BackendUnavailable(f"cannot write audio to {self.audio_dir}: {exc}") from exc
        self._synth.start()
        self._resolver = VoiceResolver(
            "pyttsx3",
            user=self._user_voice,
            user_voices=self._user_voices,
            installed=[v.id for v in self._synth.voices],
        )
        self._t0 = self._clock()

    def close(self) -> None:
        self.stop()
        self._synth.drain()
        record, self._record = self._record, None
        if record is not None:
            record.close()

    def set_failure_listener(self, listener: FailureListener | None) -> None:
        self._listener = listener

    def _write(self, action: str, announcement: Announcement) -> None:
        if self._record is not None:
            record = speech_record(action, announcement, self._clock() - self._t0)
            line = json.dumps(record, ensure_ascii=False)
            self._record.write(line + "\n")

    def _voice(self, language: str, voice: VoiceSettings) -> VoiceSettings:
        assert self._resolver is not None
        settings = self._resolver.choose(language, voice).settings
        if settings.voice is None:
            by_language = {lang: v.id for v in self._synth.voices for lang in v.languages}
            tag = match_language(language, by_language)
            if tag is not None:
                return VoiceSettings(
                    by_language[tag], settings.rate_wpm, settings.pitch, settings.volume
                )
        return settings

    def speak(
        self, announcement: Announcement, voice: VoiceSettings, on_done: Callable[[], None]
    ) -> None:
        if self._record is None:
            raise BackendUnavailable("the wav backend was not started")
        self.stop()
        number = next(self._numbers)
        target = self.audio_dir / f"{number:04d}.wav"
        with self._lock:
            self._current = (announcement, on_done)
            try:
                self._write("speak", announcement)
            except OSError as exc:  # a full disk, a folder gone: said, never silent
                failure: OSError | None = exc
            else:
                failure = None
        if failure is not None:
            self._failed(announcement, on_done, f"could not write {RECORD_NAME}: {failure}")
            return
        earcon = earcon_path(announcement.earcon) if self.earcons else None
        if not announcement.text.strip():
            self._save(announcement, on_done, target, earcon, None)
            return
        speech = self.audio_dir / f".{number:04d}.speech.wav"
        assert self._resolver is not None
        text = speakable_text(
            announcement.text,
            announcement.language,
            self._resolver.choose(announcement.language).profile,
            [lang for v in self._synth.voices for lang in v.languages],
        )
        future = self._synth.synthesize(text, self._voice(announcement.language, voice), speech)
        future.add_done_callback(
            lambda done: self._save(announcement, on_done, target, earcon, done, speech)
        )

    def _save(
        self,
        announcement: Announcement,
        on_done: Callable[[], None],
        target: Path,
        earcon: Path | None,
        synthesis: Future[Path] | None,
        speech: Path | None = None,
    ) -> None:
        error: BaseException | None = None
        try:
            if synthesis is not None:
                synthesis.result()
            parts = [p for p in (earcon, speech) if p is not None]
            if parts:
                concatenate_wavs(parts, target)
        except Exception as exc:
            error = exc
        finally:
            if speech is not None:
                with contextlib.suppress(OSError):
                    speech.unlink()
        with self._lock:
            mine = self._current is not None and self._current[1] is on_done
            if mine:
                self._current = None
        if not mine:
            return  # stopped meanwhile: on_done already called
        if error is not None and self._listener is not None:
            self._listener(announcement, BackendFailed(f"could not save speech audio: {error}"))
            return
        if error is not None:
            self._tell(f"could not save {target.name} in {self.audio_dir}: {error}")
        else:
            self._failing = False
        on_done()

    def _tell(self, why: str) -> None:
        log.warning("wav backend: %s", why)
        if self.notify is not None and not self._failing:
            self.notify(why)
        self._failing = True

    def _failed(self, announcement: Announcement, on_done: Callable[[], None], why: str) -> None:
        """The utterance cannot be kept (issue 29, item 14: a full disk was silent): the
        session is told, so it says so once and falls back to another output; without a
        listener the utterance ends here and the reason is logged."""
        with self._lock:
            if self._current is not None and self._current[1] is on_done:
                self._current = None
        if self._listener is not None:
            self._listener(announcement, BackendFailed(why))
            return
        self._tell(why)
        on_done()

    def stop(self) -> None:
        with self._lock:
            current, self._current = self._current, None
            if current is not None:
                with contextlib.suppress(OSError):  # said by the next speak, if it lasts
                    self._write("cancel", current[0])
        if current is not None:
            current[1]()

    def is_speaking(self) -> bool:
        with self._lock:
            return self._current is not None
