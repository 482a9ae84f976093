"""The tracker's memory: sessions by connection and session, event ids seen, both bounded.

Closed and idle sessions and old event ids expire; when too many sessions are open the
oldest is evicted, and ended sessions are remembered (bounded) so a late question is void.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator

from announcer.engine.tracker_records import (
    CLOSED_SESSION_TTL_SECONDS,
    ENDED_SESSIONS_REMEMBERED,
    IDLE_SESSION_TTL_SECONDS,
    REORDER_WAIT_SECONDS,
    REORDER_WINDOW,
    SEEN_IDS_LIMIT,
    SEEN_IDS_TTL_SECONDS,
    SESSIONS_LIMIT,
    Lifecycle,
    SessionState,
)
from announcer.protocol.events import (
    AaepEvent,
)


class TrackerStore:
    """What the tracker holds, and how it stays bounded; the rooms above build on it."""

    def __init__(
        self,
        *,
        reorder_window: int = REORDER_WINDOW,
        reorder_wait_seconds: float = REORDER_WAIT_SECONDS,
        sessions_limit: int = SESSIONS_LIMIT,
        seen_ids_limit: int = SEEN_IDS_LIMIT,
    ) -> None:
        self.reorder_window = reorder_window
        self.reorder_wait_seconds = reorder_wait_seconds
        self.sessions_limit = sessions_limit
        self.seen_ids_limit = seen_ids_limit
        self._sessions: OrderedDict[tuple[str, str], SessionState] = OrderedDict()
        self._ended: OrderedDict[tuple[str, str], Lifecycle] = OrderedDict()
        self._seen: OrderedDict[str, float] = OrderedDict()
        self.duplicates = 0
        self.expired_sessions = 0

    # -- queries -------------------------------------------------------------------

    def session(self, source_id: str, session_id: str) -> SessionState | None:
        return self._sessions.get((source_id, session_id))

    def sessions(self) -> Iterator[SessionState]:
        return iter(self._sessions.values())

    def open_sessions(self) -> list[SessionState]:
        return [state for state in self._sessions.values() if state.is_open]

    # -- internals ---------------------------------------------------------------------

    def _remember(self, key: str, now: float) -> None:
        seen = self._seen
        seen[key] = now
        size = len(seen)
        if size > self.seen_ids_limit:
            seen.popitem(last=False)
        if size & 0xFF:
            return
        # Now and then, drop ids older than the TTL from the old end.
        while seen:
            oldest_key = next(iter(seen))
            if now - seen[oldest_key] <= SEEN_IDS_TTL_SECONDS:
                break
            del seen[oldest_key]

    def _session_for(self, event: AaepEvent, source_id: str, now: float) -> SessionState:
        key = (source_id, event.session_id)
        state = self._sessions.get(key)
        if state is None:
            state = SessionState(
                session_id=event.session_id,
                source_id=source_id,
                producer_id=event.producer.agent_id,
                producer_name=event.producer.agent_name,
                first_seen=now,
                last_activity=now,
                state_since=now,
            )
            ended = self._ended.pop(key, None)
            if ended is not None:  # it ended long ago: still ended (a new start reopens it)
                state.lifecycle = ended
                state.closed_at = now
            self._sessions[key] = state
            if len(self._sessions) > self.sessions_limit:
                self._evict_one()
        else:
            self._sessions.move_to_end(key)
        if event.producer.agent_name and not state.producer_name:
            state.producer_name = event.producer.agent_name
        return state

    def _evict_one(self) -> None:
        # Closed sessions go first; then the least recently active one.
        for key, state in self._sessions.items():
            if not state.is_open:
                self._forget(key, state)
                return
        key, state = next(iter(self._sessions.items()))
        self._forget(key, state)

    def _forget(self, key: tuple[str, str], state: SessionState) -> None:
        """Drop a session's state; one that ended is still remembered as ended (bounded)."""
        del self._sessions[key]
        self.expired_sessions += 1
        if not state.is_open:
            self._ended[key] = state.lifecycle
            self._ended.move_to_end(key)
            if len(self._ended) > ENDED_SESSIONS_REMEMBERED:
                self._ended.popitem(last=False)

    def _expire(self, now: float) -> None:
        for key, state in list(self._sessions.items()):
            closed_long_ago = (
                state.closed_at is not None and now - state.closed_at > CLOSED_SESSION_TTL_SECONDS
            )
            idle_too_long = now - state.last_activity > IDLE_SESSION_TTL_SECONDS
            if (closed_long_ago or idle_too_long) and not state.held:
                self._forget(key, state)
