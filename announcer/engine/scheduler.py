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

* Critical speech is never dropped, filtered or rate-limited. It starts within half a
  second (§2.2.9, issue 30 item 4): it cuts off any lower-urgency utterance, the agent's
  words and a question included, at the end of the word being said, and waits only for
  other critical speech, a key's answer, and what its own session says first by rule
  (the result of what the user just approved; what earlier critical news of the session
  already went before, within ``max_delay_seconds``; and a question's lead-up, its own
  session's words and results that came before it, within ``max_lead_in_seconds``: what
  the agent said just before it asked is what the question is about).
* After a barge-in, the interrupted utterance and the queued lower-urgency speech
  resume (said again from the start) or are dropped, per ``after_interrupt``; the
  agent's words, a question, a final state, a plan's step and a session's start are
  always said again.
* A session's outcome (completed, cancelled) goes right after the sentence being said,
  before other sessions' ordinary news (issue 30 item 5).
* Normal speech takes its turn. A normal announcement flagged ``interrupt`` cuts off
  normal or background speech (never the agent's words), unless the user chose "do not
  interrupt".
* Background news gives way to newer news after ``max_delay_seconds`` (the user's
  ``max_news_delay_seconds`` unless given) and past ``max_queued_speech_seconds``.
  Skipped news goes to ``on_skip``, so the interfaces show it.
* Within one session, ordinary speech is heard in event order (issue 14 a, b); the news
  critical speech went before comes right after it, before other ordinary news.
  Background news older than a session's next normal news is skipped.
* The answer to the user's own key (``kind="system.ui"`` with no ``event_id``, or
  marked ``answers_key``) goes before queued critical speech (issue 14 d). One marked
  ``answers_key`` is said at once, cutting off any speech but another key's answer
  (critical speech is said again whole after it, except the very question it says:
  ``w``, F2); others cut off only normal and background speech (said again after it).
* Nothing about a question is said after it ended (:meth:`question_ended`,
  :meth:`withdraw`), except why it ended (issue 14 c).

Every dropped announcement is counted by reason in :attr:`drops` and recorded,
without its text, in :attr:`drop_log`.

A message split by language arrives as consecutive announcements, the later ones
marked ``continues``: the parts are dropped together or kept together, and once the
first part has been spoken the rest is never skipped as stale or surplus.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

from announcer.engine.announcement import Announcement, Urgency
from announcer.engine.scheduler_folding import folded_summary_text
from announcer.engine.scheduler_rules import (
    _SESSION_ENDS,
    _SESSION_STARTED,
    DEFAULT_MAX_LEAD_IN_SECONDS,
    DEFAULT_MAX_QUEUE,
    DEFAULT_MAX_QUEUED_SPEECH_SECONDS,
    DEFAULT_STALE_AFTER_SECONDS,
    DROP_LOG_SIZE,
    ENDED_QUESTIONS_REMEMBERED,
    FOLD_CATEGORIES,
    FOLDED_SUMMARY_KIND,
    MAX_QUEUED_SENTENCES,
    OVERDUE_FACTOR,
    OVERDUE_GRACE_SECONDS,
    PROMPT_KINDS,
    QUESTION_END_KINDS,
    QUESTION_STATUS_LEAD_SECONDS,
    SKIPPED_NEWS_REASONS,
    STATUS_KINDS,
    STILL_OPEN_KIND,
    USER_REPLY_KIND,
    WORDS_BACKLOG_FREE_SECONDS,
    WORDS_KIND,
    WORDS_RAMP_SECONDS,
    DropRecord,
    _by_order,
    _Current,
    _is_final,
    _news_rank,
    _Queued,
    _source_of,
    estimated_seconds,
    fold_category,
    is_user_reply,
    speech_class,
)
from announcer.engine.scheduler_urgent import UrgentSpeech
from announcer.engine.settings import UserSettings
from announcer.engine.speech_commands import Cancel, SpeechCommand

