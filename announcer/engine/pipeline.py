"""The announcement engine: frames in, speech commands and replies out, no I/O.

:class:`Engine` ties decoding and validation (``announcer.protocol``), the session
tracker, the policy, the output coalescers, the reply book and the speech scheduler
into one object driven by plain calls and a clock you pass in (``now``, seconds on
any monotonic scale). Transports feed it frames; a speech driver executes the
commands it returns; user interfaces read its prompts, transcript and status and
hand it the user's answers.
"""

from __future__ import annotations

import dataclasses
from collections import Counter, deque
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final, NamedTuple

from announcer.engine.announcement import Announcement, Urgency
from announcer.engine.answer_keys import KEY_PRESS_ANSWER_KEYS, AnswerKeys
from announcer.engine.outputs import OutputStreams, Released
from announcer.engine.phrases import N_
from announcer.engine.policy import Policy, Spoken, by_language, same_language
from announcer.engine.prompts import PendingPrompt, UserAnswer
from announcer.engine.replies import ReplyBook, ReplyOutcome, ReplyReady
from announcer.engine.scheduler import SpeechScheduler
from announcer.engine.settings import UserSettings
from announcer.engine.speech_commands import SpeechCommand
from announcer.engine.text_hygiene import clean_for_speech
from announcer.engine.tracker import Admission, SessionState, SessionTracker, TrackerNote
from announcer.i18n.format import format_integer
from announcer.i18n.translate import translator
from announcer.protocol.decode import DecodeResult, decode_frame
from announcer.protocol.diagnostics import Diagnostic
from announcer.protocol.events import (
    AaepEvent,
    AwaitingClarification,
    AwaitingConfirmation,
    OutputStreaming,
    SessionCancelled,
    SessionCompleted,
    SessionErrored,
)
from announcer.protocol.handshake import SubscriptionAccepted
from announcer.protocol.log import DiagnosticsLog

_TERMINAL: Final = (SessionCompleted, SessionErrored, SessionCancelled)
_PROMPTS: Final = (AwaitingConfirmation, AwaitingClarification)
TRANSCRIPT_SIZE: Final = 1_000
_URGENCY_OF: Final = {urgency.value: urgency for urgency in Urgency}
# §2.2.9 critical news is never dropped in silence, but a flood of it cannot all be
# said: once this many urgent messages from one producer wait to be spoken, the rest
# are folded into one spoken count ("40 more urgent messages from X"), each counted
# in the diagnostics. Questions and our own notices are never folded.
CRITICAL_BACKLOG_PER_PRODUCER: Final = 3
_NEVER_FOLDED: Final = ("agent.awaiting.", "system.")
FOLDED_KIND: Final = "system.folded"
# An unreadable frame that looked urgent is mentioned at most this often per source.
UNREADABLE_NOTICE_INTERVAL_SECONDS: Final = 10.0
_TRACKER_SECTIONS: Final = {
    "duplicate_event": "§8.2.4",
    "late_event": "§3.4.1",
    "sequence_gap": "§8.2.3",
    "second_session_started": "§4.1.1",
    "event_after_end": "§4.5.1",
    "state_mismatch": "§4.2.1",
    "tool_not_invoked": "§4.5.2",
    "chunk_after_complete": "§4.5.4",
}


class TranscriptEntry(NamedTuple):
    """One announcement the engine decided on, and when (spoken or not)."""

    at: float
    announcement: Announcement
    source_id: str | None


@dataclass(frozen=True, slots=True)
class OutgoingReply:
    """A reply message to send on connection ``source_id`` (JSON via ``to_wire()``)."""

    source_id: str
    reply: ReplyReady

    def to_wire(self) -> dict[str, object]:
        return self.reply.to_wire()


@dataclass(frozen=True, slots=True)
class EngineStatus:
    open_sessions: int
    pending_prompts: int
    speaking: Announcement | None
    queued: int
    frames: int
    events: int
    invalid_frames: int
    duplicates: int
    speech_drops: dict[str, int]
    suppressed: dict[str, int]
    folded: int = 0


