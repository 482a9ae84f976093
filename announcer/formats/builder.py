"""Builds valid AAEP events (Chapter 3 envelope, Chapter 4 core types) for the adapters.

Per-stream state lives here: native session ids map to ``sess_`` ids, each
session numbers its events from 0 (§3 ``sequence_number``: 0 on
``agent.session.started``, then +1), open tool calls are joined by their
native id, and streamed outputs keep their character position. Ids are
derived from the native ids with a hash so that replaying the same stream
gives the same event ids (the engine's dedup, §8.2, relies on stable ids).

The builder's rooms, each building on those after it (an import-linter contract keeps
the order): this module (:class:`AaepBuilder`: sessions, states, outputs, the end of a
stream), :mod:`~announcer.formats.builder_questions` (confirmations, clarifications,
denied calls), :mod:`~announcer.formats.builder_tools` (tool calls, progress),
:mod:`~announcer.formats.builder_state` (per-stream state, the envelope) and
:mod:`~announcer.formats.builder_fields` (bounds, ids, timestamps, announcer's marks).
"""

from __future__ import annotations

from typing import Any

from announcer.formats.builder_fields import digest, sentence, split_chunks, summaries
from announcer.formats.builder_questions import BuilderQuestions
from announcer.formats.builder_state import OpenOutput, SessionState


class AaepBuilder(BuilderQuestions):
    """Makes AAEP events for one input stream of one agent.

    ``language`` is the catalog language of our own sentences (Chapter 11): they are
    generated through gettext in it, and events say so in ``localization_hints``.
    """

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
        if sess.started and not sess.ended:
            return
        if sess.ended:  # a new session under the same native id (resume)
            sess.next_seq = 0
            sess.session_id = "sess_" + digest(self.salt, self.agent_id, sess.native_id, now)
        sess.started, sess.ended, sess.state = True, False, "idle"
        sess.started_at = at if at is not None else now
        fields = summaries(
            normal or self._t("{agent} session started.").format(agent=self.agent_name),
            terse or self._t("{agent} started.").format(agent=self.agent_name),
            detailed,
        )
        fields.update(extra or {})
        self._emit(sess, "session.started", now, fields, urgency=urgency, at=at)

    def session_completed(
        self,
        sess: SessionState,
        now: float,
        *,
        normal: str,
        terse: str | None = None,
        detailed: str | None = None,
        duration_ms: int | None = None,
        at: float | None = None,
    ) -> None:
        fields: dict[str, Any] = summaries(normal, terse, detailed)
        fields["tool_invocations_count"] = sess.tool_count
        if duration_ms is not None and 0 <= duration_ms <= 86_400_000:
            fields["duration_ms"] = duration_ms
        self._end_session(sess, "session.completed", now, fields, at=at)

    def session_errored(
        self,
        sess: SessionState,
        now: float,
        *,
        normal: str,
        terse: str | None = None,
        detailed: str | None = None,
        category: str = "unknown",
        recoverable: bool | None = None,
        at: float | None = None,
    ) -> None:
        fields: dict[str, Any] = summaries(normal, terse, detailed)
        fields["error_category"] = category
        if recoverable is not None:
            fields["recoverable"] = recoverable
        # §4.1.3: errored sessions are always critical
        self._end_session(sess, "session.errored", now, fields, urgency="critical", at=at)

    def session_cancelled(
        self, sess: SessionState, now: float, *, normal: str, by: str, at: float | None = None
    ) -> None:
        fields: dict[str, Any] = summaries(normal, self._t("Cancelled."))
        fields["cancelled_by"] = by
        self._end_session(sess, "session.cancelled", now, fields, at=at)

    def _end_session(
        self,
        sess: SessionState,
        type_: str,
        now: float,
        fields: dict[str, Any],
        *,
        urgency: str = "normal",
        at: float | None = None,
    ) -> None:
        """§4.5.1: what is open is closed before the terminal event, and nothing follows it."""
        self._close_open(sess, now, at)
        self._emit(sess, type_, now, fields, urgency=urgency, at=at)
        sess.ended = True

    def state_changed(
        self,
        sess: SessionState,
        now: float,
        to_state: str,
        *,
        normal: str | None = None,
        terse: str | None = None,
        detailed: str | None = None,
        urgency: str = "background",
        at: float | None = None,
        force: bool = False,
    ) -> None:
        """§4.2.1: from_state chains from the previous change's to_state; repeats are skipped.

        Explicit changes move ``sess.state``, and so does a question (``awaiting_input``,
        Appendix A.4), so the change that resolves it starts from ``awaiting_input``.
        """
        if sess.started and sess.state == to_state and not force and not detailed:
            return
        if not sess.started:
            self.session_started(sess, now, at=at)
        fields: dict[str, Any] = {"from_state": sess.state, "to_state": to_state}
        if sess.state == "awaiting_input" and to_state != "awaiting_input":
            if sess.question_event_id is not None:
                fields["correlation_id"] = sess.question_event_id
            sess.question_event_id = None
        if normal:
            fields.update(summaries(normal, terse, detailed))
        sess.state = to_state
        self._emit(sess, "state.changed", now, fields, urgency=urgency, at=at)

    def thinking(
        self,
        sess: SessionState,
        now: float,
        thought: str | None,
        *,
        detail: str | None = None,
        at: float | None = None,
    ) -> None:
        """A model's thought: each new one is spoken, a bare 'thinking' only on a change.

        ``thought`` is its headline (normal verbosity); ``detail`` the rest (detailed).
        """
        normal = (
            self._t("Thinking: {text}").format(text=sentence(thought))
            if thought
            else self._t("Thinking.")
        )
        self.state_changed(
            sess,
            now,
            "thinking",
            normal=normal,
            terse=self._t("Thinking."),
            detailed=f"{normal} {sentence(detail)}" if thought and detail else None,
            at=at,
            force=bool(thought),
        )

    def output(
        self,
        sess: SessionState,
        now: float,
        key: str,
        text: str,
        *,
        complete: bool,
        at: float | None = None,
    ) -> None:
        """§4.3.3 streaming output: chunks of one output_id with a running position."""
        opened = sess.outputs.get(key)
        if opened is None:
            if not text and complete:
                return  # nothing was said and nothing is left to say
            opened = OpenOutput("out_" + digest(self.salt, sess.session_id, key, length=24))
            sess.outputs[key] = opened
        pieces = split_chunks(text) or [""]
        for index, piece in enumerate(pieces):
            last = index == len(pieces) - 1
            fields: dict[str, Any] = {
                "chunk": piece,
                "position": opened.position,
                "complete": complete and last,
                "output_id": opened.output_id,
            }
            if complete and last:
                fields["coalesce_hint"] = "completion"
            opened.position += len(piece)
            self._emit(sess, "output.streaming", now, fields, at=at)
        if complete:
            del sess.outputs[key]

    def _close_open(self, sess: SessionState, now: float, at: float | None) -> None:
        """§4.3.2: every invoked tool gets its completion; every output its complete chunk."""
        for key in list(sess.outputs):
            self.output(sess, now, key, "", complete=True, at=at)
        for key in list(sess.open_tools):
            self.tool_completed(
                sess,
                now,
                key,
                "timeout",
                normal=self._t("It never reported back before the stream ended."),
                error_message=self._t("the stream ended before the tool reported a result"),
                at=at,
            )

    def close_all(self, now: float) -> None:
        """At end of input: finish what is open, but do not invent an ending for the session."""
        for sess in self.sessions.values():
            if sess.started and not sess.ended:
                self._close_open(sess, now, None)
