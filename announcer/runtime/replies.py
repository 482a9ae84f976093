"""The reply book: every open question, where it came from, and whether it was answered.

A reply goes back on the connection the prompt arrived on, once (§6.3.5), with
the ``reply_token`` copied unchanged (§6.2.3). A prompt whose connection was
lost, which the producer cancelled (§6.8), or whose time ran out (§6.4) is
void: answering it sends nothing and the user is told why. Only the user
answers, except the one policy they may configure, ``auto_reject``, which can
never accept anything.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from announcer.engine.prompts import PendingPrompt, UserAnswer


def rfc3339_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(slots=True)
class OpenPrompt:
    prompt: PendingPrompt
    fields: dict[str, Any]
    subscription_id: str | None
    state: str = "open"  # open | answered | void
    void_reason: str = ""


@dataclass(frozen=True, slots=True)
class ReplyDecision:
    """Either a reply message to send, or a sentence saying why nothing is sent."""

    message: dict[str, Any] | None
    refusal: str = ""
    prompt: PendingPrompt | None = None


@dataclass(slots=True)
class ReplyBook:
    prompts: dict[str, OpenPrompt] = field(default_factory=dict)

    def open(
        self,
        raw_event: dict[str, Any],
        *,
        model: object = None,
        source_id: str,
        subscription_id: str | None,
        producer_name: str | None,
        now: float,
    ) -> PendingPrompt | None:
        event_type = str(raw_event.get("type", ""))
        kind = "confirmation" if event_type.endswith("confirmation") else "clarification"
        token = raw_event.get("reply_token")
        if not isinstance(token, str) or not token:
            return None
        if token in self.prompts:
            return None  # the same prompt again (duplicate delivery)
        timeout = raw_event.get("timeout_seconds")
        timeout_seconds = float(timeout) if isinstance(timeout, int | float) else 60.0
        producer = raw_event.get("producer") if isinstance(raw_event.get("producer"), dict) else {}
        prompt = PendingPrompt(
            kind=kind,  # type: ignore[arg-type]
            reply_token=token,
            session_id=str(raw_event.get("session_id", "")),
            event_id=str(raw_event.get("event_id", "")),
            source_id=source_id,
            producer_id=str(producer.get("agent_id", "")),
            producer_name=producer_name or producer.get("agent_name"),
            received_at=now,
            timeout_seconds=max(0.0, timeout_seconds),
            event=model if model is not None else raw_event,
        )
        self.prompts[token] = OpenPrompt(prompt, raw_event, subscription_id)
        return prompt

    def pending(self) -> list[PendingPrompt]:
        return [p.prompt for p in self.prompts.values() if p.state == "open"]

    def answer(self, answer: UserAnswer, now: float) -> ReplyDecision:
        entry = self.prompts.get(answer.reply_token)
        if entry is None:
            return ReplyDecision(None, "There is no question with that token; nothing was sent.")
        prompt = entry.prompt
        if entry.state == "answered":
            return ReplyDecision(None, "That question was already answered; nothing was sent.")
        if entry.state == "void":
            return ReplyDecision(None, f"Nothing was sent: {entry.void_reason}", prompt)
        if now > prompt.deadline:
            self.void(prompt.reply_token, "the time to answer had run out.")
            return ReplyDecision(None, "Nothing was sent: the time to answer had run out.", prompt)
        if answer.decided_by.startswith("auto:") and answer.decision != "reject":
            # Security rule: a configured policy may only ever reject (brief, §6).
            return ReplyDecision(None, "An automatic policy may only reject.", prompt)
        message: dict[str, Any]
        if prompt.kind == "confirmation":
            allowed = entry.fields.get("allowed_replies") or ["accept", "reject"]
            if answer.decision not in ("accept", "reject") or answer.decision not in allowed:
                return ReplyDecision(None, "Please answer accept or reject.", prompt)
            message = {
                "type": "confirmation.reply",
                "reply_token": prompt.reply_token,
                "decision": answer.decision,
            }
        else:
            problem = check_clarification_response(answer.response, entry.fields)
            if problem:
                return ReplyDecision(None, problem, prompt)
            message = {
                "type": "clarification.reply",
                "reply_token": prompt.reply_token,
                "response": answer.response,
            }
        if entry.subscription_id:
            message["subscription_id"] = entry.subscription_id
        message["timestamp"] = rfc3339_now()
        message["decided_by"] = answer.decided_by
        entry.state = "answered"
        return ReplyDecision(message, "", prompt)

    def undo_answer(self, reply_token: str) -> None:
        """The reply could not be delivered; the question is open again."""
        entry = self.prompts.get(reply_token)
        if entry is not None and entry.state == "answered":
            entry.state = "open"

    def void(self, reply_token: str, reason: str) -> PendingPrompt | None:
        entry = self.prompts.get(reply_token)
        if entry is None or entry.state != "open":
            return None
        entry.state = "void"
        entry.void_reason = reason
        return entry.prompt

    def void_where(
        self, reason: str, *, source_id: str, session_id: str | None = None
    ) -> list[PendingPrompt]:
        voided = []
        for token, entry in self.prompts.items():
            if entry.prompt.source_id != source_id or entry.state != "open":
                continue
            if session_id is not None and entry.prompt.session_id != session_id:
                continue
            prompt = self.void(token, reason)
            if prompt is not None:
                voided.append(prompt)
        return voided

    def expired(self, now: float) -> list[PendingPrompt]:
        voided = []
        for token, entry in self.prompts.items():
            if entry.state == "open" and now > entry.prompt.deadline:
                prompt = self.void(token, "the time to answer had run out.")
                if prompt is not None:
                    voided.append(prompt)
        return voided


def event_field(event: object, name: str) -> Any:
    """A field of a prompt's event, whether it is a protocol model or a plain dict."""
    if isinstance(event, dict):
        return event.get(name)
    return getattr(event, name, None)


def check_clarification_response(response: Any, fields: dict[str, Any]) -> str:
    """An empty string when ``response`` fits the kinds asked for (§6.5.2), else why not."""
    kinds = fields.get("accepted_response_kinds") or ["freetext"]
    if isinstance(response, bool):
        return "" if "yes_no" in kinds else "This question does not take yes or no."
    if isinstance(response, int | float):
        if "numeric" not in kinds:
            return "This question does not take a number."
        if not math.isfinite(response):
            return "That is not a usable number."
        return ""
    if isinstance(response, str):
        if "multiple_choice" in kinds:
            values = [c.get("value") for c in fields.get("choices") or [] if isinstance(c, dict)]
            if response in values:
                return ""
            if "freetext" not in kinds:
                return "Please pick one of the listed choices."
        if "freetext" in kinds:
            if not response.strip():
                return "The answer is empty."
            if len(response) > 16384:
                return "The answer is too long (16384 characters at most)."
            return ""
        return "This question does not take free text."
    return "That answer has an unusable type: " + json.dumps(type(response).__name__)
