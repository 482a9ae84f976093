"""What one event does to its session: lifecycle, agent state, tools, outputs, questions.

A question is voided when the producer cancels it or the session ends (§6.8), and one
that arrives for an ended session is void at once (§4.5.1).
"""

from __future__ import annotations

from announcer.engine.tracker_records import (
    _PROMPTS,
    _TERMINAL,
    AWAITING_INPUT,
    CLOSED_OUTPUTS_LIMIT,
    OPEN_TOOLS_LIMIT,
    PROCEEDING_STATES,
    WITHDRAWING_STATES,
    Admission,
    SessionState,
    TrackerNote,
    VoidReason,
    _named_prompts,
    _tool_key,
)
from announcer.engine.tracker_store import TrackerStore
from announcer.protocol.events import (
    AaepEvent,
    OutputStreaming,
    SessionCompleted,
    SessionErrored,
    SessionStarted,
    StateChanged,
    ToolCompleted,
    ToolInvoked,
)


class TrackerLifecycle(TrackerStore):
    """Applying an admitted event to its session's state; closing and voiding questions."""

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
            if event.to_state != AWAITING_INPUT and (
                event.from_state == AWAITING_INPUT or event.to_state in WITHDRAWING_STATES
            ):
                # §6.8 names only where the change goes: "returning to thinking or
                # deciding" cancels from any state (a producer that asked while in
                # ``calling_tool`` says ``calling_tool`` -> ``thinking``)
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

    @staticmethod
    def _leave_awaiting_input(
        state: SessionState, event: StateChanged, admission: Admission
    ) -> None:
        """§6.8: a state change away from ``awaiting_input`` (``from_state`` says so), or
        returning to ``thinking``/``deciding`` from any state (§6.8's own words).

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
