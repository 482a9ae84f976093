"""What the speech scheduler knows of one announcement: its class of speech and its cost.

Issue 20's three classes (the agent's words, questions, status news), which status is a
final state, how folded news is counted by kind, how long speech takes at a rate, and the
queue items the scheduler keeps (``scheduler.py`` decides, this module only describes).
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass
from typing import Final

from announcer.engine.announcement import Announcement

DEFAULT_MAX_QUEUE: Final = 64
# Issue 20: nothing older than this is read as news (from when it could first be said in
# its source's order, time given to questions and urgent news not counted).
DEFAULT_STALE_AFTER_SECONDS: Final = 10.0
DEFAULT_MAX_QUEUED_SPEECH_SECONDS: Final = 30.0
DEFAULT_MAX_LEAD_IN_SECONDS: Final = 10.0
# Why news goes unheard so that the delay stays bounded (issue 14 e): such news is still
# handed to ``on_skip``, so the interfaces show it (nothing is lost in silence).
SKIPPED_NEWS_REASONS: Final = frozenset(
    {
        "overtaken by newer news",
        "superseded by newer news",
        "skipped before critical news",
        "stale",
        "too much queued speech",
        "queue full",
        "session ended",
        "moot after the user's message",
    }
)
# An utterance that critical speech waits for is cut off once it has taken this much
# longer than estimated (a voice slower than ``pace_wpm``, or one that never finishes).
OVERDUE_FACTOR: Final = 2.0
OVERDUE_GRACE_SECONDS: Final = 1.0
DROP_LOG_SIZE: Final = 256
ENDED_QUESTIONS_REMEMBERED: Final = 1024
# §2.2.9, issue 30 item 4: critical news cuts off lower-urgency speech at the next word
# boundary, at most this long after it arrives.
CRITICAL_CUT_WITHIN_SECONDS: Final = 0.45
# Time a synthesiser needs beyond the words themselves (pauses, start-up).
_UTTERANCE_OVERHEAD_SECONDS: Final = 0.25
# Characters per spoken word: long numbers, codes and names take more than one word to say.
_CHARACTERS_PER_WORD: Final = 6.0

# The UI's answer to the user's own key (UI_SPEECH_KIND with no event_id).
USER_REPLY_KIND: Final = "system.ui"
# What may still be said about a question after it ended: why it ended.
QUESTION_END_KINDS: Final = frozenset(
    {"system.prompt_voided", "system.prompt_expired", "system.prompt_refused", "system.auto_reject"}
)
PROMPT_KINDS: Final = frozenset({"agent.awaiting.confirmation", "agent.awaiting.clarification"})
# "The agent went on working; your question is still open." (no event id of its own).
STILL_OPEN_KIND: Final = "system.prompt_still_open"
_SESSION_STARTED: Final = "agent.session.started"
# News that newer news of its session makes moot: what the agent is doing, not what it found.
_CHATTER: Final = frozenset({"agent.state.changed", "agent.progress.updated", "agent.tool.invoked"})
# A session's end: "done" and "cancelled" (each with its own earcon) are what a listener
# waits for, so they are never skipped for age or surplus, however late.
_SESSION_ENDS: Final = frozenset({"agent.session.completed", "agent.session.cancelled"})

# Issue 20: three classes of speech, each with its rule.
# The agent's own words: never skipped, reordered or cut mid-sentence.
WORDS_KIND: Final = "agent.output.streaming"
# Status news: per source "current, then most recent"; what is folded is summarised by kind.
STATUS_KINDS: Final = frozenset(
    {
        "agent.state.changed",
        "agent.progress.updated",
        "agent.tool.invoked",
        "agent.tool.completed",
        "agent.session.started",
        "agent.session.completed",
        "agent.session.cancelled",
        "system.connection",
    }
)
# The agent's words pile up past this much queued speech: the rate starts to rise, and
# reaches the user's ``max_rate_factor`` at this many seconds more.
WORDS_BACKLOG_FREE_SECONDS: Final = 4.0
# The agent's words waiting beyond this many sentences (about 50 minutes of speech) are
# let go oldest first, counted and shown: memory stays bounded whatever a producer sends.
MAX_QUEUED_SENTENCES: Final = 1_000
WORDS_RAMP_SECONDS: Final = 12.0
# Issue 20: a question starts within a second of the end of the sentence being spoken; its
# source's pending status goes first only while it fits in this time, and follows it if not.
QUESTION_STATUS_LEAD_SECONDS: Final = 1.0
# What folded status is summarised as (its kind), in the order said.
FOLD_CATEGORIES: Final = ("edit", "command", "read", "tool", "plan", "state", "update")
# Never named in a summary (it would take longer than the "Thinking." it stands for, and
# what the agent does now says more); shown in the transcript like all folded news.
_QUIET_CATEGORIES: Final = frozenset({"state"})
FOLDED_SUMMARY_KIND: Final = "system.skipped"
# Stands for folded news that is never said as itself (stale, or dropped for room).
_UNSAYABLE: Final[tuple[Announcement, float | None]] = (
    Announcement(text="", kind=FOLDED_SUMMARY_KIND),
    None,
)


def speech_class(announcement: Announcement) -> str:
    """``words``, ``question``, ``status`` or ``other`` (issue 20)."""
    kind = announcement.kind
    if kind == WORDS_KIND:
        return "words"
    if kind in STATUS_KINDS:
        return "status"
    if (
        kind in PROMPT_KINDS
        or kind in QUESTION_END_KINDS
        or (kind == USER_REPLY_KIND and announcement.event_id is not None)
    ):
        return "question"
    return "other"


def fold_category(announcement: Announcement) -> str:
    """The kind a folded status is counted under ("2 edits, 1 command")."""
    topic = announcement.topic
    if topic in ("edit", "command", "read"):
        return topic
    kind = announcement.kind
    if kind in ("agent.tool.invoked", "agent.tool.completed"):
        return "tool"
    if kind == "agent.progress.updated":
        return "plan"
    if kind == "agent.state.changed":
        return "state"
    return "update"


def _source_of(announcement: Announcement) -> str | None:
    return announcement.session_id or announcement.producer_id


def _is_final(announcement: Announcement) -> bool:
    """The final state of a tool, a plan or a session: always said (issue 20)."""
    return (
        announcement.kind in _SESSION_ENDS
        or announcement.kind == "agent.tool.completed"
        or announcement.topic == "plan_done"
    )


def _said_by(folded: Announcement, newer: Announcement | None) -> bool:
    """Whether ``newer`` status says what ``folded`` said (a tool's result its start, a plan
    step an older one), so the summary need not count it."""
    if newer is None:
        return False
    if folded.kind == "agent.tool.invoked":
        return newer.kind == "agent.tool.completed"
    return folded.kind == newer.kind == "agent.progress.updated"


def _is_failure(announcement: Announcement) -> bool:
    return announcement.kind == "agent.tool.completed" and announcement.topic == "failed"


def estimated_seconds(text: str, pace_wpm: int) -> float:
    """How long ``text`` takes to say at ``pace_wpm`` words per minute.

    Words are counted by spaces, or as one per six characters when that is more
    ("$12,500.00", identifiers), plus a quarter second of synthesiser overhead.
    """
    if not text:
        return _UTTERANCE_OVERHEAD_SECONDS
    words = text.count(" ") + 1
    by_length = len(text) / _CHARACTERS_PER_WORD
    return (words if words >= by_length else by_length) * 60.0 / pace_wpm + (
        _UTTERANCE_OVERHEAD_SECONDS
    )


def next_word_boundary(text: str, started_at: float, seconds: float, now: float) -> float:
    """When the word being said at ``now`` ends, by the same estimate as its length.

    The words of an utterance that lasts ``seconds`` are taken as evenly spaced from its
    start (our estimate counts words, or six characters as one when that is more). Never
    later than ``CRITICAL_CUT_WITHIN_SECONDS`` after ``now``; ``now`` itself when nothing
    has been said yet.
    """
    elapsed = now - started_at
    if elapsed <= 0.0:
        return now
    words = text.count(" ") + 1 if text else 1
    units = max(float(words), len(text) / _CHARACTERS_PER_WORD, 1.0)
    per_word = max(seconds - _UTTERANCE_OVERHEAD_SECONDS, 0.05) / units
    boundary = started_at + math.ceil(elapsed / per_word - 1e-9) * per_word
    return min(max(boundary, now), now + CRITICAL_CUT_WITHIN_SECONDS)


def is_user_reply(announcement: Announcement) -> bool:
    """The UI's answer to the user's own key, said at once (issue 14 d).

    Its own words with no question (``event_id`` None), or any marked ``answers_key``,
    even about a question (``w`` reads its whole plan, F2 says it again).
    """
    return (
        announcement.kind == USER_REPLY_KIND
        and (announcement.event_id is None or announcement.answers_key)
        and not announcement.continues
    )


# How much a listener loses if a queued item is skipped (lower goes first).
_NEWS_RANKS: Final = {
    "agent.state.changed": 0,
    "agent.progress.updated": 0,
    "system.prompt_voided": 1,
    "agent.tool.invoked": 1,
    "agent.session.started": 1,
}


def _news_rank(item: _Queued) -> int:
    return _NEWS_RANKS.get(item.announcement.kind, 2)


def _message_end(queue: deque[_Queued], start: int) -> int:
    """The index after the last part of the message that starts at ``start``."""
    end = start + 1
    while end < len(queue) and queue[end].announcement.continues:
        end += 1
    return end


@dataclass(slots=True)
class _Queued:
    announcement: Announcement
    queued_at: float
    seconds: float
    # Submission order across lanes: a session's news is heard in this order.
    order: int = 0
    # Brought forward as the lead-up to this critical event (its event id).
    lead_for: str | None = None
    # Said right after the summary of skipped news: never skipped itself.
    kept: bool = False
    # When it could first be said in its source's order (status news ages from here).
    eligible_at: float = 0.0
    # Critical news of its session went before it once (issue 30 item 4): the next
    # critical news of that session lets it go first, so it is never put off twice.
    owed: bool = False

    def __post_init__(self) -> None:
        if self.eligible_at < self.queued_at:
            self.eligible_at = self.queued_at


@dataclass(frozen=True, slots=True)
class DropRecord:
    """One dropped announcement, envelope facts only (no payload text, §11.2 privacy)."""

    at: float
    reason: str
    urgency: str
    kind: str
    event_id: str | None
    session_id: str | None


@dataclass(slots=True)
class _Current:
    utterance_id: int
    announcement: Announcement
    started_at: float
    seconds: float
    queued_at: float
    order: int
    # Said from the critical lane (a lead-up brought forward): critical speech waits for it.
    held: bool = False


def _by_order(item: _Queued) -> int:
    return item.order


def _messages(queue: deque[_Queued]) -> list[range]:
    """The index ranges of the whole messages in ``queue``, oldest first."""
    messages: list[range] = []
    start = 0
    while start < len(queue):
        end = _message_end(queue, start)
        messages.append(range(start, end))
        start = end
    return messages
