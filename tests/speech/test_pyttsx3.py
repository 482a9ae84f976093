"""pyttsx3 synthesis heard through a real player process: real audio, real barge-in."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from announcer.engine.announcement import Announcement, Urgency
from announcer.speech.audio import SinkPlayer, wav_info, wav_rms
from announcer.speech.backend import BackendUnavailable, SpeechBackend, VoiceSettings
from announcer.speech.earcons import earcon_path
from announcer.speech.pyttsx3_backend import Pyttsx3Backend, shared_synthesizer

from .helpers import Done, heard_frames, wait_for

SENTENCE = "The agent finished running the test suite and all forty two tests passed."
LONG = " ".join(
    [
        "This is a long status report that goes on for quite a while,",
        "describing every file the agent touched, every command it ran,",
        "and every warning the compiler printed along the way, so that",
        "a critical question arriving now has something to interrupt.",
    ]
    * 3
)
RMS_FLOOR = 0.02  # espeak-ng speech sits around 0.1; silence is 0.0


@pytest.fixture
def backend(sink: SinkPlayer) -> Iterator[Pyttsx3Backend]:
    speaker = Pyttsx3Backend(sink)
    speaker.start()
    yield speaker
    speaker.close()


def _synthesize(text: str, voice: VoiceSettings, path: Path) -> Path:
    synth = shared_synthesizer()
    synth.start()
    return synth.synthesize(text, voice, path).result(timeout=60)


def test_implements_the_backend_interface(backend: Pyttsx3Backend) -> None:
    assert isinstance(backend, SpeechBackend)
    assert backend.capabilities.can_interrupt and backend.capabilities.produces_audio


def test_a_sentence_becomes_non_silent_audio_of_plausible_length(tmp_path: Path) -> None:
    wav = _synthesize(SENTENCE, VoiceSettings(voice="gmw/en-us", rate_wpm=180), tmp_path / "s.wav")
    info = wav_info(wav)
    words = len(SENTENCE.split())
    expected = words * 60 / 180
    assert wav_rms(wav) > RMS_FLOOR
    assert expected * 0.5 < info.duration_s < expected * 2.0, (info.duration_s, expected)


def test_a_long_paragraph_is_synthesised_whole(tmp_path: Path) -> None:
    # espeak-ng finishes long texts on its own thread after pyttsx3's loop returns
    paragraph = "The agent is reading a very long file aloud, line after line. " * 20
    wav = _synthesize(paragraph, VoiceSettings(rate_wpm=240), tmp_path / "long.wav")
    expected = len(paragraph.split()) * 60 / 240
    assert expected * 0.5 < wav_info(wav).duration_s < expected * 2.0
    assert wav_rms(wav) > RMS_FLOOR


def test_a_faster_rate_gives_shorter_audio(tmp_path: Path) -> None:
    slow = _synthesize(SENTENCE, VoiceSettings(rate_wpm=120), tmp_path / "slow.wav")
    fast = _synthesize(SENTENCE, VoiceSettings(rate_wpm=360), tmp_path / "fast.wav")
    assert wav_info(fast).duration_s < wav_info(slow).duration_s * 0.7
    assert wav_rms(fast) > RMS_FLOOR


def test_volume_scales_the_audio(tmp_path: Path) -> None:
    loud = _synthesize(SENTENCE, VoiceSettings(volume=1.0), tmp_path / "loud.wav")
    soft = _synthesize(SENTENCE, VoiceSettings(volume=0.2), tmp_path / "soft.wav")
    assert RMS_FLOOR / 4 < wav_rms(soft) < wav_rms(loud) * 0.5


def test_the_spoken_sentence_reaches_the_player(backend: Pyttsx3Backend, sink: SinkPlayer) -> None:
    done = Done()
    backend.speak(Announcement(SENTENCE), VoiceSettings(), done)
    assert done.wait()
    assert done.calls == 1 and not backend.is_speaking()
    [(_, heard)] = sink.played
    assert wav_rms(heard) > RMS_FLOOR
    assert wav_info(heard).duration_s > 1.0


def test_a_critical_announcement_cuts_a_long_one_and_plays_next(
    backend: Pyttsx3Backend, sink: SinkPlayer
) -> None:
    long_done = Done()
    backend.speak(Announcement(LONG, urgency=Urgency.NORMAL), VoiceSettings(), long_done)
    first_heard = sink.out_dir / "0001.wav"
    # the long one is audibly playing: at least 0.2 s of it has reached the sink
    assert wait_for(lambda: heard_frames(first_heard) > 4410)
    playback = backend._current.playback if backend._current else None
    assert playback is not None
    # The sink starts playing from its standby process while the playback thread is
    # still spawning the next standby; only then does it record the process. On a
    # loaded machine that can outlast the 0.2 s above, so wait for the real condition.
    assert wait_for(lambda: playback.process is not None)  # type: ignore[attr-defined]
    long_player = playback.process  # type: ignore[attr-defined]
    assert long_player is not None and long_player.poll() is None

    critical = Announcement(
        "Confirm: delete the production database?", urgency=Urgency.CRITICAL, interrupt=True
    )
    critical_done = Done()
    backend.stop()
    assert long_player.poll() is not None, "the long utterance's player is gone after stop()"
    assert long_done.calls == 1
    backend.speak(critical, VoiceSettings(), critical_done)
    assert critical_done.wait()

    assert [a.text for a, _ in backend.history] == [LONG, critical.text]
    assert len(sink.played) == 2
    (_, cut), (critical_wav, critical_heard) = sink.played
    # the long one was cut short: far less than its ~30 s were heard
    assert wav_info(cut).duration_s < 15
    # the critical text played next, whole and audible
    assert wav_rms(critical_heard) > RMS_FLOOR
    assert 1.0 < wav_info(critical_heard).duration_s < 6.0
    assert critical_wav.name == "utterance-2.wav"


def test_speak_while_speaking_stops_the_first(backend: Pyttsx3Backend, sink: SinkPlayer) -> None:
    first, second = Done(), Done()
    backend.speak(Announcement(LONG), VoiceSettings(), first)
    assert wait_for(lambda: (sink.out_dir / "0001.wav").exists())
    backend.speak(Announcement("Second."), VoiceSettings(), second)
    assert first.calls == 1
    assert second.wait() and second.calls == 1


def test_stop_during_synthesis_still_completes_once(backend: Pyttsx3Backend) -> None:
    done = Done()
    backend.speak(Announcement(LONG), VoiceSettings(), done)
    backend.stop()
    assert done.wait() and done.calls == 1
    assert not backend.is_speaking()


def test_earcon_plays_before_the_words(backend: Pyttsx3Backend, sink: SinkPlayer) -> None:
    done = Done()
    backend.speak(Announcement("Session started.", earcon="session_started"), VoiceSettings(), done)
    assert done.wait()
    sources = [src for src, _ in sink.played]
    assert sources[0] == earcon_path("session_started")
    assert len(sources) == 2 and all(wav_rms(out) > RMS_FLOOR for _, out in sink.played)


def test_an_earcon_alone_replaces_the_phrase(backend: Pyttsx3Backend, sink: SinkPlayer) -> None:
    done = Done()
    backend.speak(Announcement("", earcon="completed"), VoiceSettings(), done)
    assert done.wait()
    assert [src for src, _ in sink.played] == [earcon_path("completed")]


def test_earcons_off_means_words_only(sink: SinkPlayer) -> None:
    backend = Pyttsx3Backend(sink, earcons=False)
    backend.start()
    try:
        done = Done()
        backend.speak(Announcement("Done.", earcon="completed"), VoiceSettings(), done)
        assert done.wait()
        assert [src.name for src, _ in sink.played] == ["utterance-1.wav"]
    finally:
        backend.close()


def test_voice_follows_the_language(backend: Pyttsx3Backend) -> None:
    assert backend.voice_for("es-MX").voice == "roa/es"
    assert backend.voice_for("en-US").voice == "gmw/en-us"
    assert backend.voice_for("en").rate_wpm == 180
    # no profile, but espeak-ng speaks it: an installed voice of that language
    assert backend.voice_for("nl").voice is not None
    # the user's rate wins over the profile's
    assert backend.voice_for("en", VoiceSettings(rate_wpm=250)).rate_wpm == 250


def test_spanish_text_in_a_spanish_voice_is_audible(
    backend: Pyttsx3Backend, sink: SinkPlayer
) -> None:
    done = Done()
    backend.speak(
        Announcement("La sesión ha terminado correctamente.", language="es-ES"),
        VoiceSettings(),
        done,
    )
    assert done.wait()
    assert wav_rms(sink.played[0][1]) > RMS_FLOOR


def test_speaking_before_start_is_a_clear_error() -> None:
    with pytest.raises(BackendUnavailable, match="not started"):
        Pyttsx3Backend().speak(Announcement("x"), VoiceSettings(), Done())


def _zero_crossings_per_second(path: Path) -> float:
    import array
    import itertools
    import wave

    with wave.open(str(path), "rb") as wav:
        samples = array.array("h", wav.readframes(wav.getnframes()))
        rate = wav.getframerate()
    voiced = [s for s in samples if abs(s) > 500]
    crossings = sum(1 for a, b in itertools.pairwise(voiced) if (a < 0) != (b < 0))
    return crossings / (len(samples) / rate)


def test_pitch_raises_the_voice(tmp_path: Path) -> None:
    low = _synthesize(SENTENCE, VoiceSettings(pitch=0.1), tmp_path / "low.wav")
    high = _synthesize(SENTENCE, VoiceSettings(pitch=0.9), tmp_path / "high.wav")
    assert _zero_crossings_per_second(high) > _zero_crossings_per_second(low)


def test_without_a_sound_card_start_says_why_in_one_line() -> None:
    from announcer.speech.audio import find_audio_player

    if find_audio_player()[0] is not None:
        pytest.skip("this machine has working audio output")
    with pytest.raises(BackendUnavailable, match=r"^no audio output: ") as err:
        Pyttsx3Backend().start()
    assert "\n" not in str(err.value)


def test_a_long_text_starts_with_its_first_sentences_and_plays_whole(
    backend: Pyttsx3Backend, sink: SinkPlayer, tmp_path: Path
) -> None:
    # long words, few of them: over the first chunk's 160 characters, yet quick to hear
    text = " ".join(["Comprehensive documentation regenerated successfully."] * 4)
    voice = VoiceSettings(rate_wpm=450)
    done = Done()
    backend.speak(Announcement(text), voice, done)
    assert done.wait() and done.calls == 1
    names = [src.name for src, _ in sink.played]
    assert names[0] == "utterance-1.wav" and len(names) >= 2
    assert names[1:] == [f"utterance-1.{k}.wav" for k in range(2, len(names) + 1)]
    heard = sum(wav_info(out).duration_s for _, out in sink.played)
    whole = wav_info(_synthesize(text, backend.voice_for("en", voice), tmp_path / "w.wav"))
    assert abs(heard - whole.duration_s) < 0.25 * whole.duration_s
    assert all(wav_rms(out) > RMS_FLOOR for _, out in sink.played)


def test_stopping_a_long_text_stops_its_later_parts_too(
    backend: Pyttsx3Backend, sink: SinkPlayer
) -> None:
    text = " ".join(f"Sentence number {n} keeps going for a while." for n in range(1, 30))
    done = Done()
    backend.speak(Announcement(text), VoiceSettings(), done)
    assert wait_for(lambda: heard_frames(sink.out_dir / "0001.wav") > 2205)
    backend.stop()
    assert done.calls == 1 and not backend.is_speaking()
    after = Done()
    backend.speak(Announcement("Next."), VoiceSettings(), after)
    assert after.wait()
    assert [src.name for src, _ in sink.played] == ["utterance-1.wav", "utterance-2.wav"]


def test_a_process_that_spoke_ends_its_engine_thread_before_it_exits() -> None:
    """The shared engine thread is shut down at exit, so the process never hangs there."""
    script = (
        "import atexit, threading\n"
        # Registered first, so it runs after the synthesizer's own exit handler.
        "atexit.register(lambda: print('alive at exit:', any(\n"
        "    t.name == 'announcer-pyttsx3' and t.is_alive() for t in threading.enumerate())))\n"
        "from announcer.speech.pyttsx3_backend import shared_synthesizer\n"
        "synth = shared_synthesizer()\n"
        "synth.start()\n"
        "synth.submit(lambda: None).result(timeout=30)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "alive at exit: False" in done.stdout


def test_the_installed_voices_of_a_language_are_listed_for_several_agents(
    backend: Pyttsx3Backend,
) -> None:
    """Issue 33, item 4: distinct default voices for several agents come from these."""
    from announcer.engine.agent_voices import agent_voices

    english = backend.installed_voices("en-US")
    german = backend.installed_voices("de")
    assert len(english) >= 2 and german
    assert not set(english) & set(german)
    chosen = agent_voices(["alpha", "beta"], {}, english, own=english[0])
    assert chosen["alpha"] is None and chosen["beta"] in english[1:]
