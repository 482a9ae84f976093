"""The speech scheduler: what is said next, and what a critical event interrupts.

Modelled on NVDA's speech priorities (NOW interrupts, NEXT, NORMAL) and
speech-dispatcher's message classes: one queue per §2.2.9 urgency feeding a single
backend. The scheduler is sans-I/O: it returns :class:`Speak`/:class:`Cancel`
commands and learns that an utterance ended through :meth:`on_done`.

Three classes of speech, each with its rule (issue 20, docs/speech.md):

* The agent's words (``agent.output.streaming``) have a lane of their own: never
  skipped, reordered or cut mid-sentence; said faster, within the user's
  ``max_rate_factor``, when they pile up. Status news of their source waits for them.
* Questions start at the next sentence boundary (they never cut off an utterance) and go
  before waiting status news. One withdrawn before it was heard is said in its place.
* Status news is "current, then most recent" per source: a newer status folds its
  source's older pending ones (a plan step only a plan step); a tool's result, a plan's
  end and a session's start and end are kept. What is folded is summarised by kind
  ("3 more: 2 edits and 1 command."). Nothing older than ``stale_after_seconds`` (10 s,
  counted from when it could be said in its source's order) is read as news.

Other rules, in order of precedence:

* Critical speech is never dropped, filtered or rate-limited; other than a question, it
  interrupts a non-critical utterance other than the agent's words (barge-in) and waits
  only behind other critical speech.
* After a barge-in, the interrupted utterance and the queued lower-urgency speech
  resume (said again from the start) or are dropped, per ``after_interrupt``.
* Normal speech takes its turn. A normal announcement flagged ``interrupt`` cuts off
  normal or background speech (never the agent's words), unless the user chose "do not
  interrupt".
* Background news gives way to newer news after ``max_delay_seconds`` (the user's
  ``max_news_delay_seconds`` unless given) and past ``max_queued_speech_seconds``.
  Skipped news goes to ``on_skip``, so the interfaces show it.
* Within one session, speech is heard in event order (issue 14 a, b): critical
  speech first brings forward its own session's queued news (its words, start, results
  and latest plan step; its other status gives way and is summarised), and it waits for
  that session's utterance in progress instead of cutting it off. Background news
  older than a session's next normal news is skipped.
* The answer to the user's own key (``kind="system.ui"`` with no ``event_id``) is
  said at once: it cuts off normal and background speech (said again after it),
  waits only for the critical message being heard, and goes before queued critical
  speech (issue 14 d).
* Nothing about a question is said after it ended (:meth:`question_ended`,
  :meth:`withdraw`), except why it ended (issue 14 c).

Every dropped announcement is counted by reason in :attr:`drops` and recorded,
without its text, in :attr:`drop_log`.

A message split by language arrives as consecutive announcements, the later ones
marked ``continues``: the parts are dropped together or kept together, and once the
first part has been spoken the rest is never skipped as stale or surplus.
"""

from __future__ import annotations

import dataclasses
from collections import Counter, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from announcer.engine.announcement import Announcement, Urgency
from announcer.engine.settings import UserSettings
from announcer.engine.speech_commands import Cancel, Speak, SpeechCommand
from announcer.i18n.format import format_integer, format_list
from announcer.i18n.translate import catalog_language, translator

DEFAULT_MAX_QUEUE: Final = 64
# Issue 20: nothing older than this is read as news (from when it could first be said in
# its source's order, time given to questions and urgent news not counted).
DEFAULT_STALE_AFTER_SECONDS: Final = 10.0
DEFAULT_MAX_QUEUED_SPEECH_SECONDS: Final = 30.0
DEFAULT_MAX_LEAD_IN_SECONDS: Final = 8.0
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
    }
)
# An utterance that critical speech waits for is cut off once it has taken this much
# longer than estimated (a voice slower than ``pace_wpm``, or one that never finishes).
OVERDUE_FACTOR: Final = 2.0
OVERDUE_GRACE_SECONDS: Final = 1.0
DROP_LOG_SIZE: Final = 256
ENDED_QUESTIONS_REMEMBERED: Final = 1024
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


