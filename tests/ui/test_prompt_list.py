"""Several pending prompts: listing them, picking one, and prompts that vanish meanwhile."""

from __future__ import annotations

from announcer.ui.tui.app import AnnouncerApp
from announcer.ui.tui.modals import ClarifyScreen, ConfirmScreen
from announcer.ui.tui.screens import PromptListScreen
from tests.ui.conftest import Harness, load_event, schema_example


async def defer_two_clarifications(pilot, harness: Harness) -> None:
    harness.open(schema_example("agent.awaiting.clarification", 2))  # support agent, freetext
    harness.open(schema_example("agent.awaiting.clarification", 1))  # retirement, choices
    await pilot.pause()
    await pilot.press("escape")  # first one left for later; the second opens
    await pilot.pause()
    await pilot.pause()
    await pilot.press("escape")
    await pilot.pause()


async def test_pick_the_second_pending_question(harness: Harness) -> None:
    app = AnnouncerApp(harness.session)
    async with app.run_test() as pilot:
        await defer_two_clarifications(pilot, harness)
        assert app.screen is app.main_screen
        await pilot.press("p")
        await pilot.pause()
        assert isinstance(app.screen, PromptListScreen)
        assert harness.backend.texts[-1] == (
            "Pending questions. 2 pending. Question: Could you describe what you were trying "
            "to do when the error appeared? (from support-agent), 1 of 2"
        )
        await pilot.press("down")
        await pilot.pause()
        assert harness.backend.texts[-1] == (
            "Question: Which retirement age should I plan for? (from retirement-planner), 2 of 2"
        )
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, ClarifyScreen)
        assert app.screen.prompt.reply_token == "rpl_2c8e4a9f7b1d3a6e"
        await pilot.press("2", "enter")
        await pilot.pause()
        assert [(p.reply_token, a.response) for p, a in harness.replies] == [
            ("rpl_2c8e4a9f7b1d3a6e", "65")
        ]
        assert "rpl_5d8f1a2c9e3b6a4d" in app.prompts  # the other one still waits


async def test_a_question_withdrawn_while_listed_cannot_be_opened(harness: Harness) -> None:
    app = AnnouncerApp(harness.session)
    async with app.run_test() as pilot:
        await defer_two_clarifications(pilot, harness)
        await pilot.press("p")
        await pilot.pause()
        harness.session.void_prompt("rpl_5d8f1a2c9e3b6a4d", "the session was cancelled")
        await pilot.pause()
        await pilot.press("enter")  # the first row: the withdrawn one
        await pilot.pause()
        assert app.screen is app.main_screen
        assert harness.backend.texts[-1] == "This question is no longer open."
        assert harness.replies == []


async def test_where_am_i_inside_a_confirmation(harness: Harness) -> None:
    app = AnnouncerApp(harness.session)
    async with app.run_test() as pilot:
        harness.session.set_status(connection="connected", producers=("banking-assistant",))
        harness.open(load_event("agent.awaiting.confirmation.json"))
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("ctrl+w")
        assert harness.backend.texts[-1] == (
            "Confirmation. Connection connected. Producer banking-assistant. "
            "Session idle. 1 pending question."
        )
