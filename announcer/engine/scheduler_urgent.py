"""Speech that goes first: critical news and its lead-up, barge-in, the user's own keys.

Critical speech brings its own session's earlier news forward (order within a source),
cuts off what it may, and what it interrupted is resumed or dropped per ``after_interrupt``;
the answer to a key is said at once (issue 14 d).
"""

from __future__ import annotations

import dataclasses
from collections import Counter, deque

from announcer.engine.announcement import Announcement, Urgency
from announcer.engine.scheduler_folding import StatusFolding
from announcer.engine.scheduler_rules import (
    _SESSION_STARTED,
    PROMPT_KINDS,
    QUESTION_END_KINDS,
    QUESTION_STATUS_LEAD_SECONDS,
    STATUS_KINDS,
    WORDS_KIND,
    _by_order,
    _Current,
    _is_final,
    _Queued,
    is_user_reply,
)
from announcer.engine.speech_commands import Cancel, SpeechCommand


class UrgentSpeech(StatusFolding):
    """Critical speech, interruptions and the answers to the user's keys."""

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
        """The answer to the user's own key: at once, cutting off what is being said.

        It never cuts off another answer to a key, and an early key's ``cue`` cuts off
        nothing (issue 20). Critical speech, a question included, it cuts off only when
        the UI marked it ``answers_key``; ``do_not_interrupt`` defers all but such a
        critical answer. What it cut off is said again whole after
        it, except the very question it is about (``w``, F2): that is heard through the
        answer, and only its parts not yet begun (the keys line) follow.
        """
        current = self._current
        incoming = item.announcement
        if incoming.cue and (
            (current is not None and current.announcement.cue)
            or any(waiting.announcement.cue for waiting in self._replies)
        ):
            # One early key's cue said or waiting is enough: another would only delay the
            # question more.
            self._drop(incoming, "an early key's cue already waits", now)
            return []
        if not incoming.cue:
            # A later key's answer says what that key did ("Accept: …? Type c to confirm",
            # "Sent: accept."): an earlier key's "Not yet." still waiting would now
            # contradict it.
            for waiting in [w for w in self._replies if w.announcement.cue]:
                self._replies.remove(waiting)
                self._drop(waiting.announcement, "a later key's answer replaced the cue", now)
        if any(
            waiting.announcement.text == incoming.text
            and waiting.announcement.event_id == incoming.event_id
            for waiting in self._replies
        ):
            # A wrong key pressed on and on: one refusal said and one waiting is enough;
            # each more would wait its turn, and the question behind them all (it piled
            # up half a minute of "Type A to accept or R to reject" for 8 s of presses).
            self._drop(incoming, "the same answer to a key already waits", now)
            return []
        self._replies.append(item)
        if current is None:
            return self._start_next(now)
        speaking = current.announcement
        critical = speaking.urgency is Urgency.CRITICAL
        key_at_once = incoming.answers_key and incoming.urgency is Urgency.CRITICAL
        if (
            is_user_reply(speaking)
            or incoming.cue
            or (critical and not incoming.answers_key)
            or (self.settings.do_not_interrupt and not key_at_once)
        ):
            return []  # next in line
        self.interruptions += 1
        self._current = None
        self._done_early = False
        commands: list[SpeechCommand] = [Cancel(current.utterance_id, "user key")]
        if incoming.event_id is not None and speaking.event_id == incoming.event_id:
            self._heard_through_key(current, now)
        elif critical or self.settings.after_interrupt == "resume" or speaking.kind == WORDS_KIND:
            if speaking.event_id is not None and speaking.event_id in self._question_started:
                self._questions_cut[speaking.event_id] = None  # a question, or its keys line
                if len(self._questions_cut) > len(self._question_started):
                    del self._questions_cut[next(iter(self._questions_cut))]
            # Critical speech is never lost (said again whole, in its place), and issue 20:
            # the agent's words are never dropped; the sentence the key cut off is said
            # again from its start, whatever ``after_interrupt`` says.
            self._resume(current, now)
        else:
            self._drop_interrupted(current, now)
        # At once: before the rest of the message it cut off, which follows it.
        self._replies.remove(item)
        return [*commands, self._speak_item(item, now)]

    def _heard_through_key(self, current: _Current, now: float) -> None:
        """The key's answer says the question being read (``w``, F2): not read again.

        The question's own words still waiting (its other language parts) go with it;
        our sentences kept with it (the keys line) follow the answer. A sentence of ours
        the answer cut off is said again (it is short, and names the keys).
        """
        speaking = current.announcement
        lane = self._queues[Urgency.CRITICAL] if current.held else self._lane(speaking)
        if speaking.event_id is not None:
            self._questions_cut.pop(speaking.event_id, None)  # heard through the key's answer
        if speaking.kind not in PROMPT_KINDS:
            lane.appendleft(_Queued(speaking, now, current.seconds, current.order, kept=True))
            return
        self._drop(speaking, "said by the user's key", now)
        while (
            lane
            and lane[0].announcement.continues
            and lane[0].announcement.event_id == speaking.event_id
            and lane[0].announcement.kind in PROMPT_KINDS
        ):
            self._drop(lane.popleft().announcement, "said by the user's key", now)

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
