"""The paced backend: silent speech that lasts as long as a voice at the user's rate."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from announcer.engine.announcement import Announcement
from announcer.engine.scheduler import estimated_seconds
from announcer.engine.settings import UserSettings
from announcer.speech.backend import BackendUnavailable, SpeechBackend, VoiceSettings
from announcer.speech.driver import SpeechDriver
from announcer.speech.paced import PacedBackend, SimulatedClock
from announcer.speech.registry import BACKEND_NAMES, backend_factory, create_backend

TEN_WORDS = "one two three four five six seven eight nine ten"


class Done:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self) -> None:
        self.calls += 1


def test_an_utterance_lasts_as_long_as_it_takes_to_say_at_the_users_rate() -> None:
    clock = SimulatedClock()
    backend = PacedBackend(clock, rate_wpm=120)
    done = Done()
    backend.speak(Announcement(TEN_WORDS), VoiceSettings(), done)
    assert backend.is_speaking()
    # Ten words at 120 words a minute: five seconds, plus the synthesiser's quarter second.
    assert clock.next_deadline() == pytest.approx(5.25)
    clock.advance_to(5.0)
    assert done.calls == 0 and backend.is_speaking()
    clock.advance_to(6.0)
    assert done.calls == 1 and not backend.is_speaking()
    heard = backend.utterances[0]
    assert (heard.started, heard.ended, heard.stopped) == (0.0, pytest.approx(5.25), False)


def test_the_rate_of_the_voice_wins_and_a_faster_rate_is_quicker() -> None:
    clock = SimulatedClock()
    backend = PacedBackend(clock, rate_wpm=180)
    backend.speak(Announcement(TEN_WORDS), VoiceSettings(rate_wpm=360), Done())
    assert backend.utterances[0].seconds == pytest.approx(estimated_seconds(TEN_WORDS, 360))
    assert estimated_seconds(TEN_WORDS, 360) < estimated_seconds(TEN_WORDS, 180)


def test_long_numbers_count_by_their_length_not_their_spaces() -> None:
    # "$12,500.00" is one "word" between spaces but several to say.
    short = estimated_seconds("Balance: $12,500.00 on account 4929-1234-5678-9012.", 180)
    assert short > estimated_seconds("Balance: one two three four.", 180)


def test_stop_cuts_off_at_once_and_reports_done_exactly_once() -> None:
    clock = SimulatedClock()
    backend = PacedBackend(clock)
    done = Done()
    backend.speak(Announcement(TEN_WORDS), VoiceSettings(), done)
    clock.advance_to(1.0)
    backend.stop()
    assert done.calls == 1 and not backend.is_speaking()
    clock.advance_to(100.0)  # the cancelled timer never fires
    assert done.calls == 1
    assert backend.utterances[0].stopped and backend.utterances[0].ended == 1.0


def test_a_new_utterance_replaces_the_one_in_progress_like_a_player() -> None:
    clock = SimulatedClock()
    backend = PacedBackend(clock)
    first, second = Done(), Done()
    backend.speak(Announcement(TEN_WORDS), VoiceSettings(), first)
    backend.speak(Announcement("Now."), VoiceSettings(), second)
    assert first.calls == 1 and second.calls == 0
    clock.advance_to(60.0)
    assert second.calls == 1


def test_with_a_stream_it_writes_the_shared_jsonl_record() -> None:
    clock = SimulatedClock(10.0)
    out = io.StringIO()
    backend = PacedBackend(clock, stream=out)
    backend.start()
    backend.speak(Announcement("Hello there.", event_id="evt_1"), VoiceSettings(), Done())
    clock.advance_to(10.5)
    backend.stop()
    records = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [(r["action"], r["t"], r["event_id"]) for r in records] == [
        ("speak", 0.0, "evt_1"),
        ("cancel", 0.5, "evt_1"),
    ]


def test_the_driver_hears_completions_on_the_simulated_clock() -> None:
    clock = SimulatedClock()
    backend = PacedBackend(clock)
    ends: list[float] = []
    driver = SpeechDriver(backend, notify=lambda: ends.append(clock.now()))
    from announcer.engine.speech_commands import Speak

    driver.execute([Speak(1, Announcement(TEN_WORDS))])
    clock.advance_to(30.0)
    assert driver.take_completed() == [1]
    assert ends == [pytest.approx(estimated_seconds(TEN_WORDS, 180))]


def test_every_backend_name_in_the_registry_has_an_implementation(tmp_path: Path) -> None:
    """One registry of backends: a name without a class fails here."""
    assert "paced" in BACKEND_NAMES
    for name in BACKEND_NAMES:
        if name == "auto":
            assert isinstance(create_backend("auto"), SpeechBackend)
            continue
        try:
            backend = backend_factory(name, UserSettings(), audio_dir=tmp_path / name)()
        except BackendUnavailable as exc:  # a system library missing here, said in words
            assert str(exc)
            continue
        assert isinstance(backend, SpeechBackend), name
        assert backend.name == name


def test_the_registry_builds_paced_at_the_users_rate() -> None:
    settings = UserSettings(pace_wpm=300)
    backend = create_backend("paced", settings, stream=io.StringIO())
    assert isinstance(backend, PacedBackend) and backend.rate_wpm == 300
    voiced = create_backend("paced", UserSettings(pace_wpm=300, rate_wpm=200))
    assert isinstance(voiced, PacedBackend) and voiced.rate_wpm == 200
