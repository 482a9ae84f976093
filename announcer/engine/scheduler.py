"""The speech scheduler: what is said next, and what a critical event interrupts.

Modelled on NVDA's speech priorities (NOW interrupts, NEXT, NORMAL) and
speech-dispatcher's message classes: one queue per §2.2.9 urgency feeding a single
backend. The scheduler is sans-I/O: it returns :class:`Speak`/:class:`Cancel`
commands and learns that an utterance ended through :meth:`on_done`.

Rules, in order of precedence:

* Critical speech is never dropped, filtered or rate-limited; it interrupts any
  non-critical utterance (barge-in) and waits only behind other critical speech.
* After a barge-in, the interrupted utterance and the queued lower-urgency speech
  resume (said again from the start) or are dropped, per ``after_interrupt``.
* Normal speech takes its turn. A normal announcement flagged ``interrupt`` cuts off
  normal or background speech, unless the user chose "do not interrupt".
* Background speech goes first when the queue is over its bound.
* The user never hears minute-old news: speech that waited longer than
  ``stale_after_seconds``, or that lies beyond ``max_queued_speech_seconds`` of
  queued talk (estimated from ``pace_wpm``), is skipped and summarised as
  "3 more updates skipped".

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
from announcer.i18n.format import format_integer
from announcer.i18n.translate import catalog_language, translator

DEFAULT_MAX_QUEUE: Final = 64
DEFAULT_STALE_AFTER_SECONDS: Final = 45.0
DEFAULT_MAX_QUEUED_SPEECH_SECONDS: Final = 30.0
DROP_LOG_SIZE: Final = 256
# Time a synthesiser needs beyond the words themselves (pauses, start-up).
_UTTERANCE_OVERHEAD_SECONDS: Final = 0.25


def estimated_seconds(text: str, pace_wpm: int) -> float:
    """How long ``text`` takes to say at ``pace_wpm`` words per minute."""
    words = text.count(" ") + 1 if text else 0
    return words * 60.0 / pace_wpm + _UTTERANCE_OVERHEAD_SECONDS


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
        paced: bool = False,
    ) -> None:
        self.settings = settings or UserSettings()
        self.max_queue = max_queue
        self.stale_after_seconds = stale_after_seconds
        self.max_queued_speech_seconds = max_queued_speech_seconds
        self.paced = paced
        self._queues: dict[Urgency, deque[_Queued]] = {
            Urgency.CRITICAL: deque(),
            Urgency.NORMAL: deque(),
            Urgency.BACKGROUND: deque(),
        }
        self._current: _Current | None = None
        # The parts of the message being heard that have started (one split by language).
        self._heard_parts: list[_Queued] = []
        # Paced mode: the backend reported the current utterance done before its time.
        self._done_early = False
        self._next_id = 1
        self._skipped_pending = 0
        self.drops: Counter[str] = Counter()
        self.drop_log: deque[DropRecord] = deque(maxlen=DROP_LOG_SIZE)
        self.spoken_count = 0
        self.interruptions = 0
        # Called with each announcement as it starts (the engine words its folded counts).
        self.on_start: Callable[[Announcement], None] | None = None

    # -- queries -----------------------------------------------------------------

    @property
    def speaking(self) -> Announcement | None:
        return self._current.announcement if self._current else None

    @property
    def speaking_id(self) -> int | None:
        return self._current.utterance_id if self._current else None

    def queued(self, urgency: Urgency | None = None) -> int:
        if urgency is not None:
            return len(self._queues[urgency])
        return sum(len(queue) for queue in self._queues.values())

    def queued_announcements(self) -> list[Announcement]:
        """Waiting speech in the order it would be said."""
        return [
            item.announcement
            for urgency in (Urgency.CRITICAL, Urgency.NORMAL, Urgency.BACKGROUND)
            for item in self._queues[urgency]
        ]

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
            current is None
            and not self._skipped_pending
            and not queues[Urgency.CRITICAL]
            and not queues[Urgency.NORMAL]
            and not queues[Urgency.BACKGROUND]
        ):
            return [self._speak(announcement, seconds, now)]  # idle: straight to the voice
        if current is not None and self._barges_in(announcement, current.announcement):
            return self._barge_in(announcement, seconds, now)
        self._queues[urgency].append(_Queued(announcement, now, seconds))
        if urgency is not Urgency.CRITICAL:
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
        """Let time pass: ends paced utterances whose estimated time is up."""
        current = self._current
        if current is not None and self._done_early and now >= current.started_at + current.seconds:
            return self._finish_current(now)
        return []

    def next_wakeup(self) -> float | None:
        """When :meth:`tick` next has something to do, if ever."""
        current = self._current
        if current is not None and self._done_early:
            return current.started_at + current.seconds
        return None

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
        """
        notices = [notice] if isinstance(notice, Announcement) else list(notice or ())
        for urgency, queue in self._queues.items():
            if any(item.announcement.event_id == event_id for item in queue):
                kept: deque[_Queued] = deque()
                for item in queue:
                    if item.announcement.event_id == event_id:
                        self._drop(item.announcement, "withdrawn by producer", now)
                    else:
                        kept.append(item)
                self._queues[urgency] = kept
        current = self._current
        if current is not None and current.announcement.event_id == event_id:
            self._drop(current.announcement, "withdrawn by producer", now)
            self._current = None
            self._done_early = False
            commands: list[SpeechCommand] = [Cancel(current.utterance_id, "withdrawn by producer")]
            if notices:
                pace = self.settings.pace_wpm
                first, rest = notices[0], notices[1:]
                commands.append(self._speak(first, estimated_seconds(first.text, pace), now))
                for part in reversed(rest):  # next in line, ahead of anything queued
                    seconds = estimated_seconds(part.text, pace)
                    self._queues[part.urgency].appendleft(_Queued(part, now, seconds))
            else:
                commands += self._start_next(now)
            return commands
        submitted: list[SpeechCommand] = []
        for part in notices:
            submitted += self.submit(part, now)
        return submitted

    def drop_obsolete(self, session_id: str, now: float) -> None:
        """A session ended: its queued state chatter and background news are moot."""
        for urgency in (Urgency.NORMAL, Urgency.BACKGROUND):
            queue = self._queues[urgency]
            if not queue:
                continue
            kept: deque[_Queued] = deque()
            for item in queue:
                announcement = item.announcement
                if announcement.session_id == session_id and (
                    urgency is Urgency.BACKGROUND or _news_rank(item) == 0
                ):
                    self._drop(announcement, "session ended", now)
                else:
                    kept.append(item)
            self._queues[urgency] = kept

    def silence(self, now: float) -> list[SpeechCommand]:
        """The user asked for quiet: stop now and forget queued non-critical speech."""
        commands: list[SpeechCommand] = []
        for urgency in (Urgency.NORMAL, Urgency.BACKGROUND):
            while self._queues[urgency]:
                self._drop(self._queues[urgency].popleft().announcement, "silenced by user", now)
        self._skipped_pending = 0
        if self._current is not None:
            commands.append(Cancel(self._current.utterance_id, "silenced by user"))
            self._current = None
        self._done_early = False
        commands.extend(self._start_next(now))
        return commands

    # -- internals -----------------------------------------------------------------

    def _barges_in(self, incoming: Announcement, speaking: Announcement) -> bool:
        if incoming.urgency is Urgency.CRITICAL:
            # §2.2.9 critical interrupts; it never cuts off another critical message.
            return speaking.urgency is not Urgency.CRITICAL
        if incoming.interrupt and incoming.urgency is Urgency.NORMAL:
            # "Do not interrupt" defers normal interruptions; it never hides critical ones.
            return not self.settings.do_not_interrupt and speaking.urgency is not Urgency.CRITICAL
        return False

    def _barge_in(self, incoming: Announcement, seconds: float, now: float) -> list[SpeechCommand]:
        current = self._current
        assert current is not None
        self.interruptions += 1
        commands: list[SpeechCommand] = [Cancel(current.utterance_id, "barge-in")]
        interrupted = current.announcement
        self._current = None
        self._done_early = False
        if self.settings.after_interrupt == "resume":
            # Said again from the start: half a sentence helps nobody (nor half a message).
            queue = self._queues[interrupted.urgency]
            queue.appendleft(_Queued(interrupted, now, current.seconds))
            if interrupted.continues:
                for part in reversed(self._heard_parts[:-1]):
                    queue.appendleft(_Queued(part.announcement, now, part.seconds))
        else:
            self._drop(interrupted, "interrupted", now)
            # The rest of an interrupted message goes with it: half a message helps nobody.
            rest = self._queues[interrupted.urgency]
            while rest and rest[0].announcement.continues:
                self._drop(rest.popleft().announcement, "interrupted", now)
            for urgency in (Urgency.NORMAL, Urgency.BACKGROUND):
                if urgency.rank < incoming.urgency.rank:
                    queue = self._queues[urgency]
                    while queue:
                        self._drop(queue.popleft().announcement, "dropped after interrupt", now)
        if not incoming.interrupt:
            incoming = dataclasses.replace(incoming, interrupt=True)
        commands.append(self._speak(incoming, seconds, now))
        return commands

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

    def _note_skipped(self, announcement: Announcement) -> None:
        self._skipped_pending += 1

    def _drop_stale(self, now: float) -> None:
        """Skip speech the user would hear too late to matter."""
        if not self._queues[Urgency.NORMAL] and not self._queues[Urgency.BACKGROUND]:
            return
        stale_after = self.stale_after_seconds
        for urgency in (Urgency.NORMAL, Urgency.BACKGROUND):
            queue = self._queues[urgency]
            while (
                queue
                and now - queue[0].queued_at > stale_after
                and not queue[0].announcement.continues  # its first part was heard
            ):
                dropped = self._drop_message(queue, "stale", now)
                if urgency is Urgency.NORMAL:
                    self._note_skipped(dropped[0].announcement)
        normal = self._queues[Urgency.NORMAL]
        background = self._queues[Urgency.BACKGROUND]
        budget = self.max_queued_speech_seconds
        total = sum(item.seconds for item in normal) + sum(item.seconds for item in background)
        while total > budget and background:
            dropped = self._drop_message(background, "too much queued speech", now)
            total -= sum(item.seconds for item in dropped)
        if total <= budget or len(normal) < 2:
            return
        # Over budget: let go of the least informative news first (state chatter before
        # results), oldest first within a rank; the newest message always stays, and a
        # message is dropped whole (never the rest of one already begun).
        messages: list[range] = []
        start = 0
        while start < len(normal):
            end = _message_end(normal, start)
            messages.append(range(start, end))
            start = end
        candidates = sorted(
            (m for m in messages[:-1] if not normal[m.start].announcement.continues),
            key=lambda message: (_news_rank(normal[message.start]), message.start),
        )
        doomed: set[int] = set()
        for message in candidates:
            if total <= budget:
                break
            doomed.update(message)
            total -= sum(normal[index].seconds for index in message)
        kept: deque[_Queued] = deque()
        for index, item in enumerate(normal):
            if index in doomed:
                self._drop(item.announcement, "too much queued speech", now)
                if not item.announcement.continues:
                    self._note_skipped(item.announcement)
            else:
                kept.append(item)
        self._queues[Urgency.NORMAL] = kept

    def _start_next(self, now: float) -> list[SpeechCommand]:
        if self._current is not None:
            return []
        critical = self._queues[Urgency.CRITICAL]
        if critical:
            self._restart_split_message(now)
            item = critical.popleft()
            return [self._speak(item.announcement, item.seconds, now)]
        self._drop_stale(now)
        normal = self._queues[Urgency.NORMAL]
        if normal and normal[0].announcement.continues:
            # The rest of the message just heard comes before any summary of skipped news.
            item = normal.popleft()
            return [self._speak(item.announcement, item.seconds, now)]
        if self._skipped_pending:
            count = self._skipped_pending
            self._skipped_pending = 0
            # Our own phrase: in the listener's language, not the skipped text's.
            language = catalog_language(self.settings.languages or ["en"])
            text = (
                translator(language)
                .ngettext("{count} more update skipped.", "{count} more updates skipped.", count)
                .format(count=format_integer(count, language))
            )
            summary = Announcement(text=text, language=language, kind="system.skipped")
            return [self._speak(summary, estimated_seconds(text, self.settings.pace_wpm), now)]
        for urgency in (Urgency.NORMAL, Urgency.BACKGROUND):
            queue = self._queues[urgency]
            if queue:
                item = queue.popleft()
                return [self._speak(item.announcement, item.seconds, now)]
        return []

    def _restart_split_message(self, now: float) -> None:
        """Critical speech goes between two parts of a message: say that one again whole."""
        heard = self._heard_parts
        if not heard or heard[-1].announcement.urgency is Urgency.CRITICAL:
            return
        last = heard[-1].announcement
        queue = self._queues[last.urgency]
        if (
            queue
            and queue[0].announcement.continues
            and queue[0].announcement.event_id == last.event_id
        ):
            for part in reversed(heard):
                queue.appendleft(_Queued(part.announcement, now, part.seconds))
            self._heard_parts = []

    def _finish_current(self, now: float) -> list[SpeechCommand]:
        self._current = None
        self._done_early = False
        self.spoken_count += 1
        return self._start_next(now)

    def _speak(self, announcement: Announcement, seconds: float, now: float) -> Speak:
        if self.on_start is not None:
            self.on_start(announcement)
        utterance_id = self._next_id
        self._next_id += 1
        self._current = _Current(utterance_id, announcement, now, seconds)
        if announcement.continues and self._heard_parts:
            self._heard_parts.append(_Queued(announcement, now, seconds))
        else:
            self._heard_parts = [_Queued(announcement, now, seconds)]
        return Speak(utterance_id, announcement)

    def _drop(self, announcement: Announcement, reason: str, now: float) -> None:
        self.drops[reason] += 1
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
