"""Confirmation modal (§4.4.1, chapter 6): one key to answer, safe focus, spoken time, voiding."""

from __future__ import annotations

import pytest
from textual.widgets import Button, Static

from announcer.ui.tui.app import AnnouncerApp
from announcer.ui.tui.modals import ConfirmScreen
from tests.ui.conftest import Harness, load_event

FIXTURE = "agent.awaiting.confirmation.json"
QUESTION = (
    "Confirmation requested by banking-assistant. "
    "Action: Transfer $500.00 from checking-7821 to savings-3344. "
    "Consequence: Funds move immediately. Reversal requires bank intervention and takes "
    "3 to 5 business days. Risk high. Cannot be undone. "
    "If you do not answer within 5 minutes, it will be rejected. "
    "A then Enter accepts, R rejects; F2 repeats."
)


def low_risk_event() -> dict:
    event = load_event(FIXTURE)
    event.update(
        reply_token="rpl_lowrisk01",
        event_id="evt_low1",
        risk_level="low",
        irreversible=False,
        reversibility="reversible",
        action="Rename draft.txt to notes.txt.",
        consequence="The file gets a new name.",
        timeout_seconds=60,
    )
    event["producer"]["agent_name"] = "File Helper"
    return event


async def test_modal_shows_every_field_and_speaks_the_question_with_keys(
    harness: Harness,
) -> None:
    app = AnnouncerApp(harness.session)
    async with app.run_test() as pilot:
        harness.open(load_event(FIXTURE))
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ConfirmScreen)

        def text(selector: str) -> str:
            return str(screen.query_one(selector, Static).content)

        assert text("#producer") == "Confirmation requested by banking-assistant"
        assert text("#action") == "Action: Transfer $500.00 from checking-7821 to savings-3344."
        assert text("#consequence").startswith("Consequence: Funds move immediately.")
        assert text("#risk") == "Risk high. Cannot be undone."
        assert text("#time") == "If you do not answer within 5 minutes, it will be rejected."
        assert QUESTION in harness.backend.texts
        spoken = next(a for a in harness.backend.spoken if a.text == QUESTION)
        assert spoken.urgency == "critical"
        # The safe button has focus and the terminal cursor sits on it.
        reject = screen.query_one("#reject", Button)
        assert screen.focused is reject
        await pilot.pause()
        assert app.cursor_position == (reject.content_region.x, reject.content_region.y)
        # Nothing was answered on the user's behalf.
        assert harness.replies == []


@pytest.mark.parametrize(
    ("keys", "decision"),
    [
        (("a", "enter"), "accept"),  # irreversible, high risk: two different keys
        (("y", "enter"), "accept"),
        (("r",), "reject"),  # rejecting always takes one key
        (("n",), "reject"),
        (("escape",), "reject"),
    ],
)
async def test_keys_that_answer(harness: Harness, keys: tuple[str, ...], decision: str) -> None:
    app = AnnouncerApp(harness.session)
    async with app.run_test() as pilot:
        harness.open(load_event(FIXTURE))
        await pilot.pause()
        await pilot.press(*keys)
        await pilot.pause()
        assert [(p.reply_token, a.decision) for p, a in harness.replies] == [
            ("rpl_4f8a2e7d9c1b6a3f", decision)
        ]
        assert app.screen is app.main_screen
        word = "Accepted" if decision == "accept" else "Rejected"
        expected = f"{word}: Transfer $500.00 from checking-7821 to savings-3344. Sent."
        # Issue 30 item 2: "Sent." is heard (one question, one agent: nothing else could be
        # meant); the transcript keeps what was answered, whole.
        assert harness.backend.texts[-1] == "Sent."
        assert app.main_screen.transcript.entries[-1] == expected


async def test_enter_on_the_initially_focused_button_rejects_a_risky_action(
    harness: Harness,
) -> None:
    app = AnnouncerApp(harness.session)
    async with app.run_test() as pilot:
        harness.open(load_event(FIXTURE))
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        assert [a.decision for _, a in harness.replies] == ["reject"]


async def test_low_risk_reversible_action_starts_on_accept_and_tab_speaks_focus(
    harness: Harness,
) -> None:
    app = AnnouncerApp(harness.session)
    async with app.run_test() as pilot:
        harness.open(low_risk_event())
        await pilot.pause()
        screen = app.screen
        assert screen.focused is screen.query_one("#accept", Button)
        assert harness.backend.said("Confirmation requested by File Helper (banking-assistant).")
        await pilot.press("tab")
        await pilot.pause()
        assert harness.backend.texts[-1] == "Reject (R), button"
        reject = screen.query_one("#reject", Button)
        assert app.cursor_position == (reject.content_region.x, reject.content_region.y)


async def test_a_second_key_press_does_not_send_a_second_reply(harness: Harness) -> None:
    app = AnnouncerApp(harness.session)
    async with app.run_test() as pilot:
        harness.open(load_event(FIXTURE))
        await pilot.pause()
        await pilot.press("r", "a", "y")
        await pilot.pause()
        assert [a.decision for _, a in harness.replies] == ["reject"]


async def test_voided_prompt_closes_the_modal_and_says_why(harness: Harness) -> None:
    app = AnnouncerApp(harness.session)
    async with app.run_test() as pilot:
        harness.open(load_event(FIXTURE))
        await pilot.pause()
        harness.session.void_prompt("rpl_4f8a2e7d9c1b6a3f", "the session was cancelled")
        await pilot.pause()
        assert app.screen is app.main_screen
        said = harness.backend.spoken[-1]
        assert said.text == (
            "Question withdrawn: Confirm: Transfer $500.00 from checking-7821 to savings-3344. "
            "(from banking-assistant). Reason: the session was cancelled."
        )
        assert said.urgency == "critical" and said.interrupt
        await pilot.press("a")  # too late: nothing goes out
        await pilot.pause()
        assert harness.replies == []


