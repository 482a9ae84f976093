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

from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Final, Literal

from announcer.protocol.events import (
    AaepEvent,
    AwaitingClarification,
    AwaitingConfirmation,
    HandoffRequested,
    OutputStreaming,
    SessionCancelled,
    SessionCompleted,
    SessionErrored,
    SessionStarted,
    StateChanged,
    ToolCompleted,
    ToolInvoked,
)

_TERMINAL: Final = (SessionCompleted, SessionErrored, SessionCancelled)
_PROMPTS: Final = (AwaitingConfirmation, AwaitingClarification)
Lifecycle = Literal["active", "completed", "errored", "cancelled"]
VoidReason = Literal["ended", "voided"]
AWAITING_INPUT: Final = "awaiting_input"

SEEN_IDS_LIMIT: Final = 100_000
SEEN_IDS_TTL_SECONDS: Final = 3_600.0
SESSIONS_LIMIT: Final = 1_000
CLOSED_SESSION_TTL_SECONDS: Final = 600.0
# Sessions that ended and whose state expired are still known to have ended (only their
# key and how they ended, bounded): a question for one, however late, is void (§4.5.1).
ENDED_SESSIONS_REMEMBERED: Final = 4096
IDLE_SESSION_TTL_SECONDS: Final = 6 * 3_600.0
REORDER_WINDOW: Final = 64
REORDER_WAIT_SECONDS: Final = 2.0
OPEN_TOOLS_LIMIT: Final = 256
CLOSED_OUTPUTS_LIMIT: Final = 256
# The states a listener finds uninformative when they flicker by (§4.2.1).
CYCLE_STATES: Final = frozenset({"idle", "thinking", "deciding"})


@dataclass(frozen=True, slots=True)
class TrackerNote:
    """Something odd about the stream, for the diagnostics log (no payload text)."""

    code: str
    message: str
    session_id: str | None = None
    event_id: str | None = None


@dataclass(slots=True)
class SessionState:
    session_id: str
    source_id: str
    producer_id: str
    producer_name: str | None
    first_seen: float
    last_activity: float
    lifecycle: Lifecycle = "active"
    started: bool = False
    closed_at: float | None = None
    agent_state: str = "idle"
    state_since: float = 0.0
    open_tools: OrderedDict[str, ToolInvoked] = field(default_factory=OrderedDict)
    tool_invocations: int = 0
    completed_outputs: OrderedDict[str, None] = field(default_factory=OrderedDict)
    # Reply tokens of prompts this session opened and that are still waiting.
    open_prompts: set[str] = field(default_factory=set)
    # event_id of each open question -> its reply token (a change may name either).
    prompt_events: dict[str, str] = field(default_factory=dict)
    # The tool a question gates (§4.3.1: invoked, then asked about, with nothing between)
    # -> its reply token: that tool completing is the producer going on, answered elsewhere.
    prompt_tools: dict[str, str] = field(default_factory=dict)
    last_invoked: str | None = None
    # Questions closed here (answered, expired) whose "away from awaiting_input"
    # state change the producer still owes (§6.7.2, Appendix A.4): that change
    # resolves them, it does not cancel another open question.
    resolutions_owed: int = 0
    # The sequence number of the terminal event, and of the last state change that
    # cancelled questions: a question numbered before either arrived too late (§6.8).
    ended_at_sequence: int | None = None
    cancelled_through_sequence: int | None = None
    events: int = 0
    # Reordering (§3.4.1): the next sequence number we expect and what arrived early.
    next_sequence: int | None = None
    # None marks a critical event that was processed at once, ahead of its turn.
    held: dict[int, tuple[AaepEvent | None, float]] = field(default_factory=dict)
    gaps: int = 0
    last_state_announced_at: float | None = None

    @property
    def is_open(self) -> bool:
        return self.lifecycle == "active"

    @property
    def display_name(self) -> str:
        return self.producer_name or self.producer_id


class Admission:
    """What the tracker lets through for one incoming event, in order."""

    __slots__ = (
        "events",
        "kept_open",
        "notes",
        "resolved_tokens",
        "void_on_arrival",
        "voided_tokens",
    )

    def __init__(
        self,
        events: list[AaepEvent] | None = None,
        notes: list[TrackerNote] | None = None,
        voided_tokens: list[str] | None = None,
    ) -> None:
        self.events: list[AaepEvent] = events if events is not None else []
        self.notes: list[TrackerNote] = notes if notes is not None else []
        # Reply tokens the producer cancelled (§6.8).
        self.voided_tokens: list[str] = voided_tokens if voided_tokens is not None else []
        # event_id of a question that was void before it arrived -> why ("ended" when
        # its session had already ended, "voided" when a later state change cancelled it).
        self.void_on_arrival: dict[str, VoidReason] = {}
        # Questions the producer says it resolved otherwise (§6.7.2: another subscriber
        # answered; the state change names the question).
        self.resolved_tokens: list[str] = []
        # Questions a change away from awaiting_input left open: it named none of them
        # and did not withdraw (several open, or parallel work, §6.1(3)).
        self.kept_open: list[str] = []


