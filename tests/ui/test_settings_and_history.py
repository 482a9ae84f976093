"""Settings screen (applied at once, persisted, spoken) and the history of answers."""

from __future__ import annotations

from textual.widgets import Checkbox, Input, OptionList, Select

from announcer.ui.tui.app import AnnouncerApp
from announcer.ui.tui.screens import SettingsScreen
from tests.ui.conftest import Harness, load_event


async def open_settings(pilot, app: AnnouncerApp) -> SettingsScreen:
    await pilot.press("o")
    await pilot.pause()
    assert isinstance(app.screen, SettingsScreen)
    return app.screen


async def test_verbosity_select_applies_persists_and_speaks(harness: Harness) -> None:
    app = AnnouncerApp(harness.session)
    async with app.run_test(size=(100, 40)) as pilot:
        screen = await open_settings(pilot, app)
        assert screen.focused is screen.query_one("#verbosity", Select)
        await pilot.press("enter")  # open the list
        await pilot.pause()
        await pilot.press("up", "enter")  # normal -> terse
        await pilot.pause()
        assert harness.session.settings.verbosity == "terse"
        assert harness.saved[-1].verbosity == "terse"
        assert harness.backend.texts[-1] == "Verbosity: terse."


async def test_tab_speaks_each_setting_and_switches_toggle(harness: Harness) -> None:
    app = AnnouncerApp(harness.session)
    async with app.run_test(size=(100, 40)) as pilot:
        screen = await open_settings(pilot, app)
        names = []
        for _ in range(5):
            await pilot.press("tab")
            await pilot.pause()
            names.append(harness.backend.texts[-1])
        assert names == [
            "Cognitive load, list, medium",
            "Speech backend, list, auto",
            "Voice, edit, blank",
            "Rate, words per minute, edit, blank",
            "Earcons, check box, on",
        ]
        assert screen.focused is screen.query_one("#earcons", Checkbox)
        focused = screen.focused
        assert app.cursor_position == (focused.content_region.x, focused.content_region.y)
        await pilot.press("space")
        await pilot.pause()
        assert harness.session.settings.earcons is False
        assert harness.backend.texts[-1] == "Earcons: off."
        await pilot.press("tab", "enter")
        await pilot.pause()
        assert harness.session.settings.do_not_interrupt is True
        assert harness.backend.texts[-1] == "Do not interrupt: on."
        assert [s.earcons for s in harness.saved] == [False, False]


async def test_rate_is_validated_and_the_reason_spoken(harness: Harness) -> None:
    app = AnnouncerApp(harness.session)
    async with app.run_test(size=(100, 40)) as pilot:
        screen = await open_settings(pilot, app)
        screen.query_one("#rate_wpm", Input).focus()
        await pilot.pause()
        await pilot.press("5", "enter")
        await pilot.pause()
        assert harness.session.settings.rate_wpm is None
        assert harness.backend.texts[-1] == (
            "Rate, words per minute not changed: it must be at least 60."
        )
        await pilot.press("backspace", "2", "2", "0", "enter")
        await pilot.pause()
        assert harness.session.settings.rate_wpm == 220
        assert harness.backend.texts[-1] == "Rate, words per minute: 220."


async def test_languages_and_voice(harness: Harness) -> None:
    app = AnnouncerApp(harness.session)
    async with app.run_test(size=(100, 40)) as pilot:
        screen = await open_settings(pilot, app)
        screen.query_one("#languages", Input).focus()
        await pilot.pause()
        await pilot.press("ctrl+u", *"es, en", "enter")
        await pilot.pause()
        assert harness.session.settings.languages == ["es", "en"]
        screen.query_one("#voice", Input).focus()
        await pilot.pause()
        await pilot.press(*"es-la", "enter")
        await pilot.pause()
        assert harness.session.settings.voices == {"es": "es-la"}
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is app.main_screen


async def test_low_load_from_settings_hides_the_status_line(harness: Harness) -> None:
    app = AnnouncerApp(harness.session)
    async with app.run_test(size=(100, 40)) as pilot:
        await open_settings(pilot, app)
        await pilot.press("tab", "enter")
        await pilot.pause()
        await pilot.press("up", "enter")  # medium -> low
        await pilot.pause()
        assert harness.session.settings.cognitive_load == "low"
        assert harness.backend.texts[-1] == "Cognitive load: low."
        await pilot.press("escape")
        await pilot.pause()
        assert not app.main_screen.query_one("#status").display


async def test_history_records_prompts_with_their_answers(harness: Harness) -> None:
    app = AnnouncerApp(harness.session)
    async with app.run_test() as pilot:
        harness.open(load_event("agent.awaiting.confirmation.json"))
        await pilot.pause()
        await pilot.press("r")
        await pilot.pause()
        await pilot.press("h")
        await pilot.pause()
        rows = app.screen.query_one(OptionList)
        first = str(rows.get_option_at_index(0).prompt)
        assert first == (
            "Confirm: Transfer $500.00 from checking-7821 to savings-3344. "
            "(from banking-assistant) — Rejected: Transfer $500.00 from checking-7821 to "
            "savings-3344. Sent."
        )
        await pilot.press("enter")
        assert harness.backend.texts[-1] == first


async def test_a_settings_file_that_cannot_be_written_is_reported(harness: Harness) -> None:
    def broken_store(settings: object) -> None:
        raise ValueError("settings.toml line 3: invalid TOML")

    app = AnnouncerApp(harness.session, save_settings=broken_store)
    async with app.run_test() as pilot:
        await pilot.press("v")
        assert harness.session.settings.verbosity == "detailed"  # still applied
        assert harness.backend.texts[-2:] == [
            "Verbosity detailed.",
            "Applied for now, but not saved: settings.toml line 3: invalid TOML",
        ]


async def test_changing_the_backend_says_when_it_applies(harness: Harness) -> None:
    app = AnnouncerApp(harness.session)
    async with app.run_test(size=(100, 40)) as pilot:
        screen = await open_settings(pilot, app)
        screen.query_one("#backend", Select).focus()
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("down", "enter")
        await pilot.pause()
        assert harness.session.settings.backend == "screenreader"
        assert harness.backend.texts[-1] == (
            "Speech backend: screenreader. This takes effect the next time announcer starts."
        )
