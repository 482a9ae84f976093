"""Clarification modal by accepted_response_kinds (§4.4.2, §6.5.2)."""

from __future__ import annotations

from textual.widgets import Input, OptionList, Static

from announcer.ui.tui.app import AnnouncerApp
from announcer.ui.tui.modals import ClarifyScreen, parse_number
from announcer.ui.tui.text import set_language
from tests.ui.conftest import Harness, schema_example

FREETEXT = 2  # schema example: support agent, freetext
CHOICE_OR_NUMBER = 1  # schema example: retirement age, multiple_choice + numeric


def yes_no_event() -> dict:
    event = schema_example("agent.awaiting.clarification", 0)
    event.update(
        question="Should I include [b]draft[/b] accounts?",
        accepted_response_kinds=["yes_no"],
        reply_token="rpl_yesno1",
    )
    return event


def numeric_event() -> dict:
    event = schema_example("agent.awaiting.clarification", 0)
    event.update(accepted_response_kinds=["numeric"], reply_token="rpl_num1")
    return event


async def test_freetext_is_typed_and_sent_with_enter(harness: Harness) -> None:
    app = AnnouncerApp(harness.session)
    async with app.run_test() as pilot:
        harness.open(schema_example("agent.awaiting.clarification", FREETEXT))
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ClarifyScreen)
        assert str(screen.query_one("#question", Static).content) == (
            "Could you describe what you were trying to do when the error appeared?"
        )
        assert harness.backend.said(
            "Question from support-agent: Could you describe what you were trying to do when "
            "the error appeared? I have a few possible explanations and need to know which "
            "matches your situation. Answer within 3 minutes. Type, then Enter."
        )  # the keys in a few words (issue 30 item 2); every key in full on F2 and ?
        assert screen.focused is screen.query_one("#answer", Input)
        await pilot.press("enter")  # empty: refused with a reason
        assert harness.backend.texts[-1] == "The answer is empty. Type something, then press Enter."
        await pilot.press(*"Saving a file", "enter")
        await pilot.pause()
        assert [(p.reply_token, a.response) for p, a in harness.replies] == [
            ("rpl_5d8f1a2c9e3b6a4d", "Saving a file")
        ]
        assert harness.backend.texts[-1] == "Sent."  # issue 30 item 2
        assert app.main_screen.transcript.entries[-1] == "Answered: Saving a file. Sent."


async def test_multiple_choice_by_digit_and_arrows_speaks_each_label(harness: Harness) -> None:
    app = AnnouncerApp(harness.session)
    async with app.run_test() as pilot:
        harness.open(schema_example("agent.awaiting.clarification", CHOICE_OR_NUMBER))
        await pilot.pause()
        screen = app.screen
        choices = screen.query_one("#choices", OptionList)
        assert screen.focused is choices
        assert harness.backend.said(
            "Choices: 1, Age 60; 2, Age 65 (standard); 3, Age 67 (full Social Security); "
            "4, Age 70 (maximum benefits)."
        )
        await pilot.press("3")
        await pilot.pause()
        assert harness.backend.texts[-1] == "3. Age 67 (full Social Security), 3 of 4"
        await pilot.press("down")
        await pilot.pause()
        assert harness.backend.texts[-1] == "4. Age 70 (maximum benefits), 4 of 4"
        await pilot.press("up")
        await pilot.pause()
        assert harness.replies == []  # moving never answers
        await pilot.press("enter")
        await pilot.pause()
        assert [a.response for _, a in harness.replies] == ["67"]
        assert harness.backend.texts[-1] == "Sent."  # issue 30 item 2
        assert (
            app.main_screen.transcript.entries[-1]
            == "Answered: Age 67 (full Social Security). Sent."
        )


async def test_numeric_refuses_letters_with_a_spoken_reason(harness: Harness) -> None:
    app = AnnouncerApp(harness.session)
    async with app.run_test() as pilot:
        harness.open(numeric_event())
        await pilot.pause()
        field = app.screen.query_one("#answer", Input)
        assert app.screen.focused is field
        await pilot.press("x")
        await pilot.pause()
        assert field.value == ""
        assert harness.backend.texts[-1] == "Only a number is accepted here, for example 42."
        await pilot.press("6", "5", "enter")
        await pilot.pause()
        assert [a.response for _, a in harness.replies] == [65]
        assert isinstance(harness.replies[0][1].response, int)


async def test_numeric_incomplete_number_is_refused_on_enter(harness: Harness) -> None:
    app = AnnouncerApp(harness.session)
    async with app.run_test() as pilot:
        harness.open(numeric_event())
        await pilot.pause()
        await pilot.press("-", "enter")
        await pilot.pause()
        assert harness.backend.texts[-1] == "- is not a number. Type a number, for example 2.5."
        assert harness.replies == []


