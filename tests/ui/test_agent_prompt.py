"""The Textual app talking to a real ACP agent: the message box, its keys, and permissions.

The agent is tests/acp_frontend/sdk_agent.py, written with the SDK's agent side and run as a
real child process through ``AcpTransport``; ``LiveSession`` runs beside the real app
on one loop, as ``announcer agent --ui tui`` does, and Pilot presses the keys. What
the agent receives is what it records (``choices.txt``, the files it writes); what the
user hears is the jsonl speech record.
"""

from __future__ import annotations

import asyncio
import io
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from announcer.engine.settings import UserSettings
from announcer.runtime.session import LiveSession
from announcer.speech.driver import SpeechDriver
from announcer.speech.jsonl import JsonlBackend
from announcer.transports.acp import AcpTransport
from announcer.ui.tui.agent_input import AgentPrompt, PromptHistory
from announcer.ui.tui.app import AnnouncerApp
from announcer.ui.tui.modals import ConfirmScreen
from tests.support.clock import HeldClock
from tests.support.speech_record import spoken_in
from tests.support.waiting import until_on_pilot as until

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 60.0
QUICK_PACE = 600


class Run:
    """The real app, a live session and the scripted agent in ``folder``."""

    def __init__(self, folder: Path, *, tags: tuple[str, ...] = (), **settings: Any) -> None:
        """One scripted agent, or (``tags``) one per tag, each labelled with its tag.

        A quick listener (``pace_wpm`` 600, the top of its range) unless ``settings`` say
        otherwise: a question's first words, which arm its keys, are said sooner. No test
        here is about the pace; the arming interval itself keeps its real length.
        """
        settings.setdefault("pace_wpm", QUICK_PACE)
        self.folder = folder
        self.clock = HeldClock()
        self.records = io.StringIO()
        agent = [sys.executable, "-m", "tests.acp_frontend.sdk_agent"]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        transports = [
            AcpTransport([*agent, "--tag", tag], name=tag, label=tag, cwd=str(folder), env=env)
            for tag in tags
        ] or [AcpTransport(agent, name="Scripted", cwd=str(folder), env=env)]
        self.session = LiveSession(
            [],
            UserSettings(**settings),
            transports=transports,
            driver=SpeechDriver(JsonlBackend(self.records)),
            clock=self.clock,
        )
        self.app = AnnouncerApp(self.session, save_settings=lambda _settings: None)

    def heard(self) -> list[str]:
        return spoken_in(self.records)

    def said(self, text: str) -> Callable[[], bool]:
        return lambda: any(text in t for t in self.heard())

    @property
    def box(self) -> AgentPrompt:
        prompt = self.app.main_screen.agent_prompt
        assert prompt is not None
        return prompt

    def dialog(self) -> ConfirmScreen | None:
        screen = self.app.screen
        return screen if isinstance(screen, ConfirmScreen) else None

    def keys_armed(self) -> bool:
        """The question on screen (any dialog) takes keys now: its arming wait is over."""
        at = self.app.key_guard.armed_at()
        return at is not None and self.session.now() >= at

    def armed(self) -> bool:
        """A permission dialog is up and its keys are armed."""
        return self.dialog() is not None and self.keys_armed()

    def choices(self) -> list[str]:
        path = self.folder / "choices.txt"
        return path.read_text().split() if path.exists() else []


async def started(run: Run, pilot: Any) -> asyncio.Future[int]:
    runner = asyncio.ensure_future(run.session.run())
    await until(pilot, run.said("Scripted Agent is ready."), "the agent to start")
    return runner


async def stopped(run: Run, runner: asyncio.Future[int]) -> None:
    run.session.stop()
    await asyncio.wait_for(runner, TIMEOUT)


async def test_enter_sends_shift_enter_and_ctrl_j_make_lines_up_recalls(tmp_path: Path) -> None:
    run = Run(tmp_path)
    async with run.app.run_test() as pilot:
        runner = await started(run, pilot)
        assert run.app.focused is run.box  # the message box has the keys
        await pilot.press("?")  # on an empty box: the keys, not a typed question mark
        assert run.box.text == ""
        await until(pilot, run.said("Shift+Enter, or Control J, starts a new line."), "help")
        await pilot.press(*"first", "shift+enter", *"second", "ctrl+j", *"third")
        assert run.box.text == "first\nsecond\nthird"
        await pilot.press("enter")
        await until(pilot, run.said("Sent to Scripted Agent: first second third"), "sent")
        await until(pilot, run.said("This is the scripted agent."), "the agent's answer")
        await until(pilot, run.said("Scripted Agent finished the turn."), "the turn's end")
        assert run.box.text == ""
        assert run.box.border_title == "Message to Scripted Agent"  # the name it gave itself
        assert "You: first second third" in run.app.main_screen.transcript.entries
        await pilot.press(*"draft")
        await pilot.press("up")  # on the first line: the message sent before
        assert run.box.text == "first\nsecond\nthird"
        await until(pilot, run.said("Message 1 of 1: first"), "the recalled message")
        await pilot.press("down", "down", "down")  # down its lines, then back to the draft
        assert run.box.text == "draft"
        await until(pilot, run.said("Your draft: draft"), "the draft back")
        await stopped(run, runner)


