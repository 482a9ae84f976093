"""The terminal cursor sits on the newest transcript line when the main screen has focus
(issue 20 item 8): a screen reader's review cursor and a braille display follow it."""

from __future__ import annotations

from announcer.ui.tui.app import AnnouncerApp
from tests.ui.conftest import Harness


async def test_the_cursor_follows_the_newest_transcript_entry() -> None:
    harness = Harness()
    app = AnnouncerApp(harness.session)
    async with app.run_test(size=(60, 20)) as pilot:
        await pilot.pause()
        transcript = app.main_screen.transcript
        app.set_focus(transcript)
        for number in range(1, 31):  # more than fit: the transcript scrolls
            app.write_transcript(f"Line {number} of the transcript.")
        await pilot.pause()
        await pilot.pause()
        region = transcript.content_region
        cursor = app.cursor_position
        assert region.y <= cursor.y < region.bottom
        row = cursor.y - region.y + round(transcript.scroll_offset.y)
        assert transcript.lines[row].text.startswith("Line 30 of the transcript.")
        # a long newest entry wraps: the cursor is on its first line
        app.write_transcript("Newest: " + "word " * 30)
        await pilot.pause()
        await pilot.pause()
        cursor = app.cursor_position
        row = cursor.y - transcript.content_region.y + round(transcript.scroll_offset.y)
        assert transcript.lines[row].text.startswith("Newest:")
