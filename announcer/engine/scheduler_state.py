"""The speech scheduler's state and the primitives every part of it uses.

The queues (one per urgency, the agent's words, the answers to the user's keys), what is
being said, what was dropped and why; starting an utterance (faster, within the user's
``max_rate_factor``, when speech piles up: issue 20) and dropping one, counted and shown.
"""

from __future__ import annotations

import dataclasses
from collections import Counter, deque
from collections.abc import Callable

from announcer.engine.announcement import Announcement, Urgency
from announcer.engine.scheduler_rules import (
    DEFAULT_MAX_LEAD_IN_SECONDS,
    DEFAULT_MAX_QUEUE,
    DEFAULT_MAX_QUEUED_SPEECH_SECONDS,
    DEFAULT_STALE_AFTER_SECONDS,
    DROP_LOG_SIZE,
    ENDED_QUESTIONS_REMEMBERED,
    PROMPT_KINDS,
    QUESTION_END_KINDS,
    SKIPPED_NEWS_REASONS,
    STATUS_KINDS,
    STILL_OPEN_KIND,
    WORDS_BACKLOG_FREE_SECONDS,
    WORDS_KIND,
    WORDS_RAMP_SECONDS,
    DropRecord,
    _Current,
    _message_end,
    _Queued,
    estimated_seconds,
    is_user_reply,
)
from announcer.engine.settings import UserSettings
from announcer.engine.speech_commands import Speak, SpeechCommand


class SchedulerState:
    """What the scheduler holds, and how it starts or drops an utterance."""

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
        # Early keys' cues ("Not yet.") held while the question they refer to waits unread:
        # a cue never comes before its question (issue 30 item 8).
        self._cues_before_question: list[_Queued] = []
        self._current: _Current | None = None
        # The parts of the message being heard that have started (one split by language).
        self._heard_parts: list[_Queued] = []
        # Paced mode: the backend reported the current utterance done before its time.
        self._done_early = False
        # Critical news waits for the word being said to end (issue 30 item 4): the
        # utterance to cut off, and when.
        self._cut_due: tuple[int, float] | None = None
        # What is being said is owed to its session's next critical news (said first).
        self._current_owed = False
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
        # Questions answered, withdrawn or timed out (event ids, oldest first).
        self._ended_questions: dict[str, None] = {}
        # When each question was first heard (event id -> now), for the answering UI.
        self._question_started: dict[str, float] = {}
        # Questions a key's answer cut off before they were said through: not heard until
        # said again through (a high-risk accept waits for that, answer_guard).
        self._questions_cut: dict[str, None] = {}
        # Which session asked each question (event id -> session), to forget with it its
        # "your question is still open" reminder.
        self._question_sessions: dict[str, str] = {}
        # The sources of other agents' final states said in one line with the same words
        # (event id -> source), so their later news ages from that line's end.
        self._said_together_sources: dict[str, str] = {}
        self.drops: Counter[str] = Counter()
        self.drop_log: deque[DropRecord] = deque(maxlen=DROP_LOG_SIZE)
        self.spoken_count = 0
        self.interruptions = 0
        # Called with each announcement as it starts (the engine words its folded counts).
        self.on_start: Callable[[Announcement], None] | None = None
        # Called with each announcement skipped unheard (SKIPPED_NEWS_REASONS): shown instead.
        self.on_skip: Callable[[Announcement], None] | None = None

    @property
    def max_delay_seconds(self) -> float:
        """How long normal news may wait while newer news waits behind it (issue 14 e)."""
        if self._max_delay_seconds is not None:
            return self._max_delay_seconds
        return self.settings.max_news_delay_seconds

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
        replies = self._replies
        if any(item.announcement.event_id == event_id for item in replies):
            # A key's answer about it (``w``, F2) still waiting: moot once it ended.
            for item in [item for item in replies if item.announcement.event_id == event_id]:
                replies.remove(item)
                self._drop(item.announcement, reason, now)

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
        speak = self._speak(announcement, seconds, now, item.queued_at, item.order, held)
        self._current_owed = item.owed or item.lead_for is not None
        return speak

    def _speak_item(self, item: _Queued, now: float, *, held: bool = False) -> Speak:
        speak = self._speak(item.announcement, item.seconds, now, item.queued_at, item.order, held)
        self._current_owed = item.owed or item.lead_for is not None
        return speak

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
        self._current_owed = False
        self._last_words = announcement.kind == WORDS_KIND
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
        if self._cues_before_question and not self._question_waits_unread():
            # The question has begun (or is gone): the held cue follows it, next in line.
            self._replies.extend(self._cues_before_question)
            self._cues_before_question.clear()
        return Speak(utterance_id, announcement)

    def _question_waits_unread(self) -> bool:
        """A question is queued that has not begun to be said (an early key's cue waits)."""
        return any(
            item.announcement.kind in PROMPT_KINDS
            and item.announcement.event_id is not None
            and item.announcement.event_id not in self._question_started
            for lane in (*self._queues.values(), self._words)
            for item in lane
        )

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

    def _start_next(self, now: float) -> list[SpeechCommand]:
        """What to say next (:class:`announcer.engine.scheduler.SpeechScheduler`)."""
        raise NotImplementedError
