"""Issue 22 item 8: the Textual transcript shows producer text in its declared direction."""

from __future__ import annotations

from announcer.engine.announcement import Announcement
from announcer.ui.tui.app import AnnouncerApp
from tests.ui.conftest import Harness

ARABIC = "تم نقل الملف."


async def test_rtl_producer_text_is_isolated_right_to_left_in_the_transcript(
    harness: Harness,
) -> None:
    app = AnnouncerApp(harness.session)
    async with app.run_test() as pilot:
        harness.session.announce(Announcement(ARABIC, language="ar", direction="rtl"))
        harness.session.announce(Announcement("Plain English."))
        await pilot.pause()
        entries = app.main_screen.transcript.entries
        assert "\u2067" + ARABIC + "\u2069" in entries
        assert "Plain English." in entries