async def test_a_lone_answer_word_is_never_sent_and_slash_lists_commands(tmp_path: Path) -> None:
    run = Run(tmp_path)
    async with run.app.run_test() as pilot:
        runner = await started(run, pilot)
        await pilot.press("y", "enter")
        await until(pilot, run.said("Not sent: y alone looks like an answer"), "the refusal")
        assert run.box.text == "y"  # kept, so nothing typed is lost
        await pilot.press("backspace", "enter")
        await until(pilot, run.said("Nothing to send: the message is empty."), "empty")
        await pilot.press("@", "enter")  # no name and no message: where messages go
        await until(pilot, run.said("Messages go to Scripted Agent."), "the @ answer")
        assert run.box.text == ""
        await pilot.press(*"@")
        await pilot.press("backspace", *"@scripted commands", "enter")  # to that agent
        await until(pilot, run.said("Sent to Scripted Agent: commands"), "sent by name")
        await until(pilot, run.said("Two commands are available."), "the commands turn")
        await until(pilot, run.said("finished the turn"), "the turn's end")
        await pilot.press("slash")
        assert run.box.text == "/"  # typed, and the commands are read
        await until(
            pilot,
            run.said("/review: Review the changes; /init: Write an AGENTS.md file"),
            "the commands",
        )
        await stopped(run, runner)


async def test_allow_always_takes_two_keys_even_when_pressed_at_awkward_moments(
    tmp_path: Path,
) -> None:
    run = Run(tmp_path)
    async with run.app.run_test() as pilot:
        runner = await started(run, pilot)
        # Keys pressed while the dialog opens (still typing, a fast double Shift+A): the
        # question has only just appeared, so nothing is sent or even half-chosen. The
        # session's clock stands still until they are in, however slowly a loaded machine
        # delivers them, so they come before the arming interval is over.
        run.clock.hold()
        await pilot.press(*"write", "enter")
        await until(pilot, lambda: run.dialog() is not None, "the dialog")
        await pilot.press("A", "A", "enter", "a")
        await until(pilot, run.said("Not yet."), "the arming cue")
        assert run.choices() == [] and run.dialog() is not None
        assert not run.app.key_guard.confirming
        assert not run.armed()
        run.clock.release()
        await until(pilot, run.armed, "the keys to arm")
        await until(pilot, run.said("Shift+A allows it from now on"), "the always keys said")
        await pilot.press("A")
        await until(pilot, run.said("Always allow: Scripted Agent wants to run"), "step 2")
        await pilot.press("A")  # the same key again is not the second key
        assert run.choices() == [] and run.app.key_guard.confirming_intent == "accept_always"
        await pilot.press("enter")
        await until(pilot, lambda: run.choices() == ["always"], "the agent's always option")
        await until(pilot, run.said("Always allowed: Scripted Agent wants to run"), "the echo")
        await until(pilot, run.said("finished the turn"), "the turn's end")
        assert (tmp_path / "out.txt").read_text() == "hello\n"
        assert run.app.focused is run.box  # back in the message box
        # the agent waits: no deadline is said, and none is counted down; at normal
        # verbosity the question does not spend words on it (issue 31, item 10)
        assert not run.said("The agent waits for your answer.")()
        assert not any("If you do not answer" in t or "left to answer" in t for t in run.heard())
        await stopped(run, runner)


