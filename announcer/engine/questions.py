"""Questions from agents: opened, presented one at a time, reminded, withdrawn (§6)."""

from __future__ import annotations

import dataclasses
import math
from collections import deque
from collections.abc import Iterator
from typing import Final

from announcer.engine.announcement import Announcement
from announcer.engine.answer_keys import NO_ANSWERING_UI_KEYS
from announcer.engine.clock import LATE_TOLERANCE_SECONDS, Lateness
from announcer.engine.clock_skew import ClockSkew
from announcer.engine.connections import Connections
from announcer.engine.engine_records import PROMPT_EVENTS, OutgoingReply, log_note
from announcer.engine.folding import UrgentFolding
from announcer.engine.phrases import N_
from announcer.engine.policy import Policy
from announcer.engine.policy_questions import waits_without_timeout
from announcer.engine.policy_words import Spoken
from announcer.engine.prompts import PendingPrompt
from announcer.engine.question_counts import QuestionCounts
from announcer.engine.question_notices import QuestionNotices
from announcer.engine.raw_frames import _as_sentence
from announcer.engine.replies import ReplyBook, ReplyReady
from announcer.engine.scheduler import SpeechScheduler
from announcer.engine.speech_commands import SpeechCommand
from announcer.engine.text_hygiene import clean_for_speech
from announcer.engine.tracker import SessionTracker
from announcer.engine.tracker_records import Admission, SessionState, TrackerNote
from announcer.i18n.translate import translator
from announcer.protocol.events import AwaitingClarification, AwaitingConfirmation, StateChanged
from announcer.protocol.log import DiagnosticsLog

#: A question the producer withdraws this close to its deadline (or later) ran out of
#: time: a hook's own timer and our tick race for the same moment.
VOID_AT_DEADLINE_SECONDS: Final = 1.0