class Engine:
    """The pure announcement engine.

    Inputs (each returns the speech commands to execute, in order):

    * ``receive(raw_frame, source_id, now)``: one frame from a connection (bytes, str or
      a parsed mapping). Events are announced; a ``subscription.accepted`` records the
      connection's subscription id, needed to reply; invalid frames are logged in
      :attr:`diagnostics` and never raise.
    * ``receive_event(event, source_id, now)``: an already validated event (adapters
      that translate other formats into AAEP).
    * ``on_speech_done(utterance_id, now)``: the backend finished or stopped an utterance.
    * ``tick(now)``: time passed; call it at :meth:`next_wakeup` (stalled sentences,
      reordering waits, prompt timeouts, paced speech).
    * ``source_closed(source_id, now)``: a connection ended; its prompts can no longer
      be answered.
    * ``silence(now)``: the user asked for quiet.

    Answers: ``answer(UserAnswer, now)`` returns a :class:`ReplyReady` (send
    ``reply.to_wire()`` on ``reply.prompt.source_id``) or a :class:`Refusal` with a
    sentence for the user; then carry out :meth:`take_speech` (the answered question
    stops being read out). It never accepts on the user's behalf. Replies made by the
    ``auto_reject`` policy wait in :meth:`take_outgoing`.

    Reading: :meth:`pending_prompts`, :meth:`transcript`, :meth:`status`,
    :meth:`sessions`, :attr:`diagnostics`.

    ``paced=True`` suits backends that report completion at once (text, screen
    readers without callbacks): speech then keeps the user's ``pace_wpm`` and
    :meth:`next_wakeup` says when the next utterance is due.

    ``answer_keys`` are the keys a spoken question names: those of the UI the user
    answers in (:mod:`announcer.engine.answer_keys`); a UI that attaches later calls
    :meth:`set_answer_keys`.
    """

    def __init__(
        self,
        settings: UserSettings | None = None,
        *,
        paced: bool = False,
        diagnostics: DiagnosticsLog | None = None,
        transcript_size: int = TRANSCRIPT_SIZE,
        scheduler: SpeechScheduler | None = None,
        answer_keys: AnswerKeys = KEY_PRESS_ANSWER_KEYS,
    ) -> None:
        self.settings = settings or UserSettings()
        self.diagnostics = diagnostics or DiagnosticsLog()
        self.tracker = SessionTracker()
        self.policy = Policy(self.settings, answer_keys=answer_keys)
        self.outputs = OutputStreams()
        self.book = ReplyBook()
        self.scheduler = scheduler or SpeechScheduler(self.settings, paced=paced)
        self.scheduler.update_settings(self.settings)
        self.scheduler.on_start = self._word_count
        self._transcript: deque[TranscriptEntry] = deque(maxlen=transcript_size)
        self._subscriptions: dict[str, str] = {}
        self._outgoing: deque[OutgoingReply] = deque(maxlen=10_000)
        self._last_unreadable_notice: dict[str, float] = {}
        self._after_answer: list[SpeechCommand] = []
        # producer_id -> [the count of folded urgent messages waiting to be said, how many,
        # the source it came from]; its words are set when it is said (:meth:`_word_count`)
        self._folded: dict[str, list[Any]] = {}
        self._folding_event: str | None = None
        self.folded_total = 0
        self.frames = 0
        self.events = 0
        self.invalid_frames = 0
        self.ignored: Counter[str] = Counter()
        self._hold_outputs = False
        self._plain_output = False
        self._user_language = "en"
        self._refresh_shortcuts()

    # -- inputs --------------------------------------------------------------------------

    def receive(
        self, raw_frame: bytes | bytearray | str | Mapping[str, Any], source_id: str, now: float
    ) -> list[SpeechCommand]:
        self.frames += 1
        result = decode_frame(raw_frame)
        if result.kind == "event":
            message = result.message
            if result.diagnostics:
                self.diagnostics.record(result, source=source_id, now=now)
            assert isinstance(message, AaepEvent)
            self.events += 1
            return self._process(self.tracker.admit(message, source_id, now), source_id, now)
        if result.kind == "handshake":
            if isinstance(result.message, SubscriptionAccepted):
                self._subscriptions[source_id] = result.message.subscription_id
            return []
        if result.kind == "reply":
            # Replies flow from subscribers to producers; one arriving here is misrouted.
            self.ignored["reply message received"] += 1
            self.diagnostics.record_drop(
                "reply.misrouted",
                "a reply message arrived from a producer; ignored",
                section="§6",
                source=source_id,
                now=now,
            )
            return []
        self.invalid_frames += 1
        self.diagnostics.record(result, source=source_id, now=now)
        return self._notice_unreadable(result, source_id, now)

    def receive_event(self, event: AaepEvent, source_id: str, now: float) -> list[SpeechCommand]:
        self.events += 1
        admission = self.tracker.admit(event, source_id, now)
        return self._process(admission, source_id, now)

    def on_speech_done(self, utterance_id: int, now: float) -> list[SpeechCommand]:
        return self.scheduler.on_done(utterance_id, now)

    def tick(self, now: float) -> list[SpeechCommand]:
        commands: list[SpeechCommand] = []
        for source_id, admission in self.tracker.tick(now):
            commands += self._process(admission, source_id, now)
        for released in self.outputs.poll(now):
            commands += self._say_output(released, None, now)
        for prompt in self.book.expire(now):
            self.tracker.prompt_closed(prompt.source_id, prompt.session_id, prompt.reply_token)
            commands += self.scheduler.question_ended(prompt.event_id, now, "question timed out")
            for part in self._notice(
                self._expired_msgid(prompt), prompt, kind="system.prompt_expired"
            ):
                commands += self._submit(part, prompt.source_id, now)
        commands += self.scheduler.tick(now)
        return commands

    def next_wakeup(self) -> float | None:
        """The earliest ``now`` at which :meth:`tick` has work, or None."""
        candidates = [
            self.tracker.next_wakeup(),
            self.outputs.next_wakeup(),
            self.book.next_deadline(),
            self.scheduler.next_wakeup(),
        ]
        present = [c for c in candidates if c is not None]
        return min(present) if present else None

    def source_closed(self, source_id: str, now: float) -> list[SpeechCommand]:
        """§8.2.5: the producer applies defaults for a lost connection; close its prompts."""
        commands: list[SpeechCommand] = []
        self._subscriptions.pop(source_id, None)
        for prompt in self.book.pending():
            if prompt.source_id == source_id:
                self.book.void(prompt.reply_token)
                notice = self._notice(
                    N_("Connection lost; the agent will apply its default for: {what}"),
                    prompt,
                    kind="system.prompt_voided",
                )
                commands += self._withdraw(prompt, notice, now)
        return commands

    def silence(self, now: float) -> list[SpeechCommand]:
        return self.scheduler.silence(now)

    def set_subscription(self, source_id: str, subscription_id: str) -> None:
        """Record the subscription a connection negotiated (replies must carry it)."""
        self._subscriptions[source_id] = subscription_id

    def set_answer_keys(self, answer_keys: AnswerKeys) -> None:
        """The UI the user answers in: questions name its keys, or none if it says them."""
        self.policy.answer_keys = answer_keys

    def update_settings(self, settings: UserSettings) -> None:
        self.settings = settings
        self.policy.update_settings(settings)
        self.scheduler.update_settings(settings)
        self._refresh_shortcuts()

    def answer(
        self, answer: UserAnswer, now: float, decided_at: datetime | None = None
    ) -> ReplyOutcome:
        """Build the reply for the user's answer, or refuse it with a reason."""
        prompt = self.book.get(answer.reply_token)
        subscription = self._subscriptions.get(prompt.source_id) if prompt else None
        outcome = self.book.answer(answer, now, subscription, decided_at)
        if isinstance(outcome, ReplyReady):
            self.tracker.prompt_closed(
                outcome.prompt.source_id, outcome.prompt.session_id, outcome.prompt.reply_token
            )
            # Issue 14 c: no key hints or time left after the answer; cut the question off.
            self._after_answer += self.scheduler.question_ended(outcome.prompt.event_id, now)
        return outcome

    def take_speech(self) -> list[SpeechCommand]:
        """Speech commands an :meth:`answer` left to carry out (cutting off its question)."""
        commands, self._after_answer = self._after_answer, []
        return commands

    def question_started_at(self, prompt: PendingPrompt) -> float | None:
        """When ``prompt``'s question began to be heard (``now`` scale), or None if not yet.

        An answering UI arms its keys from this moment, not from when the dialog opened.
        """
        return self.scheduler.question_started_at(prompt.event_id)

    def take_outgoing(self) -> list[OutgoingReply]:
        """Replies made without the user (only ``auto_reject``), to send now."""
        replies = list(self._outgoing)
        self._outgoing.clear()
        return replies

    # -- reading -------------------------------------------------------------------------

    def pending_prompts(self) -> list[PendingPrompt]:
        return self.book.pending()

    def transcript(self, limit: int | None = None) -> list[TranscriptEntry]:
        entries = list(self._transcript)
        return entries if limit is None else entries[-limit:]

    def sessions(self) -> list[SessionState]:
        return list(self.tracker.sessions())

    def status(self) -> EngineStatus:
        return EngineStatus(
            open_sessions=len(self.tracker.open_sessions()),
            pending_prompts=len(self.book.pending()),
            speaking=self.scheduler.speaking,
            queued=self.scheduler.queued(),
            frames=self.frames,
            events=self.events,
            invalid_frames=self.invalid_frames,
            duplicates=self.tracker.duplicates,
            speech_drops=dict(self.scheduler.drops),
            suppressed=dict(self.policy.suppressed),
            folded=self.folded_total,
        )

    # -- internals -------------------------------------------------------------------------

    def _process(self, admission: Admission, source_id: str, now: float) -> list[SpeechCommand]:
        events = admission.events
        if len(events) == 1 and not admission.notes and not admission.voided_tokens:
            return self._handle(events[0], source_id, now)  # the usual case
        commands: list[SpeechCommand] = []
        for note in admission.notes:
            self._log_note(note, source_id, now)
        for token in admission.voided_tokens:
            prompt = self.book.void(token)
            if prompt is not None:
                notice = self._notice(
                    N_("No answer needed any more: {what}"), prompt, kind="system.prompt_voided"
                )
                commands += self._withdraw(prompt, notice, now)
        for event in admission.events:
            commands += self._handle(event, source_id, now)
        return commands

    def _handle(self, event: AaepEvent, source_id: str, now: float) -> list[SpeechCommand]:
        if type(event) is OutputStreaming:
            return self._handle_output(event, source_id, now)
        session = self.tracker.session(source_id, event.session_id)
        if session is None:  # evicted under pressure between admit and now
            return []
        commands: list[SpeechCommand] = []
        if isinstance(event, _TERMINAL):
            # What the agent was still saying comes before how the session ended.
            for released in self.outputs.close_session(source_id, event.session_id):
                commands += self._say_output(released, source_id, now)
            self.scheduler.drop_obsolete(
                event.session_id, now, keep_start=self.policy.urgency_of(event) is Urgency.CRITICAL
            )
        if isinstance(event, _PROMPTS):
            commands += self._open_prompt(event, session, source_id, now)
            return commands
        for announcement in self.policy.decide(event, session, source_id, now):
            commands += self._submit(announcement, source_id, now)
        return commands

    def _handle_output(
        self, event: OutputStreaming, source_id: str, now: float
    ) -> list[SpeechCommand]:
        """The most frequent event: a chunk of streamed output (§4.3.3)."""
        urgency = _URGENCY_OF[event.urgency]
        if not self._plain_output:
            reason = self.policy.admits(event, urgency, source_id, now)
            if reason is not None:
                self.policy.suppressed[reason] += 1
                return []
        released = self.outputs.feed(
            event,
            source_id,
            event.language or event.primary_language or self._user_language,
            now,
            hold_until_complete=self._hold_outputs,
        )
        if not released:
            return []
        commands: list[SpeechCommand] = []
        for item in released:
            commands += self._say_output(item, source_id, now, urgency, event)
        return commands

    def _refresh_shortcuts(self) -> None:
        """Settings that let a chunk skip the policy's checks (mutes, filters, load)."""
        settings = self.settings
        self._user_language = self.policy.language  # producer text with no language
        self._hold_outputs = settings.cognitive_load == "low"
        self._plain_output = (
            not settings.muted_producers
            and not self._hold_outputs
            and self.policy.passes_filters(OutputStreaming.SHORT_TYPE)
        )

    def _open_prompt(
        self,
        event: AwaitingConfirmation | AwaitingClarification,
        session: SessionState,
        source_id: str,
        now: float,
    ) -> list[SpeechCommand]:
        prompt = PendingPrompt(
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
        )
        first = self.book.get(prompt.reply_token)
        problem = self.book.open(prompt)
        if problem is not None:
            self._log_note(
                TrackerNote("reply_token.reused", problem, event.session_id, event.event_id),
                source_id,
                now,
            )
            return self._refuse_reused(prompt, first, source_id, now)
        commands: list[SpeechCommand] = []
        for announcement in self.policy.decide(event, session, source_id, now):
            commands += self._submit(announcement, source_id, now)
        if (
            problem is None
            and isinstance(event, AwaitingConfirmation)
            and self.settings.reply_policy == "auto_reject"
        ):
            commands += self._auto_reject(prompt, source_id, now)
        return commands

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
            notice = self._notice(
                N_("The agent reused its reply token, so no answer can be sent to: {what}"),
                first,
                kind="system.prompt_voided",
                critical=True,
            )
            commands += self._withdraw(first, notice, now)
        refusal = self._notice(
            N_("The agent reused an old reply token, so this question cannot be answered: {what}"),
            prompt,
            kind="system.prompt_refused",
            critical=True,
        )
        for part in refusal:
            commands += self._submit(part, source_id, now)
        return commands

    def _auto_reject(
        self, prompt: PendingPrompt, source_id: str, now: float
    ) -> list[SpeechCommand]:
        subscription = self._subscriptions.get(source_id)
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
        return self._submit(
            self._system_announcement(text, prompt, kind="system.auto_reject", critical=True),
            source_id,
            now,
        )

    def _say_output(
        self,
        released: Released,
        source_id: str | None,
        now: float,
        urgency: Urgency = Urgency.NORMAL,
        event: OutputStreaming | None = None,
    ) -> list[SpeechCommand]:
        text = clean_for_speech(released.text, released.language)
        if not text:
            return []
        announcement = Announcement(
            text=text,
            language=released.language,
            urgency=urgency,
            interrupt=urgency is Urgency.CRITICAL,
            event_id=released.event_id,
            session_id=released.session_id,
            producer_id=event.producer.agent_id if event is not None else None,
            kind="agent.output.streaming",
        )
        return self._submit(announcement, source_id, now)

    def _withdraw(
        self, prompt: PendingPrompt, notice: list[Announcement], now: float
    ) -> list[SpeechCommand]:
        """Stop reading a void question and say why, in the transcript too."""
        for part in notice:
            self._transcript.append(TranscriptEntry(now, part, prompt.source_id))
        return self.scheduler.withdraw(prompt.event_id, now, notice)

    def _submit(
        self, announcement: Announcement, source_id: str | None, now: float
    ) -> list[SpeechCommand]:
        if announcement.urgency is Urgency.CRITICAL:
            folded = self._fold(announcement, source_id, now)
            if folded is not None:
                return folded
        self._transcript.append(TranscriptEntry(now, announcement, source_id))
        return self.scheduler.submit(announcement, now)

    def _fold(
        self, announcement: Announcement, source_id: str | None, now: float
    ) -> list[SpeechCommand] | None:
        """Fold an urgent message into its producer's spoken count if too many wait.

        None when it is to be queued as usual. Otherwise it is counted (per producer,
        and in the diagnostics with its envelope fields only) instead of queued: the
        first of a run queues "1 more urgent message from X" in its place, in order,
        and each later one raises that count while it waits. The later parts of a
        folded message go with it.
        """
        producer_id = announcement.producer_id
        if producer_id is None or announcement.kind.startswith(_NEVER_FOLDED):
            return None
        if announcement.continues:
            folding = announcement.event_id is not None
            return [] if folding and announcement.event_id == self._folding_event else None
        bound = CRITICAL_BACKLOG_PER_PRODUCER
        if self.scheduler.queued(Urgency.CRITICAL) < bound:
            self._folding_event = None
            return None
        waiting = 0
        waiting_count: Announcement | None = None
        current = self._folded.get(producer_id)
        for queued in self.scheduler.queued_announcements():
            if queued.urgency is not Urgency.CRITICAL:
                break  # critical speech comes first in that list
            if queued.producer_id != producer_id or queued.continues:
                continue
            if current is not None and queued is current[0]:
                waiting_count = queued
                waiting += 1
            elif not queued.kind.startswith(_NEVER_FOLDED):
                waiting += 1
        if waiting < bound:
            self._folding_event = None
            return None
        self._folding_event = announcement.event_id
        self.folded_total += 1
        if current is not None and waiting_count is not None:
            current[1] += 1
            self.diagnostics.count_drop("critical.folded")  # the run's first is on record
            return []
        self.diagnostics.record_drop(
            "critical.folded",
            f"urgent message folded into a spoken count: {bound} from the same producer "
            "were already waiting to be said; the rest of this run is counted",
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
        self._folded[producer_id] = [summary, 1, source_id]
        self._transcript.append(TranscriptEntry(now, summary, source_id))
        return self.scheduler.submit(summary, now)

    def _word_count(self, announcement: Announcement) -> None:
        """A count about to be said gets its words now: the number it reached meanwhile.

        The scheduler calls this as each utterance starts; once said, a count is closed
        and the next folded message starts a new one.
        """
        if announcement.kind != FOLDED_KIND:
            return
        entry = self._folded.get(announcement.producer_id or "")
        if entry is not None and entry[0] is announcement:
            del self._folded[announcement.producer_id or ""]
            announcement.text = self._folded_phrase(
                entry[1], announcement.producer_id or "", entry[2], announcement
            )

    def _folded_phrase(
        self, count: int, producer_id: str, source_id: str | None, announcement: Announcement
    ) -> str:
        """ "40 more urgent messages from X", X as the session names its producer."""
        session = (
            self.tracker.session(source_id, announcement.session_id)
            if source_id is not None and announcement.session_id is not None
            else None
        )
        name = session.display_name if session is not None else producer_id
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

    def _system_announcement(
        self, text: str, prompt: PendingPrompt, *, kind: str, critical: bool = False
    ) -> Announcement:
        return Announcement(
            text=text,
            language=self.policy.phrase_language,
            urgency=Urgency.CRITICAL if critical else Urgency.NORMAL,
            interrupt=critical,
            event_id=prompt.event_id,
            session_id=prompt.session_id,
            producer_id=prompt.producer_id,
            kind=kind,
        )

    def _prompt_subject(self, prompt: PendingPrompt) -> Spoken:
        """What the question was about, in the language the producer wrote it in."""
        event = prompt.event
        field = "action" if isinstance(event, AwaitingConfirmation) else "question"
        spoken = (
            self.policy.producer_text(event, field)
            if isinstance(event, (AwaitingConfirmation, AwaitingClarification))
            else None
        )
        if spoken is None:
            return Spoken("", self.policy.phrase_language)
        return Spoken(
            clean_for_speech(spoken.text, spoken.language, max_chars=160), spoken.language
        )

    def _notice(
        self, msgid: str, prompt: PendingPrompt, *, kind: str, critical: bool = False
    ) -> list[Announcement]:
        """Our phrase about a question, naming it by its subject (``{what}``).

        A subject in another language than our phrase is its own part, read by its
        own voice (§11.5); the parts are one message (``continues``).
        """
        template = translator(self.policy.phrase_language).gettext(msgid)
        subject = self._prompt_subject(prompt)
        phrase_language = self.policy.phrase_language
        if same_language(subject.language, phrase_language) or template.count("{what}") != 1:
            texts = [Spoken(template.format(what=subject.text), phrase_language)]
        else:
            before, after = template.split("{what}")
            if not any(char.isalnum() for char in after):  # a closing stop stays with it
                subject, after = Spoken(subject.text + after, subject.language), ""
            texts = by_language(
                [
                    Spoken(before, phrase_language),
                    subject,
                    Spoken(after, phrase_language),
                ]
            )
        return [
            dataclasses.replace(
                self._system_announcement(part.text, prompt, kind=kind, critical=critical),
                language=part.language,
                continues=index > 0,
            )
            for index, part in enumerate(texts)
        ]

    @staticmethod
    def _expired_msgid(prompt: PendingPrompt) -> str:
        event = prompt.event
        if isinstance(event, AwaitingConfirmation):
            return (
                N_("Time is up; the agent goes ahead with: {what}")
                if event.default_decision == "accept"
                else N_("Time is up; the agent rejected: {what}")
            )
        return N_("Time is up; the agent stopped waiting for: {what}")

    def _notice_unreadable(
        self, result: DecodeResult, source_id: str, now: float
    ) -> list[SpeechCommand]:
        """An invalid frame that claimed to be urgent is not silently lost on the user."""
        raw = result.raw or {}
        kind = raw.get("type") if isinstance(raw.get("type"), str) else ""
        urgent = raw.get("urgency") == "critical" or any(
            str(kind).endswith(suffix)
            for suffix in ("awaiting.confirmation", "awaiting.clarification", "session.errored")
        )
        if not urgent:
            return []
        last = self._last_unreadable_notice.get(source_id)
        if last is not None and now - last < UNREADABLE_NOTICE_INTERVAL_SECONDS:
            return []
        self._last_unreadable_notice[source_id] = now
        if len(self._last_unreadable_notice) > 1024:
            self._last_unreadable_notice.clear()
        text = translator(self.policy.phrase_language).gettext(
            "An agent sent an urgent message that could not be read. See the diagnostics."
        )
        announcement = Announcement(
            text=text, language=self.policy.phrase_language, kind="system.invalid"
        )
        return self._submit(announcement, source_id, now)

    def _log_note(self, note: TrackerNote, source_id: str | None, now: float) -> None:
        section = _TRACKER_SECTIONS.get(note.code, "§3")
        envelope = {"session_id": note.session_id, "event_id": note.event_id}
        if note.code == "duplicate_event":
            self.diagnostics.record_drop(
                note.code,
                note.message,
                section=section,
                envelope=envelope,
                source=source_id,
                now=now,
            )
            return
        diagnostic = Diagnostic(note.code, "", section, note.message, "warning")
        self.diagnostics.record(
            DecodeResult(kind="event", message=None, diagnostics=[], raw=envelope),
            source=source_id,
            now=now,
            extra=[diagnostic],
        )
