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
