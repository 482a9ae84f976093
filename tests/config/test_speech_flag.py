"""One ``--speech NAME[:ARG]`` option, and the voice flags, on every command that speaks.

Run as a user would (subprocesses of ``python -m announcer``): ``wav:DIR`` is reachable
and writes real espeak-ng audio, ``jsonl:PATH`` records, ``ANNOUNCER_BACKEND`` chooses
the speech when no flag does, and a replay takes a voice or names why it cannot speak.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from announcer.cli import launch
from announcer.cli.commands import replay
from announcer.cli.main import build_parser
from announcer.speech.registry import split_speech_spec
from tests.shared_data import SHARED as SHARED_ROOT
from tests.support.cli import run_announcer as announcer
from tests.support.speech_record import spoken_in as spoken

ROOT = Path(__file__).resolve().parents[2]
STEP_FINISH = SHARED_ROOT / "peers/agent-cli-streams/opencode__run_json__v1__step_finish.jsonl"
HEARD = ["OpenCode session started.", "OpenCode finished a step."]


def listen_file(*extra: str, env: dict[str, str] | None = None) -> Any:
    return announcer(
        "listen", str(STEP_FINISH), "--format", "opencode", "--exit-when-done", "--ui", "plain",
        *extra, env=env,
    )  # fmt: skip


def test_wav_dir_saves_what_the_user_would_hear(tmp_path: Path) -> None:
    audio = tmp_path / "audio"
    done = listen_file("--speech", f"wav:{audio}")
    assert done.returncode == 0, done.stderr
    assert spoken(audio / "speech.jsonl")[-2:] == HEARD
    wavs = sorted(audio.glob("0*.wav"))
    assert len(wavs) == len(spoken(audio / "speech.jsonl"))
    assert all(w.stat().st_size > 10_000 for w in wavs)  # real speech, not empty files


def test_jsonl_path_records_and_the_plain_ui_still_prints(tmp_path: Path) -> None:
    record = tmp_path / "speech.jsonl"
    done = listen_file("--speech", f"jsonl:{record}", "--verbosity", "terse")
    assert done.returncode == 0, done.stderr
    heard = spoken(record)
    assert heard and heard[-2:] != HEARD  # terse wording, from the flag
    assert all(text in done.stdout for text in heard[-2:])


def test_the_environment_chooses_the_speech_when_no_flag_does(tmp_path: Path) -> None:
    record = tmp_path / "from-env.jsonl"
    done = listen_file(env={"ANNOUNCER_BACKEND": f"jsonl:{record}"})
    assert done.returncode == 0, done.stderr
    assert spoken(record)[-2:] == HEARD


def test_the_flag_wins_over_the_environment(tmp_path: Path) -> None:
    env_record, flag_record = tmp_path / "env.jsonl", tmp_path / "flag.jsonl"
    done = listen_file(
        "--speech", f"jsonl:{flag_record}", env={"ANNOUNCER_BACKEND": f"jsonl:{env_record}"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert spoken(flag_record)[-2:] == HEARD
    assert not env_record.exists()


def test_the_recorded_demo_follows_announcer_backend(tmp_path: Path) -> None:
    record = tmp_path / "demo.jsonl"
    done = announcer(
        "demo", "--recorded", "--no-delay", env={"ANNOUNCER_BACKEND": f"jsonl:{record}"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert len(spoken(record)) > 5
    assert done.stdout == ""  # recorded, not printed


def test_a_replay_without_the_named_voice_says_why(tmp_path: Path) -> None:
    # A replay takes every backend listen takes; one that cannot start names its reason.
    done = announcer(
        "replay", "--no-delay", "--speech", "pyttsx3", str(STEP_FINISH),
        env={"HOME": str(tmp_path)},  # no ALSA device of the user's own
    )  # fmt: skip
    if done.returncode == 0:
        pytest.skip("this machine has an audio device: pyttsx3 spoke")
    assert "--speech pyttsx3" in done.stderr and "audio" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("spec", "rule"),
    [
        ("loud", "must be one of"),
        ("wav", "name the folder"),
        ("text:/tmp/x", "only wav:DIR and jsonl:PATH take an argument"),
    ],
)
def test_a_bad_speech_spec_names_the_rule(spec: str, rule: str, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=rule):
        split_speech_spec(spec)
    done = listen_file("--speech", spec)
    assert done.returncode != 0
    assert rule in done.stderr


def test_voice_flags_reach_the_settings_of_listen_demo_and_replay(tmp_path: Path) -> None:
    flags = [
        "--rate", "350", "--pitch", "0.3", "--volume", "0.8", "--voice", "yo=yoruba",
        "--no-earcons", "--do-not-interrupt", "--pace", "300", "--speech", "text",
        "--config", str(tmp_path / "none.toml"),
    ]  # fmt: skip
    parser = build_parser()
    listened = launch.settings_from_args(parser.parse_args(["listen", *flags, "x.jsonl"]))
    replayed = replay.settings_from_args(parser.parse_args(["replay", *flags, "x.jsonl"]))
    demo = replay.settings_from_args(parser.parse_args(["demo", *flags]))
    for settings in (listened, replayed, demo):
        assert (settings.rate_wpm, settings.pitch, settings.volume) == (350, 0.3, 0.8)
        assert settings.voices == {"yo": "yoruba"}
        assert settings.earcons is False and settings.do_not_interrupt is True
        assert (settings.pace_wpm, settings.backend) == (300, "text")
