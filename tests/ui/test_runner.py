"""run_with_session: the app and a session share one loop and end together."""

from __future__ import annotations

import asyncio

from announcer.engine.announcement import Announcement
from announcer.ui.tui.runner import run_with_session
from tests.ui.conftest import Harness


class FiniteSession:
    """A LocalSession that runs a short scripted session, then ends (--exit-when-done)."""

    def __init__(self, harness: Harness) -> None:
        self.harness = harness
        self.stopped = asyncio.Event()
        self.stop_calls = 0
        self.exit_when_done = True  # like `listen --exit-when-done` and the demo

    def __getattr__(self, name: str):
        return getattr(self.harness.session, name)

    async def run(self) -> int:
        await asyncio.sleep(0)  # let the app mount and subscribe
        for _ in range(200):
            if self.harness.session._listeners:
                break
            await asyncio.sleep(0.05)
        self.harness.session.announce(Announcement("Session finished."))
        return 0

    def stop(self) -> None:
        self.stop_calls += 1


async def test_app_closes_when_the_session_ends(harness: Harness) -> None:
    session = FiniteSession(harness)
    code = await asyncio.wait_for(
        run_with_session(session, headless=True, save_settings=harness.saved.append), timeout=60
    )
    assert code == 0
    assert session.stop_calls == 1
    assert harness.backend.said("Session finished.")
