"""Plain ``announcer`` runs the demo, and so do the demo's options given alone (issue 20 item 8):
``announcer --ui plain`` and ``announcer --language es`` work as the README implies."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from announcer.cli.main import with_default_command
from tests.support.cli import run_announcer as announcer

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        ([], ["demo"]),
        (["--ui", "plain"], ["demo", "--ui", "plain"]),
        (["--language", "es"], ["demo", "--language", "es"]),
        (["--version"], ["--version"]),
        (["--help"], ["--help"]),
        (["listen", "--ui", "plain", "x.jsonl"], ["listen", "--ui", "plain", "x.jsonl"]),
        (["lisen", "x"], ["lisen", "x"]),  # a mistyped command is refused, naming the choices
    ],
)
def test_options_alone_mean_the_demo(words: list[str], expected: list[str]) -> None:
    assert with_default_command(words) == expected


def test_language_without_naming_the_demo(tmp_path: Path) -> None:
    record = tmp_path / "speech.jsonl"
    done = announcer(
        "--language",
        "es",
        "--recorded",
        "--no-delay",
        "--speech",
        f"jsonl:{record}",
    )
    assert done.returncode == 0, done.stderr
    said = [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines()]
    # announcer's own words are Spanish ("Pregunta", not "Question")
    assert any(str(r["text"]).startswith("Pregunta") for r in said), said[:5]


def test_plain_ui_without_naming_the_demo(tmp_path: Path) -> None:
    done = announcer("--ui", "plain", "--recorded", "--no-delay", "--speech", "text")
    assert done.returncode == 0, done.stderr
    assert "invalid choice" not in done.stderr
    assert done.stdout.splitlines()[0].startswith("Harbor Bank Assistant")


def test_an_unknown_word_still_names_the_commands(tmp_path: Path) -> None:
    done = announcer("lisen")
    assert done.returncode == 2 and "invalid choice" in done.stderr and "listen" in done.stderr


def test_the_programs_help_names_the_demos_own_options_and_each_exists() -> None:
    """Issue 30 item 8: ``./run --help`` did not show ``--ui``, ``--language`` or
    ``--verbosity``, though ``announcer --ui plain`` runs the demo with them."""
    import re

    from announcer.cli.main import build_parser

    top = build_parser(["--help"]).format_help()
    for flag in ("--ui", "--language", "--verbosity", "--speech", "--pace", "--recorded"):
        assert f"  {flag} " in top, top
    named = set(re.findall(r"^  (--[a-z-]+)", top.split("With no COMMAND")[1], re.M))
    demo = build_parser(["demo"])._subparsers._group_actions[0].choices["demo"]  # type: ignore[union-attr]
    known = {option for action in demo._actions for option in action.option_strings}
    assert named and named <= known, named - known


def test_the_pace_benchmarks_help_runs_nothing() -> None:
    """Issue 30 item 8: ``benchmarks/pace.py --help`` ran the whole benchmark."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "pace.py"), "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage:") and "Speech at the pace of a real voice" in done.stdout
    assert "all_met" not in done.stdout  # no benchmark ran
