"""Questions as AAEP events (Chapter 6): confirmations and clarifications with their
reply tokens, the session awaiting input; and a call the user or a hook denied.
"""

from __future__ import annotations

from typing import Any, get_args

from announcer.command_analysis import higher_risk, scan_text
from announcer.formats.builder_fields import (
    DEFAULT_CONFIRMATION_TIMEOUT_S,
    MAX_SUMMARY,
    Event,
    digest,
    summaries,
)
from announcer.formats.builder_state import SessionState
from announcer.formats.builder_tools import BuilderTools
from announcer.formats.speakable import clip
from announcer.protocol.events import Decision


class BuilderQuestions(BuilderTools):
    """Confirmations, clarifications and denied calls."""

    def confirmation(
        self,
        sess: SessionState,
        now: float,
        *,
        token_seed: str,
        action: str,
        consequence: str,
        normal: str,
        terse: str | None = None,
        detailed: str | None = None,
        risk_level: str = "medium",
        irreversible: bool = False,
        timeout_seconds: int = DEFAULT_CONFIRMATION_TIMEOUT_S,
        extra_context: dict[str, Any] | None = None,
        at: float | None = None,
    ) -> Event:
        """§4.4.1: always critical; the default decision is always reject, never allow.

        A dangerous command named in the action (``rm -rf build/``) raises the risk
        whatever the caller said (announcer.command_analysis, issue 22)."""
        found = scan_text(action)
        if found is not None:
            risk_level = higher_risk(risk_level, found.risk)
            irreversible = irreversible or found.irreversible
        fields: dict[str, Any] = {
            "action": clip(action, MAX_SUMMARY),
            "consequence": clip(consequence, MAX_SUMMARY),
            **self._reply_fields(sess, token_seed, timeout_seconds),
            "default_decision": "reject",
            "risk_level": risk_level,
            "irreversible": irreversible,
            "allowed_replies": list(get_args(Decision)),
        }
        fields.update(summaries(normal, terse, detailed))
        if extra_context:
            fields["extra_context"] = extra_context
        event = self._emit(sess, "awaiting.confirmation", now, fields, urgency="critical", at=at)
        self._awaiting_input(sess, event)
        return event

    def _reply_fields(
        self, sess: SessionState, token_seed: str, timeout_seconds: int
    ) -> dict[str, Any]:
        """The reply token (stable for one prompt of one session) and a bounded timeout."""
        return {
            "reply_token": "rpl_" + digest(self.salt, sess.session_id, token_seed),
            "timeout_seconds": max(1, min(int(timeout_seconds), 86_400)),
        }

    def clarification(
        self,
        sess: SessionState,
        now: float,
        *,
        token_seed: str,
        question: str,
        normal: str | None = None,
        terse: str | None = None,
        choices: list[tuple[str, str]] | None = None,
        timeout_seconds: int = DEFAULT_CONFIRMATION_TIMEOUT_S,
        at: float | None = None,
    ) -> Event:
        fields: dict[str, Any] = {
            "question": clip(question, MAX_SUMMARY),
            **self._reply_fields(sess, token_seed, timeout_seconds),
        }
        fields.update(summaries(normal or question, terse))
        unique = list(dict.fromkeys(choices or []))
        if len(unique) >= 2:
            fields["choices"] = [
                {"value": clip(v, 256), "label": clip(label, 1024)} for v, label in unique[:32]
            ]
            fields["accepted_response_kinds"] = ["multiple_choice", "freetext"]
        else:
            fields["accepted_response_kinds"] = ["freetext"]
        event = self._emit(sess, "awaiting.clarification", now, fields, urgency="critical", at=at)
        self._awaiting_input(sess, event)
        return event

    @staticmethod
    def _awaiting_input(sess: SessionState, event: Event) -> None:
        """Appendix A.4: a question puts the agent in ``awaiting_input`` (§4.2.1 implicit state).

        The next state change then starts from it, which is what tells a subscriber
        the question was resolved or withdrawn (§6.8 reads ``from_state``).
        """
        sess.state = "awaiting_input"
        event_id = event.get("event_id")
        sess.question_event_id = event_id if isinstance(event_id, str) else None

    def tool_denied(
        self,
        sess: SessionState,
        now: float,
        native_call_id: str | None,
        tool: str | None,
        *,
        error_message: str,
        reason: str | None = None,
        by: str | None = None,
        at: float | None = None,
    ) -> None:
        """A requested call the user or a policy denied: it ends the tool pair as an error.

        The sentence gives the ``reason`` or who denied it, like ``denied_before_request``.
        """
        name = self.spoken_tool(tool) if tool else self._t("the tool")
        if reason:
            normal = self._t("Denied: {reason}.").format(reason=reason)
            detailed = self._t("{tool} was denied: {reason}.").format(tool=name, reason=reason)
        elif by:
            normal = self._t("Denied by {who}.").format(who=by)
            detailed = self._t("{tool} was denied by {who}.").format(tool=name, who=by)
        else:
            normal = self._t("Denied.")
            detailed = self._t("{tool} was denied.").format(tool=name)
        self.tool_completed(
            sess,
            now,
            native_call_id,
            "error",
            tool_name=tool,
            normal=normal,
            detailed=detailed,
            terse=self._t("Denied."),
            error_message=error_message,
            at=at,
        )

    def denied_before_request(
        self,
        sess: SessionState,
        now: float,
        tool: str | None,
        *,
        reason: str | None = None,
        by: str | None = None,
        at: float | None = None,
    ) -> None:
        """A denial of a call never requested here: it never ran, so no tool pair is opened.

        The sentence gives the ``reason`` ("was denied: not allowed.") or who denied it
        ("was denied by policy.").
        """
        name = self.spoken_tool(tool) if tool else self._t("a tool")
        if reason:
            said = self._t("{tool} was denied: {reason}.").format(tool=name, reason=reason)
        elif by:
            said = self._t("{tool} was denied by {who}.").format(tool=name, who=by)
        else:
            said = self._t("{tool} was denied.").format(tool=name)
        self.progress(
            sess,
            now,
            description=self._t("{tool} denied").format(tool=name),
            normal=said,
            terse=self._t("Denied."),
            urgency="normal",
            at=at,
        )
