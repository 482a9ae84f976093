"""The Textual app and an ACP agent's own questions (elicitation), and a hostile agent's name.

Real agents as child processes through ``AcpTransport`` (tests/acp_frontend/sdk_agent.py
and hostile_agent.py), the real app under Pilot. What the agent receives is what it
logs; what the user hears is the jsonl speech record.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from announcer.transports.acp import AcpTransport
from announcer.ui.tui.modals import ClarifyScreen
from tests.ui.test_agent_prompt import ROOT, Run, started, stopped, until

# The answering tests turn the arming wait off (0): they are about what the questions say
# and what reaches the agent. The wait itself is checked at its real length in
# test_agent_prompt.py (keys at awkward moments) and tests/ui/test_key_timing.py.
NO_ARMING = 0.0


async def test_a_question_of_the_agent_is_answered_with_keys_and_reaches_it(
    tmp_path: Path,
) -> None:
    run = Run(tmp_path, answer_arming_seconds=NO_ARMING)
    async with run.app.run_test() as pilot:
        runner = await started(run, pilot)
        await pilot.press(*"elicit codex", "enter")
        await until(pilot, lambda: isinstance(run.app.screen, ClarifyScreen), "the question")
        await until(pilot, run.said("Scripted Agent asks: Codex needs your input"), "said")
        await until(pilot, run.keys_armed, "the keys to arm")
        await pilot.press("2", "enter")  # Blue
        answers = tmp_path / "elicitation.txt"
        await until(pilot, answers.exists, "the agent's answer")
        assert json.loads(answers.read_text()) == {
            "action": "accept",
            "content": {"colour": "Blue"},
        }
        await until(pilot, run.said("Thank you for answering."), "the agent went on")
        await stopped(run, runner)


async def test_an_agents_name_made_of_markup_is_shown_as_written(tmp_path: Path) -> None:
    run = Run(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    hostile = AcpTransport(
        [sys.executable, "-m", "tests.acp_frontend.hostile_agent"], cwd=str(tmp_path), env=env
    )
    run = _replace_agent(run, hostile)
    async with run.app.run_test() as pilot:
        runner = await started_named(run, pilot, "is ready")
        title = "[@click=app.quit]Evil[/] [b]bold[/b]"
        await until(pilot, lambda: run.box.agent == title, "the agent's own name")
        label = run.box._border_title
        assert label is not None
        assert label.plain == f"Message to {title}"  # every bracket shown, nothing hidden
        assert not label.spans  # no link, no style: one click cannot quit
        await stopped(run, runner)


def _replace_agent(run: Run, transport: AcpTransport) -> Run:
    from announcer.engine.settings import UserSettings
    from announcer.runtime.session import LiveSession
    from announcer.speech.driver import SpeechDriver
    from announcer.speech.jsonl import JsonlBackend
    from announcer.ui.tui.app import AnnouncerApp

    run.session = LiveSession(
        [], UserSettings(), transports=[transport], driver=SpeechDriver(JsonlBackend(run.records))
    )
    run.app = AnnouncerApp(run.session, save_settings=lambda _settings: None)
    return run


async def started_named(run: Run, pilot: object, text: str):  # type: ignore[no-untyped-def]
    import asyncio

    runner = asyncio.ensure_future(run.session.run())
    await until(pilot, run.said(text), "the agent to start")
    return runner


async def test_f4_picks_the_agents_mode_and_the_agent_receives_it(tmp_path: Path) -> None:
    from announcer.ui.tui.screens import AgentSettingsScreen

    run = Run(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    agent = AcpTransport(
        [sys.executable, "-m", "tests.acp_frontend.sdk_agent", "--settings"],
        name="Scripted", cwd=str(tmp_path), env=env,
    )  # fmt: skip
    run = _replace_agent(run, agent)
    async with run.app.run_test() as pilot:
        runner = await started(run, pilot)
        await until(pilot, run.said("Model: GPT-5. Approval: Auto review."), "the settings")
        await pilot.press("f4")
        await until(pilot, lambda: isinstance(run.app.screen, AgentSettingsScreen), "the picker")
        await until(pilot, run.said("Agent mode and model."), "its title")
        labels = [label for _s, _v, label, _now in run.app.screen.choices]
        assert labels == [
            "Model: GPT-5", "Model: GPT-5 mini", "Approval: Ask before edits",
            "Approval: Auto review",
        ]  # fmt: skip
        assert run.said("Model: GPT-5 (now)")()  # the first row, current, is read
        await pilot.press("down", "down", "enter")  # Approval: Ask before edits
        await until(pilot, run.said("Approval is now Ask before edits."), "the change")
        assert (tmp_path / "settings.txt").read_text().splitlines() == ["config approval ask"]
        await stopped(run, runner)


async def test_a_question_behind_a_flood_of_chunks_opens_its_dialog(tmp_path: Path) -> None:
    from announcer.ui.tui.modals import ConfirmScreen

    run = Run(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HOSTILE_FLOOD": "60000", "HOSTILE_ASK": "1",
           "HOSTILE_LINE_MB": "0", "HOSTILE_STDERR_MB": "0", "HOSTILE_GHOSTS": "0"}  # fmt: skip
    hostile = AcpTransport(
        [sys.executable, "-m", "tests.acp_frontend.hostile_agent"], cwd=str(tmp_path), env=env
    )
    run = _replace_agent(run, hostile)
    async with run.app.run_test() as pilot:
        runner = await started_named(run, pilot, "is ready")
        await pilot.press(*"go", "enter")
        await until(pilot, lambda: isinstance(run.app.screen, ConfirmScreen), "the question")
        assert "touch late.txt" in run.app.screen.view.action
        await stopped(run, runner)


async def test_claudes_question_is_one_key_in_the_dialog(tmp_path: Path) -> None:
    """Issue 30 item 3: a choice and an optional "Other" note: one key sends the choice."""
    run = Run(tmp_path, answer_arming_seconds=NO_ARMING)
    async with run.app.run_test() as pilot:
        runner = await started(run, pilot)
        await pilot.press(*"elicit claude", "enter")
        await until(pilot, lambda: isinstance(run.app.screen, ClarifyScreen), "the question")
        await until(pilot, run.keys_armed, "the keys to arm")
        assert "Question 1 of 2" not in run.app.screen.view.question
        await pilot.press("2", "enter")  # Postgres
        answers = tmp_path / "elicitation.txt"
        await until(pilot, answers.exists, "the agent's answer")
        assert json.loads(answers.read_text()) == {
            "action": "accept",
            "content": {"question_0": "Postgres"},
        }
        await until(pilot, run.said("Thank you for answering."), "the agent went on")
        assert not isinstance(run.app.screen, ClarifyScreen)  # no second round, no review
        await stopped(run, runner)


async def test_claudes_question_answered_in_words_in_the_dialog(tmp_path: Path) -> None:
    from textual.widgets import Input

    run = Run(tmp_path, answer_arming_seconds=NO_ARMING)
    async with run.app.run_test() as pilot:
        runner = await started(run, pilot)
        await pilot.press(*"elicit claude", "enter")
        await until(pilot, lambda: isinstance(run.app.screen, ClarifyScreen), "the question")
        await until(pilot, run.keys_armed, "the keys to arm")
        run.app.screen.query_one("#answer", Input).focus()  # Tab would do; the typed answer
        await pilot.press(*"needs WAL", "enter")
        answers = tmp_path / "elicitation.txt"
        await until(pilot, answers.exists, "the agent's answer")
        assert json.loads(answers.read_text()) == {
            "action": "accept",
            "content": {"question_0_custom": "needs WAL"},
        }
        await stopped(run, runner)


async def test_a_secret_typed_in_the_dialog_is_never_said(tmp_path: Path) -> None:
    from textual.widgets import Input

    run = Run(tmp_path, answer_arming_seconds=NO_ARMING)
    async with run.app.run_test() as pilot:
        runner = await started(run, pilot)
        await pilot.press(*"elicit secret", "enter")
        await until(pilot, lambda: isinstance(run.app.screen, ClarifyScreen), "the question")
        await until(pilot, run.keys_armed, "the keys to arm")
        run.app.screen.query_one("#answer", Input).focus()
        await pilot.press(*"hunter2x", "enter")
        await until(pilot, run.said("Deploy token: given, not read back?"), "the review")
        assert not any("hunter2x" in t for t in run.heard())
        await stopped(run, runner)


async def test_a_forms_ways_out_are_not_numbered_and_the_arrows_reach_them(
    tmp_path: Path,
) -> None:
    """Issue 30 item 3: "Decline to answer" and "Cancel the question" were read as
    choices 4 and 5 in every question. They stay in the list, after the numbered choices,
    reached with the arrows and named on F2; digits pick only the agent's choices."""
    run = Run(tmp_path, answer_arming_seconds=NO_ARMING)
    async with run.app.run_test() as pilot:
        runner = await started(run, pilot)
        await pilot.press(*"elicit codex", "enter")
        await until(pilot, lambda: isinstance(run.app.screen, ClarifyScreen), "the question")
        await until(pilot, run.said("Scripted Agent asks: Codex needs your input"), "said")
        await until(pilot, run.keys_armed, "the keys to arm")
        screen = run.app.screen
        assert isinstance(screen, ClarifyScreen)
        heard = " ".join(run.heard())
        assert "Choices: 1: Red; 2: Blue; 3: Other." in heard, heard
        assert "Decline to answer" not in heard and "Cancel the question" not in heard
        assert "Digits 1 to 3, then Enter." in heard  # the keys in a few words
        await pilot.press("f2")
        await until(
            pilot,
            run.said("The arrows also reach: Decline to answer; Cancel the question."),
            "the ways out named on F2",
        )
        await pilot.press("4")  # not a numbered choice
        await until(pilot, run.said("4 is not a choice; there are 3."), "the digit refused")
        await pilot.press("3", "down", "enter")  # from Other, one down: Decline to answer
        answers = tmp_path / "elicitation.txt"
        await until(pilot, answers.exists, "the agent's answer")
        assert json.loads(answers.read_text()) == {"action": "decline"}
        await stopped(run, runner)
