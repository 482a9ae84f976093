"""The scheduler's commands, carried out by the driver on real audio: a barge-in end to end."""

from __future__ import annotations

import threading
from pathlib import Path

from announcer.engine.announcement import Announcement, Urgency
from announcer.engine.speech_commands import Cancel, Speak
from announcer.speech.audio import SinkPlayer, wav_info, wav_rms
from announcer.speech.driver import SpeechDriver
from announcer.speech.pyttsx3_backend import Pyttsx3Backend

from .helpers import WAIT_S, heard_frames, wait_for


def test_cancel_then_speak_cuts_the_old_audio_and_plays_the_critical_one(tmp_path: Path) -> None:
    sink = SinkPlayer(tmp_path / "heard")
    backend = Pyttsx3Backend(sink)
    backend.start()
    woke = threading.Event()
    driver = SpeechDriver(backend, notify=woke.set)
    try:
        long_text = "The agent is reading a very long file aloud, line after line. " * 8
        driver.execute([Speak(1, Announcement(long_text))])
        first = sink.out_dir / "0001.wav"
        assert wait_for(lambda: heard_frames(first) > 4410)

        critical = Announcement(
            "Confirm: push to main?",
            urgency=Urgency.CRITICAL,
            interrupt=True,
            earcon="needs_you",
        )
        driver.execute([Cancel(1, "barge-in"), Speak(2, critical)])
        assert driver.take_completed() == [1]  # the cut utterance is reported at once
        assert woke.wait(WAIT_S)
        assert wait_for(lambda: 2 in driver.take_completed())

        sources = [src.name for src, _ in sink.played]
        assert sources == ["utterance-1.wav", "needs_you.wav", "utterance-2.wav"]
        cut, earcon, words = (out for _, out in sink.played)
        assert wav_info(cut).duration_s < 10  # far short of the ~25 s it would take
        assert wav_rms(earcon) > 0.02 and wav_rms(words) > 0.02
        assert 1.0 < wav_info(words).duration_s < 6.0
    finally:
        backend.close()
