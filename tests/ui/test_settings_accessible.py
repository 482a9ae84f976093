"""Settings and lists by ear and by braille: states in words, the cursor on what is highlighted.

Issue 14 item 2: tabbing past the last setting said "VerticalScroll"; arrows in an
open drop-down said nothing; an invalid language was applied and then broke every
later save; the terminal cursor stayed on the first row of a list.
"""

from __future__ import annotations

from textual.widgets import Checkbox, Input, OptionList

from announcer.engine.announcement import Announcement
from announcer.ui.tui.app import AnnouncerApp
from announcer.ui.tui.screens import HistoryScreen, SettingsScreen
from tests.ui.conftest import Harness


async def test_tab_past_the_last_setting_comes_back_to_the_first(harness: Harness) -> None:
    app = AnnouncerApp(harness.session)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("o")
        await pilot.pause()
        heard = len(harness.backend.texts)
        for _ in range(9):
            await pilot.press("tab")
        await pilot.pause()
        said = harness.backend.texts[heard:]
        assert said[6:8] == ["Languages, first preferred, edit, en", "Verbosity, list, normal"]
        assert not any("Scroll" in text for text in said), said


async def test_arrows_in_an_open_drop_down_speak_each_item_and_move_the_cursor(
    harness: Harness,
) -> None:
    app = AnnouncerApp(harness.session)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("o")
        await pilot.pause()
        await pilot.press("enter")  # open the verbosity list
        await pilot.pause()
        assert harness.backend.texts[-1] == "normal, 2 of 3"
        row = app.cursor_position.y
        await pilot.press("down")
        await pilot.pause()
        assert harness.backend.texts[-1] == "detailed, 3 of 3"
        assert app.cursor_position.y == row + 1
        await pilot.press("up", "up")
        await pilot.pause()
        assert harness.backend.texts[-1] == "terse, 1 of 3"
        assert app.cursor_position.y == row - 1
        await pilot.press("enter")
        await pilot.pause()
        assert harness.session.settings.verbosity == "terse"


async def test_a_check_box_shows_its_state_in_words(harness: Harness) -> None:
    app = AnnouncerApp(harness.session)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("o")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, SettingsScreen)
        earcons = screen.query_one("#earcons", Checkbox)
        assert str(earcons.label) == "Earcons: on"
        assert str(screen.query_one("#do_not_interrupt", Checkbox).label) == "Do not interrupt: off"
        earcons.focus()
        await pilot.press("space")
        await pilot.pause()
        assert str(earcons.label) == "Earcons: off"
        assert harness.backend.texts[-1] == "Earcons: off."


async def test_an_invalid_language_is_refused_and_later_changes_still_save(
    harness: Harness,
) -> None:
    app = AnnouncerApp(harness.session)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("o")
        await pilot.pause()
        field = app.screen.query_one("#languages", Input)
        field.focus()
        field.value = ""
        await pilot.press(*"fr, xx_!!", "enter")
        await pilot.pause()
        assert harness.backend.texts[-1] == (
            "Languages not changed: xx_!! is not a language code such as en, es or pt-BR."
        )
        assert harness.session.settings.languages == ["en"]
        assert field.value == "en"
        assert harness.saved == []
        field.value = ""
        await pilot.press(*"fr, en", "enter")
        await pilot.pause()
        assert harness.session.settings.languages == ["fr", "en"]
        assert harness.saved[-1].languages == ["fr", "en"]


async def test_the_cursor_follows_the_highlighted_row_of_a_list(harness: Harness) -> None:
    app = AnnouncerApp(harness.session)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        for text in ("First news.", "Second news.", "Third news."):
            harness.session.announce(Announcement(text, producer_id="p"))
        await pilot.pause()
        await pilot.press("h")
        await pilot.pause()
        assert isinstance(app.screen, HistoryScreen)
        options = app.screen.query_one(OptionList)
        newest = app.cursor_position
        assert newest.y == options.content_region.y + 2  # newest last, highlighted
        await pilot.press("up")
        await pilot.pause()
        assert harness.backend.texts[-1] == "Second news., 2 of 3"
        assert app.cursor_position.y == newest.y - 1
        await pilot.press("home")
        await pilot.pause()
        assert app.cursor_position.y == options.content_region.y
