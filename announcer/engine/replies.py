"""The book of open prompts, and the only place a reply message is built (chapter 6).

Each confirmation can authorise a real, irreversible action, so the rules are strict:

* Nothing is ever accepted on the user's behalf. The only automatic decision is a
  rejection, and only when the user chose the ``auto_reject`` policy.
* A prompt is answered once. A token the producer reused for another prompt
  (§6.2.2) cannot be answered at all, since the reply would be ambiguous.
* A prompt is answered once. A second answer to the same token, an answer to a
  prompt the producer cancelled (§6.8), or one after its timeout is refused with a
  plain sentence, and no message is built.
* The reply echoes ``reply_token`` byte for byte (§6.2.3): the token is copied from
  the event, never parsed, rebuilt or logged.
* An answer that names its question (``UserAnswer.event_id``) goes only to that
  question: a token now open for another event is refused.
* A malformed confirmation (§10.1.3) can only be rejected.
* An "always" answer goes only to a question whose agent offers it
  (:func:`announcer.engine.prompts.always_decisions`), never automatically, and rides
  in ``modified_action`` (§6.3), which a producer that does not know it reads as reject.
* ``timestamp`` is the wall-clock time of the user's decision (§6.3.1), never
  derived from the event's own timestamp.
* The book of open questions is bounded; when it is full the *newest* question is
  set aside (counted in :attr:`ReplyBook.overflowed`), never one the user may
  already be hearing.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Final, Literal, get_args

from announcer.engine.phrases import N_
from announcer.engine.prompts import (
    ALWAYS_SCOPE_KEY,
    PendingPrompt,
    UserAnswer,
    always_decisions,
)
from announcer.protocol.events import AwaitingClarification, AwaitingConfirmation, Decision
from announcer.protocol.extensions import ANNOUNCER_EXTENSION
from announcer.protocol.replies import ClarificationReply, ConfirmationReply

ReplyMessage = ConfirmationReply | ClarificationReply
ClosedReason = Literal[
    "answered", "voided", "expired", "superseded", "reused", "ended", "answered_elsewhere"
]

CLOSED_TOKENS_LIMIT: Final = 10_000
_PLAIN_NUMBER: Final = re.compile(r"[+-]?[0-9]{1,15}(\.[0-9]{1,15})?")
OPEN_PROMPTS_LIMIT: Final = 2_000
AUTO_POLICY_ID: Final = "auto:configured_policy"


@dataclass(frozen=True, slots=True)
class ReplyReady:
    """A reply to send on ``prompt.source_id``."""

    prompt: PendingPrompt
    message: ReplyMessage

    def to_wire(self) -> dict[str, object]:
        return self.message.to_wire()


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why an answer was not turned into a reply.

    ``message`` is an English sentence marked for translation: show the user
    ``translator(language).gettext(refusal.message)``.
    """

    code: str
    message: str


ReplyOutcome = ReplyReady | Refusal


