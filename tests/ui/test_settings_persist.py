"""The settings screen saves through announcer.config: comments kept, changes survive restarts."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Select

from announcer.config import SettingsStore
from announcer.ui.tui.app import AnnouncerApp
from announcer.ui.tui.runner import settings_saver
from tests.support.local_session import LocalSession
from tests.ui.conftest import RecordingBackend
from tests.ui.test_settings_and_history import open_settings


async def test_a_change_in_the_settings_screen_is_in_the_file_after_a_restart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings_file = tmp_path / "config.toml"
    settings_file.write_text("# my own note\nrate_wpm = 180  # slow please\n", encoding="utf-8")
    monkeypatch.setenv("ANNOUNCER_CONFIG", str(settings_file))
    monkeypatch.setenv("ANNOUNCER_BACKEND", "text")  # for this run only: must not be saved

    first = SettingsStore.load().settings
    assert (first.verbosity, first.rate_wpm, first.backend) == ("normal", 180, "text")
    session = LocalSession(RecordingBackend(), first)
    app = AnnouncerApp(session, save_settings=settings_saver(first))
    async with app.run_test(size=(100, 40)) as pilot:
        await open_settings(pilot, app)
        await pilot.press("enter")  # open the verbosity list
        await pilot.pause()
        await pilot.press("up", "enter")  # normal -> terse
        await pilot.pause()
        assert session.settings.verbosity == "terse"

    text = settings_file.read_text(encoding="utf-8")
    assert "# my own note" in text and "rate_wpm = 180  # slow please" in text
    assert 'verbosity = "terse"' in text
    assert "backend" not in text  # only what the user changed is written

    # Restart: a new store and a new app read the file.
    monkeypatch.delenv("ANNOUNCER_BACKEND")
    again = SettingsStore.load().settings
    assert (again.verbosity, again.rate_wpm) == ("terse", 180)
    restarted = AnnouncerApp(LocalSession(RecordingBackend(), again))
    async with restarted.run_test(size=(100, 40)) as pilot:
        screen = await open_settings(pilot, restarted)
        assert screen.query_one("#verbosity", Select).value == "terse"
