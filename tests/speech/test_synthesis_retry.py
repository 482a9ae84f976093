"""espeak-ng now and then ends a message without its WAV: the synthesis is tried once more.

The seam is ``Synthesizer._render``: the test subclass lets espeak-ng say the whole
message for real, but into another file, so the loop ends as it always does and the
target has no audio, exactly what the intermittent loss looked like. (Skipping
``save_to_file`` instead leaves pyttsx3's loop waiting until its timeout.)
"""

from __future__ import annotations

import asyncio
import wave
from collections.abc import Iterator
from pathlib import Path

import pytest

from announcer.cli.commands.listen import format_adapter
from announcer.engine.announcement import Announcement
from announcer.engine.settings import UserSettings
from announcer.runtime.session import LiveSession
from announcer.speech.audio import SinkPlayer, wav_info, wav_rms
from announcer.speech.backend import BackendFailed, VoiceSettings
from announcer.speech.driver import SpeechDriver
from announcer.speech.pyttsx3_backend import Pyttsx3Backend, Synthesizer
from announcer.transports import TransportOptions
from tests.shared_data import SHARED as SHARED_ROOT
from tests.support.producers import short_source

from .helpers import Done, wait_for

STEP_FINISH = SHARED_ROOT / "peers/agent-cli-streams/opencode__run_json__v1__step_finish.jsonl"


class LosesTheWav(Synthesizer):
    """Real synthesis whose WAV does not land where it was asked for, ``times`` times."""

    def __init__(self, containing: str, times: int = 1) -> None:
        super().__init__()
        self.containing = containing
        self.times = times
        self.lost: list[Path] = []

    def _render(self, text: str, path: Path) -> None:
        if self.containing in text and len(self.lost) < self.times:
            elsewhere = path.with_name(f"lost-{len(self.lost)}-{path.name}")
            self.lost.append(elsewhere)
            super()._render(text, elsewhere)
            return
        super()._render(text, path)


def _loud(path: Path) -> float:
    """The WAV's RMS if it is over 0.02 (speech, not silence), else 0 (a file still being
    written may not read yet)."""
    try:
        rms = wav_rms(path)
    except (OSError, EOFError, ValueError, wave.Error):
        return 0.0
    return rms if rms > 0.02 else 0.0


@pytest.fixture
def lossy() -> Iterator[LosesTheWav]:
    synth = LosesTheWav("production")
    yield synth
    synth.shut_down()


def test_a_lost_wav_is_synthesised_again_and_heard(lossy: LosesTheWav, sink: SinkPlayer) -> None:
    failures: list[BackendFailed] = []
    backend = Pyttsx3Backend(sink, synthesizer=lossy)
    backend.start()
    backend.set_failure_listener(lambda _announcement, failure: failures.append(failure))
    try:
        done = Done()
        backend.speak(Announcement("Deploy to production now?"), VoiceSettings(), done)
        assert done.wait() and done.calls == 1
        assert len(lossy.lost) == 1
        # espeak-ng really spoke the lost one too. Under load its file may still be being
        # finished when the retry has been heard (a stress run read it at RMS 0.017, a
        # whole one is about 0.09): wait for it, as for any outside effect.
        assert wait_for(lambda: _loud(lossy.lost[0])), _loud(lossy.lost[0])
    finally:
        backend.close()
    assert failures == []
    [(source, heard)] = sink.played
    assert source.name.startswith("utterance-")
    assert wav_rms(heard) > 0.02 and wav_info(heard).duration_s > 1.0


def test_a_wav_lost_twice_is_a_failure_the_fallback_can_take_over(sink: SinkPlayer) -> None:
    synth = LosesTheWav("production", times=2)
    failures: list[tuple[str, BackendFailed]] = []
    backend = Pyttsx3Backend(sink, synthesizer=synth)
    backend.start()
    backend.set_failure_listener(lambda a, failure: failures.append((a.text, failure)))
    try:
        backend.speak(Announcement("Deploy to production now?"), VoiceSettings(), Done())
        assert wait_for(lambda: bool(failures))
    finally:
        backend.close()
        synth.shut_down()
    [(text, failure)] = failures
    assert text == "Deploy to production now?"
    assert "produced no audio, twice" in str(failure)
    assert sink.played == []


async def test_the_last_announcement_is_spoken_even_when_its_wav_is_lost_once(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The listener exits when done; the last message's first WAV goes missing."""
    synth = LosesTheWav("finished a step")
    sink = SinkPlayer(tmp_path / "heard")
    backend = Pyttsx3Backend(sink, synthesizer=synth)
    backend.start()
    try:
        session = LiveSession(
            [short_source(STEP_FINISH, tmp_path, monkeypatch)],
            UserSettings(),
            TransportOptions(),
            driver=SpeechDriver(backend),
            exit_when_done=True,
            adapter_factory=format_adapter("opencode"),
        )
        assert await asyncio.wait_for(session.run(), 180) == 0
    finally:
        backend.close()
        sink.close()
        synth.shut_down()
    heard = [announcement.text for announcement, _ in backend.history]
    assert heard[-2:] == ["OpenCode session started.", "OpenCode finished a step."]
    assert len(synth.lost) == 1
    words = [out for source, out in sink.played if source.name.startswith("utterance-")]
    assert len(words) == len(heard)
    assert wav_rms(words[-1]) > 0.02 and wav_info(words[-1]).duration_s > 1.0
