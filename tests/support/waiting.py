"""Waiting on what a test can observe, never sleeping a guessed time.

The deadline only turns a hang into a failure that says what never came; it is wide,
because the suite runs on a loaded 2-core machine, and it is never what a test measures.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

TIMEOUT = 60.0


async def until(
    condition: Callable[[], bool], what: str, *, timeout: float = TIMEOUT, poll: float = 0.05
) -> None:
    """Poll ``condition`` while other tasks of this event loop run."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        await asyncio.sleep(poll)


async def until_on_pilot(
    pilot: Any, condition: Callable[[], bool], what: str, *, timeout: float = TIMEOUT
) -> None:
    """Poll ``condition`` while a Textual app under Pilot runs (``pilot.pause`` lets it
    process its messages between looks)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        await pilot.pause(0.05)


def wait_until(
    condition: Callable[[], bool], what: str, *, timeout: float = TIMEOUT, poll: float = 0.05
) -> None:
    """Poll ``condition`` from a plain (non-async) test, e.g. on a child process's files."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(poll)
