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


def test_an_approval_by_the_agents_own_mode_says_who_approved() -> None:
    """qwen 0.24.4 in its auto mode: its classifier (the model) approves ``touch made.txt``
    and the adapter sends no word of it but the mode; the listener hears who approved."""
    said = replay("qwen-auto-command").spoken
    assert "Qwen Code's Auto mode approved: Create made.txt." in said, said
    # its empty "Shell" placeholder (qwen's "preparing" call) is not said first
    assert "Shell." not in said, said


def _question(said: list[str]) -> str:
    return next(s for s in said if s.startswith("Confirmation needed."))


@pytest.mark.parametrize(
    ("name", "command", "scope"),
    [
        ("claude-build-fail", "sh build.sh", "Always: sh build.sh commands."),
        ("codex-build-fail", "sh build.sh", "Always: commands that start with sh build.sh."),
    ],
)
def test_an_ordinary_permission_question_is_at_most_30_words(
    name: str, command: str, scope: str
) -> None:
    """Issue 31, item 10: what will run, its risk, what "always" covers and the keys; the
    options' own labels at detailed verbosity."""
    question = _question(replay(name).spoken)
    assert len(question.split()) <= 30, (len(question.split()), question)
    assert f"wants to run: {command}." in question, question
    assert scope in question and "Medium risk." in question, question
    assert "Press A to accept, or R to reject." in question, question
    assert "Build.sh" not in question and "from now on it does not ask" not in question
    detailed = _question(replay(name, verbosity="detailed").spoken)
    assert "don't ask again for" in detailed and "Reject: No" in detailed, detailed


@pytest.mark.parametrize("name", ["claude-build-fail", "codex-build-fail"])
def test_an_accepted_call_is_not_announced_again_after_its_question(name: str) -> None:
    said = replay(name).spoken
    after = said[said.index(_question(said)) + 1 :]
    assert not [s for s in after if s in ("Build the project.", "Build.sh.", "sh build.sh.")]


def test_a_command_the_reviewer_denied_is_said_not_to_have_run() -> None:
    """codex-acp 2.6.0 in its own Auto review: the call is sent running, then the reviewer
    (the model) denies it. Nothing says it was approved or ran; its end says it did not."""
    said = replay("codex-review-denied").spoken
    assert "Codex's reviewer denied: rm -rf build." in said, said
    assert "The command rm -rf build did not run: Codex's reviewer denied it." in said, said
    assert not [s for s in said if "approved" in s or s == "Rm -rf build."], said


def test_the_start_is_said_once_whole_and_internal_tools_never() -> None:
    """claude-agent-acp 0.101.0 with a plan approval: the settings line once, whole (the
    mode and the model; was cut "… Fast…" and preceded by "Mode is now Plan."), and its
    ExitPlanMode bookkeeping ("Exited Plan Mode: done.") never said: the question and the
    new mode say it (issue 31, items 11, 12, 13)."""
    said = replay("claude-plan-always").spoken
    settings = [s for s in said if s.startswith("Mode")]
    assert settings == ["Mode: Plan. Model: Default (recommended).", "Mode is now Auto."], said
    assert not [s for s in said if "Plan Mode" in s or s.endswith("…")], said


def test_a_codex_patch_says_what_it_changes_and_deletes() -> None:
    """codex-acp 2.6.0 sends the patch's three diffs (one with ``_meta.kind: "delete"``) on
    the running call, before its question, and none at its end (issue 31, item 8)."""
    said = replay("codex-patch-delete").spoken
    question = _question(said)
    assert "It deletes old_notes.txt." in question, question
    assert "in README.md" in question and "in src/app.py" in question, question
    assert "High risk." in question and "This cannot be undone." in question, question
    assert "Deleted old_notes.txt; changed README.md, src/app.py." in said, said
    assert "Edit files: done." not in said, said


def test_a_quick_plans_steps_are_heard() -> None:
    """claude-agent-acp 0.101.0: a plan made and done at once (its first update has step 1
    under way, its second all done). "Step 1 of 4" is stale by the time a listener would hear
    it; the end says every step, whole, at normal verbosity (issue 31, item 9)."""
    said = replay("claude-quick-plan").spoken
    done = next(s for s in said if s.startswith("All 4 steps done."))
    assert done == (
        "All 4 steps done. The steps: Read the notes; Fix the parser; Run the tests; Sum up."
    ), done


def test_a_message_after_an_adapters_warning_is_heard_whole() -> None:
    """claude-agent-acp 0.101.0 sends its billing warning as a message chunk with no
    ``messageId``, ending in an address, and the agent's next message right after it: run
    together, "Plan" was heard as part of the address ("code.claude.com approved;
    starting."). A chunk of another message starts a paragraph (issue 31, item 13)."""
    said = replay("claude-plan-always").spoken
    assert "Plan approved; starting." in said, said
    assert not [s for s in said if "code.claude.com approved" in s], said


def test_a_message_typed_while_claude_starts_is_answered_before_its_start_lines() -> None:
    """Issue 31, item 11: the user's message typed while claude-agent-acp starts goes as
    soon as its session is open. "Claude Agent is ready." and the settings line used to be
    said first, holding the answer back; now the answer comes first, "is ready." is kept
    for the record and the settings line is said once, as the turn ends."""
    said = replay("claude-quick-plan", early=True).spoken
    assert said[0] == "Step 1 of 4: Read the notes.", said
    assert "Claude Agent is ready." not in said, said
    settings = [i for i, s in enumerate(said) if s.startswith("Mode: Manual.")]
    assert settings == [said.index("Claude Agent finished the turn.") - 1], said
    # typed once it was ready, the start lines come first, as before
    assert replay("claude-quick-plan").spoken[:2] == [
        "Claude Agent is ready.",
        "Mode: Manual. Model: Default (recommended).",
    ]


def test_geminis_accepted_command_is_not_said_again_after_the_answer() -> None:
    """Issue 31, item 11: Gemini CLI 0.61.0 (ACP mode) asks to run ``touch made.txt``; after
    the user's accept its only update is the call's end, titled again with the command,
    which was said as "Touch made.txt: done.": the command again, right after "Sent:
    accept.". Its end is kept for the record; the agent's answer comes next."""
    heard = replay("gemini-command")
    said = heard.spoken
    question = said.index(_question(said))
    assert "wants to run: touch made.txt." in said[question], said
    assert said[question + 1 :] == ["I ran the command.", "Gemini CLI finished the turn."]
    completed = [e for e in heard.events if e["type"] == "aaep:agent.tool.completed"]
    assert [e["status"] for e in completed] == ["success"]  # on the record, not said
