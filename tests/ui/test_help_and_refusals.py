"""`?` speaks the keys on every screen and dialog; a key that answers nothing says why.

Keys are pressed as a person does: some the moment a dialog opens, before anything
settles, and none of them may answer anything.
"""

from __future__ import annotations

from textual.widgets import Input

from announcer.ui.tui.app import AnnouncerApp
from announcer.ui.tui.modals import ClarifyScreen, ConfirmScreen
from tests.ui.conftest import Harness, load_event, schema_example

CHOICE_OR_NUMBER = 1  # 4 choices, or a number
FREETEXT = 2


async def test_question_mark_speaks_the_keys_on_every_screen_and_dialog(harness: Harness) -> None:
    app = AnnouncerApp(harness.session)
    async with app.run_test() as pilot:
        heard: dict[str, str] = {}
        await pilot.press("question_mark")
        heard["main"] = harness.backend.texts[-1]
        for key, name in (("h", "history"), ("o", "settings"), ("d", "diagnostics")):
            await pilot.press(key, "question_mark")
            heard[name] = harness.backend.texts[-1]
            await pilot.press("escape")
        harness.open(load_event("agent.awaiting.confirmation.json"))
        await pilot.press("question_mark")  # at once, as the dialog opens
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        heard["confirmation"] = next(t for t in reversed(harness.backend.texts) if "Help." in t)
        await pilot.press("r")
        harness.open(schema_example("agent.awaiting.clarification", CHOICE_OR_NUMBER))
        await pilot.pause()
        await pilot.press("question_mark")
        heard["question"] = harness.backend.texts[-1]
        await pilot.press("escape", "p", "question_mark")
        heard["pending list"] = harness.backend.texts[-1]
        assert harness.replies[0][1].decision == "reject"
        assert len(harness.replies) == 1  # `?` answered nothing
    for name, text in heard.items():
        assert "question mark: Help." in text, (name, text)
    assert "Escape: Back." in heard["settings"]
    assert "a: Accept." in heard["confirmation"] and "r: Reject." in heard["confirmation"]
    assert "Escape: Later." in heard["question"]


async def test_question_mark_in_a_text_field_is_typed(harness: Harness) -> None:
    app = AnnouncerApp(harness.session)
    async with app.run_test() as pilot:
        harness.open(schema_example("agent.awaiting.clarification", FREETEXT))
        await pilot.pause()
        await pilot.press(*"why?")
        field = app.screen.query_one("#answer", Input)
        assert field.value == "why?"


async def test_a_digit_past_the_choices_is_refused_with_how_many_there_are(
    harness: Harness,
) -> None:
    app = AnnouncerApp(harness.session)
    async with app.run_test() as pilot:
        harness.open(schema_example("agent.awaiting.clarification", CHOICE_OR_NUMBER))
        await pilot.press("9")  # the moment it opens
        await pilot.pause()
        assert isinstance(app.screen, ClarifyScreen)
        assert harness.backend.texts[-1] == "9 is not a choice; there are 4."
        assert harness.backend.spoken[-1].interrupt or harness.backend.spoken[-1].urgency
        await pilot.press("0")
        assert harness.backend.texts[-1] == "0 is not a choice; there are 4."
        await pilot.press("x")
        assert harness.backend.texts[-1].startswith("x is not an answer here. Choose with")
        assert harness.replies == []


async def test_a_letter_in_a_confirmation_is_refused_and_answers_nothing(harness: Harness) -> None:
    app = AnnouncerApp(harness.session)
    async with app.run_test() as pilot:
        harness.open(load_event("agent.awaiting.confirmation.json"))
        await pilot.press("x")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        assert harness.backend.texts[-1] == (
            "x is not an answer here. A then Enter accepts, R rejects; F2 repeats."
        )
        await pilot.press("9", "z")
        assert harness.backend.texts[-1].startswith("z is not an answer here.")
        assert harness.replies == []
        assert isinstance(app.screen, ConfirmScreen)
