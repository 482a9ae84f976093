"""The login runner both interfaces share: a login never outlives the wait for it, and a
closed terminal is told from a live one (real processes and a real pseudo-terminal)."""

from __future__ import annotations

import asyncio
import os
import pty
import sys
from pathlib import Path

import pytest

from announcer.ui.terminal_login import run_login, terminal_gone
from tests.support.processes import alive, children


def test_a_login_given_up_on_is_ended(tmp_path: Path) -> None:
    """Announcer stops while the login runs (its task is cancelled): the login ends too,
    even one that ignores SIGTERM."""
    ready = tmp_path / "ready"
    script = (
        "import signal, time, pathlib; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        f"pathlib.Path({str(ready)!r}).touch(); time.sleep(600)"
    )

    async def scenario() -> list[int]:
        task = asyncio.ensure_future(run_login([sys.executable, "-c", script], {}, str(tmp_path)))
        async with asyncio.timeout(60):
            while not ready.exists():
                await asyncio.sleep(0.05)
        started = children(os.getpid())
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return started

    started = asyncio.run(scenario())
    assert started
    assert not any(alive(pid) for pid in started)


def test_a_login_that_ends_gives_its_status(tmp_path: Path) -> None:
    code = asyncio.run(run_login([sys.executable, "-c", "raise SystemExit(3)"], {}, str(tmp_path)))
    assert code == 3


def test_a_hung_up_terminal_is_gone_and_a_live_one_is_not() -> None:
    main, secondary = pty.openpty()
    try:
        assert not terminal_gone(secondary)
        os.close(main)  # the terminal's window closes
        main = -1
        assert terminal_gone(secondary)
    finally:
        os.close(secondary)
        if main >= 0:
            os.close(main)


def test_input_that_is_no_terminal_counts_as_gone(tmp_path: Path) -> None:
    with open(os.devnull, "rb") as null:
        assert terminal_gone(null.fileno())
    read, write = os.pipe()
    try:
        assert terminal_gone(read)
    finally:
        os.close(read)
        os.close(write)