class ReplyBook:
    """Open prompts keyed by reply token, plus a bounded memory of closed ones."""

    def __init__(self, limit: int = OPEN_PROMPTS_LIMIT) -> None:
        self.limit = limit
        self._open: OrderedDict[str, PendingPrompt] = OrderedDict()
        self._closed: OrderedDict[str, ClosedReason] = OrderedDict()
        self.overflowed = 0

    # -- queries ---------------------------------------------------------------------

    def pending(self) -> list[PendingPrompt]:
        """Open prompts, oldest first."""
        return list(self._open.values())

    def get(self, reply_token: str) -> PendingPrompt | None:
        return self._open.get(reply_token)

    def closed_reason(self, reply_token: str) -> ClosedReason | None:
        return self._closed.get(reply_token)

    def next_deadline(self) -> float | None:
        if not self._open:
            return None
        return min(prompt.deadline for prompt in self._open.values())

    # -- changes -----------------------------------------------------------------------

    def open(self, prompt: PendingPrompt) -> str | None:
        """Record a new prompt; return a diagnostic sentence if it cannot be used.

        §6.2.2: a token is never reused. When a second prompt (another ``event_id``)
        carries a token already seen, a reply would be ambiguous: the user's "accept"
        could authorise the other action. So neither prompt may be answered: the open
        one is closed as ``"reused"`` and the new one is never opened, the same verdict
        as :class:`announcer.protocol.stream.StreamChecker`'s ``reply_token.reused``.
        The same prompt delivered again (same ``event_id``) is not a reuse.
        """
        token = prompt.reply_token
        first = self._open.get(token)
        if first is not None and first.event_id == prompt.event_id:
            return None  # a redelivery: the prompt stays open as it was
        if first is not None or token in self._closed:
            self._open.pop(token, None)
            self._close(token, "reused")
            return (
                "reply_token reused by a second prompt; a reply would be ambiguous, "
                "so no answer can be sent to either (§6.2.2)"
            )
        if len(self._open) >= self.limit:
            # Bounded: the newest waits nowhere; the ones the user heard first stay.
            self._close(token, "superseded")
            self.overflowed += 1
            return "too many questions waiting; the newest was set aside"
        self._open[token] = prompt
        return None

    def refuse(self, reply_token: str, reason: ClosedReason) -> None:
        """A question that is void on arrival (§6.8, §6.4): remember why, never open it."""
        if reply_token not in self._open:
            self._close(reply_token, reason)

    def void(self, reply_token: str) -> PendingPrompt | None:
        """The producer cancelled the prompt (§6.8); replies to it must not be sent."""
        prompt = self._open.pop(reply_token, None)
        if prompt is not None:
            self._close(reply_token, "voided")
        return prompt

    def close(self, reply_token: str, reason: ClosedReason) -> PendingPrompt | None:
        """Close an open prompt for ``reason`` (answered elsewhere, §6.7.2); no reply."""
        prompt = self._open.pop(reply_token, None)
        if prompt is not None:
            self._close(reply_token, reason)
        return prompt

    def expire(self, now: float) -> list[PendingPrompt]:
        """Close prompts whose timeout passed; the producer applied its default."""
        expired = [prompt for prompt in self._open.values() if now >= prompt.deadline]
        for prompt in expired:
            del self._open[prompt.reply_token]
            self._close(prompt.reply_token, "expired")
        return expired

    def answer(
        self,
        answer: UserAnswer,
        now: float,
        subscription_id: str | None,
        decided_at: datetime | None = None,
    ) -> ReplyOutcome:
        """Turn the user's answer into a reply message, or say why not."""
        token = answer.reply_token
        prompt = self._open.get(token)
        if prompt is None:
            return _refusal_for_closed(self._closed.get(token))
        if answer.event_id is not None and answer.event_id != prompt.event_id:
            return Refusal(
                "other_question",
                N_("That answer was for another question; nothing was sent."),
            )
        if now >= prompt.deadline:
            del self._open[token]
            self._close(token, "expired")
            return Refusal(
                "expired",
                N_("Too late: this question timed out and the agent applied its default."),
            )
        if subscription_id is None:
            return Refusal(
                "no_subscription",
                N_("This connection has no subscription, so the answer cannot be sent."),
            )
        at = decided_at if decided_at is not None else datetime.now(UTC)
        event = prompt.event
        if prompt.malformed and answer.decision != "reject":
            return Refusal(
                "malformed",
                N_("This request was malformed, so only reject is offered."),
            )
        if answer.decision == "accept" and not prompt.accepts(now):
            # §6.4: a late accept could race the default the producer applied at its
            # deadline; while it may still wait, a reject is still sent.
            return Refusal(
                "accept_too_late",
                N_("Too late to accept: the agent's time for this ran out. You can still reject."),
            )
        try:
            message: ReplyMessage
            if isinstance(event, AwaitingConfirmation):
                refusal = _check_decision(answer, event)
                if refusal is not None:
                    return refusal
                decision: Decision = "accept" if answer.decision == "accept" else "reject"
                message = ConfirmationReply(
                    reply_token=event.reply_token,
                    decision=decision,
                    subscription_id=subscription_id,
                    timestamp=at,
                    decided_by=answer.decided_by,
                    modified_action=(
                        {ANNOUNCER_EXTENSION: {ALWAYS_SCOPE_KEY: "always"}}
                        if answer.scope == "always"
                        else None
                    ),
                )
            elif isinstance(event, AwaitingClarification):
                response = _check_response(answer, event)
                if isinstance(response, Refusal):
                    return response
                message = ClarificationReply(
                    reply_token=event.reply_token,
                    response=response,
                    subscription_id=subscription_id,
                    timestamp=at,
                    decided_by=answer.decided_by,
                )
            else:
                return Refusal("not_a_prompt", N_("That message does not ask for an answer."))
        except ValueError as error:
            # A pydantic ValidationError is a ValueError; name the field, not the value.
            return Refusal("invalid_answer", f"The answer cannot be sent: {_first_error(error)}")
        del self._open[token]
        self._close(token, "answered")
        return ReplyReady(prompt, message)

    def auto_reject(self, reply_token: str, subscription_id: str, now: float) -> ReplyOutcome:
        """The ``auto_reject`` policy: reject, never accept, on the user's standing order."""
        prompt = self._open.get(reply_token)
        if prompt is None or not isinstance(prompt.event, AwaitingConfirmation):
            return Refusal("not_a_confirmation", N_("Only confirmations can be rejected."))
        if "reject" not in prompt.event.replies:
            return Refusal(
                "reject_not_allowed", N_("This confirmation does not allow a rejection.")
            )
        return self.answer(
            UserAnswer(reply_token=reply_token, decision="reject", decided_by=AUTO_POLICY_ID),
            now,
            subscription_id,
        )

    def _close(self, token: str, reason: ClosedReason) -> None:
        self._closed[token] = reason
        while len(self._closed) > CLOSED_TOKENS_LIMIT:
            self._closed.popitem(last=False)