# Events the policy treats as critical whatever urgency the producer wrote (§4.1.3, §4.4).
_ALWAYS_CRITICAL: Final = (
    AwaitingConfirmation,
    AwaitingClarification,
    SessionErrored,
    HandoffRequested,
)


# §6.8: "an agent.state.changed returning to thinking or deciding" withdraws a question.
WITHDRAWING_STATES: Final = frozenset({"thinking", "deciding"})
# §6.7.2's resolution notice: the agent proceeds with the action (accepted elsewhere).
PROCEEDING_STATES: Final = frozenset({"calling_tool", "writing_output"})


def _named_prompts(state: SessionState, event: StateChanged) -> list[str]:
    """The open questions a state change names by ``correlation_id`` (event id or token)."""
    named = event.correlation_id
    if not named:
        return []
    token = state.prompt_events.get(named, named)
    return [token] if token in state.open_prompts else []


def _cancels_questions(event: AaepEvent) -> bool:
    """Events that may void open questions (§6.8): terminal, or leaving awaiting_input."""
    if isinstance(event, _TERMINAL):
        return True
    return isinstance(event, StateChanged) and event.from_state == AWAITING_INPUT


def _tool_key(tool: str, tool_call_id: str | None) -> str:
    return tool_call_id if tool_call_id else f"tool:{tool}"