async def test_choice_or_number_accepts_a_typed_number(harness: Harness) -> None:
    app = AnnouncerApp(harness.session)
    async with app.run_test() as pilot:
        harness.open(schema_example("agent.awaiting.clarification", CHOICE_OR_NUMBER))
        await pilot.pause()
        await pilot.press("tab")
        await pilot.pause()
        assert harness.backend.texts[-1] == "A number, edit, blank"
        await pilot.press("6", "6", ".", "5", "enter")
        await pilot.pause()
        assert [a.response for _, a in harness.replies] == [66.5]


async def test_yes_no_with_y_and_n(harness: Harness) -> None:
    app = AnnouncerApp(harness.session)
    async with app.run_test() as pilot:
        harness.open(yes_no_event())
        await pilot.pause()
        screen = app.screen
        assert str(screen.query_one("#question", Static).content) == (
            "Should I include [b]draft[/b] accounts?"
        )
        assert screen.focused is screen.query_one("#no")
        assert harness.backend.said("Y or N.")  # a few words (issue 30 item 2)
        assert not harness.backend.said("Escape leaves the question for later.")
        await pilot.press("f2")  # every key in full on F2
        await pilot.pause()
        assert harness.backend.texts[-1].endswith(
            "Press Y for yes or N for no. Escape leaves the question for later."
        )
        await pilot.press("question_mark")  # help: the dialog's keys, its answers in full
        await pilot.pause()
        assert harness.backend.texts[-1].endswith(
            "Press Y for yes or N for no. Escape leaves the question for later."
        ), harness.backend.texts[-1]
        await pilot.press("y")
        await pilot.pause()
        assert [(p.reply_token, a.response) for p, a in harness.replies] == [("rpl_yesno1", True)]


async def test_yes_no_n_answers_false(harness: Harness) -> None:
    app = AnnouncerApp(harness.session)
    async with app.run_test() as pilot:
        harness.open(yes_no_event())
        await pilot.pause()
        await pilot.press("n")
        await pilot.pause()
        assert [a.response for _, a in harness.replies] == [False]
        assert harness.backend.texts[-1] == "Sent."  # issue 30 item 2
        assert app.main_screen.transcript.entries[-1] == "Answered: no. Sent."


async def test_escape_leaves_the_question_pending_without_answering(harness: Harness) -> None:
    app = AnnouncerApp(harness.session)
    async with app.run_test() as pilot:
        harness.open(schema_example("agent.awaiting.clarification", FREETEXT))
        await pilot.pause()
        await pilot.press(*"half typed", "escape")
        await pilot.pause()
        assert app.screen is app.main_screen
        assert harness.replies == []
        assert "rpl_5d8f1a2c9e3b6a4d" in app.prompts
        assert [p.reply_token for p in harness.session.pending] == ["rpl_5d8f1a2c9e3b6a4d"]


def test_parse_number_takes_plain_numbers_in_the_users_language() -> None:
    assert parse_number("65") == 65
    assert parse_number(" -3.25 ") == -3.25
    assert parse_number("1,000") == 1000
    assert parse_number("2,5", "de") == 2.5
    for bad in ("", "-", ".", "nan", "inf", "1e3", "2.5e3", "1e999", "12a", "0x10", "1_000"):
        assert parse_number(bad) is None, bad


async def test_an_exponent_books_nothing_and_a_german_user_types_a_comma(
    harness: Harness,
) -> None:
    """Issue 14: `2.5e3` once booked "2500.0 nights"."""
    app = AnnouncerApp(harness.session)
    async with app.run_test() as pilot:
        harness.open(numeric_event())
        await pilot.pause()
        await pilot.press("2", ".", "5", "e", "3")
        await pilot.pause()
        field = app.screen.query_one("#answer", Input)
        assert field.value == "2.53"  # the e was refused as it was typed
        assert harness.backend.said("Only a number is accepted here")
        # issue 22 item 6: 2.53 is not what was typed; the whole entry is refused
        await pilot.press("enter")
        await pilot.pause()
        assert harness.backend.texts[-1] == (
            "A key you typed in 2.53 was not part of a number, so nothing was sent. "
            "Type the whole number again."
        )
        assert field.value == ""
        assert harness.replies == []
        field.value = "2.5e3"  # pasted
        await pilot.press("enter")
        await pilot.pause()
        assert harness.backend.texts[-1] == "2.5e3 is not a number. Type a number, for example 2.5."
        field.value = "9007199254740993"
        await pilot.press("enter")
        assert "too large" in harness.backend.texts[-1]
        assert harness.replies == []
        await pilot.press("escape")
    try:
        harness.session.update_settings(
            harness.session.settings.model_copy(update={"languages": ["de"]})
        )
        app = AnnouncerApp(harness.session)
        async with app.run_test() as pilot:
            await pilot.press("p", "enter")
            await pilot.pause()
            await pilot.press("2", ",", "5", "enter")
            await pilot.pause()
            assert [a.response for _, a in harness.replies] == [2.5]
    finally:
        set_language("en")
