"""Speech that goes first: critical news and its lead-up, barge-in, the user's own keys.

Critical speech starts within half a second (§2.2.9, issue 30 item 4): it cuts off any
lower-urgency speech at the next word boundary, and what it interrupted is said again (the
agent's words, a question, a final state always; other news per ``after_interrupt``); its
session's waiting news follows it. The answer to a key is said at once (issue 14 d).
"""

from __future__ import annotations

import dataclasses
from collections import deque
from typing import Final

from announcer.engine.announcement import Announcement, Urgency
from announcer.engine.scheduler_folding import StatusFolding
from announcer.engine.scheduler_rules import (
    _CHATTER,
    _SESSION_STARTED,
    PROMPT_KINDS,
    QUESTION_END_KINDS,
    WORDS_KIND,
    _by_order,
    _Current,
    _is_final,
    _Queued,
    is_user_reply,
    next_word_boundary,
    speech_class,
)
from announcer.engine.speech_commands import Cancel, SpeechCommand

# A word boundary this close is taken as now.
_CUT_AT_ONCE_SECONDS: Final = 0.02


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
        """§2.2.9: critical news is announced at once, interrupting lower urgency.

        Issue 30 item 4: whatever is being said, the agent's words, a normal question or
        its own session's earlier news included, is cut off at the next word boundary and
        said again after it (:meth:`_set_aside`). It never cuts off other critical speech,
        nor the answer to the user's own key (short, and asked for), nor what its own
        session owes first (:meth:`_owed_first`).
        """
        speaking = current.announcement
        if speaking.urgency is Urgency.CRITICAL or current.held or is_user_reply(speaking):
            return False
        if (
            incoming.session_id is not None
            and speaking.session_id == incoming.session_id
            and (self._current_owed or speaking.outcome)
        ):
            return False
        return not self._leads_in(incoming, current, now)

    def _leads_in(self, incoming: Announcement, current: _Current, now: float) -> bool:
        """Whether what is being said is the lead-up of question ``incoming``: its own
        session's, ending within the lead-in time (:meth:`_lead_in_seconds`)."""
        return (
            incoming.kind in PROMPT_KINDS
            and incoming.session_id is not None
            and current.announcement.session_id == incoming.session_id
            and current.started_at + current.seconds - now <= self._lead_in_seconds()
        )

    def _lead_in_seconds(self) -> float:
        """How long a question's lead-up may make it wait.

        What the agent said just before it asks is what the question is about ("I will
        delete the build folder." before "Run rm -rf build?"): heard after the question,
        it comes too late to help the answer. So a question lets its own session's
        earlier words and results go first, within ``max_lead_in_seconds`` of speech at
        the user's rate (issue 30: the unbounded lead-up of issue 14 once made one wait
        25 s). Other critical news (an error, a hand-off) never waits for a lead-up.
        """
        return max(self.max_lead_in_seconds, self.max_delay_seconds)

    def _submit_critical(self, item: _Queued, now: float) -> list[SpeechCommand]:
        """Critical news starts within half a second (§2.2.9, issue 30 item 4).

        Only other critical speech, the answer to a key and what its own session owes
        first (:meth:`_owed_first`) go before it. What is being said is cut off at the end
        of the word in progress (:func:`next_word_boundary`, never later than
        ``CRITICAL_CUT_WITHIN_SECONDS``) and said again after it; the rest of its
        session's waiting news follows it in order, owed to its next critical news.
        """
        incoming = item.announcement
        critical = self._queues[Urgency.CRITICAL]
        current = self._current
        # Other critical speech already waits: this one would not be next, so cutting off
        # what is being said would gain it nothing.
        behind_others = bool(critical)
        if (
            incoming.session_id is not None
            and not incoming.continues
            and (not incoming.kind.startswith("system.") or incoming.kind in QUESTION_END_KINDS)
        ):
            lead_in = 0.0
            if incoming.kind in PROMPT_KINDS:
                lead_in = self._lead_in_seconds()
                if current is not None and self._leads_in(incoming, current, now):
                    lead_in -= max(0.0, current.started_at + current.seconds - now)
            for part in self._owed_first(incoming, now, lead_in):
                part.lead_for = incoming.event_id
                critical.append(part)
        critical.append(item)
        if current is None:
            return self._start_next(now)
        if behind_others or not self._critical_cuts_off(incoming, current, now):
            return []
        cut_at = next_word_boundary(
            current.announcement.text, current.started_at, current.seconds, now
        )
        if cut_at > now + _CUT_AT_ONCE_SECONDS:
            self._cut_due = (current.utterance_id, cut_at)
            return []
        return self._cut_for_critical(current, now)

    def _owed_first(self, incoming: Announcement, now: float, lead_in: float) -> list[_Queued]:
        """What of its session goes before ``incoming``: taken from its lane, in order.

        The result of what the user just approved (``outcome``: the demo's "Booked."
        before its next question), what its session's earlier critical news already
        went before once (``owed``): put off once, never twice, so a run of questions
        cannot keep the agent's words and results from ever being heard; and a
        question's lead-up, ``lead_in`` seconds of its session's words and results
        (:meth:`_lead_in_seconds`). The rest of its session's waiting words, results and
        session start become owed.
        """
        session_id = incoming.session_id
        first: list[_Queued] = []
        lanes = (self._words, self._queues[Urgency.NORMAL], self._queues[Urgency.BACKGROUND])
        for lane in lanes:
            for waiting in lane:
                announcement = waiting.announcement
                if announcement.session_id != session_id:
                    continue
                if waiting.owed or announcement.outcome:
                    first.append(waiting)
                elif (
                    announcement.kind == WORDS_KIND
                    or announcement.kind == _SESSION_STARTED
                    or announcement.continues
                    or _is_final(announcement)
                    or (lead_in > 0.0 and announcement.kind == "agent.progress.updated")
                ):
                    if lead_in > 0.0:
                        first.append(waiting)
                    else:
                        waiting.owed = True
        if not first:
            return []
        # Within the user's ``max_news_delay_seconds`` (how long owed news may make
        # critical news wait) or a question's lead-in time; the result of what the user
        # approved goes whatever its length.
        first.sort(key=_by_order)
        budget = max(self.max_delay_seconds, lead_in) if lead_in > 0.0 else self.max_delay_seconds
        # What came before that result goes before it too (order within a source).
        last_outcome = max(
            (index for index, waiting in enumerate(first) if waiting.announcement.outcome),
            default=-1,
        )
        fits: list[_Queued] = []
        for index, waiting in enumerate(first):
            if index <= last_outcome:
                fits.append(waiting)
            elif budget >= waiting.seconds:
                budget -= waiting.seconds
                fits.append(waiting)
            else:
                budget = -1.0  # never a lead-up with a hole in it
                waiting.owed = waiting.owed or waiting.announcement.kind != (
                    "agent.progress.updated"
                )
        first = fits
        if not first:
            return []
        newest = max(waiting.order for waiting in first)
        for urgency in (Urgency.NORMAL, Urgency.BACKGROUND):
            for waiting in self._queues[urgency]:
                announcement = waiting.announcement
                if (
                    announcement.session_id == session_id
                    and waiting.order < newest
                    and not waiting.owed
                    and not announcement.outcome
                    and announcement.kind in _CHATTER
                    and not announcement.continues
                ):
                    # What the agent was doing before news said now: moot, and said after
                    # it, out of order. Counted in its source's next summary.
                    first.append(waiting)
                    waiting.lead_for = "moot"
        taken = {id(waiting) for waiting in first}
        self._words = deque(w for w in self._words if id(w) not in taken)
        for urgency in (Urgency.NORMAL, Urgency.BACKGROUND):
            queue = self._queues[urgency]
            self._queues[urgency] = deque(w for w in queue if id(w) not in taken)
        for waiting in [w for w in first if w.lead_for == "moot"]:
            first.remove(waiting)
            self._drop(waiting.announcement, "skipped before critical news", now)
            self._note_skipped(waiting.announcement)
        first.sort(key=_by_order)
        return first

    def _cut_for_critical(self, current: _Current, now: float) -> list[SpeechCommand]:
        """Cut ``current`` off for the critical news at the head of its lane."""
        self._cut_due = None
        self.interruptions += 1
        critical = self._queues[Urgency.CRITICAL]
        head = critical[0]
        if not head.announcement.interrupt:
            head.announcement = dataclasses.replace(head.announcement, interrupt=True)
        # The critical news itself (its lead-up, what its session owes first, may precede it).
        urgent = next(
            (item for item in critical if item.announcement.urgency is Urgency.CRITICAL), head
        )
        commands: list[SpeechCommand] = [Cancel(current.utterance_id, "barge-in")]
        self._set_aside(current, urgent.announcement, now)
        return commands + self._start_next(now)

    def _cut_when_due(self, now: float) -> list[SpeechCommand] | None:
        """The word critical news waited for has ended: cut off what is being said."""
        due = self._cut_due
        current = self._current
        # (A timer may fire a hair before its moment: within a microsecond is due.)
        if due is None or now + 1e-6 < due[1]:
            return None
        self._cut_due = None
        critical = self._queues[Urgency.CRITICAL]
        if (
            current is None
            or current.utterance_id != due[0]
            or not critical
            or not self._critical_cuts_off(critical[0].announcement, current, now)
        ):
            return None
        return self._cut_for_critical(current, now)

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
            or self._cues_before_question
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
            for held in self._cues_before_question:
                self._drop(held.announcement, "a later key's answer replaced the cue", now)
            self._cues_before_question.clear()
        elif self._question_waits_unread():
            # Issue 30 item 8: "Not yet." before the question it refers to was read told
            # the user nothing; it waits for that question to begin, then follows it.
            self._cues_before_question.append(item)
            return []
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
        elif (
            speaking.continues
            and speaking.kind not in PROMPT_KINDS
            and speaking.event_id is not None
            and speaking.event_id in self._question_started
            and speaking.event_id not in self._questions_cut
        ):
            # The keys line of a question already heard through ("Accept A Enter, reject
            # R." when A's confirm step "Enter." cuts it): said again alone, after the
            # answer (short, it names the keys); the question is never read again for a
            # key, as resuming the whole message did.
            lane = self._queues[Urgency.CRITICAL] if current.held else self._lane(speaking)
            lane.appendleft(_Queued(speaking, now, current.seconds, current.order, kept=True))
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
        """The utterance ``incoming`` cuts off: said again later, or dropped.

        The agent's words, a question (and why one ended), a final state, a plan's step
        and a session's start are always said again whole, right after the news that cut
        them off (issue 30 item 4); other news follows ``after_interrupt``, except its own
        session's chatter, which critical news of that session makes moot (said again
        after it, it would be out of order): counted in its source's next summary.
        """
        self._current = None
        self._done_early = False
        self._cut_due = None
        interrupted = current.announcement
        said_again = (
            speech_class(interrupted) in ("words", "question")
            or _is_final(interrupted)
            # A plan's step and a session's start are never folded (issue 20).
            or interrupted.kind in ("agent.progress.updated", _SESSION_STARTED)
        )
        if (
            not said_again
            and incoming.urgency is Urgency.CRITICAL
            and interrupted.session_id is not None
            and interrupted.session_id == incoming.session_id
        ):
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
        if self.settings.after_interrupt == "resume" or said_again:
            # After critical news, never ahead of it: its own session's included.
            self._resume(current, now, ahead_of_critical=incoming.urgency is not Urgency.CRITICAL)
            if self.settings.after_interrupt == "resume":
                return
        else:
            self._drop_interrupted(current, now)
        for urgency in (Urgency.NORMAL, Urgency.BACKGROUND):
            if urgency.rank < incoming.urgency.rank:
                queue = self._queues[urgency]
                kept_news: deque[_Queued] = deque()
                for item in queue:
                    if item.kept or speech_class(item.announcement) == "question":
                        kept_news.append(item)  # a question never goes unsaid
                    else:
                        self._drop(item.announcement, "dropped after interrupt", now)
                self._queues[urgency] = kept_news

    def _resume(self, current: _Current, now: float, *, ahead_of_critical: bool = True) -> None:
        """Said again from the start: half a sentence helps nobody (nor half a message).

        Ahead of its own session's critical speech if that waits (unless
        ``ahead_of_critical`` is False: critical news cut it off), else first in its lane.
        """
        interrupted = current.announcement
        if interrupted.kind == "system.skipped":
            # Not said again, nor counted again: re-counted, it was said again at once,
            # whole ("1 more: 1 file read." said, cut and said again, issue 31 item 11).
            # The news it counted was shown as skipped when it was folded.
            self._drop(interrupted, "interrupted", now)
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
        if ahead_of_critical and session_id is not None and queue is not critical and critical:
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
