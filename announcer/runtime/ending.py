"""When a live session is over: asked by its ticker and after each batch of frames.

Every source finished (ended, or given up) and what was queued has been said; or, with
``--exit-when-done``, the engine heard events, nothing is open, queued or being said, and
no frame came for a moment. A backend that never reports an utterance's end cannot keep
the session forever: the drain has a deadline. The demo is told it is over once (its UIs
offer to run it again). Decisions only; the session acts on them.
"""

from __future__ import annotations

from collections.abc import Callable

from announcer.engine.pipeline import Engine

#: with ``--exit-when-done``, this long without a frame (and nothing open) is the end
DONE_GRACE_SECONDS = 2.0
#: once every source has ended, queued speech may take this long to finish before exit
DRAIN_SECONDS = 120.0


class SessionEnd:
    """Whether the session is over now, on the session's clock."""

    def __init__(self, engine: Engine, clock: Callable[[], float]) -> None:
        self._engine = engine
        self._clock = clock
        self._last_frame_at = clock()
        self._drain_since: float | None = None
        self._over_told = False

    def frame_read(self) -> None:
        """A frame came: ``--exit-when-done`` waits its grace from now."""
        self._last_frame_at = self._clock()

    def over(self, *, all_finished: bool, speech_pending: bool, exit_when_done: bool) -> bool:
        """Called only when nothing is being said and no frame waits to be read."""
        now = self._clock()
        if all_finished:
            # Nothing more will come. What is queued is said first: between two utterances
            # the backend is silent while the engine still holds the next one.
            if self._drain_since is None:
                self._drain_since = now
            return not speech_pending or now - self._drain_since >= DRAIN_SECONDS
        if not exit_when_done or self._engine.pending_prompts():
            return False
        status = self._engine.status()
        if status.events == 0 or status.open_sessions or status.queued or status.speaking:
            return False
        return now - self._last_frame_at >= DONE_GRACE_SECONDS

    def tell_over_once(self) -> bool:
        """True the first time only: the demo's UIs are told it is over once."""
        first = not self._over_told
        self._over_told = True
        return first


__all__ = ["DONE_GRACE_SECONDS", "DRAIN_SECONDS", "SessionEnd"]
