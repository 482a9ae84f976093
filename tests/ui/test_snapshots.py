"""Snapshots of the main screen, both modals and settings, in normal and low-load modes.

Update after an intended change with ``pytest tests/ui/test_snapshots.py --snapshot-update``
and review the SVG files in ``tests/ui/__snapshots__``.
"""

from __future__ import annotations

import pytest

from announcer.engine.announcement import Announcement
from announcer.ui.tui.app import AnnouncerApp
from tests.ui.conftest import Harness, load_event, schema_example

LOADS = ["medium", "low"]


@pytest.fixture(autouse=True)
def colour_as_recorded(monkeypatch: pytest.MonkeyPatch) -> None:
    """The snapshots were taken in colour; a NO_COLOR shell must not change them."""
    monkeypatch.delenv("NO_COLOR", raising=False)


def make_app(load: str) -> tuple[AnnouncerApp, Harness]:
    harness = Harness()
    settings = harness.session.settings.model_copy(update={"cognitive_load": load})
    harness.session.update_settings(settings)
    harness.session.set_status(
        connection="connected", producers=("banking-assistant",), session_state="working"
    )
    for text in (
        "Session started: monthly savings review.",
        "Reading account balances.",
        "[@click=app.quit]Continue[/] and [b]bold[/b] stay literal.",
    ):
        harness.session.announce(Announcement(text, producer_id="banking-assistant"))
    return AnnouncerApp(harness.session), harness


@pytest.mark.parametrize("load", LOADS)
def test_main_screen(snap_compare, load: str) -> None:
    app, _ = make_app(load)
    assert snap_compare(app)


@pytest.mark.parametrize("load", LOADS)
def test_confirmation_modal(snap_compare, load: str) -> None:
    app, harness = make_app(load)

    async def open_prompt(pilot) -> None:
        harness.open(load_event("agent.awaiting.confirmation.json"))
        await pilot.pause()

    assert snap_compare(app, run_before=open_prompt)


@pytest.mark.parametrize("load", LOADS)
def test_clarification_modal(snap_compare, load: str) -> None:
    app, harness = make_app(load)

    async def open_prompt(pilot) -> None:
        harness.open(schema_example("agent.awaiting.clarification", 1))
        await pilot.pause()

    assert snap_compare(app, run_before=open_prompt, terminal_size=(80, 30))


@pytest.mark.parametrize("load", LOADS)
def test_settings_screen(snap_compare, load: str) -> None:
    app, _ = make_app(load)
    assert snap_compare(app, press=["o"], terminal_size=(80, 40))
