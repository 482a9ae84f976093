"""Rules that only a sequence of events can break (§3.4.1, §4.5, §6).

:class:`StreamChecker` is fed valid events in arrival order and answers with the
diagnostics each one causes. It keeps a bounded amount of state per session (oldest
sessions are forgotten first) so a hostile producer cannot grow it without limit.
A subscriber may join a session midway, so "X before Y" rules whose first half we may
have missed are warnings; rules about what we did see (two completions of the same
output, events after the terminal event) are errors.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

from announcer.protocol.diagnostics import Diagnostic
from announcer.protocol.events import (
    TERMINAL_TYPES,
    AaepEvent,
    AwaitingClarification,
    AwaitingConfirmation,
    OutputStreaming,
    SessionStarted,
    StateChanged,
    ToolCompleted,
    ToolInvoked,
)

MAX_SESSIONS = 256
MAX_TRACKED_PER_SESSION = 1024


@dataclass(slots=True)
class _Session:
    started: bool = False
    terminal: str | None = None
    last_sequence: int | None = None
    uses_sequence: bool | None = None
    last_state: str | None = None
    completed_outputs: set[str | None] = field(default_factory=set)
    open_tools: dict[str, int] = field(default_factory=dict)
    confirmed_since_tool: bool = False
    event_ids: set[str] = field(default_factory=set)
    next_positions: dict[str | None, int] = field(default_factory=dict)
    tool_call_ids: set[str] = field(default_factory=set)
    reply_tokens: dict[str, str] = field(default_factory=dict)
    # A question was asked since the last state change: the implicit state is
    # awaiting_input (Appendix A.4), which the next from_state may name (§4.2.1).
    asked_since_state: bool = False


class StreamChecker:
    """Feed events in order; each call returns the stream-level diagnostics it causes."""

    def __init__(self, max_sessions: int = MAX_SESSIONS) -> None:
        self._sessions: OrderedDict[str, _Session] = OrderedDict()
        self._max_sessions = max_sessions

    def _session(self, session_id: str) -> _Session:
        state = self._sessions.get(session_id)
        if state is None:
            state = _Session()
            self._sessions[session_id] = state
            while len(self._sessions) > self._max_sessions:
                self._sessions.popitem(last=False)
        else:
            self._sessions.move_to_end(session_id)
        return state

    def forget(self, session_id: str) -> None:
        self._sessions.pop(session_id, None)

    def feed(self, event: AaepEvent) -> list[Diagnostic]:
        state = self._session(event.session_id)
        found: list[Diagnostic] = []
        short = event.short_type

        if event.event_id in state.event_ids:
            found.append(
                Diagnostic(
                    "event_id.duplicate",
                    "/event_id",
                    "§3.2.3",
                    "repeats an event already received in this session (duplicate delivery?)",
                    "warning",
                )
            )
        elif len(state.event_ids) < MAX_TRACKED_PER_SESSION:
            state.event_ids.add(event.event_id)

        found.extend(self._sequence(state, event))

        if state.terminal is not None:
            found.append(
                Diagnostic(
                    "session.after_terminal",
                    "/type",
                    "§4.5.1",
                    f"arrived after the session ended with {state.terminal}",
                )
            )
        if isinstance(event, SessionStarted):
            if state.started:
                found.append(
                    Diagnostic(
                        "session.started_twice",
                        "/type",
                        "§4.1.1",
                        "is the second agent.session.started of this session",
                    )
                )
            state.started = True
        elif short in TERMINAL_TYPES and state.terminal is None:
            state.terminal = short

        if isinstance(event, OutputStreaming):
            found.extend(self._output(state, event))
        elif isinstance(event, StateChanged):
            found.extend(self._state(state, event))
        elif isinstance(event, AwaitingConfirmation):
            state.asked_since_state = True
            state.confirmed_since_tool = True
            found.extend(self._reply_token(state, event))
        elif isinstance(event, AwaitingClarification):
            state.asked_since_state = True
            found.extend(self._reply_token(state, event))
        elif isinstance(event, ToolInvoked):
            found.extend(self._tool_invoked(state, event))
        elif isinstance(event, ToolCompleted):
            found.extend(self._tool_completed(state, event))
        return found

    @staticmethod
    def _sequence(state: _Session, event: AaepEvent) -> list[Diagnostic]:
        number = event.sequence_number
        uses = number is not None
        found: list[Diagnostic] = []
        if state.uses_sequence is not None and state.uses_sequence != uses:
            found.append(
                Diagnostic(
                    "sequence_number.mixed",
                    "/sequence_number",
                    "§3.4.1",
                    "must be on every event of a session or on none",
                )
            )
        state.uses_sequence = uses
        if number is not None:
            previous = state.last_sequence
            if previous is not None and number != previous + 1:
                what = "went backwards" if number <= previous else "skipped"
                found.append(
                    Diagnostic(
                        "sequence_number.gap",
                        "/sequence_number",
                        "§3.4.1",
                        f"{what}: expected {previous + 1}, got {number}; events may be lost",
                        "warning",
                    )
                )
            state.last_sequence = number
        return found

    @staticmethod
    def _reply_token(
        state: _Session, event: AwaitingConfirmation | AwaitingClarification
    ) -> list[Diagnostic]:
        """§6.2.2: a token is never reused. A reused one makes a reply ambiguous: the
        user's "accept" could authorise another action, so the later prompt is refused."""
        first = state.reply_tokens.get(event.reply_token)
        if first is None:
            if len(state.reply_tokens) < MAX_TRACKED_PER_SESSION:
                state.reply_tokens[event.reply_token] = event.event_id
            return []
        if first == event.event_id:
            return []  # the same prompt delivered twice
        return [
            Diagnostic(
                "reply_token.reused",
                "/reply_token",
                "§6.2.2",
                "repeats the reply token of an earlier prompt; a reply would be ambiguous",
            )
        ]

    @staticmethod
    def _output(state: _Session, event: OutputStreaming) -> list[Diagnostic]:
        found: list[Diagnostic] = []
        # §4.3.3: position is the character offset within the output; a jump means
        # chunks were lost, a step back means overlap or replay.
        expected = state.next_positions.get(event.output_id)
        if expected is not None and event.position != expected:
            what = "skips ahead" if event.position > expected else "goes back"
            found.append(
                Diagnostic(
                    "position.discontinuous",
                    "/position",
                    "§4.3.3",
                    f"{what}: expected {expected}, got {event.position}",
                    "warning",
                )
            )
        if len(state.next_positions) < MAX_TRACKED_PER_SESSION:
            state.next_positions[event.output_id] = event.position + len(event.chunk)
        # §4.5.4: exactly one complete=true per output_id (or per session without one).
        if event.output_id in state.completed_outputs:
            return [
                Diagnostic(
                    "output.after_completion",
                    "/complete" if event.complete else "/output_id",
                    "§4.5.4",
                    "continues an output that was already completed"
                    if not event.complete
                    else "completes an output a second time",
                )
            ]
        if event.complete and len(state.completed_outputs) < MAX_TRACKED_PER_SESSION:
            state.completed_outputs.add(event.output_id)
        return found

    @staticmethod
    def _state(state: _Session, event: StateChanged) -> list[Diagnostic]:
        expected = state.last_state
        state.last_state = event.to_state
        implied = state.asked_since_state and event.from_state == "awaiting_input"
        state.asked_since_state = False
        if implied:
            return []  # §4.2.1: consistent with the state a question implies (A.4)
        if expected is None and state.started and event.from_state != "idle":
            return [
                Diagnostic(
                    "from_state.first",
                    "/from_state",
                    "§4.2.1",
                    'should be "idle" on the first state change of a session',
                    "warning",
                )
            ]
        if expected is not None and event.from_state != expected:
            return [
                Diagnostic(
                    "from_state.chain",
                    "/from_state",
                    "§4.2.1",
                    "does not match the state the previous change entered",
                    "warning",
                )
            ]
        return []

    @staticmethod
    def _tool_key(event: ToolInvoked | ToolCompleted) -> str:
        return event.tool_call_id or f"tool:{event.tool}"

    def _tool_invoked(self, state: _Session, event: ToolInvoked) -> list[Diagnostic]:
        found: list[Diagnostic] = []
        if event.irreversible and not state.confirmed_since_tool:
            found.append(
                Diagnostic(
                    "irreversible.unconfirmed",
                    "/irreversible",
                    "§4.3.1",
                    "an irreversible tool was invoked with no confirmation asked before it",
                    "warning",
                )
            )
        state.confirmed_since_tool = False
        if event.tool_call_id is not None:
            if event.tool_call_id in state.tool_call_ids:
                found.append(
                    Diagnostic(
                        "tool_call_id.duplicate",
                        "/tool_call_id",
                        "§4.3.1",
                        "repeats the tool_call_id of an earlier invocation in this session",
                        "warning",
                    )
                )
            elif len(state.tool_call_ids) < MAX_TRACKED_PER_SESSION:
                state.tool_call_ids.add(event.tool_call_id)
        if len(state.open_tools) < MAX_TRACKED_PER_SESSION:
            key = self._tool_key(event)
            state.open_tools[key] = state.open_tools.get(key, 0) + 1
        return found

    def _tool_completed(self, state: _Session, event: ToolCompleted) -> list[Diagnostic]:
        key = self._tool_key(event)
        count = state.open_tools.get(key, 0)
        if count == 0:
            return [
                Diagnostic(
                    "tool.unpaired",
                    "/tool_call_id" if event.tool_call_id else "/tool",
                    "§4.5.2",
                    "completes a tool call that was not announced as invoked",
                    "warning",
                )
            ]
        if count == 1:
            del state.open_tools[key]
        else:
            state.open_tools[key] = count - 1
        return []