def is_user_reply(announcement: Announcement) -> bool:
    """The UI's answer to the user's own key, said at once (issue 14 d)."""
    return (
        announcement.kind == USER_REPLY_KIND
        and announcement.event_id is None
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


class SpeechScheduler:
    """Priority queue of announcements feeding one speech backend.

    ``paced=True`` is for backends that report completion at once (text output,
    screen readers without callbacks): the next utterance then waits for the
    current one's estimated duration, so speech keeps the user's pace.
    """

    def __init__(
        self,
        settings: UserSettings | None = None,
        *,
        max_queue: int = DEFAULT_MAX_QUEUE,
        stale_after_seconds: float = DEFAULT_STALE_AFTER_SECONDS,
        max_queued_speech_seconds: float = DEFAULT_MAX_QUEUED_SPEECH_SECONDS,
        max_delay_seconds: float | None = None,
        max_lead_in_seconds: float = DEFAULT_MAX_LEAD_IN_SECONDS,
        paced: bool = False,
    ) -> None:
        self.settings = settings or UserSettings()
        self.max_queue = max_queue
        self.stale_after_seconds = stale_after_seconds
        self.max_queued_speech_seconds = max_queued_speech_seconds
        # None: the user's ``max_news_delay_seconds``.
        self._max_delay_seconds = max_delay_seconds
        self.max_lead_in_seconds = max_lead_in_seconds
        self.paced = paced
        self._queues: dict[Urgency, deque[_Queued]] = {
            Urgency.CRITICAL: deque(),
            Urgency.NORMAL: deque(),
            Urgency.BACKGROUND: deque(),
        }
        # Answers to the user's own keys: said before anything else that waits.
        self._replies: deque[_Queued] = deque()
        self._current: _Current | None = None
        # The parts of the message being heard that have started (one split by language).
        self._heard_parts: list[_Queued] = []
        # Paced mode: the backend reported the current utterance done before its time.
        self._done_early = False
        self._next_id = 1
        self._order = 0
        # The agent's own words (issue 20): a lane of their own that nothing drops.
        self._words: deque[_Queued] = deque()
        # Whether the last utterance was the agent's words (status news goes between
        # two of its sentences, one at a time).
        self._last_words = False
        # Status news folded per source, counted by kind, until its summary is said.
        self._folded_news: dict[str | None, Counter[str]] = {}
        # Of those, the tool starts whose result has not come yet (by source and kind).
        self._unfinished_starts: dict[str | None, Counter[str]] = {}
        # And the first two named ones themselves, with when they could first be said (a
        # lone one still fresh is said as itself).
        self._folded_items: dict[str | None, list[tuple[Announcement, float | None]]] = {}
        # The counts of the summary being said (put back if it is cut off).
        self._summary_counts: tuple[str | None, Counter[str]] | None = None
        # Questions answered, withdrawn or timed out (event ids, oldest first).
        self._ended_questions: dict[str, None] = {}
        # When each question was first heard (event id -> now), for the answering UI.
        self._question_started: dict[str, float] = {}
        # Which session asked each question (event id -> session), to forget with it its
        # "your question is still open" reminder.
        self._question_sessions: dict[str, str] = {}
        self.drops: Counter[str] = Counter()
        self.drop_log: deque[DropRecord] = deque(maxlen=DROP_LOG_SIZE)
        self.spoken_count = 0
        self.interruptions = 0
        # Called with each announcement as it starts (the engine words its folded counts).
        self.on_start: Callable[[Announcement], None] | None = None
        # Called with each announcement skipped unheard (SKIPPED_NEWS_REASONS): shown instead.
        self.on_skip: Callable[[Announcement], None] | None = None

    # -- queries -----------------------------------------------------------------

    @property
    def max_delay_seconds(self) -> float:
        """How long normal news may wait while newer news waits behind it (issue 14 e)."""
        if self._max_delay_seconds is not None:
            return self._max_delay_seconds
        return self.settings.max_news_delay_seconds

    @property
    def speaking(self) -> Announcement | None:
        return self._current.announcement if self._current else None

    @property
    def speaking_id(self) -> int | None:
        return self._current.utterance_id if self._current else None

    def queued(self, urgency: Urgency | None = None) -> int:
        if urgency is not None:
            words = len(self._words) if urgency is Urgency.NORMAL else 0
            return len(self._queues[urgency]) + words
        return (
            len(self._replies)
            + len(self._words)
            + sum(len(queue) for queue in self._queues.values())
        )

    def queued_announcements(self, urgency: Urgency | None = None) -> list[Announcement]:
        """Waiting speech in the order it would be said.

        With ``urgency``, only that lane. The critical lane also holds the normal news
        brought forward as a session's lead-up (issue 14 a, b), said in its place.
        """
        if urgency is Urgency.NORMAL:
            merged = sorted([*self._queues[Urgency.NORMAL], *self._words], key=_by_order)
            return [item.announcement for item in merged]
        if urgency is not None:
            return [item.announcement for item in self._queues[urgency]]
        normal = sorted([*self._queues[Urgency.NORMAL], *self._words], key=_by_order)
        return [
            item.announcement
            for item in (
                *self._replies,
                *self._queues[Urgency.CRITICAL],
                *normal,
                *self._queues[Urgency.BACKGROUND],
            )
        ]

    def question_started_at(self, event_id: str) -> float | None:
        """When the question ``event_id`` (a prompt event) began to be heard, if it has.

        An answering UI arms its keys from this moment (docs/speech.md, "For an answering UI:
        when was the question heard?").
        """
        return self._question_started.get(event_id)

    def question_has_ended(self, event_id: str) -> bool:
        return event_id in self._ended_questions

    # -- inputs ------------------------------------------------------------------

    def update_settings(self, settings: UserSettings) -> None:
        self.settings = settings

    def submit(self, announcement: Announcement, now: float) -> list[SpeechCommand]:
        """Queue ``announcement``; return what the backend must do right away."""
        urgency = announcement.urgency
        current = self._current
        seconds = estimated_seconds(announcement.text, self.settings.pace_wpm)
        queues = self._queues
        if (
            self._ended_questions
            and announcement.event_id in self._ended_questions
            and announcement.kind not in QUESTION_END_KINDS
        ):
            # §6.8 and issue 14 c: nothing about a question after it ended but why.
            self._drop(announcement, "question ended", now)
            return []
        self._order += 1
        if (
            announcement.kind in PROMPT_KINDS
            and announcement.event_id is not None
            and announcement.session_id is not None
        ):
            asked = self._question_sessions
            asked[announcement.event_id] = announcement.session_id
            if len(asked) > ENDED_QUESTIONS_REMEMBERED:
                del asked[next(iter(asked))]
        if (
            current is None
            and not self._words
            and not self._summary_due()
            and not queues[Urgency.CRITICAL]
            and not queues[Urgency.NORMAL]
            and not queues[Urgency.BACKGROUND]
            and not self._replies
        ):
            # Idle: straight to the voice.
            return [self._speak(announcement, seconds, now, now, self._order)]
        item = _Queued(announcement, now, seconds, self._order)
        if announcement.kind == USER_REPLY_KIND and is_user_reply(announcement):
            return self._reply(item, now)
        if urgency is Urgency.CRITICAL:
            return self._submit_critical(item, now)
        if current is not None and self._barges_in(announcement, current):
            return self._barge_in(item, now)
        if announcement.kind == WORDS_KIND:
            self._words.append(item)
            if len(self._words) > MAX_QUEUED_SENTENCES:
                # Memory stays bounded even for a runaway producer: past about 50 minutes
                # of speech the oldest sentence goes, counted and shown (never in silence).
                self._drop(self._words.popleft().announcement, "too much queued speech", now)
        elif announcement.kind in STATUS_KINDS:
            # One rule for status news, whatever its urgency: a source's status is said
            # in its order, current then most recent (issue 20).
            if not announcement.continues:
                if announcement.kind == "agent.tool.completed" and self._unfinished_starts:
                    self._result_came(announcement)
                self._fold_source(announcement, now)
            queues[Urgency.NORMAL].append(item)
            self._enforce_bound(now)
        else:
            queues[urgency].append(item)
            self._enforce_bound(now)
        if current is None:
            return self._start_next(now)
        return []

    def on_done(self, utterance_id: int, now: float) -> list[SpeechCommand]:
        """The backend finished (or stopped) ``utterance_id``; say what comes next."""
        current = self._current
        if current is None or current.utterance_id != utterance_id:
            return []  # a late report for an utterance we already cancelled
        if self.paced and now < current.started_at + current.seconds:
            # Still "speaking" at the user's pace; tick() ends it.
            self._done_early = True
            return []
        return self._finish_current(now)

    def tick(self, now: float) -> list[SpeechCommand]:
        """Let time pass: ends paced utterances whose estimated time is up, and cuts off
        one far past its time that critical speech or a key's answer waits for."""
        current = self._current
        if current is None:
            return []
        if self._done_early and now >= current.started_at + current.seconds:
            return self._finish_current(now)
        overdue = self._overdue_at(current)
        if overdue is not None and now >= overdue:
            # A voice that never reports the end never holds back a question (§5.5.4).
            self._drop(current.announcement, "overdue", now)
            self._current = None
            self._done_early = False
            return [Cancel(current.utterance_id, "overdue"), *self._start_next(now)]
        return []

    def next_wakeup(self) -> float | None:
        """When :meth:`tick` next has something to do, if ever."""
        current = self._current
        if current is None:
            return None
        if self._done_early:
            return current.started_at + current.seconds
        return self._overdue_at(current)

    def _overdue_at(self, current: _Current) -> float | None:
        """When the utterance that critical speech or a key's answer waits for is overdue."""
        if not self._queues[Urgency.CRITICAL] and not self._replies:
            return None
        if current.announcement.urgency is Urgency.CRITICAL and not current.held:
            return None  # critical speech waits behind critical speech, as ever
        return current.started_at + OVERDUE_FACTOR * current.seconds + OVERDUE_GRACE_SECONDS

    def question_ended(
        self, event_id: str, now: float, reason: str = "question answered"
    ) -> list[SpeechCommand]:
        """The question ``event_id`` was answered or timed out: say nothing more about it.

        Its queued speech (key hints, time left, the UI's words about it) is dropped
        and counted under ``reason``; if it is being read out, it is cut off. What
        is submitted about it later is dropped too, except why it ended
        (:data:`QUESTION_END_KINDS`). Issue 14 c.
        """
        self._remember_ended(event_id, now)
        self._drop_event(event_id, reason, now)
        self._release_lead_up(event_id)
        current = self._current
        if (
            current is not None
            and current.announcement.event_id == event_id
            and current.announcement.kind not in QUESTION_END_KINDS
        ):
            self._drop(current.announcement, reason, now)
            self._current = None
            self._done_early = False
            self._heard_parts = []
            return [Cancel(current.utterance_id, reason), *self._start_next(now)]
        return []

    def withdraw(
        self,
        event_id: str,
        now: float,
        notice: Announcement | Sequence[Announcement] | None = None,
    ) -> list[SpeechCommand]:
        """The producer cancelled what ``event_id`` asked (§6.8): do not read it out.

        Queued speech for it is dropped (counted as "withdrawn by producer"); if it is
        being spoken it is cut off, so the user is not asked to answer a void question,
        and ``notice`` (why it stopped) is said at once. Otherwise ``notice`` queues as
        usual. A notice in several parts (languages) is said in order, kept together.
        Nothing else about the question is said later (:meth:`question_ended`).
        """
        notices = [notice] if isinstance(notice, Announcement) else list(notice or ())
        critical = self._queues[Urgency.CRITICAL]
        place = next(
            (
                index
                for index, item in enumerate(critical)
                if item.announcement.event_id == event_id
                and item.announcement.kind not in QUESTION_END_KINDS
            ),
            None,
        )
        speaking = self._current
        if (
            place is not None
            and notices
            and notices[0].urgency is Urgency.CRITICAL
            and (speaking is None or speaking.announcement.event_id != event_id)
        ):
            # Issue 20: withdrawn before it was heard, it is still said, in its own place
            # (after its lead-up, before what came after it), at its own urgency.
            order = critical[place].order
            for item in critical:
                if item.lead_for == event_id:
                    item.lead_for = None
            self._remember_ended(event_id, now)
            self._drop_event(event_id, "withdrawn by producer", now)
            critical = self._queues[Urgency.CRITICAL]
            pace = self.settings.pace_wpm
            for offset, part in enumerate(notices):
                seconds = estimated_seconds(part.text, pace)
                critical.insert(place + offset, _Queued(part, now, seconds, order))
            return self._start_next(now) if self._current is None else []
        self._remember_ended(event_id, now)
        self._drop_event(event_id, "withdrawn by producer", now)
        self._release_lead_up(event_id)
        current = self._current
        if current is not None and current.announcement.event_id == event_id:
            self._drop(current.announcement, "withdrawn by producer", now)
            self._current = None
            self._done_early = False
            commands: list[SpeechCommand] = [Cancel(current.utterance_id, "withdrawn by producer")]
            if notices:
                pace = self.settings.pace_wpm
                first, rest = notices[0], notices[1:]
                self._order += 1
                commands.append(
                    self._speak(first, estimated_seconds(first.text, pace), now, now, self._order)
                )
                for part in reversed(rest):  # next in line, ahead of anything queued
                    seconds = estimated_seconds(part.text, pace)
                    self._lane(part).appendleft(_Queued(part, now, seconds, self._order))
            else:
                commands += self._start_next(now)
            return commands
        submitted: list[SpeechCommand] = []
        for part in notices:
            submitted += self.submit(part, now)
        return submitted

    def drop_obsolete(self, session_id: str, now: float, *, keep_start: bool = False) -> None:
        """A session ended: its queued state chatter and background news are moot.

        So is its start, unless ``keep_start`` (the end is critical news, which is
        never heard before its session's start, issue 14 a).
        """
        for urgency in (Urgency.NORMAL, Urgency.BACKGROUND):
            queue = self._queues[urgency]
            if not queue:
                continue
            kept: deque[_Queued] = deque()
            for item in queue:
                announcement = item.announcement
                if (
                    announcement.session_id == session_id
                    # A plan's latest step and a tool's result are said (issue 20).
                    and announcement.kind != "agent.progress.updated"
                    and not _is_final(announcement)
                    and (
                        urgency is Urgency.BACKGROUND
                        or _news_rank(item) == 0
                        or (announcement.kind == _SESSION_STARTED and not keep_start)
                    )
                ):
                    self._drop(announcement, "session ended", now)
                else:
                    kept.append(item)
            self._queues[urgency] = kept

    def silence(self, now: float) -> list[SpeechCommand]:
        """The user asked for quiet: stop now and forget queued non-critical speech."""
        commands: list[SpeechCommand] = []
        for queue in (
            self._queues[Urgency.NORMAL],
            self._queues[Urgency.BACKGROUND],
            self._words,
            self._replies,
        ):
            while queue:
                self._drop(queue.popleft().announcement, "silenced by user", now)
        self._folded_news.clear()
        self._unfinished_starts.clear()
        self._folded_items.clear()
        if self._current is not None:
            commands.append(Cancel(self._current.utterance_id, "silenced by user"))
            self._current = None
        self._done_early = False
        commands.extend(self._start_next(now))
        return commands

    # -- internals -----------------------------------------------------------------

    def _lane(self, announcement: Announcement) -> deque[_Queued]:
        if is_user_reply(announcement):
            return self._replies
        if announcement.urgency is not Urgency.CRITICAL:
            if announcement.kind == WORDS_KIND:
                return self._words
            if announcement.kind in STATUS_KINDS:
                return self._queues[Urgency.NORMAL]
        return self._queues[announcement.urgency]

    def _remember_ended(self, event_id: str, now: float) -> None:
        session_id = self._question_sessions.pop(event_id, None)
        if session_id is not None:
            # "Your question is still open" is false once it ended (issue 14 c).
            for queue in self._queues.values():
                for item in list(queue):
                    announcement = item.announcement
                    if (
                        announcement.kind == STILL_OPEN_KIND
                        and announcement.session_id == session_id
                    ):
                        queue.remove(item)
                        self._drop(announcement, "question ended", now)
        ended = self._ended_questions
        ended[event_id] = None
        if len(ended) > ENDED_QUESTIONS_REMEMBERED:
            del ended[next(iter(ended))]

    def _drop_event(self, event_id: str, reason: str, now: float) -> None:
        """Drop queued speech about ``event_id``, except why its question ended."""
        for urgency, queue in self._queues.items():
            if any(item.announcement.event_id == event_id for item in queue):
                kept: deque[_Queued] = deque()
                for item in queue:
                    announcement = item.announcement
                    if (
                        announcement.event_id == event_id
                        and announcement.kind not in QUESTION_END_KINDS
                    ):
                        self._drop(announcement, reason, now)
                    else:
                        kept.append(item)
                self._queues[urgency] = kept

    def _release_lead_up(self, event_id: str) -> None:
        """The critical speech a lead-up waited for is gone: the lead-up is news again."""
        critical = self._queues[Urgency.CRITICAL]
        if not any(item.lead_for == event_id for item in critical):
            return
        released = [item for item in critical if item.lead_for == event_id]
        self._queues[Urgency.CRITICAL] = deque(
            item for item in critical if item.lead_for != event_id
        )
        for item in reversed(released):
            item.lead_for = None
            self._lane(item.announcement).appendleft(item)

    def _barges_in(self, incoming: Announcement, current: _Current) -> bool:
        """Whether non-critical ``incoming`` cuts off what is being said."""
        speaking = current.announcement
        if speaking.kind == WORDS_KIND:
            return False  # the agent's words are never cut mid-sentence (issue 20)
        if incoming.interrupt and incoming.urgency is Urgency.NORMAL:
            # "Do not interrupt" defers normal interruptions; it never hides critical ones.
            return (
                not self.settings.do_not_interrupt
                and speaking.urgency is not Urgency.CRITICAL
                and not is_user_reply(speaking)
                # A session's own earlier news is never cut off by its later news (issue 14 a).
                and (incoming.session_id is None or incoming.session_id != speaking.session_id)
            )
        return False

    def _critical_cuts_off(self, incoming: Announcement, current: _Current, now: float) -> bool:
        speaking = current.announcement
        if speaking.urgency is Urgency.CRITICAL or current.held or is_user_reply(speaking):
            # §2.2.9 critical interrupts; it never cuts off another critical message,
            # nor the answer to the user's own key (short, and asked for).
            return False
        if speaking.kind == WORDS_KIND or incoming.kind in PROMPT_KINDS:
            # Issue 20: the agent's words are never cut mid-sentence, and a question
            # starts at the next sentence boundary of whatever is being said.
            return False
        if incoming.session_id is not None and speaking.session_id == incoming.session_id:
            # Its own session's earlier news (often the question's lead-up, issue 14 b)
            # finishes first, unless that would take too long.
            return self._left(current, now) > self.max_lead_in_seconds
        return True

    @staticmethod
    def _left(current: _Current, now: float) -> float:
        return max(0.0, current.started_at + current.seconds - now)

    def _submit_critical(self, item: _Queued, now: float) -> list[SpeechCommand]:
        incoming = item.announcement
        critical = self._queues[Urgency.CRITICAL]
        current = self._current
        # Other critical speech already waits: this one would not be next, so cutting off
        # what is being said would gain it nothing.
        behind_others = bool(critical)
        if (
            incoming.session_id is not None
            # What follows a question (its keys, how many wait) never comes before what
            # its session said after the question: that waits its turn (issue 20).
            and not incoming.continues
            and (not incoming.kind.startswith("system.") or incoming.kind in QUESTION_END_KINDS)
            and (self._queues[Urgency.NORMAL] or self._queues[Urgency.BACKGROUND] or self._words)
        ):
            budget = self.max_lead_in_seconds
            if current is not None and current.announcement.session_id == incoming.session_id:
                budget -= self._left(current, now)
            # The lead-up may not make the news itself later than ``max_delay_seconds``
            # (issue 14 e): what does not fit is skipped, and said so after it.
            waits = sum(queued.seconds for queued in critical)
            if current is not None and (
                behind_others or not self._critical_cuts_off(incoming, current, now)
            ):
                waits += self._left(current, now)
            budget = min(budget, self.max_delay_seconds - waits)
            self._bring_forward(incoming, budget, now)
        if current is None:
            critical.append(item)
            return self._start_next(now)
        if behind_others or not self._critical_cuts_off(incoming, current, now):
            critical.append(item)
            return []
        self.interruptions += 1
        commands: list[SpeechCommand] = [Cancel(current.utterance_id, "barge-in")]
        self._set_aside(current, incoming, now)
        critical = self._queues[Urgency.CRITICAL]  # _set_aside may have rebuilt it
        if critical:
            # Its session's lead-up (or earlier critical speech) goes first.
            critical.append(item)
            return commands + self._start_next(now)
        if not incoming.interrupt:
            incoming = dataclasses.replace(incoming, interrupt=True)
        commands.append(self._speak(incoming, item.seconds, now, item.queued_at, item.order))
        return commands

    def _barge_in(self, item: _Queued, now: float) -> list[SpeechCommand]:
        """A normal announcement flagged ``interrupt`` cuts off normal or background speech."""
        current = self._current
        assert current is not None
        self.interruptions += 1
        incoming = item.announcement
        commands: list[SpeechCommand] = [Cancel(current.utterance_id, "barge-in")]
        self._set_aside(current, incoming, now)
        commands.append(self._speak(incoming, item.seconds, now, item.queued_at, item.order))
        return commands

    def _reply(self, item: _Queued, now: float) -> list[SpeechCommand]:
        """The answer to the user's own key: at once, cutting off normal speech."""
        current = self._current
        self._replies.append(item)
        if current is None:
            return self._start_next(now)
        speaking = current.announcement
        if (
            speaking.urgency is Urgency.CRITICAL
            or is_user_reply(speaking)
            or self.settings.do_not_interrupt
        ):
            return []  # next in line
        self.interruptions += 1
        self._current = None
        self._done_early = False
        commands: list[SpeechCommand] = [Cancel(current.utterance_id, "user key")]
        if self.settings.after_interrupt == "resume" or speaking.kind == WORDS_KIND:
            # Issue 20: the agent's words are never dropped; the sentence the key cut off
            # is said again from its start, whatever ``after_interrupt`` says.
            self._resume(current, now)
        else:
            self._drop_interrupted(current, now)
        return commands + self._start_next(now)

    def _set_aside(self, current: _Current, incoming: Announcement, now: float) -> None:
        """The utterance ``incoming`` cuts off: said again later, or dropped."""
        self._current = None
        self._done_early = False
        interrupted = current.announcement
        if (
            incoming.urgency is Urgency.CRITICAL
            and interrupted.session_id is not None
            and interrupted.session_id == incoming.session_id
        ):
            # Said again after its session's later critical news, it would be out of order.
            self._drop_interrupted(current, now)
            critical = self._queues[Urgency.CRITICAL]
            if any(
                item.announcement.continues and item.announcement.event_id == interrupted.event_id
                for item in critical
            ):  # the rest of it, brought forward with its session's news
                kept: deque[_Queued] = deque()
                for item in critical:
                    if (
                        item.announcement.continues
                        and item.announcement.event_id == interrupted.event_id
                    ):
                        self._drop(item.announcement, "interrupted", now)
                    else:
                        kept.append(item)
                self._queues[Urgency.CRITICAL] = kept
            if not interrupted.continues:
                self._note_skipped(interrupted)
            return
        if self.settings.after_interrupt == "resume":
            self._resume(current, now)
            return
        self._drop_interrupted(current, now)
        for urgency in (Urgency.NORMAL, Urgency.BACKGROUND):
            if urgency.rank < incoming.urgency.rank:
                queue = self._queues[urgency]
                while queue:
                    self._drop(queue.popleft().announcement, "dropped after interrupt", now)

    def _resume(self, current: _Current, now: float) -> None:
        """Said again from the start: half a sentence helps nobody (nor half a message).

        Ahead of its own session's critical speech if that waits, else first in its lane.
        """
        interrupted = current.announcement
        if interrupted.kind == "system.skipped":
            # Not said again as it was: the next summary counts what this one would have.
            if self._summary_counts is not None:
                source, counts = self._summary_counts
                self._folded_news.setdefault(source, Counter()).update(counts)
                self._summary_counts = None
            return
        # Said again first in its lane, never skipped as stale (issue 20: never lost).
        parts = [_Queued(interrupted, now, current.seconds, current.order, kept=True)]
        if interrupted.continues:
            parts = [
                _Queued(part.announcement, now, part.seconds, part.order)
                for part in self._heard_parts[:-1]
            ] + parts
        critical = self._queues[Urgency.CRITICAL]
        queue = critical if current.held else self._lane(interrupted)
        session_id = interrupted.session_id
        if session_id is not None and queue is not critical and critical:
            for index, waiting in enumerate(critical):
                if waiting.announcement.session_id == session_id:
                    for offset, part in enumerate(parts):
                        critical.insert(index + offset, part)
                    return
        for part in reversed(parts):
            queue.appendleft(part)

    def _drop_interrupted(self, current: _Current, now: float) -> None:
        interrupted = current.announcement
        self._drop(interrupted, "interrupted", now)
        # The rest of an interrupted message goes with it: half a message helps nobody.
        rest = self._lane(interrupted)
        while rest and rest[0].announcement.continues:
            self._drop(rest.popleft().announcement, "interrupted", now)

    def _bring_forward(self, incoming: Announcement, budget: float, now: float) -> None:
        """Critical speech for ``session_id`` arrives: its queued news goes first (issue 14 a, b).

        Kept, in event order: the session's start, why a question ended, the rest of a
        message already begun, and the newest whole normal messages that fit ``budget``
        seconds (the lead-up to a question). Older normal news is skipped and
        summarised; background news is dropped, and so is chatter with newer news of its
        session behind it. If the critical speech is withdrawn before it is said, its
        lead-up goes back in line (:meth:`_release_lead_up`).
        """
        session_id = incoming.session_id
        normal = self._queues[Urgency.NORMAL]
        background = self._queues[Urgency.BACKGROUND]
        words = self._words
        mine_words = [item for item in words if item.announcement.session_id == session_id]
        mine = mine_words + [
            item
            for queue in (normal, background)
            for item in queue
            if item.announcement.session_id == session_id
        ]
        if not mine:
            return
        self._queues[Urgency.NORMAL] = deque(
            item for item in normal if item.announcement.session_id != session_id
        )
        self._queues[Urgency.BACKGROUND] = deque(
            item for item in background if item.announcement.session_id != session_id
        )
        if mine_words:
            self._words = deque(
                item for item in words if item.announcement.session_id != session_id
            )
        mine.sort(key=lambda item: item.order)
        messages: list[list[_Queued]] = []
        for item in mine:
            if item.announcement.continues and messages:
                messages[-1].append(item)
            else:
                messages.append([item])
        keep: set[int] = set()
        for index in range(len(messages) - 1, -1, -1):
            message = messages[index]
            head = message[0].announcement
            seconds = sum(part.seconds for part in message)
            if (
                head.continues
                or head.kind == _SESSION_STARTED
                or head.kind in QUESTION_END_KINDS
                or message[0].kept
                # Issue 20: the agent's words come before its question, never dropped;
                # so do a tool's result and a plan's latest step.
                or head.kind == WORDS_KIND
                or _is_final(head)
                or (head.kind == "agent.progress.updated" and index == self._newest_plan(messages))
            ):
                keep.add(index)
            elif head.urgency is Urgency.BACKGROUND or head.kind in STATUS_KINDS:
                continue  # pending status news gives way to the question (issue 20)
            elif seconds <= budget:
                keep.add(index)
                budget -= seconds
            else:
                budget = 0.0  # never a lead-up with a hole in it
        deferred = self._deferred_status(incoming, messages, keep)
        critical = self._queues[Urgency.CRITICAL]
        for index, message in enumerate(messages):
            if index in deferred:
                continue
            if index in keep:
                for part in message:
                    part.lead_for = incoming.event_id
                critical.extend(message)
                continue
            for part in message:
                self._drop(part.announcement, "skipped before critical news", now)
            head = message[0].announcement
            if head.urgency is not Urgency.BACKGROUND or head.kind in STATUS_KINDS:
                self._note_skipped(head)
        if deferred:
            # Said right after the question, in their order (issue 20).
            self._queues[Urgency.NORMAL] = deque(
                sorted(
                    [
                        *self._queues[Urgency.NORMAL],
                        *(part for index in sorted(deferred) for part in messages[index]),
                    ],
                    key=_by_order,
                )
            )

    @staticmethod
    def _deferred_status(
        incoming: Announcement, messages: list[list[_Queued]], keep: set[int]
    ) -> set[int]:
        """The kept status a question does not wait for: said right after it (issue 20).

        A question starts within a second of the sentence being spoken: of its source's
        status news after the last of its words (a tool's result, a plan's latest step),
        only what fits in ``QUESTION_STATUS_LEAD_SECONDS`` goes first, oldest first; the
        rest gives way and follows the question, never dropped. A session's start (who
        asks) and anything before the agent's words keep their place.
        """
        if incoming.kind not in PROMPT_KINDS:
            return set()

        def movable(index: int) -> bool:
            head = messages[index][0]
            return (
                head.announcement.kind in STATUS_KINDS
                and head.announcement.kind != _SESSION_STARTED
                and not head.announcement.continues
                and not head.kept
            )

        fixed = [index for index in keep if not movable(index)]
        after = max(fixed, default=-1)
        budget = QUESTION_STATUS_LEAD_SECONDS
        deferred: set[int] = set()
        for index in sorted(keep):
            if index <= after:
                continue
            seconds = sum(part.seconds for part in messages[index])
            if not deferred and seconds <= budget:
                budget -= seconds
            else:
                deferred.add(index)
        return deferred

    @staticmethod
    def _newest_plan(messages: list[list[_Queued]]) -> int:
        """The index of the newest plan step among ``messages`` (-1 if none)."""
        for index in range(len(messages) - 1, -1, -1):
            if messages[index][0].announcement.kind == "agent.progress.updated":
                return index
        return -1

    def _enforce_bound(self, now: float) -> None:
        normal = self._queues[Urgency.NORMAL]
        background = self._queues[Urgency.BACKGROUND]
        while len(normal) + len(background) > self.max_queue:
            if background:
                self._drop_message(background, "queue full", now)
            else:
                self._note_skipped(self._drop_message(normal, "queue full", now)[0].announcement)

    def _drop_message(self, queue: deque[_Queued], reason: str, now: float) -> list[_Queued]:
        """Drop the oldest whole message not yet begun (or, failing that, the head)."""
        start = 0
        while start < len(queue) and queue[start].announcement.continues:
            start += 1  # the rest of a message already being heard
        if start == len(queue):
            start = 0
        end = _message_end(queue, start)
        parts = [queue[index] for index in range(start, end)]
        for _ in parts:
            del queue[start]
        for part in parts:
            self._drop(part.announcement, reason, now)
        return parts

    def _note_skipped(
        self, announcement: Announcement, *, superseded_at: float | None = None
    ) -> None:
        """Count folded news by source and kind, for its spoken summary (issue 20).

        State changes alone never get a summary of their own (a lone "1 more: 1 state
        change." would take longer than the "Thinking." it stands for, and tell less);
        they are counted in the next summary of their source, if one is said. Our own
        words (``system.*``: a reminder that a question is still open) are shown, not
        summarised: "1 more: 1 update." would say nothing of them. A tool's start is
        counted until a result of its kind comes from its source (:meth:`_result_came`):
        then the result says it, so "1 more: 1 tool call." never comes just before it.
        """
        if announcement.kind.startswith("system."):
            return
        source = _source_of(announcement)
        counts = self._folded_news.get(source)
        if counts is None:
            counts = self._folded_news[source] = Counter()
        category = fold_category(announcement)
        counts[category] += 1
        if announcement.kind == "agent.tool.invoked":
            self._unfinished_starts.setdefault(source, Counter())[category] += 1
        items = self._folded_items.setdefault(source, [])
        if category not in _QUIET_CATEGORIES and len(items) < 2:
            # One superseded piece of news is said as itself, more by their count; stale
            # news, or news dropped for room, only by its count.
            items.append((announcement, superseded_at) if superseded_at is not None else _UNSAYABLE)

    def _result_came(self, result: Announcement) -> None:
        """A tool's result says its folded start: that start is no longer counted."""
        source = _source_of(result)
        starts = self._unfinished_starts.get(source)
        category = fold_category(result)
        if not starts or not starts[category]:
            return
        starts[category] -= 1
        items = self._folded_items.get(source, [])
        for index, (item, _) in enumerate(items):
            if item.kind == "agent.tool.invoked" and fold_category(item) == category:
                del items[index]
                break
        counts = self._folded_news.get(source)
        if counts and counts[category]:
            counts[category] -= 1
            if not counts[category]:
                del counts[category]
            if not counts:
                del self._folded_news[source]

    def _summary_due(self) -> bool:
        return any(
            any(category not in _QUIET_CATEGORIES for category in counts)
            for counts in self._folded_news.values()
        )

    def _fold_source(self, incoming: Announcement, now: float) -> None:
        """Newer status news of a source makes its older pending status moot (issue 20).

        "Current, then most recent": only the newest pending status of a source is kept.
        A pending state change or tool start is folded by any newer status of its
        source, a tool's success by its source's next result, a plan step only by a newer
        plan step (the latest step is always said). A tool's failure, a plan's end, a
        session's start and end, and the rest of a message already begun are kept.
        Folded news is counted by kind and summarised ("3 more: 2 edits, 1 command."),
        said before the news that folded it.
        """
        if self.settings.cognitive_load == "high" or self.settings.verbosity == "detailed":
            return  # who asked for every detail hears it (still never older than 10 s)
        source = _source_of(incoming)
        if source is None:
            return
        plan = incoming.kind == "agent.progress.updated"
        result = incoming.kind == "agent.tool.completed"
        # Status due before its source's waiting words is said there (order first).
        words_from = min(
            (item.order for item in self._words if _source_of(item.announcement) == source),
            default=None,
        )
        for urgency in (Urgency.NORMAL, Urgency.BACKGROUND):
            queue = self._queues[urgency]
            if not queue:
                continue
            doomed: set[int] = set()
            # One pass over the heads (this runs for every status submitted, issue 20);
            # a head's later parts (``continues``) go with it.
            for index, head in enumerate(queue):
                announcement = head.announcement
                if (
                    announcement.continues
                    or announcement.kind not in STATUS_KINDS
                    or (announcement.session_id or announcement.producer_id) != source
                    or head.kept
                    or head.lead_for is not None
                    # Said before its source's waiting words: it keeps its place there.
                    or (words_from is not None and head.order < words_from)
                    or announcement.kind == _SESSION_STARTED
                ):
                    continue
                if _is_final(announcement) and (
                    announcement.kind != "agent.tool.completed"
                    or _is_failure(announcement)
                    # What a tool found outranks what the agent does next: only a
                    # newer result folds it, never a state change, plan step or start.
                    or not result
                ):
                    continue
                if announcement.kind == "agent.progress.updated" and not plan:
                    continue
                doomed.update(range(index, _message_end(queue, index)))
            if doomed:
                self._drop_at(urgency, doomed, "superseded by newer news", now, newer=incoming)

    def _drop_at(
        self,
        urgency: Urgency,
        doomed: set[int],
        reason: str,
        now: float,
        *,
        newer: Announcement | None = None,
    ) -> None:
        """Drop and count the items at ``doomed`` indexes of a lane.

        What ``newer`` news says anyway is not counted in a summary: a tool's start when
        its result comes, an older plan step when a newer one comes.
        """
        queue = self._queues[urgency]
        kept: deque[_Queued] = deque()
        for index, item in enumerate(queue):
            if index in doomed:
                self._drop(item.announcement, reason, now)
                announcement = item.announcement
                if not announcement.continues and not _said_by(announcement, newer):
                    whole = index + 1 >= len(queue) or not queue[index + 1].announcement.continues
                    self._note_skipped(
                        announcement,
                        superseded_at=item.eligible_at if newer is not None and whole else None,
                    )
            else:
                kept.append(item)
        self._queues[urgency] = kept

    def _protected(self, item: _Queued, newest_plan: dict[str | None, int], index: int) -> bool:
        """Never dropped for age: a session's start and end, a tool's result, a plan's
        latest step, why a question ended, a count of skipped news, and the rest of a
        message already begun."""
        announcement = item.announcement
        return (
            announcement.continues
            or item.kept
            or item.lead_for is not None
            or announcement.kind == _SESSION_STARTED
            or announcement.kind in QUESTION_END_KINDS
            # A count of what was skipped (a flood's) is never itself skipped.
            or announcement.kind == FOLDED_SUMMARY_KIND
            or _is_final(announcement)
            or (
                announcement.kind == "agent.progress.updated"
                and newest_plan.get(_source_of(announcement)) == index
            )
        )

    def _drop_stale(self, now: float) -> None:
        """Nothing older than ``stale_after_seconds`` is read as news (issue 20).

        Age counts from when the news could first be said in its source's order (after
        that source's earlier words and questions). Background news also gives way to
        newer news after ``max_delay_seconds`` and past ``max_queued_speech_seconds``.
        """
        for urgency in (Urgency.NORMAL, Urgency.BACKGROUND):
            queue = self._queues[urgency]
            stale_after = self.stale_after_seconds
            if not queue or all(now - item.eligible_at <= stale_after for item in queue):
                continue
            newest_plan = {
                _source_of(item.announcement): index
                for index, item in enumerate(queue)
                if item.announcement.kind == "agent.progress.updated"
            }
            doomed: set[int] = set()
            for message in _messages(queue):
                head = queue[message.start]
                if now - head.eligible_at > stale_after and not self._protected(
                    head, newest_plan, message.start
                ):
                    doomed.update(message)
            if doomed:
                self._drop_at(urgency, doomed, "stale", now)
        background = self._queues[Urgency.BACKGROUND]
        if len(background) < 2:
            return
        max_delay = self.max_delay_seconds
        newest_plan = {
            _source_of(item.announcement): index
            for index, item in enumerate(background)
            if item.announcement.kind == "agent.progress.updated"
        }
        doomed = set()
        messages = _messages(background)
        total = sum(item.seconds for item in background)
        for message in messages[:-1]:
            head = background[message.start]
            if self._protected(head, newest_plan, message.start):
                continue
            if now - head.queued_at > max_delay or total > self.max_queued_speech_seconds:
                doomed.update(message)
                total -= sum(background[index].seconds for index in message)
        if doomed:
            kept: deque[_Queued] = deque()
            for index, item in enumerate(background):
                if index in doomed:
                    self._drop(item.announcement, "overtaken by newer news", now)
                else:
                    kept.append(item)
            self._queues[Urgency.BACKGROUND] = kept

    def _eligible_news(self) -> int | None:
        """The index of the first normal news that may be said now in its source's order.

        Status news waits for its own source's earlier words (order within a source,
        issue 20); other sources' words do not hold it back.
        """
        normal = self._queues[Urgency.NORMAL]
        words = self._words
        for index, item in enumerate(normal):
            announcement = item.announcement
            source = _source_of(announcement)
            if announcement.continues or item.kept or not words or source is None:
                return index
            if not any(
                _source_of(said.announcement) == source and said.order < item.order
                for said in words
            ):
                return index
        return None

    def _fold_summary(self, source: str | None, now: float) -> Announcement | None:
        """ "3 more: 2 edits, 1 command." for the news folded from ``source``, if due.

        Other sources' folded news that is due too is counted in the same line: one
        summary, not one per source, so no source's own news waits behind the others'
        summaries (issue 20: status within 3 s when several agents work at once).
        """
        counts = self._folded_news.get(source)
        if not counts or all(category in _QUIET_CATEGORIES for category in counts):
            return None
        del self._folded_news[source]
        self._unfinished_starts.pop(source, None)
        items = self._folded_items.pop(source, [])
        for other in [key for key in self._folded_news if key != source]:
            others = self._folded_news[other]
            if all(category in _QUIET_CATEGORIES for category in others):
                continue
            counts = counts + others
            del self._folded_news[other]
            self._unfinished_starts.pop(other, None)
            items += self._folded_items.pop(other, [])
        self._summary_counts = (source, counts)
        language = catalog_language(self.settings.languages or ["en"])
        text = folded_summary_text(counts, language)
        named = sum(
            count for category, count in counts.items() if category not in _QUIET_CATEGORIES
        )
        lone, since = items[0] if len(items) == 1 else _UNSAYABLE
        if (
            named == 1
            and since is not None
            and now - since <= self.stale_after_seconds
            and len(lone.text) <= len(text)
        ):
            # One piece of news folded, still fresh and shorter than its count: said as
            # itself ("Shell finished." rather than "1 more: 1 command.").
            language, text = lone.language, lone.text
        return Announcement(
            text=text, language=language, kind=FOLDED_SUMMARY_KIND, session_id=source
        )

    def _speak_words(self, item: _Queued, now: float, *, held: bool = False) -> Speak:
        """The agent's next sentence (or status line), faster when speech piles up.

        Issue 20: within the user's ``max_rate_factor``, by how much speech waits.
        """
        # Everything waiting counts: a question behind the words is a reason to hurry.
        backlog = item.seconds + sum(
            waiting.seconds
            for queue in (self._words, self._queues[Urgency.CRITICAL], self._queues[Urgency.NORMAL])
            for waiting in queue
        )
        factor = min(
            self.settings.max_rate_factor,
            1.0 + max(0.0, backlog - WORDS_BACKLOG_FREE_SECONDS) / WORDS_RAMP_SECONDS,
        )
        if factor <= 1.0:
            return self._speak_item(item, now, held=held)
        factor = round(factor, 2)
        announcement = dataclasses.replace(item.announcement, rate_factor=factor)
        seconds = estimated_seconds(announcement.text, round(self.settings.pace_wpm * factor))
        return self._speak(announcement, seconds, now, item.queued_at, item.order, held)

    def _start_next(self, now: float) -> list[SpeechCommand]:
        if self._current is not None:
            return []
        critical = self._queues[Urgency.CRITICAL]
        if critical and critical[0].announcement.continues:
            # The rest of the message being heard comes before anything else.
            return [self._speak_item(critical.popleft(), now, held=True)]
        replies = self._replies
        if replies:
            self._restart_split_message(now)
            return [self._speak_item(replies.popleft(), now)]
        if critical:
            self._restart_split_message(now)
            item = critical.popleft()
            kind = item.announcement.kind
            if kind == WORDS_KIND or kind in STATUS_KINDS:  # the lead-up to urgent news
                return [self._speak_words(item, now, held=True)]
            return [self._speak_item(item, now, held=True)]
        self._drop_stale(now)
        normal = self._queues[Urgency.NORMAL]
        words = self._words
        if normal and (normal[0].announcement.continues or normal[0].kept):
            # The rest of the message just heard, or the news the summary of folded news
            # led to, comes before anything else.
            led_to = normal.popleft()
            if led_to.kept and led_to.announcement.kind in STATUS_KINDS:
                return [self._speak_words(self._said_together(led_to, now), now)]
            return [self._speak_item(led_to, now)]
        if words and words[0].announcement.continues:
            return [self._speak_item(words.popleft(), now)]
        index = self._eligible_news()
        news = normal[index] if index is not None else None
        summary_due = self._summary_due()
        if (news is not None or summary_due) and (
            not words or self._last_words or (news is not None and news.order < words[0].order)
        ):
            # Status news goes at the next sentence boundary, between two sentences of
            # the agent's words at most one at a time ("current, then most recent").
            source = _source_of(news.announcement) if news is not None else None
            summary = self._fold_summary(source, now) if news is not None else None
            if summary is None and summary_due and (news is None or not news.kept):
                summary = next(
                    (
                        said
                        for said in (self._fold_summary(s, now) for s in list(self._folded_news))
                        if said is not None
                    ),
                    None,
                )
            if summary is not None:
                if news is not None and index is not None:
                    # What the summary led to is said right after it.
                    del normal[index]
                    news.kept = True
                    normal.appendleft(news)
                seconds = estimated_seconds(summary.text, self.settings.pace_wpm)
                # Faster, like the news it stands for, when speech piles up.
                return [self._speak_words(_Queued(summary, now, seconds, self._order), now)]
            if news is not None and index is not None:
                del normal[index]
                if self._queues[Urgency.BACKGROUND]:
                    earlier = self._earlier_background(news, now)
                    if earlier is not None:
                        normal.insert(index, news)
                        return [self._speak_item(earlier, now)]
                if news.announcement.kind in STATUS_KINDS:
                    return [self._speak_words(self._said_together(news, now), now)]
                return [self._speak_item(news, now)]
        if words:
            return [self._speak_words(words.popleft(), now)]
        if normal and index is not None:
            return [self._speak_item(normal.popleft(), now)]
        background = self._queues[Urgency.BACKGROUND]
        if background:
            return [self._speak_item(background.popleft(), now)]
        return []

    def _said_together(self, item: _Queued, now: float) -> _Queued:
        """``item``, a final state, said once for every agent that waits with the same one.

        Issue 20: when several agents end alike ("The transfer went through." from three
        sessions at once), the listener hears "3 agents: The transfer went through." once,
        instead of the same sentence three times in a row with the last agent's final
        state waiting behind the others'. Another source's news joins only when nothing
        of that source waits before it (order within a source holds), it is a whole
        message, and it is in the listener's own language (our count is said with it).
        """
        announcement = item.announcement
        source = _source_of(announcement)
        normal = self._queues[Urgency.NORMAL]
        if source is None or not _is_final(announcement) or announcement.continues or not normal:
            return item
        language = catalog_language(self.settings.languages or ["en"])
        if _primary_language(announcement.language) != _primary_language(language):
            return item
        # Each source's earliest waiting speech: only news at the head of its source joins.
        first_order: dict[str | None, int] = {}
        for lane in (self._words, *self._queues.values()):
            for waiting in lane:
                key = _source_of(waiting.announcement)
                if waiting.order < first_order.get(key, waiting.order + 1):
                    first_order[key] = waiting.order
        joined: list[_Queued] = []
        sources = {source}
        for index, waiting in enumerate(normal):
            other = waiting.announcement
            other_source = _source_of(other)
            if (
                other_source is None
                or other_source in sources
                or other.kind != announcement.kind
                or other.text != announcement.text
                or other.language != announcement.language
                or other.continues
                or waiting.kept
                or waiting.lead_for is not None
                or first_order.get(other_source) != waiting.order
                or (index + 1 < len(normal) and normal[index + 1].announcement.continues)
            ):
                continue
            sources.add(other_source)
            joined.append(waiting)
        if not joined:
            return item
        ids = {id(waiting) for waiting in joined}
        self._queues[Urgency.NORMAL] = deque(w for w in normal if id(w) not in ids)
        for waiting in joined:
            self._drop(waiting.announcement, "said with other agents' same news", now)
        count = len(joined) + 1
        text = (
            translator(language)
            .ngettext("{count} agent: {text}", "{count} agents: {text}", count)
            .format(count=format_integer(count, language), text=announcement.text)
        )
        said = dataclasses.replace(
            announcement,
            text=text,
            said_for=tuple(w.announcement.event_id for w in joined if w.announcement.event_id),
        )
        seconds = estimated_seconds(text, self.settings.pace_wpm)
        return dataclasses.replace(item, announcement=said, seconds=seconds)

    def _earlier_background(self, item: _Queued, now: float) -> _Queued | None:
        """Background news of ``item``'s session that came before it (issue 14 a).

        Chatter (progress, a state change) is superseded by that newer news and dropped;
        of the rest, the oldest still fresh (``max_delay_seconds``) is returned to be said
        first, and the stale ones are moot and dropped.
        """
        session_id = item.announcement.session_id
        if session_id is None:
            return None
        background = self._queues[Urgency.BACKGROUND]
        if not any(
            waiting.announcement.session_id == session_id and waiting.order < item.order
            for waiting in background
        ):
            return None
        first: _Queued | None = None
        kept: deque[_Queued] = deque()
        for waiting in background:
            if waiting.announcement.session_id != session_id or waiting.order > item.order:
                kept.append(waiting)
            elif (
                waiting.announcement.kind in _CHATTER
                and not waiting.announcement.continues
                and self.settings.cognitive_load != "high"  # who asked for every detail
            ):
                # Progress or a state change is superseded by its session's newer news.
                self._drop(waiting.announcement, "superseded by newer news", now)
            elif first is None and now - waiting.queued_at <= self.max_delay_seconds:
                first = waiting
            elif now - waiting.queued_at <= self.max_delay_seconds:
                kept.append(waiting)  # said next, before ``item`` too
            else:
                self._drop(waiting.announcement, "overtaken by newer news", now)
        self._queues[Urgency.BACKGROUND] = kept
        return first

    def _restart_split_message(self, now: float) -> None:
        """Other speech goes between two parts of a message: say that one again whole."""
        heard = self._heard_parts
        if not heard or heard[-1].announcement.urgency is Urgency.CRITICAL:
            return
        last = heard[-1].announcement
        queue = self._lane(last)
        if (
            queue
            and queue[0].announcement.continues
            and queue[0].announcement.event_id == last.event_id
        ):
            for part in reversed(heard):
                queue.appendleft(_Queued(part.announcement, now, part.seconds, part.order))
            self._heard_parts = []

    def _finish_current(self, now: float) -> list[SpeechCommand]:
        current = self._current
        if current is not None:
            source = _source_of(current.announcement)
            if current.announcement.urgency is Urgency.CRITICAL or is_user_reply(
                current.announcement
            ):
                # Status news gives way to questions, urgent news and the user's keys:
                # the time they took does not age it (issue 20).
                spent = max(0.0, now - current.started_at)
                for urgency in (Urgency.NORMAL, Urgency.BACKGROUND):
                    for item in self._queues[urgency]:
                        if item.queued_at < current.started_at:
                            item.eligible_at += spent
                        elif item.queued_at < now:
                            item.eligible_at = max(item.eligible_at, now)
            if source is not None:
                # Its source's later news could not be said before now: it ages from here.
                for urgency in (Urgency.NORMAL, Urgency.BACKGROUND):
                    for item in self._queues[urgency]:
                        if item.order > current.order and _source_of(item.announcement) == source:
                            item.eligible_at = max(item.eligible_at, now)
        self._current = None
        self._done_early = False
        self.spoken_count += 1
        return self._start_next(now)

    def _speak_item(self, item: _Queued, now: float, *, held: bool = False) -> Speak:
        return self._speak(item.announcement, item.seconds, now, item.queued_at, item.order, held)

    def _speak(
        self,
        announcement: Announcement,
        seconds: float,
        now: float,
        queued_at: float,
        order: int,
        held: bool = False,
    ) -> Speak:
        if self.on_start is not None:
            self.on_start(announcement)
        utterance_id = self._next_id
        self._next_id += 1
        self._last_words = announcement.kind == WORDS_KIND
        if announcement.kind != FOLDED_SUMMARY_KIND:
            self._summary_counts = None
        self._current = _Current(utterance_id, announcement, now, seconds, queued_at, order, held)
        if announcement.continues and self._heard_parts:
            self._heard_parts.append(_Queued(announcement, now, seconds, order))
        else:
            self._heard_parts = [_Queued(announcement, now, seconds, order)]
        if announcement.kind in PROMPT_KINDS and announcement.event_id is not None:
            started = self._question_started
            if announcement.event_id not in started:
                started[announcement.event_id] = now
                if len(started) > ENDED_QUESTIONS_REMEMBERED:
                    del started[next(iter(started))]
        return Speak(utterance_id, announcement)

    def _drop(self, announcement: Announcement, reason: str, now: float) -> None:
        self.drops[reason] += 1
        if self.on_skip is not None and reason in SKIPPED_NEWS_REASONS:
            self.on_skip(announcement)
        self.drop_log.append(
            DropRecord(
                at=now,
                reason=reason,
                urgency=announcement.urgency.value,
                kind=announcement.kind,
                event_id=announcement.event_id,
                session_id=announcement.session_id,
            )
        )


def _primary_language(tag: str) -> str:
    """ "en" for "en-US", "pt" for "pt_BR": whether our words and the agent's share a voice."""
    return tag.replace("_", "-").split("-", 1)[0].lower()


def _by_order(item: _Queued) -> int:
    return item.order


def _category_phrase(category: str, count: int, language: str) -> str:
    """ "2 edits", "1 command": one kind of folded status news, counted."""
    catalog = translator(language)
    if category == "edit":
        phrase = catalog.ngettext("{count} edit", "{count} edits", count)
    elif category == "command":
        phrase = catalog.ngettext("{count} command", "{count} commands", count)
    elif category == "read":
        phrase = catalog.ngettext("{count} file read", "{count} file reads", count)
    elif category == "tool":
        phrase = catalog.ngettext("{count} tool call", "{count} tool calls", count)
    elif category == "plan":
        phrase = catalog.ngettext("{count} plan step", "{count} plan steps", count)
    elif category == "state":
        phrase = catalog.ngettext("{count} state change", "{count} state changes", count)
    else:
        phrase = catalog.ngettext("{count} update", "{count} updates", count)
    return phrase.format(count=format_integer(count, language))


def folded_summary_text(counts: Counter[str], language: str) -> str:
    """ "3 more: 2 edits, 1 command." in ``language`` (issue 20: never a bare count)."""
    # State changes are counted, not named: what the agent is doing now says more. (Named
    # when nothing else was folded: a flood of them is still said by kind.)
    quiet = _QUIET_CATEGORIES if any(c not in _QUIET_CATEGORIES for c in counts) else frozenset()
    total = sum(count for category, count in counts.items() if category not in quiet)
    parts = [
        _category_phrase(category, counts[category], language)
        for category in FOLD_CATEGORIES
        if counts.get(category, 0) and category not in quiet
    ]
    return (
        translator(language)
        .ngettext("{count} more: {kinds}.", "{count} more: {kinds}.", total)
        .format(count=format_integer(total, language), kinds=format_list(parts, language))
    )


def _messages(queue: deque[_Queued]) -> list[range]:
    """The index ranges of the whole messages in ``queue``, oldest first."""
    messages: list[range] = []
    start = 0
    while start < len(queue):
        end = _message_end(queue, start)
        messages.append(range(start, end))
        start = end
    return messages
