"""Helpers for the speech tests: waiting on real effects without sleeping as synchronisation."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

# generous: the suite runs on a loaded 2-core machine
WAIT_S = 30.0


def wait_for(predicate: Callable[[], bool], timeout: float = WAIT_S) -> bool:
    """Poll ``predicate`` for an outside effect (a file growing) that has no event to wait on."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.005)
    return predicate()


class Done:
    """An ``on_done`` callback that counts its calls and can be waited on."""

    def __init__(self) -> None:
        self.calls = 0
        self._event = threading.Event()

    def __call__(self) -> None:
        self.calls += 1
        self._event.set()

    def wait(self, timeout: float = WAIT_S) -> bool:
        return self._event.wait(timeout)


def heard_frames(path: Path) -> int:
    """Frames a sink player has written so far (0 before its WAV header exists)."""
    import wave

    try:
        with wave.open(str(path), "rb") as wav:
            return wav.getnframes()
    except (OSError, EOFError, wave.Error):
        return 0
