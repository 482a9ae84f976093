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
