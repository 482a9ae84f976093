"""Spoken counts of questions waiting or set aside, one notice at a time (§6.9(4))."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Final

from announcer.engine.announcement import Announcement
from announcer.engine.folding import UrgentFolding
from announcer.engine.policy import Policy
from announcer.engine.prompts import PendingPrompt
from announcer.engine.question_notices import QuestionNotices
from announcer.engine.replies import ReplyBook
from announcer.engine.scheduler import SpeechScheduler
from announcer.engine.speech_commands import SpeechCommand
from announcer.engine.text_hygiene import clean_for_speech
from announcer.engine.tracker import SessionTracker
from announcer.i18n.translate import translator
from announcer.protocol.log import DiagnosticsLog

# A waiting or set-aside count already heard is said again at most this often; the
# current count is also said whenever the next question is read.
COUNT_NOTICE_INTERVAL_SECONDS: Final = 5.0


class QuestionCounts:
    """Says how many questions wait behind the presented one, or were set aside.

    ``serial`` numbers our notices' event ids (shared with the other notices of the
    engine, so no two have the same id).
    """

    def __init__(
        self,
        book: ReplyBook,
        scheduler: SpeechScheduler,
        policy: Policy,
        tracker: SessionTracker,
        *,
        diagnostics: DiagnosticsLog,
        notices: QuestionNotices,
        folding: UrgentFolding,
        serial: Iterator[int],
    ) -> None:
        self.book = book
        self.scheduler = scheduler
        self.policy = policy
        self.tracker = tracker
        self.diagnostics = diagnostics
        self.notices = notices
        self.folding = folding
        self._serial = serial
        self._waiting_notice_id: str | None = None
        self._count_notice_at: dict[str, float] = {}
        # A count held back by the interval, said when it is over (never lost).
        self._count_due: dict[str, tuple[Announcement, str]] = {}
        self.set_aside = 0
        self._set_aside_notice_id: str | None = None

    def next_due(self) -> float | None:
        """When a count held back by the interval is next due, or None."""
        due = [
            self._count_notice_at[kind] + COUNT_NOTICE_INTERVAL_SECONDS for kind in self._count_due
        ]
        return min(due) if due else None

    def said_with_question(self) -> None:
        """The current count was said with the question read now: a count put off
        before would only repeat it, or say an older, wrong number (issue 29, item 14)."""
        self._count_due.pop("waiting", None)

    def waiting_announcement(
        self, prompt: PendingPrompt, waiting: int, continues: bool
    ) -> Announcement:
        newest = self.book.pending()[-1]
        text = (
            translator(self.policy.phrase_language)
            .gettext("Questions waiting after this one: {count}. The latest is from {name}.")
            .format(
                count=waiting,
                name=clean_for_speech(
                    newest.producer_name or newest.producer_id,
                    self.policy.phrase_language,
                    max_chars=60,
                ),
            )
        )
        return dataclasses.replace(
            self.notices.system_announcement(
                text, prompt, kind="system.prompts_waiting", critical=True
            ),
            interrupt=False,
            continues=continues,
        )

    def waiting_notice(self, prompt: PendingPrompt, now: float) -> list[SpeechCommand]:
        """A question that must wait is counted aloud, not read over the presented one.

        One notice at a time: a newer count replaces the one still queued.
        """
        waiting = len(self.book.pending()) - 1
        announcement = self.waiting_announcement(prompt, waiting, False)
        commands, replaced = self._replace_notice(self._waiting_notice_id, now)
        if not replaced and self._recently_counted("waiting", now):
            self._count_due["waiting"] = (announcement, prompt.source_id)
            return commands
        announcement.event_id = self._waiting_notice_id = f"evt_waiting{next(self._serial)}"
        return commands + self.folding.queue(announcement, prompt.source_id, now)

    def say_due(self, now: float) -> list[SpeechCommand]:
        """Counts held back by the interval whose time has come."""
        commands: list[SpeechCommand] = []
        for kind, (announcement, source_id) in list(self._count_due.items()):
            if now - self._count_notice_at.get(kind, now) < COUNT_NOTICE_INTERVAL_SECONDS:
                continue
            del self._count_due[kind]
            self._count_notice_at[kind] = now
            announcement.event_id = f"evt_count{next(self._serial)}"
            if kind == "waiting":
                pending = self.book.pending()
                if len(pending) <= 1:
                    continue  # nothing waits any more
                # the count as it is now, not when it was put off: questions answered or
                # withdrawn meanwhile no longer wait (issue 29, item 14: off by one)
                now_counted = self.waiting_announcement(pending[0], len(pending) - 1, False)
                announcement.text = now_counted.text
                self._waiting_notice_id = announcement.event_id
            else:
                self._set_aside_notice_id = announcement.event_id
            commands += self.folding.queue(announcement, source_id, now)
        return commands

    def recount_waiting(self, presented: PendingPrompt | None, now: float) -> list[SpeechCommand]:
        """Questions closed: a waiting count not yet said must not tell of them.

        Once nothing waits behind the presented question it is dropped; otherwise it
        says the number waiting now. (A count said after its questions were withdrawn
        told the user "Questions waiting: 2" with none open.)
        """
        notice_id = self._waiting_notice_id
        if notice_id is None:
            return []
        queued = next(
            (a for a in self.scheduler.queued_announcements() if a.event_id == notice_id), None
        )
        if queued is None:  # said (or being said) already: nothing to recount
            self._waiting_notice_id = None
            return []
        pending = self.book.pending()
        if len(pending) <= 1:
            self._waiting_notice_id = None
            return self.scheduler.withdraw(notice_id, now)
        queued.text = self.waiting_announcement(
            presented or pending[0], len(pending) - 1, False
        ).text
        return []

    def _recently_counted(self, kind: str, now: float) -> bool:
        """A count notice was said a moment ago: the next one waits (no flood of counts)."""
        last = self._count_notice_at.get(kind)
        if last is not None and now - last < COUNT_NOTICE_INTERVAL_SECONDS:
            return True
        self._count_notice_at[kind] = now
        return False

    def _replace_notice(self, event_id: str | None, now: float) -> tuple[list[SpeechCommand], bool]:
        """Drop a count notice still waiting in the queue (a newer count follows it)."""
        if event_id is None:
            return [], False
        speaking = self.scheduler.speaking
        if speaking is not None and speaking.event_id == event_id:
            return [], False
        if any(a.event_id == event_id for a in self.scheduler.queued_announcements()):
            return self.scheduler.withdraw(event_id, now), True
        return [], False

    def set_aside_notice(self, prompt: PendingPrompt, now: float) -> list[SpeechCommand]:
        """The waiting list is full: the newest question is set aside, counted and said."""
        self.set_aside += 1
        self.tracker.prompt_closed(prompt.source_id, prompt.session_id, prompt.reply_token)
        self.diagnostics.record_drop(
            "prompt.set_aside",
            f"more than {self.book.limit} questions waiting; the newest was set aside",
            section="§6.9",
            envelope={"session_id": prompt.session_id, "event_id": prompt.event_id},
            source=prompt.source_id,
            now=now,
        )
        text = (
            translator(self.policy.phrase_language)
            .gettext(
                "Too many questions are waiting: {count} newer ones were set aside, "
                "and their agents apply their defaults."
            )
            .format(count=self.set_aside)
        )
        announcement = self.notices.system_announcement(
            text, prompt, kind="system.prompts_set_aside", critical=True
        )
        announcement.interrupt = False
        commands, replaced = self._replace_notice(self._set_aside_notice_id, now)
        if not replaced and self._recently_counted("set_aside", now):
            self._count_due["set_aside"] = (announcement, prompt.source_id)
            return commands
        announcement.event_id = self._set_aside_notice_id = f"evt_setaside{next(self._serial)}"
        return commands + self.folding.queue(announcement, prompt.source_id, now)
