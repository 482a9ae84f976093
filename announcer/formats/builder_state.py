"""What an event builder keeps per input stream, and the envelope every event gets.

Native session ids map to ``sess_`` ids (the oldest ended sessions forgotten past
``MAX_SESSIONS``); each session numbers its events from 0 (§3 ``sequence_number``: 0 on
``agent.session.started``, then +1), open tool calls are joined by their native id, and
streamed outputs keep their character position.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from announcer.formats.builder_fields import (
    AAEP_CONTEXT,
    MAX_SESSIONS,
    Event,
    digest,
    iso_timestamp,
    spoken_tool,
)
from announcer.i18n.translate import SOURCE_LANGUAGE, translator


@dataclass(slots=True)
class OpenTool:
    tool: str
    call_id: str
    started: float
    label: str | None = None  # the spoken argument, to tell parallel calls apart
    overlapped: bool = False  # another call of the same tool ran at the same time


@dataclass(slots=True)
class OpenOutput:
    output_id: str
    position: int = 0


@dataclass(slots=True)
class SessionState:
    native_id: str
    session_id: str
    next_seq: int = 0
    state: str = "idle"
    started: bool = False
    ended: bool = False
    started_at: float | None = None
    tool_count: int = 0
    open_tools: dict[str, OpenTool] = field(default_factory=dict)
    outputs: dict[str, OpenOutput] = field(default_factory=dict)
    # the question that put the session in awaiting_input: the change that leaves it
    # names it (correlation_id), the evidence a subscriber voids it on (§6.8)
    question_event_id: str | None = None
    # the call (its tool_call_id) the session's last event was about, None if another kind
    # of news: a call's success right after its own start says nothing new (issue 30 item 8)
    last_call: str | None = None
    # (session id, its hash state) for event ids: one hash per event, most of it done once
    id_hash: tuple[str, Any] | None = field(default=None, repr=False, compare=False)


class BuilderState:
    """One stream's sessions and the Chapter 3 envelope; the rooms above add the event types."""

    def __init__(
        self, agent_id: str, agent_name: str, *, salt: str = "", language: str = SOURCE_LANGUAGE
    ) -> None:
        self.language = language
        self.agent_id = agent_id
        self.agent_name = agent_name
        self.agent_version: str | None = None
        self.model: str | None = None
        self.salt = salt
        self.sessions: dict[str, SessionState] = {}
        self.current: SessionState | None = None
        self._anonymous = 0
        self.events: list[Event] = []

    def session(self, native_id: str | None) -> SessionState:
        """The session for a native id; None means "the one we are in" (or a new one)."""
        if native_id is None:
            if self.current is not None and not self.current.ended:
                return self.current
            self._anonymous += 1
            native_id = f"anonymous-{self._anonymous}"
        state = self.sessions.get(native_id)
        if state is None or (state.ended and native_id.startswith("anonymous-")):
            state = SessionState(native_id, "sess_" + digest(self.salt, self.agent_id, native_id))
            self.sessions[native_id] = state
            self._forget_old_sessions(keep=state)
        self.current = state
        return state

    def _forget_old_sessions(self, keep: SessionState) -> None:
        """A long-running bridge sees many sessions: keep memory bounded, ended ones go first."""
        excess = len(self.sessions) - MAX_SESSIONS
        if excess <= 0:
            return
        ended = [key for key, state in self.sessions.items() if state.ended]
        ended_keys = set(ended)
        candidates = ended + [key for key in self.sessions if key not in ended_keys]
        for key in [k for k in candidates if self.sessions[k] is not keep][:excess]:
            del self.sessions[key]

    def rename_current(self, native_id: str) -> SessionState:
        """An anonymous session learned its real id (e.g. a later line carries session_id)."""
        cur = self.current
        if cur is not None and cur.native_id.startswith("anonymous-") and not cur.ended:
            return cur  # keep the ids already spoken consistent within this stream
        return self.session(native_id)

    def _t(self, message: str) -> str:
        """One of our sentences in the stream's language (gettext)."""
        return translator(self.language).gettext(message)

    def spoken_tool(self, name: str) -> str:
        return spoken_tool(name, self.language)

    def take(self) -> list[Event]:
        out, self.events = self.events, []
        return out

    def _emit(
        self,
        sess: SessionState,
        type_: str,
        now: float,
        fields: dict[str, Any],
        *,
        urgency: str = "normal",
        at: float | None = None,
    ) -> Event:
        if not sess.started and type_ != "session.started":
            # the stream began mid-session: open it quietly so sequence numbers start at 0
            self.session_started(sess, now, at=at, urgency="background")
        if sess.ended and type_ != "session.started":
            # a line after the end (e.g. Claude Code's result, then more output): nothing
            # may follow a terminal event (§4.5.1), so this is a new session of the same agent
            self.session_started(sess, now, at=at, urgency="background")
        producer: dict[str, str] = {"agent_id": self.agent_id, "agent_name": self.agent_name}
        if self.agent_version:
            producer["agent_version"] = self.agent_version
        if self.model:
            producer["model"] = self.model
        event: Event = {
            "@context": AAEP_CONTEXT,
            "type": "aaep:agent." + type_,
            "event_id": self._event_id(sess),
            "session_id": sess.session_id,
            "sequence_number": sess.next_seq,
            "timestamp": iso_timestamp(at if at is not None else now),
            "producer": producer,
            "urgency": urgency,
        }
        if type_ != "output.streaming":
            # our summaries are in the user's language (Chapter 11: say which language text
            # is in); streamed output is the agent's own text, in a language we do not know
            event["localization_hints"] = {"primary_language": self.language}
        event.update(fields)
        call = fields.get("tool_call_id")
        sess.last_call = call if isinstance(call, str) else None
        sess.next_seq += 1
        self.events.append(event)
        return event

    def right_after_its_start(self, sess: SessionState, native_call_id: str) -> bool:
        """Whether the session's last news was the start of this open call (said as it
        started, or by its question): its success then says nothing the line before it did
        not (issue 30 item 8; issue 31 item 11, Gemini's command said again after the
        user's accept)."""
        opened = sess.open_tools.get(native_call_id)
        return opened is not None and sess.last_call == opened.call_id

    def _event_id(self, sess: SessionState) -> str:
        """``evt_`` + digest(salt, session id, sequence number), the session's part hashed once."""
        cached = sess.id_hash
        if cached is None or cached[0] != sess.session_id:
            prefix = f"{self.salt}\x1f{sess.session_id}\x1f".encode()
            cached = sess.id_hash = (sess.session_id, hashlib.sha256(prefix))
        hashed = cached[1].copy()
        hashed.update(str(sess.next_seq).encode())
        return "evt_" + hashed.hexdigest()[:32]

    def session_started(
        self,
        sess: SessionState,
        now: float,
        *,
        normal: str | None = None,
        terse: str | None = None,
        detailed: str | None = None,
        at: float | None = None,
        extra: dict[str, Any] | None = None,
        urgency: str = "normal",
    ) -> None:
        """A session's first event (:class:`announcer.formats.builder.AaepBuilder`)."""
        raise NotImplementedError
