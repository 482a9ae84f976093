"""Questions a producer is waiting on, and the user's answers to them (chapter 6).

These types are shared by the session tracker (which opens and voids prompts),
the reply path (which turns an answer into a ``confirmation.reply`` or
``clarification.reply``) and every user interface (which presents them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

PromptKind = Literal["confirmation", "clarification"]


@dataclass(frozen=True, slots=True)
class PendingPrompt:
    """A confirmation or clarification still waiting for the user.

    ``event`` is the validated ``agent.awaiting.*`` model from
    ``announcer.protocol``; ``source_id`` names the connection it came from,
    because the reply must go back on that connection (§6).
    """

    kind: PromptKind
    reply_token: str
    session_id: str
    event_id: str
    source_id: str
    producer_id: str
    producer_name: str | None
    received_at: float
    timeout_seconds: float
    event: object

    @property
    def deadline(self) -> float:
        return self.received_at + self.timeout_seconds


@dataclass(frozen=True, slots=True)
class UserAnswer:
    """What the user chose, before it becomes a protocol reply.

    For a confirmation ``decision`` is ``accept`` or ``reject``; for a
    clarification ``response`` holds the text, choice id, boolean or number.

    ``event_id`` names the exact question the user was answering (the one on
    screen when the key was pressed). When given, the engine refuses the answer
    unless that very question is still open under ``reply_token``.
    """

    reply_token: str
    decision: str | None = None
    response: object = None
    decided_by: str = "user:local"
    event_id: str | None = None