class SessionTracker:
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

    def _apply(
        self, state: SessionState, event: AaepEvent, now: float, admission: Admission
    ) -> None:
        state.events += 1
        state.last_activity = now
        sid = event.session_id
        invoked, state.last_invoked = state.last_invoked, None  # only the event just before
        if type(event) is OutputStreaming and state.lifecycle == "active":
            # The most frequent event by far gets the short path.
            self._track_output(state, event, sid, admission)
            admission.events.append(event)
            return
        if isinstance(event, SessionStarted):
            if state.started:
                admission.notes.append(
                    TrackerNote(
                        "second_session_started",
                        "a second agent.session.started for this session (§4.1.1)",
                        sid,
                        event.event_id,
                    )
                )
            state.started = True
            if not state.is_open:
                state.lifecycle = "active"
                state.closed_at = None
                state.ended_at_sequence = None
                state.cancelled_through_sequence = None
                state.resolutions_owed = 0
        elif not state.is_open:
            admission.notes.append(
                TrackerNote(
                    "event_after_end",
                    f"{event.short_type} after the session ended (§4.5.1)",
                    sid,
                    event.event_id,
                )
            )
        if isinstance(event, StateChanged):
            if event.from_state != state.agent_state and state.events > 1:
                admission.notes.append(
                    TrackerNote(
                        "state_mismatch",
                        "from_state does not match the current state (§4.2.1)",
                        sid,
                        event.event_id,
                    )
                )
            if event.from_state == AWAITING_INPUT and event.to_state != AWAITING_INPUT:
                self._leave_awaiting_input(state, event, admission)
            state.agent_state = event.to_state
            state.state_since = now
        elif isinstance(event, ToolInvoked):
            state.tool_invocations += 1
            state.open_tools[_tool_key(event.tool, event.tool_call_id)] = event
            state.last_invoked = _tool_key(event.tool, event.tool_call_id)
            while len(state.open_tools) > OPEN_TOOLS_LIMIT:
                state.open_tools.popitem(last=False)
        elif isinstance(event, ToolCompleted):
            key = _tool_key(event.tool, event.tool_call_id)
            gated = state.prompt_tools.pop(key, None)
            if gated is not None and gated in state.open_prompts:
                # §6.7.2: the tool this question gated ran without our answer (another
                # subscriber accepted it), or ended otherwise (declined, the producer's
                # default): either way the producer no longer waits for us
                state.open_prompts.discard(gated)
                if event.status == "success":
                    admission.resolved_tokens.append(gated)
                else:
                    admission.voided_tokens.append(gated)
            if state.open_tools.pop(key, None) is None:
                admission.notes.append(
                    TrackerNote(
                        "tool_not_invoked",
                        "agent.tool.completed without a matching agent.tool.invoked (§4.5.2)",
                        sid,
                        event.event_id,
                    )
                )
        elif isinstance(event, OutputStreaming):
            self._track_output(state, event, sid, admission)
        elif isinstance(event, _PROMPTS):
            void = self._void_before_arrival(state, event.sequence_number)
            if void is not None:
                admission.void_on_arrival[event.event_id] = void
            else:
                state.open_prompts.add(event.reply_token)
                state.prompt_events[event.event_id] = event.reply_token
                if invoked is not None and invoked in state.open_tools:
                    if len(state.prompt_tools) > OPEN_TOOLS_LIMIT:
                        state.prompt_tools.clear()
                    state.prompt_tools[invoked] = event.reply_token
                if len(state.prompt_events) > 4 * OPEN_TOOLS_LIMIT:
                    state.prompt_events.clear()
                state.agent_state = AWAITING_INPUT
        elif isinstance(event, _TERMINAL):
            if isinstance(event, SessionCompleted):
                state.lifecycle = "completed"
            elif isinstance(event, SessionErrored):
                state.lifecycle = "errored"
            else:
                state.lifecycle = "cancelled"
            state.closed_at = now
            state.ended_at_sequence = event.sequence_number
            state.open_tools.clear()
            # §6.8: a session that ends cancels every prompt it left open.
            admission.voided_tokens.extend(sorted(state.open_prompts))
            state.open_prompts.clear()
        admission.events.append(event)

    def _track_output(
        self, state: SessionState, event: OutputStreaming, sid: str, admission: Admission
    ) -> None:
        """§4.5.4: an output ends once; chunks after its completion are noted, not hidden."""
        output_key = event.output_id or ""
        if output_key in state.completed_outputs:
            admission.notes.append(
                TrackerNote(
                    "chunk_after_complete",
                    "agent.output.streaming after complete: true for this output (§4.5.4)",
                    sid,
                    event.event_id,
                )
            )
        elif event.complete:
            state.completed_outputs[output_key] = None
            while len(state.completed_outputs) > CLOSED_OUTPUTS_LIMIT:
                state.completed_outputs.popitem(last=False)

    def prompt_closed(
        self, source_id: str, session_id: str, reply_token: str, *, resolved: bool = False
    ) -> None:
        """The prompt closed here: it no longer needs voiding.

        ``resolved``: a reply went out or its time ran out, so the producer owes a
        state change away from ``awaiting_input`` for it (§6.7.2, Appendix A.4).
        """
        state = self._sessions.get((source_id, session_id))
        if state is not None and reply_token in state.open_prompts:
            state.open_prompts.discard(reply_token)
            if resolved and state.is_open:
                state.resolutions_owed += 1

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

    @staticmethod
    def _leave_awaiting_input(
        state: SessionState, event: StateChanged, admission: Admission
    ) -> None:
        """§6.8: a state change away from ``awaiting_input`` (``from_state`` says so).

        Questions are withdrawn only on evidence (§6.8, §6.7.2, §6.1(3)):

        * when a question of this session was just answered or timed out here, the
          change is the producer resolving that one (§6.7.2): nothing else changes;
        * a change that names questions (``correlation_id`` is the question's
          ``event_id`` or ``reply_token``) settles those: answered elsewhere when the
          agent proceeds (``calling_tool``, ``writing_output``, §6.7.2), otherwise
          withdrawn;
        * a change naming none returns to ``thinking``/``deciding`` with exactly one
          question open: that one is withdrawn (§6.8);
        * otherwise (several open, or parallel work such as ``calling_tool``) every
          question stays open and the user is told the agent went on working.
        """
        if state.resolutions_owed > 0:
            state.resolutions_owed -= 1
            return
        withdraws = event.to_state in WITHDRAWING_STATES
        named = _named_prompts(state, event)
        if named:
            for token in named:
                state.open_prompts.discard(token)
            # §6.7.2: going on to the tool (or the output) is the producer proceeding on
            # an answer given elsewhere; any other named change withdraws the question
            proceeds = event.to_state in PROCEEDING_STATES
            (admission.resolved_tokens if proceeds else admission.voided_tokens).extend(named)
            return
        if not state.open_prompts:
            if withdraws and event.sequence_number is not None:
                state.cancelled_through_sequence = event.sequence_number
            return
        if withdraws and len(state.open_prompts) == 1:
            admission.voided_tokens.extend(state.open_prompts)
            state.open_prompts.clear()
            if event.sequence_number is not None:
                state.cancelled_through_sequence = event.sequence_number
            return
        admission.kept_open.extend(sorted(state.open_prompts))

    def void_reason(
        self, source_id: str, session_id: str, sequence: int | None
    ) -> VoidReason | None:
        """Why a question of this session would be void on arrival (see below), if it is."""
        state = self._sessions.get((source_id, session_id))
        if state is None:
            return "ended" if (source_id, session_id) in self._ended else None
        return self._void_before_arrival(state, sequence)

    @staticmethod
    def _void_before_arrival(state: SessionState, sequence: int | None) -> VoidReason | None:
        """A question whose session ended, or that was cancelled, before it arrived (§6.8).

        Out-of-order delivery can bring a question after the terminal event (released
        at once because it is critical) or after the state change that cancelled it;
        a higher sequence number already applied says so.
        """
        if not state.is_open:
            return "ended"
        if sequence is None:
            return None
        if state.ended_at_sequence is not None and sequence < state.ended_at_sequence:
            return "ended"
        cancelled = state.cancelled_through_sequence
        if cancelled is not None and sequence < cancelled:
            return "voided"
        return None
