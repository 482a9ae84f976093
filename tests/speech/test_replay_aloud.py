"""``announcer replay FILE`` speaks aloud (issue 20 item 5): every backend listen takes.

Real subprocesses: the announcer command replays the bundled banking recording through
``wav:DIR`` (real espeak-ng synthesis; the WAVs' samples are measured), through ``auto``
with no ``--speech`` (pyttsx3 and espeak-ng playing through ``aplay`` into an ALSA
device of our own, a ``file`` plugin whose samples are measured), and through ``paced``
(a voice's duration, silently).
"""

from __future__ import annotations

import array
import functools
import itertools
import json
import shutil
import wave
from datetime import datetime
from pathlib import Path

import pytest

from tests.engine.aaep import frame
from tests.support.cli import run_announcer

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "announcer" / "data" / "banking_session.jsonl"
# Far louder than silence or dither: a voice's samples reach thousands.
LOUD_SAMPLE = 2_000
# Speech synthesised into WAV files takes longer than a recorded run: a wider bound.
announcer = functools.partial(run_announcer, timeout=300)


def peak(path: Path) -> tuple[int, int]:
    """(frames, loudest sample) of a 16-bit WAV."""
    with wave.open(str(path), "rb") as wav:
        assert wav.getsampwidth() == 2
        frames = wav.getnframes()
        samples = array.array("h", wav.readframes(frames))
    return frames, max((abs(s) for s in samples), default=0)


