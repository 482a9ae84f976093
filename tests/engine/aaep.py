"""Real AAEP frames for engine tests: full envelopes, as a producer sends them."""

from __future__ import annotations

import itertools
import json
from datetime import UTC, datetime, timedelta
from typing import Any

CONTEXT = "https://aaep-protocol.org/context/v1"
BASE_TIME = datetime(2026, 5, 24, 14, 22, 11, tzinfo=UTC)
_ids = itertools.count(1)

PRODUCER = {"agent_id": "harbor-bank-assistant", "agent_name": "Harbor Bank Assistant"}


def frame(
    short_type: str,
    *,
    session: str = "sess_test1",
    urgency: str = "normal",
    at: float = 0.0,
    producer: dict[str, str] | None = None,
    sequence: int | None = None,
    event_id: str | None = None,
    language: str | None = None,
    **payload: Any,
) -> str:
    event: dict[str, Any] = {
        "@context": CONTEXT,
        "type": "aaep:" + short_type,
        "event_id": event_id or f"evt_t{next(_ids):06d}",
        "session_id": session,
        "timestamp": (BASE_TIME + timedelta(seconds=at))
        .isoformat(timespec="milliseconds")
        .replace("+00:00", "Z"),
        "producer": producer or PRODUCER,
        "urgency": urgency,
    }
    if sequence is not None:
        event["sequence_number"] = sequence
    if language is not None:
        event["localization_hints"] = {
            "primary_language": "en",
            "available_languages": ["en", language],
        }
    event.update(payload)
    return json.dumps(event)


def started(**kw: Any) -> str:
    kw.setdefault("summary_normal", "The assistant is moving money for you.")
    return frame("agent.session.started", **kw)


def confirmation(token: str = "rpl_abc123", **kw: Any) -> str:
    payload: dict[str, Any] = {
        "action": "Transfer $500.00 from checking to savings.",
        "consequence": "The money moves at once.",
        "reply_token": token,
        "timeout_seconds": 300,
        "default_decision": "reject",
        "risk_level": "high",
        "reversibility": "irreversible",
    }
    payload.update(kw)
    payload.setdefault("urgency", "critical")
    return frame("agent.awaiting.confirmation", **payload)


def clarification(token: str = "rpl_q1", **kw: Any) -> str:
    payload: dict[str, Any] = {
        "question": "Which account?",
        "reply_token": token,
        "timeout_seconds": 120,
        "accepted_response_kinds": ["multiple_choice"],
        "choices": [{"value": "sav", "label": "Savings"}, {"value": "chk", "label": "Checking"}],
    }
    payload.update(kw)
    payload.setdefault("urgency", "critical")
    # None means "leave the field out".
    payload = {key: value for key, value in payload.items() if value is not None}
    return frame("agent.awaiting.clarification", **payload)


def chunk(text: str, position: int, complete: bool = False, hint: str = "none", **kw: Any) -> str:
    kw.setdefault("output_id", "out_1")
    return frame(
        "agent.output.streaming",
        chunk=text,
        position=position,
        complete=complete,
        coalesce_hint=hint,
        **kw,
    )