def _refusal_for_closed(reason: ClosedReason | None) -> Refusal:
    if reason == "answered":
        return Refusal(
            "already_answered", N_("This question was already answered; nothing was sent.")
        )
    if reason == "voided":
        return Refusal("voided", N_("The agent cancelled this question; nothing was sent."))
    if reason == "answered_elsewhere":
        return Refusal(
            "answered_elsewhere",
            N_("This question was already answered elsewhere; nothing was sent."),
        )
    if reason == "expired":
        return Refusal(
            "expired", N_("Too late: this question timed out and the agent applied its default.")
        )
    if reason == "reused":
        return Refusal(
            "reused",
            N_(
                "The agent used this question's reply token twice; an answer would be ambiguous, "
                "so nothing was sent."
            ),
        )
    if reason == "ended":
        return Refusal(
            "session_ended",
            N_("The agent's session had already ended, so this question cannot be answered."),
        )
    if reason == "superseded":
        return Refusal("superseded", N_("Too many questions were waiting; this one was set aside."))
    return Refusal("unknown_prompt", N_("There is no open question with that token."))


def _check_decision(answer: UserAnswer, event: AwaitingConfirmation) -> Refusal | None:
    decision = answer.decision
    if decision not in get_args(Decision):
        return Refusal("invalid_decision", N_("The answer must be accept or reject."))
    if decision not in event.replies:
        return Refusal(
            "decision_not_allowed",
            N_("This confirmation does not allow that answer."),
        )
    if decision == "accept" and answer.decided_by.startswith("auto:"):
        # Never auto-accept: only a person may say yes (docs/security.md).
        return Refusal("auto_accept_forbidden", N_("Only you can accept a confirmation."))
    if answer.scope == "always":
        if answer.decided_by.startswith("auto:"):
            return Refusal("auto_always_forbidden", N_("Only you can choose an always answer."))
        if decision not in always_decisions(event):
            return Refusal(
                "always_not_offered",
                N_("The agent offers no always answer for this question; nothing was sent."),
            )
    elif answer.scope != "once":
        return Refusal("invalid_scope", N_("The answer must be for once or always."))
    return None


def _check_response(
    answer: UserAnswer, event: AwaitingClarification
) -> str | bool | int | float | Refusal:
    response = answer.response
    kinds = event.accepted_response_kinds or ["freetext"]
    if isinstance(response, bool):
        if "yes_no" in kinds:
            return response
        return Refusal("invalid_response", N_("This question does not take yes or no."))
    if isinstance(response, int | float):
        if "numeric" in kinds and response == response and abs(response) != float("inf"):
            return response
        return Refusal("invalid_response", N_("This question does not take a number."))
    if isinstance(response, str):
        if not response.strip():
            return Refusal("empty_response", N_("The answer is empty."))
        choices = [choice.value for choice in event.choices or []]
        if "multiple_choice" in kinds and response in choices:
            return response
        if "freetext" in kinds:
            return response
        if "numeric" in kinds and _PLAIN_NUMBER.fullmatch(response.strip()):
            # §6.5.2: only a plain number as typed; never an exponent or a changed number
            number = float(response)
            if abs(number) != float("inf"):
                return int(number) if number.is_integer() else number
        if "yes_no" in kinds and response.strip().lower() in ("yes", "no", "y", "n"):
            return response.strip().lower() in ("yes", "y")
        if "multiple_choice" in kinds:
            return Refusal("invalid_response", N_("Pick one of the offered choices."))
        return Refusal("invalid_response", N_("This question does not take free text."))
    return Refusal("invalid_response", N_("Give text, a choice, yes or no, or a number."))


def _first_error(error: ValueError) -> str:
    errors = getattr(error, "errors", None)
    if callable(errors):
        try:
            first = errors()[0]
        except (IndexError, TypeError):
            return "invalid value"
        location = ".".join(str(part) for part in first.get("loc", ())) or "message"
        return f"{location}: {first.get('msg', 'invalid value')}"
    return "invalid value"
