"""The interruptible player path, heard through the real sink player subprocess."""

from __future__ import annotations

import threading
import wave
from pathlib import Path

from announcer.speech.audio import (
    CommandPlayer,
    PlaybackOutcome,
    PlaybackResult,
    SinkPlayer,
    concatenate_wavs,
    find_audio_player,
    wav_info,
    wav_rms,
    write_silence,
)
from announcer.speech.earcons import earcon_path

from .helpers import WAIT_S, heard_frames, wait_for


def _tone(path: Path, seconds: float, rate: int = 22050) -> Path:
    import math

    frames = bytearray()
    for i in range(int(rate * seconds)):
        value = int(12000 * math.sin(2 * math.pi * 440 * i / rate))
        frames += value.to_bytes(2, "little", signed=True)
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(rate)
        wav.writeframes(bytes(frames))
    return path


class Outcomes:
    def __init__(self) -> None:
        self.results: list[PlaybackResult] = []
        self.event = threading.Event()

    def __call__(self, result: PlaybackResult) -> None:
        self.results.append(result)
        self.event.set()


def test_rms_tells_silence_from_sound(tmp_path: Path) -> None:
    assert wav_rms(write_silence(tmp_path / "quiet.wav", 200)) == 0.0
    assert wav_rms(_tone(tmp_path / "tone.wav", 0.2)) > 0.2


def test_concatenation_keeps_every_frame(tmp_path: Path) -> None:
    a = _tone(tmp_path / "a.wav", 0.1)
    b = write_silence(tmp_path / "b.wav", 300)
    joined = concatenate_wavs([a, b], tmp_path / "ab.wav")
    assert wav_info(joined).frames == wav_info(a).frames + wav_info(b).frames


def test_sink_player_plays_the_whole_file_then_reports_finished(
    tmp_path: Path, sink: SinkPlayer
) -> None:
    source = _tone(tmp_path / "tone.wav", 0.3)
    outcomes = Outcomes()
    sink.play([source], outcomes)
    assert outcomes.event.wait(WAIT_S)
    assert outcomes.results == [PlaybackResult(PlaybackOutcome.FINISHED)]
    heard = sink.played[0][1]
    assert wav_info(heard).frames == wav_info(source).frames
    assert wav_rms(heard) > 0.2


def test_stop_kills_the_player_process_before_returning(tmp_path: Path, sink: SinkPlayer) -> None:
    source = _tone(tmp_path / "long.wav", 20.0)
    outcomes = Outcomes()
    playback = sink.play([source], outcomes)
    heard = sink.out_dir / "0001.wav"
    assert wait_for(lambda: heard_frames(heard) > 2205)
    process = playback.process
    assert process is not None and process.poll() is None
    playback.stop()
    assert process.poll() is not None, "the player process must be gone when stop() returns"
    assert outcomes.event.wait(WAIT_S)
    assert outcomes.results == [PlaybackResult(PlaybackOutcome.STOPPED)]
    assert not playback.is_active()
    # what was heard is a valid, non-silent, truncated prefix
    assert 0 < wav_info(heard).frames < wav_info(source).frames
    assert wav_rms(heard) > 0.2


def test_stop_also_skips_the_rest_of_a_playlist(tmp_path: Path, sink: SinkPlayer) -> None:
    first = _tone(tmp_path / "first.wav", 20.0)
    second = _tone(tmp_path / "second.wav", 0.2)
    outcomes = Outcomes()
    playback = sink.play([first, second], outcomes)
    assert wait_for(lambda: (sink.out_dir / "0001.wav").exists())
    playback.stop()
    assert outcomes.event.wait(WAIT_S)
    assert [src for src, _ in sink.played] == [first]


def test_earcon_then_speech_play_in_order(tmp_path: Path, sink: SinkPlayer) -> None:
    earcon = earcon_path("completed")
    assert earcon is not None
    speech = _tone(tmp_path / "speech.wav", 0.2)
    outcomes = Outcomes()
    sink.play([earcon, speech], outcomes)
    assert outcomes.event.wait(WAIT_S)
    assert [src for src, _ in sink.played] == [earcon, speech]
    assert all(wav_rms(out) > 0.01 for _, out in sink.played)


def test_a_failing_player_reports_one_line_why(tmp_path: Path) -> None:
    source = _tone(tmp_path / "tone.wav", 0.1)
    player = CommandPlayer("aplay", ["aplay", "-q", "-D", "no_such_device_here"])
    outcomes = Outcomes()
    player.play([source], outcomes)
    assert outcomes.event.wait(WAIT_S)
    [result] = outcomes.results
    assert result.outcome is PlaybackOutcome.FAILED
    assert result.reason.startswith("aplay failed")
    assert "\n" not in result.reason


def test_a_missing_player_program_fails_cleanly(tmp_path: Path) -> None:
    player = CommandPlayer("ghost", ["/nonexistent/player-binary"])
    outcomes = Outcomes()
    player.play([write_silence(tmp_path / "s.wav", 10)], outcomes)
    assert outcomes.event.wait(WAIT_S)
    assert outcomes.results[0].outcome is PlaybackOutcome.FAILED
    assert "could not start" in outcomes.results[0].reason


def test_audio_detection_answers_with_a_player_or_a_one_line_reason() -> None:
    player, reason = find_audio_player()
    assert reason and "\n" not in reason
    if player is None:
        assert "audio" in reason or "player" in reason