class QuestionDesk:
    """The life of a question, from its arrival to its answer, expiry or withdrawal.

    It owns which question is presented and when, its reminders, what the user was
    told of each (still open, time to accept over), the spoken counts of those waiting
    (:class:`QuestionCounts`) and the replies made without the user; it is handed the
    reply book, the scheduler, the policy and the tracker it works with.
    """

    def __init__(
        self,
        book: ReplyBook,
        scheduler: SpeechScheduler,
        policy: Policy,
        tracker: SessionTracker,
        *,
        diagnostics: DiagnosticsLog,
        folding: UrgentFolding,
        clocks: ClockSkew,
        connections: Connections,
        serial: Iterator[int],
    ) -> None:
        self.book = book
        self.scheduler = scheduler
        self.policy = policy
        self.tracker = tracker
        self.diagnostics = diagnostics
        self.folding = folding
        self.clocks = clocks
        self.connections = connections
        # our phrases about a question, naming it by its subject
        self.notices = QuestionNotices(policy, tracker)
        self.counts = QuestionCounts(
            book,
            scheduler,
            policy,
            tracker,
            diagnostics=diagnostics,
            notices=self.notices,
            folding=folding,
            serial=serial,
        )
        # The question being presented (read out, answer keys bound to it), when it was
        # presented, and whether the next one is due (presented at the next tick).
        self._presented: str | None = None
        self.presented_at: float | None = None
        self._present_due_at: float | None = None
        # When the presented question was last said to be still waiting (reminders).
        self._reminded_at: float | None = None
        # Questions whose time to accept was said to be over (§6.4; reject still open).
        self._accept_over_told: set[str] = set()
        # Questions already said to be still open after the agent went on working.
        self._told_open: set[str] = set()
        # Replies made without the user (only ``auto_reject``), waiting to be sent.
        self._outgoing: deque[OutgoingReply] = deque(maxlen=10_000)

    def tick(self, now: float) -> list[SpeechCommand]:
        """Time passed: questions expire, accept closes, the next one is presented,
        reminders and counts held back are said."""
        commands: list[SpeechCommand] = []
        for prompt in self.book.expire(now):
            self.tracker.prompt_closed(
                prompt.source_id, prompt.session_id, prompt.reply_token, resolved=True
            )
            commands += self.say_expired(prompt, now)
        commands += self._say_accept_over(now)
        commands += self.present_next(now)
        commands += self._remind(now)
        commands += self.counts.say_due(now)
        return commands

    def next_wakeup(self) -> float | None:
        """The earliest ``now`` at which :meth:`tick` has work for a question, or None."""
        candidates = [
            self.book.next_deadline(),
            self._accept_over_due(),
            self._present_due_at,
            self._reminder_due(),
            self.counts.next_due(),
        ]
        present = [c for c in candidates if c is not None]
        return min(present) if present else None

    def withdrawn(
        self, admission: Admission, now: float
    ) -> tuple[list[SpeechCommand], StateChanged | None]:
        """§6.8: the producer withdrew the questions of ``admission``; each is said.

        The state change that withdrew them may say why, in the agent's words; they are
        the notice's reason, said once with it (issue 30 item 1). Also returns that state
        change when its words were said so, for it is then not said again.
        """
        withdrawing, reason = self._withdrawal_reason(admission)
        commands: list[SpeechCommand] = []
        said_reason = False
        for token in admission.voided_tokens:
            prompt = self.book.void(token)
            if prompt is None:
                continue
            if prompt.timeout_seconds > 0 and now >= prompt.deadline - VOID_AT_DEADLINE_SECONDS:
                # §6.4/§6.8: the producer moved on because its time ran out (a hook's
                # own timer can beat our tick): that is a timeout, said as one.
                commands += self.say_expired(prompt, now)
                continue
            notice: list[Announcement]
            if self.scheduler.question_started_at(prompt.event_id) is None:
                # Issue 20: never heard, it is still said, at its urgency and in its place.
                notice = self.notices.unheard_void_notice(prompt, reason)
            else:
                alone = len(admission.voided_tokens) == 1 and not self.book.pending()
                notice = self.notices.withdrawn_notice(prompt, reason, alone=alone)
            said_reason = said_reason or reason is not None
            commands += self.folding.withdraw(prompt, notice, now)
        return commands, withdrawing if said_reason else None

    def _withdrawal_reason(self, admission: Admission) -> tuple[StateChanged | None, Spoken | None]:
        """The state change that withdrew questions, and its own summary (the agent's
        reason), if it gave one (§6.8: a change away from ``awaiting_input``)."""
        if not admission.voided_tokens:
            return None, None
        for event in admission.events:
            if isinstance(event, StateChanged) and event.from_state == "awaiting_input":
                return event, self.policy.summary(event)
        return None, None

    def connection_lost(self, source_id: str, now: float) -> list[SpeechCommand]:
        """§8.2.5: the producer applies defaults for a lost connection; close its prompts."""
        commands: list[SpeechCommand] = []
        self.connections.lost(source_id)
        for prompt in self.book.pending():
            if prompt.source_id == source_id:
                self.book.void(prompt.reply_token)
                notice = self.notices.notice(
                    N_("Connection lost; the agent will apply its default for: {what}"),
                    prompt,
                    kind="system.prompt_voided",
                )
                commands += self.folding.withdraw(prompt, notice, now)
        commands += self.present_next(now)
        return commands

    def subscription_closed(self, source_id: str, now: float) -> list[SpeechCommand]:
        """§5.8.2: the producer closed the subscription and applies each question's default.

        Every question from that connection is void; the user hears which default the
        agent applies (goes ahead, rejected, stopped waiting), never "sent".
        """
        commands: list[SpeechCommand] = []
        self.connections.closed(source_id)
        for prompt in self.book.pending():
            if prompt.source_id != source_id:
                continue
            self.book.void(prompt.reply_token)
            self.tracker.prompt_closed(prompt.source_id, prompt.session_id, prompt.reply_token)
            notice = self.notices.notice(
                self.notices.closed_msgid(prompt),
                prompt,
                kind="system.prompt_voided",
                critical=True,
            )
            commands += self.folding.withdraw(prompt, notice, now)
        commands += self.present_next(now)
        return commands

    def closed_by_answer(self, prompt: PendingPrompt, now: float) -> list[SpeechCommand]:
        """``prompt`` was answered (or found expired): the producer owes a state change
        for it, and what is still queued about it is cut off (issue 14 c: no key hints
        or time left after the answer); the next question comes at the next tick."""
        self.tracker.prompt_closed(
            prompt.source_id, prompt.session_id, prompt.reply_token, resolved=True
        )
        commands = self.scheduler.question_ended(prompt.event_id, now)
        if self._presented == prompt.reply_token:
            self._present_due_at = now  # the next question, at the next tick
        return commands

    def take_outgoing(self) -> list[OutgoingReply]:
        """Replies made without the user (only ``auto_reject``), to send now."""
        replies = list(self._outgoing)
        self._outgoing.clear()
        return replies

    def presented_prompt(self) -> PendingPrompt | None:
        """The question being presented: the one the user was told about and answers now.

        Questions are presented one at a time in the order they arrived; the others
        wait (and the user hears how many). A UI binds its answer keys to this one
        (``UserAnswer.event_id``), and shows the next one only when this one closes.
        """
        token = self._presented
        return self.book.get(token) if token is not None else None

    def resolved_elsewhere(self, token: str, now: float) -> list[SpeechCommand]:
        """§6.7.2: the producer says this question was answered elsewhere; said once.

        A later key is refused as "already answered elsewhere", never sent.
        """
        prompt = self.book.close(token, "answered_elsewhere")
        if prompt is None:
            return []
        notice = self.notices.notice(
            N_("Answered elsewhere; no answer is needed from you: {what}"),
            prompt,
            kind="system.prompt_voided",
            short=True,
        )
        return self.folding.withdraw(prompt, notice, now)

    def still_open(self, tokens: list[str], now: float) -> list[SpeechCommand]:
        """The agent left awaiting_input without naming a question: none is withdrawn.

        Said once per question (§6.8, §6.1(3): parallel work, or several questions
        open and the change names none of them).
        """
        untold = [t for t in tokens if self.book.get(t) is not None and t not in self._told_open]
        if not untold:
            return []
        self._told_open.update(untold)
        if len(self._told_open) > 4096:
            self._told_open = set(untold)
        prompt = self.book.get(untold[0])
        assert prompt is not None
        text = translator(self.policy.phrase_language).gettext(
            "The agent went on working; your question is still open."
        )
        announcement = self.notices.system_announcement(
            text, prompt, kind="system.prompt_still_open", critical=False
        )
        announcement.event_id = None  # not part of the question: never cut off with it
        return self.folding.submit(announcement, prompt.source_id, now)

    def open_prompt(
        self,
        event: AwaitingConfirmation | AwaitingClarification,
        session: SessionState,
        source_id: str,
        now: float,
    ) -> list[SpeechCommand]:
        prompt = self._prompt_for(event, source_id, now, self.clocks.lateness(event, source_id))
        if self.connections.is_closed(source_id):
            # §5.8.2: after its subscription.close the producer applies defaults itself.
            self.book.refuse(prompt.reply_token, "voided")
            self.tracker.prompt_closed(source_id, prompt.session_id, prompt.reply_token)
            commands: list[SpeechCommand] = []
            notice = self.notices.notice(
                self.notices.closed_msgid(prompt),
                prompt,
                kind="system.prompt_voided",
                critical=True,
            )
            for part in notice:
                commands += self.folding.submit(part, source_id, now)
            return commands
        if prompt.deadline <= now:
            return self._expired_on_arrival(prompt, now)
        first = self.book.get(prompt.reply_token)
        problem = self.book.open(prompt)
        if problem is not None:
            if self.book.closed_reason(prompt.reply_token) == "superseded" and first is None:
                return self.counts.set_aside_notice(prompt, now)
            log_note(
                self.diagnostics,
                TrackerNote("reply_token.reused", problem, event.session_id, event.event_id),
                source_id,
                now,
            )
            return self._refuse_reused(prompt, first, source_id, now)
        if first is not None:
            return []  # the same question delivered again: it stays as it was
        if (
            isinstance(event, AwaitingConfirmation)
            and self.policy.settings.reply_policy == "auto_reject"
            and self.connections.can_reply(source_id)
        ):
            # Nobody waits on the user: say it and reject it now, on the standing order.
            said = self._say_prompt(prompt, session, now)
            return said + self._auto_reject(prompt, source_id, now)
        return self.present_or_wait(prompt, now)

    def present_or_wait(self, prompt: PendingPrompt, now: float) -> list[SpeechCommand]:
        """One question at a time, in the order they came: the others wait, counted aloud."""
        presented = self.presented_prompt()
        if presented is None or presented.reply_token == prompt.reply_token:
            return self.present(prompt, now)
        return self.counts.waiting_notice(prompt, now)

    def present(self, prompt: PendingPrompt, now: float) -> list[SpeechCommand]:
        self._presented = prompt.reply_token
        self.presented_at = now
        self._reminded_at = None
        self._present_due_at = None
        session = self.tracker.session(prompt.source_id, prompt.session_id)
        commands = self._say_prompt(prompt, session, now)
        waiting = len(self.book.pending()) - 1
        self.counts.said_with_question()
        if waiting > 0:
            commands += self.folding.submit(
                self.counts.waiting_announcement(prompt, waiting, True), None, now
            )
        return commands

    def _reminder_due(self) -> float | None:
        """When the presented question is next said to be still waiting, or None.

        Only a question whose agent waits without a deadline (ACP permissions, marked
        by announcer's own extension) is reminded of: one with a deadline has its time
        left said instead. ``question_reminder_seconds`` 0 turns reminders off.
        """
        interval = self.policy.settings.question_reminder_seconds
        prompt = self.presented_prompt()
        if interval <= 0 or prompt is None or self.presented_at is None:
            return None
        if self.policy.answer_keys is NO_ANSWERING_UI_KEYS:
            return None  # ``--ui none``: "your answer" could never come from here
        event = prompt.event
        if not isinstance(event, PROMPT_EVENTS) or not waits_without_timeout(event):
            return None
        return (self._reminded_at or self.presented_at) + interval

    def _remind(self, now: float) -> list[SpeechCommand]:
        """Say that the presented question still waits, once per reminder interval.

        Never over the question itself: while anything about it is being said or queued,
        the next reminder counts from now.
        """
        due = self._reminder_due()
        prompt = self.presented_prompt()
        if due is None or prompt is None or now < due:
            return []
        speaking = self.scheduler.speaking
        if (speaking is not None and speaking.event_id == prompt.event_id) or any(
            a.event_id == prompt.event_id for a in self.scheduler.queued_announcements()
        ):
            self._reminded_at = now
            return []
        self._reminded_at = now
        commands: list[SpeechCommand] = []
        for part in self.notices.notice(
            N_("Still waiting for your answer: {what}"),
            prompt,
            kind="system.prompt_reminder",
            critical=True,
        ):
            # critical, so it is never skipped as stale; but it does not cut other speech
            commands += self.folding.submit(dataclasses.replace(part, interrupt=False), None, now)
        return commands

    def present_next(self, now: float) -> list[SpeechCommand]:
        """When the presented question closed, present the oldest one still waiting."""
        commands = self.counts.recount_waiting(self.presented_prompt(), now)
        if self._presented is not None and self.book.get(self._presented) is not None:
            self._present_due_at = None
            return commands
        self._presented = None
        self._present_due_at = None
        pending = self.book.pending()
        if not pending:
            self.presented_at = None
            return commands
        return commands + self.present(pending[0], now)

    def _say_prompt(
        self, prompt: PendingPrompt, session: SessionState | None, now: float
    ) -> list[SpeechCommand]:
        """Read the question out, its countdown from the time really left (§6.4)."""
        event = prompt.event
        if session is None:
            # The session was evicted under pressure while its question waited.
            session = SessionState(
                session_id=prompt.session_id,
                source_id=prompt.source_id,
                producer_id=prompt.producer_id,
                producer_name=prompt.producer_name,
                first_seen=now,
                last_activity=now,
            )
        if prompt.malformed or not isinstance(event, PROMPT_EVENTS):
            notice = self.notices.notice(
                N_("Malformed confirmation: {what}"),
                prompt,
                kind="system.prompt_malformed",
                critical=True,
            )
            if prompt.malformed:
                # §10.1.3: its words kept: consequence, risk, reversibility, deadline.
                details = self._malformed_details(prompt, now)
                if details and notice:
                    # the action ends as a sentence before its details follow (issue 29,
                    # item 15: sentences were run together)
                    last = notice[-1]
                    notice[-1] = dataclasses.replace(last, text=_as_sentence(last.text))
                if details:
                    notice.append(
                        dataclasses.replace(
                            self.notices.system_announcement(
                                details, prompt, kind="system.prompt_malformed", critical=True
                            ),
                            continues=True,
                        )
                    )
                notice.append(
                    dataclasses.replace(
                        self.notices.system_announcement(
                            translator(self.policy.phrase_language).gettext(
                                "This request was malformed, so only reject is offered."
                            ),
                            prompt,
                            kind="system.prompt_malformed",
                            critical=True,
                        ),
                        continues=True,
                    )
                )
            commands: list[SpeechCommand] = []
            for part in notice:
                commands += self.folding.submit(part, prompt.source_id, now)
            return commands
        left = math.ceil(prompt.seconds_left(now))
        if left < event.timeout_seconds:
            event = event.model_copy(update={"timeout_seconds": max(1, left)})
        commands = []
        for announcement in self.policy.decide(event, session, prompt.source_id, now):
            commands += self.folding.submit(announcement, prompt.source_id, now)
        if (
            isinstance(event, AwaitingConfirmation)
            and not prompt.accepts(now)
            and prompt.deadline - now > LATE_TOLERANCE_SECONDS
        ):
            commands += self._say_accept_over_for(prompt, now, again=True)
        return commands

    def _accept_over_due(self) -> float | None:
        """When the next open question's time to accept ends before its deadline."""
        due = [
            prompt.accept_deadline
            for prompt in self.book.pending()
            if prompt.kind == "confirmation"
            and not prompt.malformed
            and prompt.accept_deadline < prompt.deadline - LATE_TOLERANCE_SECONDS
            and prompt.reply_token not in self._accept_over_told
            and self.connections.can_reply(prompt.source_id)
            and self.scheduler.question_started_at(prompt.event_id) is not None
        ]
        return min(due) if due else None

    def _say_accept_over(self, now: float) -> list[SpeechCommand]:
        """§6.4: accept closes at the producer's deadline by our best estimate; said once."""
        commands: list[SpeechCommand] = []
        for prompt in self.book.pending():
            if (
                prompt.kind == "confirmation"
                and not prompt.malformed
                and prompt.accept_deadline < prompt.deadline - LATE_TOLERANCE_SECONDS
                and now >= prompt.accept_deadline
                and prompt.reply_token not in self._accept_over_told
                and self.scheduler.question_started_at(prompt.event_id) is not None
            ):
                commands += self._say_accept_over_for(prompt, now)
        return commands

    def _say_accept_over_for(
        self, prompt: PendingPrompt, now: float, *, again: bool = False
    ) -> list[SpeechCommand]:
        """Said once when the time runs out, and with the question each time it is read."""
        told = self._accept_over_told
        if not self.connections.can_reply(prompt.source_id):
            return []  # (a recording replayed cannot be answered at all)
        if prompt.reply_token in told and not again:
            return []
        if len(told) > 4096:
            told.clear()
        told.add(prompt.reply_token)
        notice = self.notices.notice(
            N_("The time to accept is over, you can still reject: {what}"),
            prompt,
            kind="system.accept_over",
            critical=True,
        )
        commands: list[SpeechCommand] = []
        for part in notice:
            commands += self.folding.submit(part, prompt.source_id, now)
        return commands

    def _malformed_details(self, prompt: PendingPrompt, now: float) -> str:
        """What a malformed confirmation says beyond its action, with the time left now."""
        event = prompt.event
        if not isinstance(event, AwaitingConfirmation):
            return ""
        raw = {
            "consequence": getattr(event, "consequence", None),
            "risk_level": getattr(event, "risk_level", None),
            "reversibility": getattr(event, "reversibility", None),
            "irreversible": getattr(event, "irreversible", None),
            "timeout_seconds": max(1, math.ceil(prompt.seconds_left(now))),
            "default_decision": getattr(event, "default_decision", "reject"),
        }
        return clean_for_speech(
            self.notices.raw_confirmation_details(raw), self.policy.phrase_language
        )

    def void_on_arrival(
        self,
        event: AwaitingConfirmation | AwaitingClarification,
        reason: str,
        source_id: str,
        now: float,
    ) -> list[SpeechCommand]:
        """§6.8: a question whose session ended (or that was cancelled) before it came."""
        prompt = self._prompt_for(event, source_id, now)
        self.book.refuse(event.reply_token, "ended" if reason == "ended" else "voided")
        msgid = self.notices.void_on_arrival_msgid(reason)
        commands: list[SpeechCommand] = []
        for part in self.notices.notice(
            msgid, prompt, kind="system.prompt_void_on_arrival", critical=True
        ):
            commands += self.folding.submit(part, source_id, now)
        return commands

    def _expired_on_arrival(self, prompt: PendingPrompt, now: float) -> list[SpeechCommand]:
        """§6.4: the time to answer ran out before the question got here."""
        self.book.refuse(prompt.reply_token, "expired")
        self.tracker.prompt_closed(
            prompt.source_id, prompt.session_id, prompt.reply_token, resolved=True
        )
        commands: list[SpeechCommand] = []
        for part in self.notices.notice(
            N_(
                "This question came after its time ran out; "
                "the agent has already applied its default: {what}"
            ),
            prompt,
            kind="system.prompt_expired",
            critical=True,
        ):
            commands += self.folding.submit(part, prompt.source_id, now)
        return commands

    def _prompt_for(
        self,
        event: AwaitingConfirmation | AwaitingClarification,
        source_id: str,
        now: float,
        late: Lateness | None = None,
    ) -> PendingPrompt:
        """The question ``event`` asks, received ``now``; ``late``: how late it came (§6.4),
        left out for a question void on arrival, which nobody can answer."""
        if late is None:
            late_by = accept_late_by = 0.0
        else:
            # A clarification has no reject: any answer after the producer's deadline by
            # the best estimate could race its default, so its whole time follows that.
            late_by = late.reject if isinstance(event, AwaitingConfirmation) else late.accept
            accept_late_by = late.accept
        return PendingPrompt(
            kind="confirmation" if isinstance(event, AwaitingConfirmation) else "clarification",
            reply_token=event.reply_token,
            session_id=event.session_id,
            event_id=event.event_id,
            source_id=source_id,
            producer_id=event.producer.agent_id,
            producer_name=event.producer.agent_name,
            received_at=now,
            timeout_seconds=float(event.timeout_seconds),
            event=event,
            late_by=late_by,
            accept_late_by=accept_late_by,
        )

    def _refuse_reused(
        self, prompt: PendingPrompt, first: PendingPrompt | None, source_id: str, now: float
    ) -> list[SpeechCommand]:
        """§6.2.2: a reused token makes any reply ambiguous, so no question stays open.

        The user is told plainly (critical: a question was asked and will get no
        answer) instead of hearing answer keys that could only be refused.
        """
        self.tracker.prompt_closed(source_id, prompt.session_id, prompt.reply_token)
        commands: list[SpeechCommand] = []
        if first is not None:
            notice = self.notices.notice(
                N_("The agent reused its reply token, so no answer can be sent to: {what}"),
                first,
                kind="system.prompt_voided",
                critical=True,
            )
            commands += self.folding.withdraw(first, notice, now)
        refusal = self.notices.notice(
            N_("The agent reused an old reply token, so this question cannot be answered: {what}"),
            prompt,
            kind="system.prompt_refused",
            critical=True,
        )
        for part in refusal:
            commands += self.folding.submit(part, source_id, now)
        return commands

    def _auto_reject(
        self, prompt: PendingPrompt, source_id: str, now: float
    ) -> list[SpeechCommand]:
        subscription = self.connections.subscription(source_id)
        tr = translator(self.policy.phrase_language)
        if subscription is None:
            text = tr.gettext(
                "Your settings say reject, but this connection cannot send replies; please answer."
            )
        else:
            outcome = self.book.auto_reject(prompt.reply_token, subscription, now)
            if isinstance(outcome, ReplyReady):
                self._outgoing.append(OutgoingReply(source_id, outcome))
                self.tracker.prompt_closed(source_id, prompt.session_id, prompt.reply_token)
                text = tr.gettext("Rejected automatically, as your settings ask.")
            else:
                text = tr.gettext(outcome.message)
        return self.folding.submit(
            self.notices.system_announcement(
                text, prompt, kind="system.auto_reject", critical=True
            ),
            source_id,
            now,
        )

    def say_expired(self, prompt: PendingPrompt, now: float) -> list[SpeechCommand]:
        """A question whose time ran out: what was queued about it is dropped as timed
        out (issue 14 c), then why it ended is said."""
        notice = self.notices.notice(
            self.notices.expired_msgid(prompt), prompt, kind="system.prompt_expired"
        )
        commands = self.scheduler.question_ended(prompt.event_id, now, "question timed out")
        return commands + self.folding.withdraw(prompt, notice, now)
