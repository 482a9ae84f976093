"""What is said about a dialog's keys is shown in the dialog (issue 20 item 8).

Without a voice, a refused key ("not armed yet", "the answer is empty") went into the
transcript hidden behind the dialog: the user kept typing into the answer field, and
"Bob" followed by the keys meant for the next questions was sent as "Boby1".
"""

from __future__ import annotations

from textual.widgets import Input, Static

from announcer.ui.tui.app import AnnouncerApp
from announcer.ui.tui.modals import ClarifyScreen
from tests.ui.conftest import Harness, schema_example

FREETEXT = 2  # schema example: support agent, freetext


def feedback(screen: ClarifyScreen) -> str:
    return str(screen.query_one("#feedback", Static).content)


async def test_a_refused_enter_is_shown_in_the_dialog_and_nothing_is_sent() -> None:
    harness = Harness(arming=1.0)  # the product's arming interval; the clock stands still
    app = AnnouncerApp(harness.session)
    async with app.run_test() as pilot:
        harness.open(schema_example("agent.awaiting.clarification", FREETEXT))
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ClarifyScreen)
        await pilot.press(*"Bob", "enter")  # before the question has armed
        await pilot.pause()
        assert harness.replies == []
        refusal = feedback(screen)  # in the dialog, where the user is looking
        assert refusal == "Not yet.", refusal  # the early key's short cue (issue 20 item 7)
        assert refusal in harness.backend.texts  # and said
        harness.clock.now += 5  # armed now
        field = screen.query_one("#answer", Input)
        assert field.value == "Bob"
        await pilot.press("enter")
        await pilot.pause()
        assert [a.response for _, a in harness.replies] == ["Bob"]


async def test_an_empty_answer_is_refused_in_the_dialog() -> None:
    harness = Harness()
    app = AnnouncerApp(harness.session)
    async with app.run_test() as pilot:
        harness.open(schema_example("agent.awaiting.clarification", FREETEXT))
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ClarifyScreen)
        await pilot.press("enter")
        await pilot.pause()
        assert feedback(screen) == "The answer is empty. Type something, then press Enter."
        assert harness.replies == []
