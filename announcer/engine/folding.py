"""Urgent floods folded into one spoken count (§2.2.9); every announcement is queued here."""

from __future__ import annotations

from collections import deque
from typing import Any, Final

from announcer.engine.announcement import Announcement, Urgency
from announcer.engine.engine_records import TranscriptEntry
from announcer.engine.policy import Policy
from announcer.engine.prompts import PendingPrompt
from announcer.engine.scheduler import SpeechScheduler
from announcer.engine.speech_commands import SpeechCommand
from announcer.engine.text_hygiene import clean_for_speech
from announcer.engine.tracker import SessionTracker
from announcer.i18n.format import format_integer
from announcer.i18n.translate import translator
from announcer.protocol.log import DiagnosticsLog

# §2.2.9 critical news is never dropped in silence, but a flood of it cannot all be
# said: once this many urgent messages from one producer wait to be spoken, the rest
# are folded into one spoken count ("40 more urgent messages from X"), each counted
# in the diagnostics. Only repeated news of one kind is folded (§4.1.3, §9.3.2(7),
# §9.5.2(9)): questions, handoffs, what starts or ends a session (errored MUST NOT be
# suppressed), the agent's streamed words and our own notices never are; what is
# folded still goes to the transcript and History with its words.
CRITICAL_BACKLOG_PER_PRODUCER: Final = 3
_NEVER_FOLDED: Final = (
    "agent.awaiting.",
    "agent.handoff.",
    "agent.session.",
    "agent.output.",  # the agent's own words are never dropped
    "system.",
)
FOLDED_KIND: Final = "system.folded"
# The kind a count started by urgent frames the reader skipped unread is filed under.
_SKIPPED_UNREAD: Final = ""


