"""The tracker's records: a session's state, what admitting an event gives, its notes.

With the limits that bound its memory and the event classes its rooms test for. The
rooms above build on it: :mod:`announcer.engine.tracker_store` (sessions and seen ids,
bounded), :mod:`announcer.engine.tracker_lifecycle` (what an event does to its session)
and :mod:`announcer.engine.tracker` (``SessionTracker``: dedup and ordering).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Final, Literal

from announcer.protocol.events import (
    AaepEvent,
    AwaitingClarification,
    AwaitingConfirmation,
    HandoffRequested,
    SessionCancelled,
    SessionCompleted,
    SessionErrored,
    StateChanged,
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
    # The user accepted a confirmation of this session: its next tool result is the
    # outcome of that decision, never optional (issue 30 item 6).
    approved_result_due: bool = False

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
    """Events that may void open questions (§6.8): terminal, leaving awaiting_input, or
    returning to ``thinking``/``deciding`` from any state (§6.8 names no ``from_state``)."""
    if isinstance(event, _TERMINAL):
        return True
    return isinstance(event, StateChanged) and (
        event.from_state == AWAITING_INPUT or event.to_state in WITHDRAWING_STATES
    )


def _tool_key(tool: str, tool_call_id: str | None) -> str:
    return tool_call_id if tool_call_id else f"tool:{tool}"