def records(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def recording_span_seconds(path: Path) -> float:
    stamps = [
        datetime.fromisoformat(json.loads(line)["timestamp"].replace("Z", "+00:00")).timestamp()
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    return max(stamps) - min(stamps)


def test_replay_to_wav_writes_one_audible_file_per_utterance(tmp_path: Path) -> None:
    audio = tmp_path / "audio"
    done = announcer("replay", str(DEMO), "--speech", f"wav:{audio}", "--no-delay")
    assert done.returncode == 0, done.stderr
    said = [r for r in records(audio / "speech.jsonl") if r["action"] == "speak"]
    wavs = sorted(audio.glob("*.wav"))
    assert len(said) >= 10 and len(wavs) == len(said)
    for wav_file in wavs:
        frames, loudest = peak(wav_file)
        assert frames > 2_205, wav_file.name  # more than a tenth of a second at 22 kHz
        assert loudest > LOUD_SAMPLE, wav_file.name
    # on the recording's clock, as jsonl records it: the same words, the question included
    recorded = announcer("replay", str(DEMO), "--speech", "jsonl", "--no-delay")
    assert [r["text"] for r in said] == [
        json.loads(line)["text"]
        for line in recorded.stdout.splitlines()
        if json.loads(line)["action"] == "speak"
    ]
    assert any(str(r["text"]).startswith("Question.") for r in said)
    # each announcement is also printed as it is said
    printed = done.stdout.splitlines()
    assert printed[0] == said[0]["text"]
    assert "All done. $500 is now in your savings account." in printed


def test_replay_to_wav_honours_speed(tmp_path: Path) -> None:
    audio = tmp_path / "audio"
    speed = 4.0
    # at the fastest pace the listener follows, so the replay's speed is what paces it
    wav = f"wav:{audio}"
    done = announcer("replay", str(DEMO), "--speech", wav, "--speed", str(speed), "--pace", "600")
    assert done.returncode == 0, done.stderr
    said = [r for r in records(audio / "speech.jsonl") if r["action"] == "speak"]
    assert said and all(peak(path)[1] > LOUD_SAMPLE for path in audio.glob("*.wav"))
    # the last event is not said before its recorded time, four times faster, has come
    span = recording_span_seconds(DEMO)
    assert float(said[-1]["t"]) >= span / speed - 0.5  # type: ignore[arg-type]


def no_settings_env(home: Path) -> dict[str, str]:
    """No settings file, no speech-dispatcher server, and ``home`` as the ALSA user's home."""
    home.mkdir(exist_ok=True)
    return {
        "HOME": str(home),
        "ANNOUNCER_CONFIG": str(home / "none.toml"),
        "SPEECHD_ADDRESS": f"unix_socket:{home / 'no-server.sock'}",
    }


def test_replay_with_no_speech_flag_speaks_through_auto(tmp_path: Path) -> None:
    if shutil.which("aplay") is None or shutil.which("espeak-ng") is None:
        pytest.skip("aplay and espeak-ng are Debian packages ./test installs")
    home = tmp_path / "home"
    env = no_settings_env(home)
    played = tmp_path / "played.raw"
    # the user's default ALSA device: a file, so this machine without a sound card has one
    (home / ".asoundrc").write_text(
        f'pcm.!default {{ type file; slave.pcm "null"; file "{played}"; format "raw" }}\n',
        encoding="utf-8",
    )
    done = announcer("replay", str(DEMO), "--no-delay", "--rate", "600", env=env)
    assert done.returncode == 0, done.stderr
    # auto says which output it picked, and why the ones before it could not speak
    first_notice = done.stderr.splitlines()[0]
    assert first_notice.startswith("announcer: speaking through pyttsx3"), done.stderr
    assert "speechd: no speech-dispatcher server answers" in first_notice
    assert "All done. $500 is now in your savings account." in done.stdout.splitlines()
    # the voice reached the audio device (the file keeps the last utterance played)
    samples = array.array("h", played.read_bytes())
    assert len(samples) > 2_205 and max(abs(s) for s in samples) > LOUD_SAMPLE


def test_replay_without_a_voice_says_why_and_prints(tmp_path: Path) -> None:
    done = announcer("replay", str(DEMO), "--no-delay", env=no_settings_env(tmp_path / "home"))
    assert done.returncode == 0, done.stderr
    notice = done.stderr.splitlines()[0]
    # auto tried every voice and says why each failed
    assert "speechd:" in notice and "pyttsx3:" in notice
    assert done.stdout.splitlines()[0].startswith("Harbor Bank Assistant is moving $500")


def short_recording(path: Path) -> Path:
    """Three tool calls two recorded seconds apart."""
    path.write_text(
        "\n".join(
            frame(
                "agent.tool.invoked", tool=f"t{n}", summary_normal=f"Step {n} of three.", at=2 * n
            )
            for n in (1, 2, 3)
        )
        + "\n",
        encoding="utf-8",
    )
    return path


def test_replay_paced_honours_speed_at_a_voices_pace(tmp_path: Path) -> None:
    recording = short_recording(tmp_path / "three.jsonl")
    done = announcer("replay", str(recording), "--speech", "paced", "--rate", "600", "--speed", "2")
    assert done.returncode == 0, done.stderr
    said = [json.loads(line) for line in done.stderr.splitlines() if line.startswith("{")]
    speaks = [r for r in said if r["action"] == "speak"]
    assert [r["text"] for r in speaks] == [f"Step {n} of three." for n in (1, 2, 3)]
    starts = [float(r["t"]) for r in speaks]  # type: ignore[arg-type]
    # recorded 2 s apart, twice as fast: each starts at least a second after the last
    assert all(later - earlier >= 0.9 for earlier, later in itertools.pairwise(starts))


def test_replay_paced_with_no_delay_sends_at_once(tmp_path: Path) -> None:
    recording = short_recording(tmp_path / "three.jsonl")
    done = announcer("replay", str(recording), "--speech", "paced", "--rate", "600", "--no-delay")
    assert done.returncode == 0, done.stderr
    said = [json.loads(line) for line in done.stderr.splitlines() if line.startswith("{")]
    texts = [r["text"] for r in said if r["action"] == "speak"]
    # a burst of status news: the first is said, then the latest (current, then most recent)
    assert texts[0] == "Step 1 of three." and "Step 3 of three." in texts[-1]


def test_a_malformed_speech_spec_is_refused_with_the_rule(tmp_path: Path) -> None:
    done = announcer("replay", str(DEMO), "--speech", "wav")
    assert done.returncode != 0
    assert "name the folder" in done.stderr and "Traceback" not in done.stderr
