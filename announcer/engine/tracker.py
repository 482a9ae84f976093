"""Per-session state, deduplication and reordering of incoming events.

The tracker sees every validated event before the policy does. It keeps what a
listener needs to make sense of the next event (lifecycle, agent state, open tool
calls, open prompts) and guards the engine against the transport: duplicates are
dropped by ``event_id`` (§8.2.4), events are put back in ``sequence_number`` order
inside a bounded window and gaps are reported (§3.4.1, §8.2.3), and a prompt is
voided when the producer cancels it (§6.8). Several producers and interleaved
sessions are tracked at once (Subscribers' Guide §9), keyed by connection and
session. Memory is bounded: closed and idle sessions and old event ids expire.
"""

from __future__ import annotations

from announcer.engine.tracker_lifecycle import TrackerLifecycle
from announcer.engine.tracker_records import (
    _ALWAYS_CRITICAL,
    Admission,
    SessionState,
    TrackerNote,
    _cancels_questions,
)
from announcer.protocol.events import (
    AaepEvent,
)


class SessionTracker(TrackerLifecycle):
    def next_wakeup(self) -> float | None:
        """When held out-of-order events must be released even if the gap never fills."""
        earliest: float | None = None
        for state in self._sessions.values():
            for _, arrived in state.held.values():
                due = arrived + self.reorder_wait_seconds
                earliest = due if earliest is None or due < earliest else earliest
        return earliest

    # -- intake ----------------------------------------------------------------------

    def admit(self, event: AaepEvent, source_id: str, now: float) -> Admission:
        """Deduplicate and order ``event``; return the events ready for the policy."""
        admission = Admission()
        # §8.2.4: at-least-once delivery means duplicates; event_id identifies them.
        dedup_key = f"{source_id}\x00{event.event_id}"
        if dedup_key in self._seen:
            self.duplicates += 1
            admission.notes.append(
                TrackerNote(
                    "duplicate_event",
                    "event_id seen before; duplicate dropped (§8.2.4)",
                    event.session_id,
                    event.event_id,
                )
            )
            return admission
        self._remember(dedup_key, now)
        state = self._sessions.get((source_id, event.session_id))
        sequence = event.sequence_number
        if state is not None and sequence is not None and sequence == state.next_sequence:
            # The usual case: the next event of a known session, in order.
            self._apply(state, event, now, admission)
            state.next_sequence = sequence + 1
            if state.held:
                self._drain(state, now, admission)
            return admission
        state = self._session_for(event, source_id, now)
        if sequence is None:
            self._apply(state, event, now, admission)
            return admission
        if state.next_sequence is None:
            # §3.4.1 numbering starts at 0 with session.started; late joiners start anywhere.
            state.next_sequence = sequence
        if sequence < state.next_sequence:
            admission.notes.append(
                TrackerNote(
                    "late_event",
                    f"sequence_number {sequence} arrived after {state.next_sequence - 1} "
                    "was processed; handled out of order (§3.4.1)",
                    event.session_id,
                    event.event_id,
                )
            )
            self._apply(state, event, now, admission)
            return admission
        if sequence > state.next_sequence:
            if (
                event.urgency == "critical"
                or isinstance(event, _ALWAYS_CRITICAL)
                or _cancels_questions(event)
            ):
                # Critical news is never held back waiting for a gap to fill (§5.5.4), nor
                # is what cancels a question (§6.8): an answer must not slip in meanwhile.
                state.held[sequence] = (event, now)
                self._release_critical(state, sequence, now, admission)
                return admission
            state.held[sequence] = (event, now)
            if len(state.held) > self.reorder_window:
                self._skip_gap(state, now, admission)
            return admission
        self._apply(state, event, now, admission)
        state.next_sequence = sequence + 1
        self._drain(state, now, admission)
        return admission

    def tick(self, now: float) -> list[tuple[str, Admission]]:
        """Release held events whose gap did not fill in time; expire old state.

        Returns one admission per connection that had events released.
        """
        released: list[tuple[str, Admission]] = []
        for state in list(self._sessions.values()):
            if state.held:
                oldest = min(arrived for _, arrived in state.held.values())
                if now - oldest >= self.reorder_wait_seconds:
                    admission = Admission()
                    self._skip_gap(state, now, admission)
                    released.append((state.source_id, admission))
        self._expire(now)
        return released

    def _drain(self, state: SessionState, now: float, admission: Admission) -> None:
        assert state.next_sequence is not None
        while state.next_sequence in state.held:
            event, _ = state.held.pop(state.next_sequence)
            if event is not None:
                self._apply(state, event, now, admission)
            state.next_sequence += 1

    def _release_critical(
        self, state: SessionState, sequence: int, now: float, admission: Admission
    ) -> None:
        event, arrived = state.held[sequence]
        if event is not None:
            self._apply(state, event, now, admission)
        state.held[sequence] = (None, arrived)

    def _skip_gap(self, state: SessionState, now: float, admission: Admission) -> None:
        assert state.next_sequence is not None
        first_held = min(state.held)
        missing = first_held - state.next_sequence
        state.gaps += 1
        admission.notes.append(
            TrackerNote(
                "sequence_gap",
                f"{missing} event(s) missing before sequence_number {first_held}; "
                "continuing without them (§3.4.1, §8.2.3)",
                state.session_id,
            )
        )
        state.next_sequence = first_held
        self._drain(state, now, admission)

    def skip_sequence(
        self, source_id: str, session_id: str, sequence: int, now: float
    ) -> Admission:
        """An invalid frame used this sequence number: do not wait for it (§3.4.1, §8.2.3).

        Returns what that releases: events held back waiting for the number.
        """
        admission = Admission()
        state = self._sessions.get((source_id, session_id))
        if state is None or state.next_sequence is None or sequence < state.next_sequence:
            return admission
        if sequence - state.next_sequence > self.reorder_window:
            return admission  # far off: not worth a placeholder
        state.held.setdefault(sequence, (None, now))
        self._drain(state, now, admission)
        return admission

    def note_prompt(
        self, source_id: str, session_id: str, reply_token: str, producer_id: str, now: float
    ) -> None:
        """A question opened outside :meth:`admit` (a malformed one): void it with its session."""
        key = (source_id, session_id)
        state = self._sessions.get(key)
        if state is None:
            state = SessionState(
                session_id=session_id,
                source_id=source_id,
                producer_id=producer_id,
                producer_name=None,
                first_seen=now,
                last_activity=now,
                state_since=now,
            )
            self._sessions[key] = state
            if len(self._sessions) > self.sessions_limit:
                self._evict_one()
        if state.is_open:
            state.open_prompts.add(reply_token)
