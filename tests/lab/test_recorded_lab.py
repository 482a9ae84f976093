"""The recorded sessions still match the pinned adapters (issue 31).

``tests/acp_frontend/test_recorded_sessions.py`` tests what a listener hears from the
recordings in ``tests/acp_frontend/recordings/``; here each recipe is recorded afresh from
the real adapter (tests/lab/record_acp.py) and heard the same way, so a re-pinned adapter
that sends something else fails here, not silently in the fixtures.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.acp_frontend.recorded import replay
from tests.lab.clis import Clis
from tests.lab.fake_model import FakeModelServer
from tests.lab.record_acp import RECORDINGS, portable, record

#: a recipe, and a sentence its session must make heard
HEARD = {
    "claude-build-fail": (
        "Build the project failed, exit code 2: src/parser.c line 1: error: expected ';' "
        "before 'int'."
    ),
    "codex-build-fail": (
        "The command sh build.sh failed, exit code 2: src/parser.c line 1: error: "
        "expected ';' before 'int'."
    ),
    "qwen-auto-command": "Qwen Code's Auto mode approved: Create made.txt.",
    "codex-patch-delete": "Deleted old_notes.txt; changed README.md, src/app.py.",
    "claude-ten-tools": (
        "Run the tests again failed, exit code 1: test_parser FAILED: expected 3, got 2."
    ),
    "claude-quick-plan": (
        "All 4 steps done. The steps: Read the notes; Fix the parser; Run the tests; Sum up."
    ),
}


@pytest.mark.parametrize("name", sorted(HEARD))
def test_a_fresh_recording_is_heard_as_the_fixture_is(
    name: str, clis: Clis, fake_model: FakeModelServer, tmp_path: Path
) -> None:
    scratch = tmp_path.resolve()
    wire = record(name, clis, fake_model, scratch)
    fresh = tmp_path / "recordings"
    fresh.mkdir()
    (fresh / f"{name}.jsonl").write_text("\n".join(portable(wire, scratch)) + "\n")
    said = replay(name, folder=fresh).spoken
    assert HEARD[name] in said, said
    assert HEARD[name] in replay(name).spoken  # the committed fixture, the same sentence
    assert (RECORDINGS / f"{name}.jsonl").exists()


def test_a_fresh_recording_still_brings_claudes_suggested_prompt(
    clis: Clis, fake_model: FakeModelServer, tmp_path: Path
) -> None:
    """``claude-suggestion`` afresh (issue 33, item 5): the pinned adapter still sends its
    prediction in the form the mapping reads, and it is said at detailed verbosity."""
    scratch = tmp_path.resolve()
    wire = record("claude-suggestion", clis, fake_model, scratch)
    fresh = tmp_path / "recordings"
    fresh.mkdir()
    (fresh / "claude-suggestion.jsonl").write_text("\n".join(portable(wire, scratch)) + "\n")
    heard = replay("claude-suggestion", folder=fresh, verbosity="detailed")
    assert heard.adapter.suggestions(next(iter(heard.adapter.sessions))) == ["run the tests"]
    assert "Claude Agent suggests: run the tests." in heard.spoken, heard.spoken
