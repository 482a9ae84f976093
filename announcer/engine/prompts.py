"""Questions a producer is waiting on, and the user's answers to them (chapter 6).

These types are shared by the session tracker (which opens and voids prompts),
the reply path (which turns an answer into a ``confirmation.reply`` or
``clarification.reply``) and every user interface (which presents them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal, get_args

from announcer.protocol.events import Decision
from announcer.protocol.extensions import ANNOUNCER_EXTENSION, CANCEL_CHOICE, DECLINE_CHOICE

PromptKind = Literal["confirmation", "clarification"]
AnswerScope = Literal["once", "always"]

#: a reply's ``modified_action`` key for an "always" answer (§6.3: a producer that does
#: not know it treats the reply as reject, so "always" can never become a silent yes).
ALWAYS_SCOPE_KEY: Final = "scope"


def _ours(event: object) -> dict[str, object]:
    extensions = (
        event.get("extensions") if isinstance(event, dict) else getattr(event, "extensions", None)
    )
    ours = extensions.get(ANNOUNCER_EXTENSION) if isinstance(extensions, dict) else None
    return ours if isinstance(ours, dict) else {}


#: announcer's own ways out of an agent's form, and the word that picks each in the plain UI
SET_ASIDE_WORDS: Final = {DECLINE_CHOICE: "decline", CANCEL_CHOICE: "cancel"}


def set_aside_choice(event: object, value: object) -> bool:
    """A choice announcer added to an agent's form to leave it (decline, cancel): reachable
    by a word or the arrows, never read as a numbered choice (issue 30 item 3). Only in a
    question announcer mapped itself (its ``x-announcer`` extension is trusted only then)."""
    return value in SET_ASIDE_WORDS and bool(_ours(event))


def always_decisions(event: object) -> frozenset[str]:
    """The decisions (``accept``, ``reject``) the question's agent offers "always" for.

    Only a mapping that knows its agent remembers answers sets this (``x-announcer``
    ``always``); AAEP itself has no such thing, so any other question offers none.
    """
    offered = _ours(event).get("always")
    if not isinstance(offered, list):
        return frozenset()
    return frozenset(d for d in offered if d in get_args(Decision))


def is_secret(event: object) -> bool:
    """The answer is secret (``x-announcer`` ``secret``): never read back or shown again."""
    return _ours(event).get("secret") is True


def waits_without_deadline(event: object) -> bool:
    """The agent waits for the answer with no deadline (``x-announcer`` ``no_timeout``)."""
    return _ours(event).get("no_timeout") is True


@dataclass(frozen=True, slots=True)
class PendingPrompt:
    """A confirmation or clarification still waiting for the user.

    ``event`` is the validated ``agent.awaiting.*`` model from
    ``announcer.protocol``; ``source_id`` names the connection it came from,
    because the reply must go back on that connection (§6).

    ``late_by`` is how long the event had already been under way when it arrived,
    on the producer's own clock with the connection's clock skew taken out (§6.4:
    the timeout runs from the event's ``timestamp``), so :attr:`deadline` is honest
    for a question delivered late. ``accept_late_by`` is the same by the best estimate
    of the producer's clock (never less): accept is not offered past
    :attr:`accept_deadline`, so it cannot race the default the producer applies at its
    deadline, while a reject stays possible until :attr:`deadline`
    (``announcer.engine.clock``).

    ``problems`` is empty for a well-formed question. A malformed confirmation
    (§10.1.3: it must not vanish) is still opened so the user can at least reject
    it: its ``event`` is a best-effort reading, and accept is never offered.
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
    late_by: float = 0.0
    problems: tuple[str, ...] = ()
    accept_late_by: float = 0.0

    @property
    def deadline(self) -> float:
        return self.received_at + self.timeout_seconds - self.late_by

    @property
    def accept_deadline(self) -> float:
        """Until when accept may be sent (§6.4): never later than :attr:`deadline`."""
        return self.received_at + self.timeout_seconds - max(self.late_by, self.accept_late_by)

    def accepts(self, now: float) -> bool:
        """Accept can still be offered at ``now`` (well formed, the producer's time not up)."""
        return not self.problems and now < self.accept_deadline

    @property
    def malformed(self) -> bool:
        return bool(self.problems)

    def seconds_left(self, now: float) -> float:
        """Time left to answer at ``now`` (same clock as ``received_at``); never negative."""
        return max(0.0, self.deadline - now)


@dataclass(frozen=True, slots=True)
class UserAnswer:
    """What the user chose, before it becomes a protocol reply.

    For a confirmation ``decision`` is ``accept`` or ``reject``, and ``scope`` says
    whether the user chose it for this time only or "always" (only where the agent
    offers that, :func:`always_decisions`); for a clarification ``response`` holds the
    text, choice id, boolean or number.

    ``event_id`` names the exact question the user was answering (the one on
    screen when the key was pressed). When given, the engine refuses the answer
    unless that very question is still open under ``reply_token``.
    """

    reply_token: str
    decision: str | None = None
    response: object = None
    decided_by: str = "user:local"
    event_id: str | None = None
    scope: AnswerScope = "once"
