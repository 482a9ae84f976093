"""``announcer voices`` run as a user would, as a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "announcer", "voices", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_lists_every_backend_with_a_status_and_one_line_reasons() -> None:
    done = _run("--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    names = [b["name"] for b in report["backends"]]
    assert names[:4] == ["screenreader", "speechd", "pyttsx3", "text"]
    assert {"wav", "jsonl"} <= set(names)
    for backend in report["backends"]:
        assert isinstance(backend["available"], bool)
        assert backend["detail"] and "\n" not in backend["detail"]
    assert report["pyttsx3_voices_installed"] > 0


def test_voices_per_language_follow_bcp47() -> None:
    done = _run("--json", "--language", "es-MX")
    [row] = json.loads(done.stdout)["languages"]
    assert row["profile"] == "es" and row["pyttsx3_voice"] == "roa/es"


def test_plain_output_reads_as_sentences() -> None:
    done = _run()
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Speech backends:\n")
    assert "en (English): pyttsx3 voice gmw/en-us, 180 wpm" in done.stdout
    assert "Traceback" not in done.stdout + done.stderr


def test_all_lists_installed_engine_voices_by_language() -> None:
    done = _run("--json", "--all", "--language", "fr-CA")
    voices = json.loads(done.stdout)["pyttsx3_voices"]
    assert list(voices) == ["fr"] and "roa/fr" in voices["fr"]


def test_an_available_backend_says_available_once() -> None:
    """Issue 30 item 8: "paced: available (available (silent, …))" said it twice."""
    done = _run()
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if line.startswith("  ")]
    assert any(line.startswith("  paced: available (silent") for line in lines), lines
    assert not any(line.count("available") > 1 for line in lines if ": available" in line)
