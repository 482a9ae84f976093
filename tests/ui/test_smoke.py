from __future__ import annotations

from announcer.ui.tui.app import AnnouncerApp
from tests.ui.conftest import Harness, load_event


async def test_confirmation_accept(harness: Harness) -> None:
    app = AnnouncerApp(harness.session)
    async with app.run_test() as pilot:
        harness.open(load_event("agent.awaiting.confirmation.json"))
        await pilot.pause()
        await pilot.pause()
        print(app.screen_stack)
        print(harness.backend.texts)
        await pilot.press("a")
        await pilot.pause()
        print(harness.replies)
        print(harness.backend.texts)
    assert harness.replies
