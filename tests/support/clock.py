"""A session clock a test can hold still, so a rule timed on it waits on the test, not the load.

The arming interval of a question's keys runs on the session's clock. A test that presses
keys "while the dialog opens" must know they came before arming, however slowly a loaded
machine delivers them: it holds the clock, presses, then lets it run again.
"""

from __future__ import annotations

import time


class HeldClock:
    """``time.monotonic()``, except that while held it reads the moment it was held."""

    def __init__(self) -> None:
        self._held_at: float | None = None

    def __call__(self) -> float:
        return self._held_at if self._held_at is not None else time.monotonic()

    def hold(self) -> None:
        """Stop the clock where it stands (no timed rule comes due until ``release``)."""
        if self._held_at is None:
            self._held_at = time.monotonic()

    def release(self) -> None:
        """Run on from now: a monotonic clock may jump ahead, never back."""
        self._held_at = None

    def advance(self, seconds: float) -> None:
        """Held: move the held moment on by ``seconds`` (a deadline comes due at once)."""
        self.hold()
        assert self._held_at is not None
        self._held_at += seconds
