"""``announcer listen NAME``: a producer saved in the settings file, end to end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from announcer.cli.commands.listen import options_from_args, resolve_sources
from announcer.cli.main import build_parser
from announcer.config import load_settings

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "announcer" / "data" / "banking_session.jsonl"


def write_settings(path: Path, source: str, token_env: str | None = None) -> None:
    token = f'token_env = "{token_env}"\n' if token_env else ""
    path.write_text(
        f'# my agents\n[producers.bank]\nsource = "{source}"\n{token}', encoding="utf-8"
    )


def test_listen_name_plays_the_saved_source(tmp_path: Path, monkeypatch) -> None:
    settings_file = tmp_path / "config.toml"
    write_settings(settings_file, str(DEMO))
    monkeypatch.setenv("ANNOUNCER_CONFIG", str(settings_file))
    speech = tmp_path / "speech.jsonl"
    command = ["listen", "--ui", "none", "--speech", f"jsonl:{speech}", "--exit-when-done", "Bank"]
    result = subprocess.run(
        [sys.executable, "-m", "announcer", *command],
        cwd=tmp_path,  # no file called Bank here
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    said = [json.loads(line)["text"] for line in speech.read_text(encoding="utf-8").splitlines()]
    assert any(text.startswith("Harbor Bank Assistant") for text in said)


def test_saved_token_variable_is_used_unless_a_flag_names_one(tmp_path: Path) -> None:
    settings_file = tmp_path / "config.toml"
    write_settings(settings_file, "wss://agent.example/aaep", "BANK_TOKEN")
    settings = load_settings(settings_file, env={}, report=None)
    sources, token_env = resolve_sources(["bank", "unix:/tmp/other.sock"], settings)
    assert sources == ["wss://agent.example/aaep", "unix:/tmp/other.sock"]
    parser = build_parser()
    args = parser.parse_args(["listen", "bank"])
    assert options_from_args(args, token_env).token_env == "BANK_TOKEN"
    flagged = parser.parse_args(["listen", "--token-env", "MINE", "bank"])
    assert options_from_args(flagged, token_env).token_env == "MINE"
    # An unknown name is a source like any other.
    assert resolve_sources(["nobody"], settings) == (["nobody"], None)


def listen_demo(tmp_path: Path, *flags: str, env: dict[str, str] | None = None) -> list[dict]:
    speech = tmp_path / "speech.jsonl"
    command = ["listen", "--ui", "none", "--speech", f"jsonl:{speech}", "--exit-when-done"]
    result = subprocess.run(
        [sys.executable, "-m", "announcer", *command, *flags, str(DEMO)],
        cwd=tmp_path,
        env=dict(os.environ, PYTHONPATH=str(ROOT), **(env or {})),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in speech.read_text(encoding="utf-8").splitlines()]


def spoken(records: list[dict], event_id: str) -> str:
    return next(r["text"] for r in records if r["event_id"] == event_id)


def test_listen_config_flag_uses_that_files_verbosity(tmp_path: Path) -> None:
    """``--config PATH`` wins over ``$ANNOUNCER_CONFIG``; a ``--verbosity`` flag wins over both."""
    terse = tmp_path / "terse.toml"
    terse.write_text('# brief please\nverbosity = "terse"\n', encoding="utf-8")
    usual = tmp_path / "usual.toml"
    usual.write_text('verbosity = "normal"\n', encoding="utf-8")
    env = {"ANNOUNCER_CONFIG": str(usual)}

    usual_run = listen_demo(tmp_path, env=env)
    assert spoken(usual_run, "evt_demo0004bank") == "Your checking balance is $12,500.00."

    terse_run = listen_demo(tmp_path, "--config", str(terse), env=env)
    assert spoken(terse_run, "evt_demo0004bank") == "Balance found."

    flag_run = listen_demo(tmp_path, "--config", str(terse), "--verbosity", "normal", env=env)
    assert spoken(flag_run, "evt_demo0004bank") == "Your checking balance is $12,500.00."


def test_listen_config_flag_names_a_missing_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.toml"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "announcer",
            "listen",
            "--ui",
            "none",
            "--config",
            str(missing),
            "--speech",
            "none",
            "--exit-when-done",
            str(DEMO),
        ],
        cwd=tmp_path,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert f"--config {missing}: no such file" in result.stderr


def test_the_ui_saves_changes_to_the_config_file_it_was_given(tmp_path: Path) -> None:
    from announcer.ui.tui.runner import settings_saver

    chosen = tmp_path / "chosen.toml"
    chosen.write_text('# mine\nverbosity = "terse"\n', encoding="utf-8")
    in_force = load_settings(chosen, env={}, report=None)
    save = settings_saver(in_force, chosen)
    assert save is not None
    save(in_force.model_copy(update={"verbosity": "detailed"}))
    assert load_settings(chosen, env={}, report=None).verbosity == "detailed"
    assert chosen.read_text(encoding="utf-8").startswith("# mine")  # comments kept