class UrgentFolding:
    """Queues announcements, folding a producer's urgent flood into a spoken count.

    Every announcement the engine decides on is queued here and kept in ``transcript``
    (the engine's record, handed in); what was folded and the counts waiting to be said
    are this object's own.
    """

    def __init__(
        self,
        scheduler: SpeechScheduler,
        policy: Policy,
        tracker: SessionTracker,
        diagnostics: DiagnosticsLog,
        transcript: deque[TranscriptEntry],
    ) -> None:
        self.scheduler = scheduler
        self.policy = policy
        self.tracker = tracker
        self.diagnostics = diagnostics
        self.transcript = transcript
        # (producer_id, kind) -> [the count of folded urgent messages waiting to be said,
        # how many, the source it came from, the producer's name when no session names
        # it]; its words are set when it is said (:meth:`word_count`). Kind
        # ``_SKIPPED_UNREAD``: a count the reader's skipped frames started
        # (:meth:`count_skipped_urgent`).
        self._folded: dict[tuple[str, str], list[Any]] = {}
        self._folding_event: str | None = None
        self.folded_total = 0

    def submit(
        self, announcement: Announcement, source_id: str | None, now: float
    ) -> list[SpeechCommand]:
        if announcement.urgency is Urgency.CRITICAL:
            folded = self._fold(announcement, source_id, now)
            if folded is not None:
                return folded
        self.transcript.append(TranscriptEntry(now, announcement, source_id))
        return self.scheduler.submit(announcement, now)

    def queue(
        self, announcement: Announcement, source_id: str | None, now: float
    ) -> list[SpeechCommand]:
        """Queue our own notice as it is (never folded), in the transcript too."""
        self.transcript.append(TranscriptEntry(now, announcement, source_id))
        return self.scheduler.submit(announcement, now)

    def withdraw(
        self, prompt: PendingPrompt, notice: list[Announcement], now: float
    ) -> list[SpeechCommand]:
        """Stop reading a void question and say why, in the transcript too."""
        for part in notice:
            self.transcript.append(TranscriptEntry(now, part, prompt.source_id))
        return self.scheduler.withdraw(prompt.event_id, now, notice)

    def _fold(
        self, announcement: Announcement, source_id: str | None, now: float
    ) -> list[SpeechCommand] | None:
        """Fold an urgent message into its producer's spoken count if too many wait.

        None when it is to be queued as usual. Only news of a kind that may be folded
        (never a question, handoff, session start or end, or our own notice), and only
        when ``CRITICAL_BACKLOG_PER_PRODUCER`` urgent messages of the same producer and
        the same kind already wait. It is then counted (per producer and kind, and in
        the diagnostics with its envelope fields only) instead of queued: the first of
        a run queues "1 more urgent message from X" in its place, in order, and each
        later one raises that count while it waits. Its words still go to the
        transcript and to History (``scheduler.on_skip``). The later parts of a folded
        message go with it.
        """
        producer_id = announcement.producer_id
        if producer_id is None or announcement.kind.startswith(_NEVER_FOLDED):
            return None
        if announcement.continues:
            folding = announcement.event_id is not None
            if folding and announcement.event_id == self._folding_event:
                self._keep_folded(announcement, source_id, now)
                return []
            return None
        bound = CRITICAL_BACKLOG_PER_PRODUCER
        if self.scheduler.queued(Urgency.CRITICAL) < bound:
            self._folding_event = None
            return None
        key = (producer_id, announcement.kind)
        waiting = 0
        waiting_count: Announcement | None = None
        current = self._folded.get(key) or self._folded.get((producer_id, _SKIPPED_UNREAD))
        for queued in self.scheduler.queued_announcements(Urgency.CRITICAL):
            if (
                queued.urgency is not Urgency.CRITICAL  # a lead-up brought forward, not urgent
                or queued.producer_id != producer_id
                or queued.continues
            ):
                continue
            if current is not None and queued is current[0]:
                waiting_count = queued
                waiting += 1
            elif queued.kind == announcement.kind:
                waiting += 1
        if waiting < bound:
            self._folding_event = None
            return None
        self._folding_event = announcement.event_id
        self.folded_total += 1
        self._keep_folded(announcement, source_id, now)
        if current is not None and waiting_count is not None:
            current[1] += 1
            self.diagnostics.count_drop("critical.folded")  # the run's first is on record
            return []
        self.diagnostics.record_drop(
            "critical.folded",
            f"urgent message folded into a spoken count: {bound} of the same kind from the "
            "same producer were already waiting to be said; the rest of this run is counted",
            section="§2.2.9",
            envelope={
                "type": announcement.kind,
                "event_id": announcement.event_id,
                "session_id": announcement.session_id,
                "producer": {"agent_id": producer_id},
            },
            source=source_id,
            now=now,
        )
        language = self.policy.phrase_language
        summary = Announcement(
            text=self._folded_phrase(1, producer_id, source_id, announcement),
            language=language,
            urgency=Urgency.CRITICAL,
            interrupt=True,
            session_id=announcement.session_id,
            producer_id=producer_id,
            kind=FOLDED_KIND,
        )
        if len(self._folded) > 1024:
            self._folded.clear()
        self._folded[key] = [summary, 1, source_id, None]
        self.transcript.append(TranscriptEntry(now, summary, source_id))
        return self.scheduler.submit(summary, now)

    def count_skipped_urgent(
        self, producer_id: str, name: str, count: int, source_id: str | None, now: float
    ) -> list[SpeechCommand]:
        """Urgent messages a flood skipped before they were read (counted and logged by
        the reader) join a count of their producer still waiting to be said, or start one
        that later folded messages join, so the user never hears two counts of one flood
        back to back (§2.2.9)."""
        lane = self.scheduler.queued_announcements(Urgency.CRITICAL)
        for (producer, _kind), entry in self._folded.items():
            if producer == producer_id and any(queued is entry[0] for queued in lane):
                entry[1] += count
                return []
        language = self.policy.phrase_language
        summary = Announcement(
            text=self._folded_phrase(count, producer_id, source_id, None, name),
            language=language,
            urgency=Urgency.CRITICAL,
            interrupt=True,
            producer_id=producer_id,
            kind=FOLDED_KIND,
        )
        if len(self._folded) > 1024:
            self._folded.clear()
        self._folded[(producer_id, _SKIPPED_UNREAD)] = [summary, count, source_id, name]
        self.transcript.append(TranscriptEntry(now, summary, source_id))
        return self.scheduler.submit(summary, now)

    def _keep_folded(self, announcement: Announcement, source_id: str | None, now: float) -> None:
        """A folded message is not spoken, but its words stay in the transcript and History."""
        self.transcript.append(TranscriptEntry(now, announcement, source_id))
        if self.scheduler.on_skip is not None:
            self.scheduler.on_skip(announcement)

    def word_count(self, announcement: Announcement) -> None:
        """A count about to be said gets its words now: the number it reached meanwhile.

        The scheduler calls this as each utterance starts; once said, a count is closed
        and the next folded message starts a new one.
        """
        if announcement.kind != FOLDED_KIND:
            return
        for key, entry in self._folded.items():
            if entry[0] is announcement:
                del self._folded[key]
                announcement.text = self._folded_phrase(
                    entry[1], announcement.producer_id or "", entry[2], announcement, entry[3]
                )
                return

    def _folded_phrase(
        self,
        count: int,
        producer_id: str,
        source_id: str | None,
        announcement: Announcement | None,
        name: str | None = None,
    ) -> str:
        """ "40 more urgent messages from X", X as the session names its producer."""
        session = (
            self.tracker.session(source_id, announcement.session_id)
            if source_id is not None
            and announcement is not None
            and announcement.session_id is not None
            else None
        )
        if session is not None:
            name = session.display_name
        elif name is None:
            name = producer_id
        language = self.policy.phrase_language
        text = (
            translator(language)
            .ngettext(
                "{count} more urgent message from {name}.",
                "{count} more urgent messages from {name}.",
                count,
            )
            .format(count=format_integer(count, language), name=name)
        )
        return clean_for_speech(text, language)
