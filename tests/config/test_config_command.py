"""``announcer config path|show|edit|reset`` run through the real CLI entry point."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import pytest

from announcer.cli.main import main
from announcer.config.template import TEMPLATE


@pytest.fixture
def settings_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "conf" / "config.toml"
    monkeypatch.setenv("ANNOUNCER_CONFIG", str(path))
    for name in ("ANNOUNCER_VERBOSITY", "ANNOUNCER_LANGUAGES", "LANGUAGE", "LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LANG", "C.UTF-8")
    return path


def test_path(settings_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["config", "path"]) == 0
    out, err = capsys.readouterr()
    assert out.strip() == str(settings_file)
    assert "No settings file yet" in err


def test_show_prints_valid_toml_with_sources(
    settings_file: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    settings_file.parent.mkdir(parents=True)
    settings_file.write_text(
        'verbosity = "detailed"\ncognitive_load = "extreme"\n[voices]\nyo = "yoruba"\n',
        encoding="utf-8",
    )
    monkeypatch.setenv("ANNOUNCER_PACE_WPM", "150")
    assert main(["config", "show", "--language", "yo,en"]) == 0
    out, err = capsys.readouterr()
    shown = tomllib.loads(out)
    assert shown["verbosity"] == "detailed"
    assert shown["cognitive_load"] == "medium"
    assert shown["pace_wpm"] == 150
    assert shown["languages"] == ["yo", "en"]
    assert shown["voices"] == {"yo": "yoruba"}
    assert 'verbosity = "detailed" # config.toml line 1' in out
    assert "pace_wpm = 150 # ANNOUNCER_PACE_WPM" in out
    assert "# --language" in out
    assert f"{settings_file}, line 2" in err and "'cognitive_load'" in err


def test_edit_creates_the_file_runs_the_editor_and_checks_it(
    settings_file: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # A real editor stand-in: a script that adds a line at the top, as a user would type it.
    editor = tmp_path / "fake-editor.py"
    editor.write_text(
        "import sys, pathlib\np = pathlib.Path(sys.argv[1])\n"
        "p.write_text('verbosity = \"terse\"\\n' + p.read_text('utf-8'), 'utf-8')\n",
        encoding="utf-8",
    )
    command = f"{sys.executable} {editor}"
    assert main(["config", "edit", "--editor", command]) == 0
    out, _ = capsys.readouterr()
    assert "valid" in out
    text = settings_file.read_text("utf-8")
    assert text == 'verbosity = "terse"\n' + TEMPLATE
    # A second edit that breaks the file is reported and exits non-zero.
    editor.write_text(
        "import sys, pathlib\np = pathlib.Path(sys.argv[1])\n"
        "p.write_text('pace_wpm = 5\\n' + p.read_text('utf-8'), 'utf-8')\n",
        encoding="utf-8",
    )
    assert main(["config", "edit", "--editor", command]) == 1
    _, err = capsys.readouterr()
    assert "'pace_wpm'" in err and "greater than or equal to 60" in err


def test_reset_needs_confirmation_then_keeps_a_backup(
    settings_file: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    settings_file.parent.mkdir(parents=True)
    settings_file.write_text('verbosity = "terse"  # mine\n', encoding="utf-8")
    monkeypatch.setattr(sys, "stdin", open("/dev/null"))  # noqa: SIM115 - not a terminal
    assert main(["config", "reset"]) == 1
    assert "--yes" in capsys.readouterr().err
    assert settings_file.read_text("utf-8") == 'verbosity = "terse"  # mine\n'
    assert main(["config", "reset", "--yes"]) == 0
    out, _ = capsys.readouterr()
    backup = settings_file.with_name("config.toml.bak")
    assert str(backup) in out
    assert backup.read_text("utf-8") == 'verbosity = "terse"  # mine\n'
    assert settings_file.read_text("utf-8") == TEMPLATE
