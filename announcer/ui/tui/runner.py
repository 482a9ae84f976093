"""Run the Textual app and a live session on one event loop.

The runtime's ``LiveSession`` is asyncio code; Textual runs on asyncio too, so
both share the loop and the session's callbacks reach the app without threads.
Quitting the app closes the subscriptions (§5.8); a session that ends on its
own (``--exit-when-done``) closes the app.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Protocol

from announcer.ui.tui.app import AnnouncerApp
from announcer.ui.tui.session import UiSession


class RunnableSession(UiSession, Protocol):
    async def run(self) -> int: ...

    def stop(self) -> None: ...


async def run_with_session(session: RunnableSession, *, headless: bool = False) -> int:
    """Show ``session`` in the Textual app until the user quits or the session ends."""
    app = AnnouncerApp(session)
    runner: asyncio.Task[int] = asyncio.ensure_future(session.run())
    runner.add_done_callback(lambda _task: app.exit())
    try:
        await app.run_async(headless=headless)
    finally:
        session.stop()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(asyncio.shield(runner), timeout=10)
    if runner.done() and not runner.cancelled() and runner.exception() is None:
        return int(runner.result() or 0)
    return 1
