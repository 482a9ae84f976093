"""Per-type rules of chapters 4 and 6 that a field-by-field schema cannot say.

Each rule returns diagnostics naming its section. Where the prose is stricter than the
official schema, the prose wins (§3.0, §4.7) and the docstring says so.
"""

from __future__ import annotations

from collections.abc import Callable

from announcer.protocol.diagnostics import Diagnostic
from announcer.protocol.events import (
    AaepEvent,
    AwaitingClarification,
    AwaitingConfirmation,
    HandoffRequested,
    ProgressUpdated,
    SessionErrored,
    SessionStarted,
    ToolCompleted,
)

# Types the prose says MUST be emitted with urgency "critical". The schemas only check
# the value when present; the prose also rejects an absent urgency (default "normal").
CRITICAL_TYPES: dict[type[AaepEvent], str] = {
    SessionErrored: "§4.1.3",
    AwaitingConfirmation: "§4.4.1",
    AwaitingClarification: "§4.4.2",
    HandoffRequested: "§4.4.3",
}


def check_urgency(model: type[AaepEvent], urgency: object) -> list[Diagnostic]:
    """Run on the raw value, so the rule is reported even when other fields are broken."""
    section = CRITICAL_TYPES.get(model)
    if section is None or urgency == "critical":
        return []
    return [
        Diagnostic(
            "urgency.critical_required",
            "/urgency",
            section,
            f'must be "critical" on {model.SHORT_TYPE} events',
        )
    ]


def _confirmation(event: AaepEvent) -> list[Diagnostic]:
    """§6.4.1: irreversible medium- or high-risk actions default to "reject".

    Stricter than the schema, which looks only at ``irreversible``: we also count
    ``reversibility: "irreversible"`` as irreversible, the safe reading.
    """
    assert isinstance(event, AwaitingConfirmation)
    found: list[Diagnostic] = []
    if (
        event.is_irreversible
        and event.risk_level in {"high", "medium"}
        and event.default_decision != "reject"
    ):
        found.append(
            Diagnostic(
                "default_decision.unsafe",
                "/default_decision",
                "§6.4.1",
                f'must be "reject" for an irreversible {event.risk_level}-risk action',
            )
        )
    if event.allowed_replies is not None and not set(event.allowed_replies) & {"accept", "reject"}:
        found.append(
            Diagnostic(
                "allowed_replies.no_core_decision",
                "/allowed_replies",
                "§4.4.1",
                'should include "accept" or "reject"; custom values need an extension',
                "warning",
            )
        )
    return found


def _clarification(event: AaepEvent) -> list[Diagnostic]:
    assert isinstance(event, AwaitingClarification)
    kinds = event.accepted_response_kinds or []
    if "multiple_choice" in kinds and not event.choices:
        return [
            Diagnostic(
                "choices.missing",
                "/choices",
                "§4.4.2",
                'should list the choices when "multiple_choice" answers are accepted',
                "warning",
            )
        ]
    return []


def _progress(event: AaepEvent) -> list[Diagnostic]:
    assert isinstance(event, ProgressUpdated)
    progress = event.progress
    step, total = progress.step, progress.total_steps
    if step is not None and total is not None and step > total:
        return [
            Diagnostic(
                "progress.step.beyond_total",
                "/progress/step",
                "§4.2.2",
                "should not exceed total_steps",
                "warning",
            )
        ]
    return []


def _tool_completed(event: AaepEvent) -> list[Diagnostic]:
    assert isinstance(event, ToolCompleted)
    if event.status != "success" and event.error_message is None:
        return [
            Diagnostic(
                "error_message.missing",
                "/error_message",
                "§4.3.2",
                f'should explain the failure when status is "{event.status}"',
                "warning",
            )
        ]
    return []


def _session_started(event: AaepEvent) -> list[Diagnostic]:
    assert isinstance(event, SessionStarted)
    if event.sequence_number not in (None, 0):
        return [
            Diagnostic(
                "sequence_number.start",
                "/sequence_number",
                "§3.4.1",
                "must be 0 on agent.session.started",
            )
        ]
    return []


_TYPE_RULES: dict[type[AaepEvent], Callable[[AaepEvent], list[Diagnostic]]] = {
    AwaitingConfirmation: _confirmation,
    AwaitingClarification: _clarification,
    ProgressUpdated: _progress,
    ToolCompleted: _tool_completed,
    SessionStarted: _session_started,
}


def check_event(event: AaepEvent) -> list[Diagnostic]:
    """All single-event semantic rules for ``event`` except :func:`check_urgency`."""
    rule = _TYPE_RULES.get(type(event))
    return rule(event) if rule is not None else []