async def test_reject_always_needs_enter_escape_rejects_once_and_stops_nothing_else(
    tmp_path: Path,
) -> None:
    run = Run(tmp_path)
    async with run.app.run_test() as pilot:
        runner = await started(run, pilot)
        await pilot.press(*"write", "enter")
        await until(pilot, run.armed, "the armed dialog")
        await pilot.press("R")
        await until(pilot, run.said("Always reject: Scripted Agent wants to run"), "step 2")
        await pilot.press("escape")  # back from the second step: nothing sent
        await until(pilot, run.said("Nothing was sent. The question is still open."), "back")
        assert run.choices() == [] and run.dialog() is not None
        # Escape rejects once; the same Escape pressed twice does not also stop the agent.
        # The second Escape lands in the closing dialog or, within half a second of it on the
        # session's clock, in the message box ("Press Escape again to stop"): never a stop.
        # The clock is held so that half second cannot run out while a loaded machine
        # delivers the keys (issue: a wall-clock window made this test flaky).
        run.clock.hold()
        await pilot.press("escape", "escape")
        await until(pilot, lambda: run.choices() == ["no"], "the agent's reject-once option")
        await until(pilot, run.said("finished the turn"), "the turn's end")
        assert not any("Stopping" in t or "not working on anything" in t for t in run.heard())
        run.clock.release()
        assert not (tmp_path / "out.txt").exists()
        await pilot.press(*"write", "enter")
        await until(pilot, run.armed, "the second question")
        await pilot.press("R", "enter")
        await until(pilot, lambda: run.choices() == ["no", "never"], "reject always")
        await stopped(run, runner)


async def test_escape_in_the_message_box_stops_the_agents_turn(tmp_path: Path) -> None:
    run = Run(tmp_path)
    async with run.app.run_test() as pilot:
        runner = await started(run, pilot)
        await pilot.press(*"wait", "enter")
        await until(pilot, run.armed, "the question")
        await pilot.press("r")  # reject once; the scripted agent then waits to be stopped
        await until(pilot, lambda: run.dialog() is None, "the dialog to close")
        await pilot.press(*"more", "enter")  # the agent is still working: refused, kept
        await until(pilot, run.said("is still working. Press Escape to stop it."), "busy")
        assert run.box.text == "more"
        await pilot.pause(0.6)
        await pilot.press("escape")
        await until(pilot, run.said("Stopping Scripted Agent."), "the stop")
        await until(pilot, run.said("you cancelled it"), "the cancelled turn")
        assert (tmp_path / "permission-outcome.txt").read_text() == "no"
        await stopped(run, runner)


def test_prompt_history_keeps_the_draft_and_stops_at_both_ends() -> None:
    history = PromptHistory(kept=3)
    assert history.back("typing") is None  # nothing sent yet
    for text in ("one", "two", "three", "four"):
        history.add(text)
    assert history.entries == ["two", "three", "four"]  # bounded
    assert history.back("draft") == "four"
    assert history.back("four") == "three"
    assert history.back("three") == "two"
    assert history.back("two") is None  # the oldest
    assert history.position == 3
    assert [history.forward(), history.forward(), history.forward()] == ["three", "four", "draft"]
    assert history.forward() is None and history.position is None


async def test_with_two_agents_at_names_where_messages_and_escape_go(tmp_path: Path) -> None:
    """``@`` alone says who is who; ``@NAME`` alone switches; Escape acts on that agent."""
    run = Run(tmp_path, tags=("alpha", "beta"))
    async with run.app.run_test() as pilot:
        runner = asyncio.ensure_future(run.session.run())
        ready = lambda: sum("is ready." in t for t in run.heard()) >= 2  # noqa: E731
        await until(pilot, ready, "both agents to start")
        await pilot.press("@", "enter")
        await until(
            pilot,
            run.said("Messages go to alpha. Agents: alpha: ready; beta: ready."),
            "who is who",
        )
        await pilot.press(*"@beta", "enter")
        await until(pilot, run.said("Messages now go to beta."), "the switch")
        assert run.box.text == ""
        assert run.box.border_title == "Message to beta"
        await pilot.press(*"hello", "enter")
        await until(pilot, run.said("Sent to beta: hello"), "sent to beta")
        await until(pilot, run.said("finished the turn."), "beta's turn")
        assert (tmp_path / "prompts-beta.txt").read_text().split() == ["hello"]
        assert not (tmp_path / "prompts-alpha.txt").exists()
        await pilot.press(*"@alpha", "enter")
        await until(pilot, run.said("Messages now go to alpha."), "the switch back")
        await pilot.press("escape")
        await until(pilot, run.said("alpha is not working on anything."), "Escape to alpha")
        await pilot.press(*"@gamma", "enter")
        await until(
            pilot, run.said("No agent is called gamma. The agents are: alpha, beta."), "no such"
        )
        await stopped(run, runner)
