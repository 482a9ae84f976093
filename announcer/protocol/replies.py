"""Reply messages of chapter 6: what the subscriber sends back for a blocking event.

``reply_token`` is opaque (§6.2.3): it is carried byte for byte, never parsed, and
never appears in a diagnostic or log line.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, StringConstraints

from announcer.protocol._base import TimestampedModel
from announcer.protocol.events import Decision, ReplyToken
from announcer.protocol.handshake import SubscriptionId

DecidedBy = Annotated[str, StringConstraints(min_length=1, max_length=256)]


class ConfirmationReply(TimestampedModel):
    """§6.3: the user's decision on an ``agent.awaiting.confirmation``."""

    SECTION: ClassVar[str] = "§6.3"

    type: Literal["confirmation.reply"] = "confirmation.reply"
    reply_token: ReplyToken
    decision: Decision
    subscription_id: SubscriptionId
    decided_by: DecidedBy | None = None
    decision_rationale: Annotated[str, StringConstraints(min_length=1, max_length=4096)] | None = (
        None
    )
    modified_action: dict[str, Any] | None = None
    correlation_id: str | None = None


class ClarificationReply(TimestampedModel):
    """§6.5: the user's answer to an ``agent.awaiting.clarification``.

    ``response`` is a string (free text or a choice value), a boolean (yes/no) or a
    number, per §6.5.2.
    """

    SECTION: ClassVar[str] = "§6.5"

    type: Literal["clarification.reply"] = "clarification.reply"
    reply_token: ReplyToken
    response: Annotated[str, StringConstraints(min_length=1, max_length=16384)] | bool | int | float
    subscription_id: SubscriptionId
    decided_by: DecidedBy | None = None
    confidence: Annotated[float, Field(ge=0, le=1)] | None = None
    correlation_id: str | None = None


ReplyMessage = ConfirmationReply | ClarificationReply

REPLY_TYPES: dict[str, type[TimestampedModel]] = {
    "confirmation.reply": ConfirmationReply,
    "clarification.reply": ClarificationReply,
}
