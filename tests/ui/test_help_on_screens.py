"""Issue 30 item 8: ``?`` on History or Settings shows its help on that screen, not only
in the transcript behind it (the Textual app under Pilot)."""

from __future__ import annotations

import pytest
from textual.widgets import Static

from announcer.ui.tui.app import AnnouncerApp
from announcer.ui.tui.screens import HistoryScreen, SettingsScreen
from tests.ui.conftest import Harness


@pytest.mark.parametrize(("key", "screen_type"), [("h", HistoryScreen), ("o", SettingsScreen)])
async def test_help_is_shown_on_the_screen_it_is_about(
    harness: Harness, key: str, screen_type: type
) -> None:
    app = AnnouncerApp(harness.session)
    async with app.run_test() as pilot:
        await pilot.press(key)
        await pilot.pause()
        assert isinstance(app.screen, screen_type)
        await pilot.press("question_mark")
        await pilot.pause()
        said = harness.backend.texts[-1]
        assert "Back." in said  # Escape: Back, this screen's own key
        shown = app.screen.query("#feedback")
        assert shown and str(shown.first(Static).content) == said


async def test_after_a_dialog_closes_the_cursor_is_on_the_newest_line(harness: Harness) -> None:
    """Issue 30 item 8: the terminal cursor (braille, review cursor) stayed where the
    closed dialog's field was, instead of the transcript's newest line."""
    from announcer.ui.tui.accessibility import cursor_offset
    from announcer.ui.tui.modals import ConfirmScreen
    from tests.ui.conftest import load_event

    app = AnnouncerApp(harness.session)
    async with app.run_test() as pilot:
        harness.open(load_event("agent.awaiting.confirmation.json"))
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        in_dialog = app.cursor_position
        await pilot.press("r")
        await pilot.pause()
        await pilot.pause()
        assert app.screen is app.main_screen
        transcript = app.main_screen.transcript
        assert app.cursor_position == cursor_offset(transcript) != in_dialog
        assert app.cursor_position.y > transcript.content_region.y  # the newest line
