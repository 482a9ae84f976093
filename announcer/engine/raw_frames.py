"""What can still be read of a frame that failed validation (§10.1.3)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Final, get_args

from announcer.engine.prompts import PendingPrompt
from announcer.engine.text_hygiene import clean_for_speech
from announcer.protocol.decode import DecodeResult
from announcer.protocol.events import (
    AwaitingConfirmation,
    Producer,
    Reversibility,
    RiskLevel,
)

_EVENT_ID: Final = re.compile(r"evt_[A-Za-z0-9]{1,64}")
# A malformed question whose timeout cannot be read is kept open this long (§6.4.2's
# longest recommended timeout is 600 s; the producer's own clock decides anyway).
MALFORMED_TIMEOUT_SECONDS: Final = 300
_RISKS: Final = get_args(RiskLevel)
_REVERSIBILITY: Final = get_args(Reversibility)


def _malformed_prompt(
    raw: Mapping[str, Any],
    token: str,
    result: DecodeResult,
    source_id: str,
    now: float,
    wall_now: datetime,
) -> PendingPrompt:
    """What could be read of an invalid confirmation, as a question only rejectable.

    The event is built without validation from the fields that have the right
    shape; everything else gets a plain stand-in. ``allowed_replies`` is reject only.
    """

    def text(name: str) -> str:
        value = raw.get(name)
        return value if isinstance(value, str) else ""

    timeout = raw.get("timeout_seconds")
    if not isinstance(timeout, int) or isinstance(timeout, bool) or not 0 < timeout <= 86_400:
        timeout = MALFORMED_TIMEOUT_SECONDS
    default = raw.get("default_decision")
    producer = raw.get("producer")
    agent_id = ""
    agent_name: str | None = None
    if isinstance(producer, Mapping):
        if isinstance(producer.get("agent_id"), str):
            agent_id = producer["agent_id"]
        if isinstance(producer.get("agent_name"), str):
            agent_name = producer["agent_name"]
    event_id = text("event_id")
    if _EVENT_ID.fullmatch(event_id) is None:
        event_id = f"evt_malformed{token[4:]}"
    session_id = text("session_id")
    event = AwaitingConfirmation.model_construct(
        context=text("@context") or "https://aaep-protocol.org/context/v1",
        type=text("type"),
        event_id=event_id,
        session_id=session_id,
        timestamp=wall_now,
        producer=Producer.model_construct(agent_id=agent_id or "unknown", agent_name=agent_name),
        urgency="critical",
        action=text("action"),
        consequence=text("consequence"),
        reply_token=token,
        timeout_seconds=timeout,
        # anything but a readable "accept" is the safe default, "reject"
        default_decision="accept" if default == "accept" else "reject",
        allowed_replies=["reject"],
        risk_level=raw.get("risk_level") if raw.get("risk_level") in _RISKS else None,
        irreversible=raw.get("irreversible") if isinstance(raw.get("irreversible"), bool) else None,
        reversibility=(
            raw.get("reversibility") if raw.get("reversibility") in _REVERSIBILITY else None
        ),
    )
    problems = tuple(
        f"{d.code} ({d.section})" for d in result.diagnostics if d.severity == "error"
    ) or ("invalid",)
    return PendingPrompt(
        kind="confirmation",
        reply_token=token,
        session_id=session_id,
        event_id=event_id,
        source_id=source_id,
        producer_id=agent_id or "unknown",
        producer_name=agent_name,
        received_at=now,
        timeout_seconds=float(timeout),
        event=event,
        problems=problems,
    )


def _raw_producer_name(raw: Mapping[str, Any], language: str) -> str:
    """The producer's name from a frame that failed validation, sanitised for speech."""
    producer = raw.get("producer")
    if isinstance(producer, Mapping):
        for key in ("agent_name", "agent_id"):
            value = producer.get(key)
            if isinstance(value, str) and value.strip():
                return clean_for_speech(value, language, max_chars=60)
    return ""


def _raw_words(raw: Mapping[str, Any], fields: tuple[str, ...]) -> str:
    """The first of ``fields`` that holds text, for speech (bounded, sanitised later)."""
    for name in fields:
        value = raw.get(name)
        if isinstance(value, str) and value.strip():
            return value.strip()[:600]
    return ""


#: how a sentence may end, in the scripts the catalogs cover
_SENTENCE_ENDS: Final = (".", "!", "?", "…", ":", ";", "。", "！", "？", "؟", "।", "۔")


def _as_sentence(text: str) -> str:
    """``text`` ending as a sentence, so what follows it is not read as its continuation
    (issue 29, item 15: "...for good High risk.")."""
    text = text.rstrip()
    if text and not text.endswith(_SENTENCE_ENDS):
        return text + "."
    return text


def _raw_choice_labels(raw: Mapping[str, Any]) -> str:
    choices = raw.get("choices")
    if not isinstance(choices, list):
        return ""
    labels = [
        choice["label"].strip()[:100]
        for choice in choices[:12]
        if isinstance(choice, Mapping) and isinstance(choice.get("label"), str)
    ]
    return "; ".join(label for label in labels if label)
