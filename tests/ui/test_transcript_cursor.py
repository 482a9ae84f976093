"""The terminal cursor sits on the newest transcript line when the main screen has focus
(issue 20 item 8): a screen reader's review cursor and a braille display follow it."""

from __future__ import annotations

from announcer.ui.tui.app import AnnouncerApp, Transcript
from tests.ui.conftest import Harness


def drawn_at_cursor(app: AnnouncerApp, transcript: Transcript) -> str:
    cursor = app.cursor_position
    region = transcript.content_region
    assert region.y <= cursor.y < region.bottom and cursor.x == region.x
    row = cursor.y - region.y + round(transcript.scroll_offset.y)
    return transcript.lines[row].text.rstrip()


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
        drawn = drawn_at_cursor(app, transcript)
        # the first line of the newest entry (the app may have added words of its own)
        assert drawn and transcript.entries[-1].startswith(drawn)
        assert drawn != "Line 1 of the transcript."  # not left on an old line
        # a long newest entry wraps over several lines: the cursor is on its first
        long_entry = "Newest: " + "word " * 30
        app.write_transcript(long_entry)
        await pilot.pause()
        await pilot.pause()
        if transcript.entries[-1] == long_entry.rstrip() or transcript.entries[-1] == long_entry:
            assert drawn_at_cursor(app, transcript).startswith("Newest: word")
        drawn = drawn_at_cursor(app, transcript)
        assert drawn and transcript.entries[-1].startswith(drawn)
