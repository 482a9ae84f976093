"""Durations in our sentences use babel plural rules in the user's language (never "1 minutes")."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.formats.test_languages import AEP_GOLDEN, run, summaries
from tests.formats.test_listen_format import listen
from tests.support.speech_record import spoken_in


def golden_with_durations(tmp_path: Path, durations_ms: dict[str, int]) -> Path:
    """The real golden AEP stream, with chosen ``duration_ms`` on its run.finished events."""
    lines = []
    for line in AEP_GOLDEN.read_text(encoding="utf-8").splitlines():
        event: dict[str, Any] = json.loads(line)
        if event["id"] in durations_ms:
            event["data"]["duration_ms"] = durations_ms[event["id"]]
        lines.append(json.dumps(event))
    path = tmp_path / "golden.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


WRONG_SINGULAR = re.compile(r"(?<![\d.,])1 (minutes|seconds|hours|minutos|segundos|horas)\b")


# run.finished events of the golden stream
FIRST_RUN = "01JX9YBARF000000000000GOLD"
SECOND_RUN = "01JX9YC0EPFIN000000000GOLD"
FIRST_SESSION_END = "01JX9YBWSND00000000000GOLD"  # session.ended


@pytest.mark.parametrize(
    ("language", "expected"),
    [
        ("en", ["finished in 1 minute.", "finished in 1 second."]),
        ("es", ["terminó en 1 minuto.", "terminó en 1 segundo."]),
    ],
)
def test_singular_durations(tmp_path: Path, language: str, expected: list[str]) -> None:
    stream = golden_with_durations(tmp_path, {FIRST_RUN: 60_000, SECOND_RUN: 1_000})
    said = " ".join(summaries(run("aep", stream, language).events))
    for phrase in expected:
        assert phrase in said
    assert not WRONG_SINGULAR.search(said)


def test_real_golden_durations_in_english_and_spanish() -> None:
    english = summaries(run("aep", AEP_GOLDEN, "en").events)
    spanish = summaries(run("aep", AEP_GOLDEN, "es").events)
    assert "Claude Code finished in 1 minute and 9 seconds." in english  # duration_ms 69000
    assert any("1 minuto y 9 segundos" in s for s in spanish)
    assert any("after 2 minutes." in s for s in english)  # session.ended, 119000 ms
    assert not WRONG_SINGULAR.search(" ".join(english + spanish))


def test_the_real_cli_says_spanish_durations(tmp_path: Path) -> None:
    stream = golden_with_durations(tmp_path, {FIRST_SESSION_END: 60_000})
    records = listen("aep", str(stream), tmp_path / "speech.jsonl", extra=["--language", "es"])
    texts = spoken_in(records)
    assert "Sesión de Claude Code terminada, tras 1 minuto." in texts
    assert not WRONG_SINGULAR.search(" ".join(texts))
