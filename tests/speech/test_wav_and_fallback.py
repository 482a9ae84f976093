"""The wav backend as the tests' ears, and the auto fallback that loses no announcement."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from announcer.engine.announcement import Announcement, Urgency
from announcer.speech.audio import CommandPlayer, SinkPlayer, wav_info, wav_rms
from announcer.speech.auto import FallbackBackend
from announcer.speech.backend import (
    BackendCapabilities,
    BackendUnavailable,
    SpeechBackend,
    VoiceSettings,
)
from announcer.speech.earcons import earcon_path
from announcer.speech.pyttsx3_backend import Pyttsx3Backend
from announcer.speech.registry import BACKEND_NAMES, create_backend
from announcer.speech.wav import WavBackend

from .helpers import Done

RECORD_KEYS = {"action", "text", "language", "urgency", "interrupt", "event_id", "session_id", "t"}


@pytest.fixture
def wav_backend(tmp_path: Path) -> Iterator[WavBackend]:
    backend = WavBackend(tmp_path / "audio")
    backend.start()
    yield backend
    backend.close()


def _records(backend: WavBackend) -> list[dict[str, object]]:
    return [json.loads(line) for line in backend.record_path.read_text().splitlines()]


def test_each_utterance_becomes_a_numbered_audible_wav(wav_backend: WavBackend) -> None:
    texts = ["Session started.", "Running the tests.", "All tests passed."]
    for text in texts:
        done = Done()
        wav_backend.speak(
            Announcement(text, event_id=f"evt_{len(text)}", session_id="sess_1"),
            VoiceSettings(),
            done,
        )
        assert done.wait() and done.calls == 1
    files = sorted(wav_backend.audio_dir.glob("*.wav"))
    assert [f.name for f in files] == ["0001.wav", "0002.wav", "0003.wav"]
    assert all(wav_rms(f) > 0.02 and wav_info(f).duration_s > 0.4 for f in files)
    records = _records(wav_backend)
    assert [r["text"] for r in records] == texts
    assert all(set(r) == RECORD_KEYS and r["action"] == "speak" for r in records)
    assert records[0]["session_id"] == "sess_1" and records[0]["urgency"] == "normal"
    times = [float(r["t"]) for r in records]  # type: ignore[arg-type]
    assert times == sorted(times) and times[0] >= 0


def test_the_earcon_is_heard_before_the_words(wav_backend: WavBackend, tmp_path: Path) -> None:
    plain, with_earcon = Done(), Done()
    wav_backend.speak(Announcement("Done."), VoiceSettings(), plain)
    assert plain.wait()
    wav_backend.speak(Announcement("Done.", earcon="completed"), VoiceSettings(), with_earcon)
    assert with_earcon.wait()
    earcon = earcon_path("completed")
    assert earcon is not None
    first, second = (wav_info(wav_backend.audio_dir / f"000{n}.wav").frames for n in (1, 2))
    # espeak-ng's output may differ by a few frames between runs
    assert abs(second - first - wav_info(earcon).frames) < 500


def test_stop_writes_a_cancel_record(wav_backend: WavBackend) -> None:
    done = Done()
    long_text = "A long explanation of everything that happened today. " * 10
    wav_backend.speak(Announcement(long_text), VoiceSettings(), done)
    wav_backend.stop()
    assert done.calls == 1
    critical = Done()
    wav_backend.speak(
        Announcement("Stop now.", urgency=Urgency.CRITICAL, interrupt=True),
        VoiceSettings(),
        critical,
    )
    assert critical.wait()
    actions = [(r["action"], r["urgency"]) for r in _records(wav_backend)]
    assert actions == [("speak", "normal"), ("cancel", "normal"), ("speak", "critical")]


def test_registry_knows_every_backend(tmp_path: Path) -> None:
    assert set(BACKEND_NAMES) >= {"auto", "pyttsx3", "screenreader", "speechd", "wav", "text"}
    with pytest.raises(ValueError, match="backend: must be one of"):
        create_backend("loudspeaker")
    backend = create_backend("wav", audio_dir=tmp_path / "a")
    assert isinstance(backend, WavBackend) and isinstance(backend, SpeechBackend)
    with pytest.raises(BackendUnavailable, match="--speech wav:DIR"):
        create_backend("wav")


# ---------------------------------------------------------------- fallback


class Unstartable:
    """A backend whose device is missing: start raises, as on a headless server."""

    name = "unstartable"
    capabilities = BackendCapabilities(can_interrupt=True)

    def start(self) -> None:
        raise BackendUnavailable("no device here")

    def speak(
        self, announcement: Announcement, voice: VoiceSettings, on_done: Callable[[], None]
    ) -> None:
        raise AssertionError("never started")

    def stop(self) -> None: ...
    def is_speaking(self) -> bool:
        return False

    def close(self) -> None: ...


class RaisesOnSpeak(Unstartable):
    """A backend that starts, then raises on its first utterance (a crashed synthesiser)."""

    name = "raiser"

    def start(self) -> None: ...

    def speak(
        self, announcement: Announcement, voice: VoiceSettings, on_done: Callable[[], None]
    ) -> None:
        raise RuntimeError("synthesiser crashed")


def test_a_backend_that_cannot_start_is_skipped_and_the_pick_is_said(tmp_path: Path) -> None:
    told: list[str] = []
    auto = FallbackBackend(
        [("unstartable", Unstartable), ("wav", lambda: WavBackend(tmp_path / "a"))],
        notify=told.append,
    )
    auto.start()
    try:
        assert auto.active_name == "wav"
        assert told == ["speaking through wav (unstartable: no device here)"]
        assert isinstance(auto, SpeechBackend)
    finally:
        auto.close()


def test_a_backend_that_raises_falls_back_without_losing_the_announcement(tmp_path: Path) -> None:
    told: list[str] = []
    wav = WavBackend(tmp_path / "a")
    auto = FallbackBackend([("raiser", RaisesOnSpeak), ("wav", lambda: wav)], notify=told.append)
    auto.start()
    try:
        done = Done()
        auto.speak(Announcement("Tests passed.", event_id="evt_9"), VoiceSettings(), done)
        assert done.wait() and done.calls == 1
        assert auto.active_name == "wav"
        assert [r["event_id"] for r in _records(wav)] == ["evt_9"]
        assert wav_rms(wav.audio_dir / "0001.wav") > 0.02
        assert told[-1] == "raiser failed (synthesiser crashed); switching to wav"
        # told once: the next announcement goes straight to wav, silently
        again = Done()
        auto.speak(Announcement("Next."), VoiceSettings(), again)
        assert again.wait()
        assert len(told) == 2
    finally:
        auto.close()


def test_audio_that_fails_mid_session_moves_to_the_next_backend(tmp_path: Path) -> None:
    """A real player that cannot open its device fails after speak() returned."""
    told: list[str] = []
    broken_player = CommandPlayer("aplay", ["aplay", "-q", "-D", "no_such_device_here"])
    wav = WavBackend(tmp_path / "a")
    auto = FallbackBackend(
        [("pyttsx3", lambda: Pyttsx3Backend(broken_player)), ("wav", lambda: wav)],
        notify=told.append,
    )
    auto.start()
    try:
        assert auto.active_name == "pyttsx3"
        done = Done()
        auto.speak(
            Announcement("Confirm the deployment?", urgency=Urgency.CRITICAL, event_id="evt_c"),
            VoiceSettings(),
            done,
        )
        assert done.wait() and done.calls == 1
        assert auto.active_name == "wav"
        [record] = _records(wav)
        assert record["event_id"] == "evt_c" and record["urgency"] == "critical"
        assert wav_rms(wav.audio_dir / "0001.wav") > 0.02
        assert told[-1].startswith("pyttsx3 failed (aplay failed")
        assert told[-1].endswith("switching to wav") and "\n" not in told[-1]
    finally:
        auto.close()


def test_when_nothing_works_the_reason_lists_every_backend() -> None:
    auto = FallbackBackend([("a", Unstartable), ("b", Unstartable)], notify=lambda _: None)
    with pytest.raises(BackendUnavailable, match="a: no device here; b: no device here"):
        auto.start()


def test_interruption_through_the_fallback_reaches_the_player(tmp_path: Path) -> None:
    sink = SinkPlayer(tmp_path / "heard")
    auto = FallbackBackend([("pyttsx3", lambda: Pyttsx3Backend(sink))], notify=lambda _: None)
    auto.start()
    try:
        first, second = Done(), Done()
        auto.speak(Announcement("A rather long sentence to be cut. " * 5), VoiceSettings(), first)
        auto.stop()
        assert first.calls == 1 and not auto.is_speaking()
        auto.speak(Announcement("Critical."), VoiceSettings(), second)
        assert second.wait()
        assert wav_rms(sink.played[-1][1]) > 0.02
    finally:
        auto.close()


def test_auto_on_this_machine_picks_a_working_output_and_says_why(tmp_path: Path) -> None:
    import io

    from announcer.speech.audio import find_audio_player
    from announcer.speech.screenreader import orca_is_running

    told: list[str] = []
    stream = io.StringIO()
    auto = create_backend("auto", stream=stream, notify=told.append)
    assert isinstance(auto, FallbackBackend)
    auto.start()
    try:
        [message] = told
        assert message.startswith(f"speaking through {auto.active_name}")
        assert "\n" not in message
        headless = find_audio_player()[0] is None and not orca_is_running()
        if headless and auto.active_name == "text":
            assert "pyttsx3: no audio output" in message
            done = Done()
            auto.speak(Announcement("Build finished."), VoiceSettings(), done)
            assert done.wait() and stream.getvalue() == "Build finished.\n"
    finally:
        auto.close()


def test_text_is_the_last_resort_when_audio_dies(tmp_path: Path) -> None:
    import io

    from announcer.speech.text import TextBackend

    told: list[str] = []
    stream = io.StringIO()
    broken_player = CommandPlayer("aplay", ["aplay", "-q", "-D", "no_such_device_here"])
    auto = FallbackBackend(
        [("pyttsx3", lambda: Pyttsx3Backend(broken_player)), ("text", lambda: TextBackend(stream))],
        notify=told.append,
    )
    auto.start()
    try:
        done = Done()
        auto.speak(Announcement("Approve the merge?"), VoiceSettings(), done)
        assert done.wait() and done.calls == 1
        assert stream.getvalue() == "Approve the merge?\n"
        assert told[-1].endswith("switching to text")
    finally:
        auto.close()


def test_listen_finds_the_backends_by_name(tmp_path: Path) -> None:
    """``announcer listen --speech NAME`` looks backends up in announcer.speech.registry."""
    from announcer.cli.launch import make_driver

    driver = make_driver("auto")
    try:
        assert driver is not None
        assert isinstance(driver.backend, FallbackBackend)
        assert driver.backend.active is not None
    finally:
        if driver is not None:
            driver.backend.close()
