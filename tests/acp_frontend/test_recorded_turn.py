"""Issue 33's lab runs, replayed: claude-agent-acp's real ten-call turn against the lab's
scripted model (``python -m tests.lab.record_acp claude-ten-tools``: two files edited, two
written, the tests run twice and failing), heard through the ACP mapping and the engine on
a clock the test holds: the turn told as a digest, and a minute of silence while its
tests run broken by one short "still working"."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from tests.acp_frontend.recorded import replay
from tests.acp_frontend.test_acp_mapping import Heard

TEN_TOOLS = "claude-ten-tools"


def _calls(heard: Heard) -> int:
    return sum(e["type"] == "aaep:agent.tool.invoked" for e in heard.events)


def test_the_real_claude_adapters_ten_call_turn_ends_with_its_digest() -> None:
    """The digest names each changed file with its lines (their diffs came before the
    questions, the ends say only "Changed ..."), each command as written ("ls src", not
    "Ls src"), the failing tests, the user's answers and the agent's last words."""
    heard = replay(TEN_TOOLS, digest_after_seconds=1, answer_arming_seconds=0)
    assert _calls(heard) == 10
    digests = [line for line in heard.spoken if line.startswith("Claude Agent's turn:")]
    assert len(digests) == 1, digests
    assert heard.spoken.index(digests[0]) > heard.spoken.index("Claude Agent finished the turn.")
    digest = digests[0]
    assert digest.startswith(
        "Claude Agent's turn: Changed: adds 1 line and removes 1 line in src/app.py; "
        "adds 2 lines in README.md; creates src/util.py (2 lines); creates CHANGES.md (1 line). "
        # The test script's own summary, as counts (issue 33 item 2: "tests: 47 passed,
        # 2 failed"), read from the output claude-agent-acp sent in rawOutput.
        "Ran: ls src; sh run_tests.sh: 47 passed, 2 failed; grep -n add src/app.py; "
        "sh run_tests.sh: 47 passed, 2 failed. "
    ), digest
    assert "You answered: allowed: Claude Agent wants to run: Edit src/app.py;" in digest
    # Six answers: five named at normal verbosity, the sixth counted, never all listed.
    assert digest.count("allowed: ") == 5 and "More answers: 1." in digest
    assert digest.endswith("Errors: 2. Last words: Two tests in test_parser still fail.")


def _a_minute_before_the_first_test_run_ends(
    seconds: float = 60.0,
) -> Callable[[dict[str, Any]], float]:
    """``replay``'s hold: the first ``sh run_tests.sh`` (it failed) ran a minute, not the
    lab's tenth of a second (the user allowed it; claude-agent-acp says nothing more
    until it ends)."""
    held: list[object] = []

    def hold(entry: dict[str, Any]) -> float:
        update = (entry["message"].get("params") or {}).get("update") or {}
        if update.get("status") == "failed" and not held:
            held.append(update.get("toolCallId"))
            return seconds
        return 0.0

    return hold


@pytest.mark.parametrize(("every", "hold", "count"), [(45, 60, 1), (30, 60, 1), (30, 100, 2)])
def test_a_minute_long_test_run_of_the_real_claude_adapter_is_broken_by_still_working(
    every: float, hold: float, count: int
) -> None:
    """The silence after the user allowed the command is the command running (before,
    the session stayed "waiting for you" and nothing broke the silence): a short notice
    names what runs and for how long after ``silence_notice_seconds`` of silence, the
    next one in the same silence twice as long after (30 s, then 60 more): one in a
    minute's run at the default 30 s, two in a run of 100 s; between the question and
    the command's end; the turn goes on as recorded."""
    heard = replay(
        TEN_TOOLS,
        hold=_a_minute_before_the_first_test_run_ends(hold),
        answer_arming_seconds=0,
        silence_notice_seconds=every,
    )
    said = [line for line in heard.spoken if line.startswith("Still working")]
    assert len(said) == count, heard.spoken
    for notice in said:  # the ticks are a second apart: "45 seconds" or "46 seconds"
        assert re.fullmatch(
            r"Still working: sh run_tests\.sh, (\d\d seconds|1 minute( and \d+ seconds?)?)\.",
            notice,
        )
    at = heard.spoken.index(said[0])
    assert heard.spoken[at - 1].startswith("Confirmation needed. Claude Agent wants to run: sh")
    assert heard.spoken[at + len(said)].startswith("Run the tests failed, exit code 1")
    assert _calls(heard) == 10


@pytest.mark.parametrize("verbosity", ["normal", "detailed"])
def test_the_real_claude_adapters_suggested_prompt_is_kept_and_said_after_the_turn(
    verbosity: str,
) -> None:
    """Issue 33, item 5, from the wire: claude-agent-acp 0.101 predicts the next prompt
    after the turn's end, as ``session_info_update._meta.promptSuggestions``
    (``claude-suggestion``: recorded with CLAUDE_CODE_ENABLE_PROMPT_SUGGESTION and as a
    JetBrains AIR client, the only client it sends them to). Listed at every verbosity,
    said once after the turn at detailed verbosity only."""
    heard = replay("claude-suggestion", verbosity=verbosity, answer_arming_seconds=0)
    assert heard.adapter.suggestions(next(iter(heard.adapter.sessions))) == ["run the tests"]
    said = [line for line in heard.spoken if "suggests" in line]
    if verbosity == "detailed":
        assert said == ["Claude Agent suggests: run the tests."]
        assert heard.spoken[-2:] == ["Claude Agent finished the turn.", said[0]]
    else:
        assert said == []
        assert heard.spoken[-1] == "Claude Agent finished the turn."
