"""No unexplained silence (issue 33, item 3): while an agent works and nothing has been said
for a while, one short "Still working: ..., 45 seconds." with a quiet earcon; in a silence
that goes on, each next one waits twice as long.

Sans-I/O, on the session clock the engine is given: the engine tells this watch when speech
was heard, which sessions work, and when a tool started; the watch says when the notice is
due and what it says. It never decides speech order: the notice is submitted like our other
short notices, and only when nothing is being said or waits to be said and no question is
open (never over a question).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Final

from announcer.engine.tracker_records import SessionState

#: agent states in which nothing runs: the turn is over, or the agent waits for the user
RESTING_STATES: Final = frozenset({"idle", "awaiting_input"})
#: how often the wait between notices doubles in one silence (30 s grows to 8 minutes)
MAX_DOUBLINGS: Final = 4
#: the most tool start times remembered (the oldest are forgotten first)
TOOL_STARTS_LIMIT: Final = 512


def is_working(session: SessionState) -> bool:
    """A session whose agent is in the middle of a turn: a tool runs, or its state is
    one of work (``thinking``, ``executing``, ...), and the session has not ended."""
    return session.is_open and (
        bool(session.open_tools) or session.agent_state not in RESTING_STATES
    )


@dataclass(frozen=True, slots=True)
class StillWorking:
    """What the notice is about: the tool that runs (its short description), or only the
    agent's name, and for how long (seconds on the session clock)."""

    agent: str
    tool: str | None
    seconds: float
    session_id: str


class SilenceWatch:
    """When the user last heard anything, which sessions work, and since when."""

    def __init__(self) -> None:
        # (source id, session id) of every session seen working, with when it started
        self._working: dict[tuple[str, str], float] = {}
        self._quiet_since: float | None = None
        self._tool_started: OrderedDict[str, float] = OrderedDict()
        # notices said in this one long silence: each waits twice as long as the last
        self._repeats = 0

    def heard(self, now: float, *, ours: bool = False) -> None:
        """Speech was being said at ``now``: the silence starts again. ``ours``: only the
        "still working" notice itself, which does not end the long silence it is about."""
        self._quiet_since = now
        if not ours:
            self._repeats = 0

    def notified(self, now: float) -> None:
        """The notice was said: the next one, in the same silence, waits twice as long
        (30 s, then 60 more, then 120 more: a long build is not talked over every half
        minute, issue 33: one "still working" in a minute's silent run)."""
        self._quiet_since = now
        self._repeats += 1

    def tool_started(self, event_id: str, now: float) -> None:
        self._tool_started[event_id] = now
        while len(self._tool_started) > TOOL_STARTS_LIMIT:
            self._tool_started.popitem(last=False)

    def session_seen(self, session: SessionState, now: float) -> None:
        """An event of ``session`` was handled: it works now, or it no longer does."""
        key = (session.source_id, session.session_id)
        if not is_working(session):
            self._working.pop(key, None)
            return
        if not self._working:
            # a turn begins after a rest: the silence counts from here, not from the rest
            self._quiet_since = now if self._quiet_since is None else max(self._quiet_since, now)
            self._repeats = 0
        self._working.setdefault(key, now)

    def forget(self, keys: list[tuple[str, str]]) -> None:
        for key in keys:
            self._working.pop(key, None)

    def tracks(self, key: tuple[str, str]) -> bool:
        """Whether this session is in the middle of a turn, as last seen."""
        return key in self._working

    def working(self) -> list[tuple[str, str]]:
        return list(self._working)

    def due(self, interval: float) -> float | None:
        """When the notice is next due, or None (off, nothing works, or never quiet)."""
        if interval <= 0 or not self._working or self._quiet_since is None:
            return None
        factor: int = 2 ** min(self._repeats, MAX_DOUBLINGS)
        return self._quiet_since + interval * factor

    def what(self, sessions: list[SessionState], now: float) -> StillWorking | None:
        """What runs: the newest tool of the session that started working last."""
        best: StillWorking | None = None
        newest = float("-inf")
        for session in sessions:
            since = self._working.get((session.source_id, session.session_id))
            if since is None or not is_working(session):
                continue
            tool_name: str | None = None
            started = since
            if session.open_tools:
                tool = next(reversed(session.open_tools.values()))
                tool_name = tool.description or tool.summary_terse or tool.summary_normal
                started = self._tool_started.get(tool.event_id, since)
            if started >= newest:
                newest = started
                best = StillWorking(
                    session.display_name, tool_name, max(0.0, now - started), session.session_id
                )
        return best
