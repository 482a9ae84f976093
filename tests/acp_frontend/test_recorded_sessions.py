"""What a listener hears from real adapters' recorded sessions (issue 31).

Each recording in ``tests/acp_frontend/recordings/`` is one session of a pinned real
adapter (tests/lab/clis.py) against the lab's scripted model, both ways, as
``python -m tests.lab.record_acp NAME`` made it; :mod:`tests.acp_frontend.recorded`
replays it through the ACP mapping and the engine.
"""

from __future__ import annotations

import pytest

from tests.acp_frontend.recorded import replay
from tests.acp_frontend.test_acp_mapping import Heard

#: the compiler's first error, as said: its place read as "file line N"
FIRST_ERROR = "src/parser.c line 1: error: expected ';' before 'int'"


def test_claudes_failed_build_says_its_exit_code_and_first_error() -> None:
    """claude-agent-acp 0.101.0 puts "Exit code 2" and the output in ``rawOutput`` (a
    string) and in fenced text content; neither is read raw."""
    said = replay("claude-build-fail").spoken
    assert f"Build the project failed, exit code 2: {FIRST_ERROR}." in said, said
    assert not [s for s in said if "Execute failed" in s or "code block" in s], said


def test_codexs_failed_build_says_its_exit_code_and_first_error() -> None:
    """codex-acp 2.6.0 sends the exit code in ``_meta.terminal_exit`` and the output in
    ``_meta.terminal_output_delta``; its title is only "build.sh", so the command is said."""
    said = replay("codex-build-fail").spoken
    assert f"The command sh build.sh failed, exit code 2: {FIRST_ERROR}." in said, said
    assert not [s for s in said if "It reported an error" in s or "Execute failed" in s], said


@pytest.mark.parametrize("language", ["es", "fr", "de", "pt_BR", "ar", "yo"])
@pytest.mark.parametrize("name", ["claude-build-fail", "codex-build-fail"])
def test_the_exit_code_and_first_error_are_said_in_every_language(name: str, language: str) -> None:
    heard = Heard()
    heard.adapter.set_language(language)
    said = " ".join(replay(name, heard).spoken)
    assert "2" in said and "expected ';' before 'int'" in said and "src/parser.c" in said, said
    assert "src/parser.c:1:5" not in said, said  # the place said, not spelled