async def test_time_left_is_spoken_at_half_and_at_ten_seconds_then_the_prompt_closes(
    harness: Harness,
) -> None:
    app = AnnouncerApp(harness.session)
    async with app.run_test() as pilot:
        harness.open(load_event(FIXTURE))  # 300 s
        await pilot.pause()
        before = len(harness.backend.spoken)
        harness.clock.now += 100
        app.check_deadlines()
        assert len(harness.backend.spoken) == before  # no ticking
        harness.clock.now += 50  # half time
        app.check_deadlines()
        app.check_deadlines()
        half = [t for t in harness.backend.texts if " left to answer: " in t]
        assert half == [
            "2 minutes and 30 seconds left to answer: Confirm: Transfer $500.00 from "
            "checking-7821 to savings-3344. (from banking-assistant)"
        ]
        harness.clock.now += 140  # 10 s left
        app.check_deadlines()
        assert harness.backend.texts[-1].startswith("10 seconds left to answer: Confirm:")
        harness.clock.now += 10
        app.check_deadlines()
        await pilot.pause()
        assert app.screen is app.main_screen
        assert harness.backend.texts[-1].endswith(
            "Reason: time ran out; by default it is rejected."
        )
        assert harness.replies == []  # never answered for the user


async def test_prompts_queue_and_open_one_after_another(harness: Harness) -> None:
    app = AnnouncerApp(harness.session)
    async with app.run_test() as pilot:
        harness.open(load_event(FIXTURE))
        harness.open(low_risk_event())
        await pilot.pause()
        assert harness.backend.said("Another question is waiting. 2 pending. Press P to list them.")
        first = app.screen
        assert isinstance(first, ConfirmScreen)
        assert first.prompt.reply_token == "rpl_4f8a2e7d9c1b6a3f"
        await pilot.press("r")
        await pilot.pause()
        await pilot.pause()
        second = app.screen
        assert isinstance(second, ConfirmScreen)
        assert second.prompt.reply_token == "rpl_lowrisk01"
        await pilot.press("a")
        await pilot.pause()
        assert [(p.reply_token, a.decision) for p, a in harness.replies] == [
            ("rpl_4f8a2e7d9c1b6a3f", "reject"),
            ("rpl_lowrisk01", "accept"),
        ]


async def test_queued_prompt_voided_before_it_opens_is_dropped(harness: Harness) -> None:
    app = AnnouncerApp(harness.session)
    async with app.run_test() as pilot:
        harness.open(load_event(FIXTURE))
        harness.open(low_risk_event())
        await pilot.pause()
        harness.session.void_prompt("rpl_lowrisk01", "connection lost")
        await pilot.pause()
        assert harness.backend.texts[-1].endswith("Reason: connection lost.")
        assert isinstance(app.screen, ConfirmScreen)  # the open one stays
        await pilot.press("r")
        await pilot.pause()
        await pilot.pause()
        assert app.screen is app.main_screen


async def test_say_again_repeats_the_question(harness: Harness) -> None:
    app = AnnouncerApp(harness.session)
    async with app.run_test() as pilot:
        harness.open(load_event(FIXTURE))
        await pilot.pause()
        # Issue 30 item 8: said again without who asks, the field names and "F2 repeats"
        # (no longer than its first reading); whole at detailed verbosity.
        again = (
            QUESTION.replace("Confirmation requested by banking-assistant. ", "")
            .replace("Action: ", "")
            .replace("Consequence: ", "")
            .replace("A then Enter accepts, R rejects; F2 repeats.", "Accept A Enter, reject R.")
        )
        await pilot.press("i")
        assert harness.backend.texts[-1] == again
        await pilot.press("f2")
        assert harness.backend.texts[-1] == again
        await pilot.press("ctrl+s")
        assert harness.backend.stops >= 1


async def test_producer_markup_in_a_confirmation_stays_literal(harness: Harness) -> None:
    event = load_event(FIXTURE)
    event["action"] = "[@click=app.quit]Continue[/] \x1b[2Jwipe [b]disk[/b]"
    app = AnnouncerApp(harness.session)
    async with app.run_test() as pilot:
        harness.open(event)
        await pilot.pause()
        action = app.screen.query_one("#action", Static)
        assert str(action.content) == "Action: [@click=app.quit]Continue[/] wipe [b]disk[/b]"
        await pilot.click("#action", offset=(10, 0))
        await pilot.pause()
        assert app.is_running and harness.replies == []


async def test_a_very_long_action_never_hides_the_buttons(harness: Harness) -> None:
    event = load_event(FIXTURE)
    event["action"] = "Delete these files: " + ", ".join(f"report-{i}.pdf" for i in range(1000))
    app = AnnouncerApp(harness.session)
    async with app.run_test(size=(80, 24)) as pilot:
        harness.open(event)
        await pilot.pause()
        screen = app.screen
        for button_id in ("#accept", "#reject"):
            region = screen.query_one(button_id, Button).region
            assert region.height == 1 and 0 <= region.y < 24, region
        await pilot.press("r")
        await pilot.pause()
        assert [a.decision for _, a in harness.replies] == ["reject"]