__all__ = [
    "DEFAULT_MAX_LEAD_IN_SECONDS",
    "DEFAULT_MAX_QUEUE",
    "DEFAULT_MAX_QUEUED_SPEECH_SECONDS",
    "DEFAULT_STALE_AFTER_SECONDS",
    "DROP_LOG_SIZE",
    "ENDED_QUESTIONS_REMEMBERED",
    "FOLDED_SUMMARY_KIND",
    "FOLD_CATEGORIES",
    "MAX_QUEUED_SENTENCES",
    "OVERDUE_FACTOR",
    "OVERDUE_GRACE_SECONDS",
    "PROMPT_KINDS",
    "QUESTION_END_KINDS",
    "QUESTION_STATUS_LEAD_SECONDS",
    "SKIPPED_NEWS_REASONS",
    "STATUS_KINDS",
    "STILL_OPEN_KIND",
    "USER_REPLY_KIND",
    "WORDS_BACKLOG_FREE_SECONDS",
    "WORDS_KIND",
    "WORDS_RAMP_SECONDS",
    "DropRecord",
    "SpeechScheduler",
    "_Queued",
    "estimated_seconds",
    "fold_category",
    "folded_summary_text",
    "is_user_reply",
    "speech_class",
]


class SpeechScheduler(UrgentSpeech):
    """Priority queue of announcements feeding one speech backend.

    ``paced=True`` is for backends that report completion at once (text output,
    screen readers without callbacks): the next utterance then waits for the
    current one's estimated duration, so speech keeps the user's pace.
    """

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

    def question_cut(self, event_id: str) -> bool:
        """The question ``event_id`` was cut off by a key's answer before it was said
        through, and not yet said through since: it has not been heard whole."""
        return event_id in self._questions_cut

    def question_has_ended(self, event_id: str) -> bool:
        return event_id in self._ended_questions

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
        cut = self._cut_when_due(now)
        if cut is not None:
            return cut
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
        due = self._cut_due
        cut_at = due[1] if due is not None and due[0] == current.utterance_id else None
        if self._done_early:
            end = current.started_at + current.seconds
            return end if cut_at is None else min(end, cut_at)
        overdue = self._overdue_at(current)
        if cut_at is None:
            return overdue
        return cut_at if overdue is None else min(overdue, cut_at)

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
        self._questions_cut.pop(event_id, None)
        # An early key's "Not yet." still waiting was about the question just answered
        # (or gone): said now, after the key that answered it, it would contradict it.
        for waiting in [w for w in self._replies if w.announcement.cue]:
            self._replies.remove(waiting)
            self._drop(waiting.announcement, "the question it was about ended", now)
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
            if notices and any(
                item.announcement.urgency is Urgency.CRITICAL
                and not item.announcement.kind.startswith("system.")
                for item in self._queues[Urgency.CRITICAL]
            ):
                # Critical news already waits: it goes first (issue 30 item 4), the notice
                # right after it.
                pace = self.settings.pace_wpm
                self._order += 1
                for part in reversed(notices):
                    seconds = estimated_seconds(part.text, pace)
                    self._lane(part).appendleft(_Queued(part, now, seconds, self._order, kept=True))
                return commands + self._start_next(now)
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

    def user_wrote(self, session_id: str, now: float) -> None:
        """The user's message went to the agent of ``session_id``: its start news ("is
        ready.", its settings line) still waiting, or cut off by the message's echo and
        waiting to be said again, is moot (issue 31, item 11: said again after the message,
        it held the agent's answer back some 5 s). Counted, logged; ``:mode`` says it."""
        for urgency in (Urgency.NORMAL, Urgency.BACKGROUND):
            queue = self._queues[urgency]
            kept: deque[_Queued] = deque()
            for item in queue:
                announcement = item.announcement
                if announcement.session_id == session_id and (
                    announcement.kind == _SESSION_STARTED or announcement.start_line
                ):
                    self._drop(announcement, "moot after the user's message", now)
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
        owed = self._owed_next(before=self._first_session_end_order())
        if owed is not None:
            # What critical news went before comes right after it (issue 30 item 4),
            # after the count of its source's folded news, as any status.
            if owed.announcement.kind in STATUS_KINDS:
                summary = self._fold_summary(_source_of(owed.announcement), now)
                if summary is not None:
                    owed.kept = True
                    normal.appendleft(owed)
                    seconds = estimated_seconds(summary.text, self.settings.pace_wpm)
                    return [self._speak_words(_Queued(summary, now, seconds, self._order), now)]
                return [self._speak_words(self._said_together(owed, now), now)]
            return [self._speak_words(owed, now)]
        index = self._eligible_news()
        ending = self._session_end_first()
        if isinstance(ending, _Queued):
            # Its own session's earlier words go with it, before other agents' (item 5).
            words.remove(ending)
            return [self._speak_words(ending, now)]
        if ending is not None:
            index = ending
        news = normal[index] if index is not None else None
        summary_due = self._summary_due()
        if (news is not None or summary_due) and (
            not words
            or self._last_words
            or ending is not None
            or (news is not None and news.order < words[0].order)
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

    def _first_session_end_order(self) -> int | None:
        return next(
            (
                item.order
                for item in self._queues[Urgency.NORMAL]
                if item.announcement.kind in _SESSION_ENDS and not item.announcement.continues
            ),
            None,
        )

    def _owed_next(self, before: int | None = None) -> _Queued | None:
        """The oldest waiting news that critical news went before, taken from its lane:
        said next, in its session's order, before other ordinary news (issue 30 item 4).

        Not if it came after a session's outcome (``before``): that goes first (item 5).
        """
        first: _Queued | None = None
        for lane in (self._words, self._queues[Urgency.NORMAL]):
            for item in lane:
                if item.owed and (first is None or item.order < first.order):
                    first = item
                    break
        if first is None or (before is not None and before < first.order):
            return None
        session_id = first.announcement.session_id
        earlier = [
            item
            for lane in (self._words, self._queues[Urgency.NORMAL])
            for item in lane
            if item.announcement.session_id == session_id and item.order < first.order
        ]
        if earlier:
            first = min(earlier, key=_by_order)  # its session's order still holds
        for lane in (self._words, self._queues[Urgency.NORMAL]):
            if first in lane:
                lane.remove(first)
        return first

    def _session_end_first(self) -> int | _Queued | None:
        """A session's outcome goes next (issue 30 item 5): after the sentence being said
        and urgent news, never after other agents' ordinary news (a later session's start,
        another agent's words). Its own session's earlier news comes with it, in order.

        The index of the outcome (or of its session's earlier status) in the normal lane,
        or its session's earliest waiting sentence of words, or None if no session ended.
        """
        normal = self._queues[Urgency.NORMAL]
        end = next(
            (
                item
                for item in normal
                if item.announcement.kind in _SESSION_ENDS and not item.announcement.continues
            ),
            None,
        )
        if end is None:
            return None
        source = _source_of(end.announcement)
        earlier_words = next(
            (
                item
                for item in self._words
                if _source_of(item.announcement) == source and item.order < end.order
            ),
            None,
        )
        for index, item in enumerate(normal):
            if _source_of(item.announcement) != source:
                continue
            if earlier_words is not None and earlier_words.order < item.order:
                return earlier_words
            return index  # its session's earliest waiting news: the outcome or before it
        return None

    def _finish_current(self, now: float) -> list[SpeechCommand]:
        current = self._current
        if current is not None:
            if current.announcement.kind in PROMPT_KINDS and current.announcement.event_id:
                self._questions_cut.pop(current.announcement.event_id, None)  # said through
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
            # So could the later news of the agents whose final state this line said too.
            joined = {
                self._said_together_sources.pop(event_id)
                for event_id in current.announcement.said_for
                if event_id in self._said_together_sources
            }
            for urgency in (Urgency.NORMAL, Urgency.BACKGROUND) if joined else ():
                for item in self._queues[urgency]:
                    if _source_of(item.announcement) in joined:
                        item.eligible_at = max(item.eligible_at, now)
        self._current = None
        self._done_early = False
        self.spoken_count += 1
        return self._start_next(now)
