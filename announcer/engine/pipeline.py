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
import math
import re
from collections import Counter, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final, NamedTuple

from announcer.engine.announcement import Announcement, Urgency
from announcer.engine.answer_keys import KEY_PRESS_ANSWER_KEYS, NO_ANSWERING_UI_KEYS, AnswerKeys
from announcer.engine.clock import LATE_TOLERANCE_SECONDS, Lateness, ProducerClock, lateness
from announcer.engine.outputs import OutputStreams, Released
from announcer.engine.phrases import N_
from announcer.engine.policy import (
    Policy,
    Spoken,
    agent_asks_itself,
    by_language,
    same_language,
    waits_without_timeout,
)
from announcer.engine.prompts import ANNOUNCER_EXTENSION, PendingPrompt, UserAnswer
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
    Producer,
    SessionCancelled,
    SessionCompleted,
    SessionErrored,
)
from announcer.protocol.handshake import SubscriptionAccepted
from announcer.protocol.log import DiagnosticsLog

_TERMINAL: Final = (SessionCompleted, SessionErrored, SessionCancelled)
_PROMPTS: Final = (AwaitingConfirmation, AwaitingClarification)
TRANSCRIPT_SIZE: Final = 1_000
#: A question the producer withdraws this close to its deadline (or later) ran out of
#: time: a hook's own timer and our tick race for the same moment.
VOID_AT_DEADLINE_SECONDS: Final = 1.0
_URGENCY_OF: Final = {urgency.value: urgency for urgency in Urgency}
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
# An unreadable frame that looked urgent is mentioned at most this often per source
# (never a question: §10.1.3 says those are never dropped in silence).
UNREADABLE_NOTICE_INTERVAL_SECONDS: Final = 10.0
# Frame types that ask the user something (§4.4): unreadable ones are always announced.
_QUESTION_SUFFIXES: Final = (
    "awaiting.confirmation",
    "awaiting.clarification",
    "handoff.requested",
)
_REPLY_TOKEN: Final = re.compile(r"rpl_[A-Za-z0-9]{1,64}")
_EVENT_ID: Final = re.compile(r"evt_[A-Za-z0-9]{1,64}")
# A malformed question whose timeout cannot be read is kept open this long (§6.4.2's
# longest recommended timeout is 600 s; the producer's own clock decides anyway).
MALFORMED_TIMEOUT_SECONDS: Final = 300
# A waiting or set-aside count already heard is said again at most this often; the
# current count is also said whenever the next question is read.
COUNT_NOTICE_INTERVAL_SECONDS: Final = 5.0
_TRACKER_SECTIONS: Final = {
    "duplicate_event": "§8.2.4",
    "late_event": "§3.4.1",
    "sequence_gap": "§8.2.3",
    "second_session_started": "§4.1.1",
    "event_after_end": "§4.5.1",
    "state_mismatch": "§4.2.1",
    "tool_not_invoked": "§4.5.2",
    "chunk_after_complete": "§4.5.4",
    "extension.untrusted": "§3.4.3",
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
    # Questions set aside because too many were waiting (said aloud when it happens).
    questions_set_aside: int = 0


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
        wall_clock: Callable[[], datetime] | None = None,
        open_prompts_limit: int | None = None,
    ) -> None:
        self.settings = settings or UserSettings()
        self.diagnostics = diagnostics or DiagnosticsLog()
        self.tracker = SessionTracker()
        self.policy = Policy(self.settings, answer_keys=answer_keys)
        self.outputs = OutputStreams()
        self.book = ReplyBook() if open_prompts_limit is None else ReplyBook(open_prompts_limit)
        # §6.3.1: a reply carries the wall-clock time of the user's decision.
        self.wall_clock: Callable[[], datetime] = wall_clock or _utc_now
        # The question being presented (read out, answer keys bound to it), when it was
        # presented, and whether the next one is due (presented at the next tick).
        self._presented: str | None = None
        self.presented_at: float | None = None
        self._present_due_at: float | None = None
        # When the presented question was last said to be still waiting (reminders).
        self._reminded_at: float | None = None
        self._waiting_notice_id: str | None = None
        self._count_notice_at: dict[str, float] = {}
        # A count held back by the interval, said when it is over (never lost).
        self._count_due: dict[str, tuple[Announcement, str]] = {}
        self._notice_serial = 0
        self.set_aside = 0
        self._set_aside_notice_id: str | None = None
        # Per connection and producer (each has its own clock): recent (our wall clock -
        # event timestamp) in seconds, to take clock skew out of lateness (§6.4).
        self._clocks: dict[tuple[str, str], ProducerClock] = {}
        # A question's event id -> how late it was, judged by the clock seen before it.
        self._late_before: dict[str, Lateness] = {}
        # Connections whose producer closed the subscription (§5.8) until a new one.
        self._closed_sources: set[str] = set()
        # Questions whose time to accept was said to be over (§6.4; reject still open).
        self._accept_over_told: set[str] = set()
        # Questions already said to be still open after the agent went on working.
        self._told_open: set[str] = set()
        # Sources announcer maps itself: the only ones trusted with ``x-announcer``.
        self._mapped_sources: set[str] = set()
        self.scheduler = scheduler or SpeechScheduler(self.settings, paced=paced)
        self.scheduler.update_settings(self.settings)
        self.scheduler.on_start = self._word_count
        self._transcript: deque[TranscriptEntry] = deque(maxlen=transcript_size)
        self._subscriptions: dict[str, str] = {}
        self._outgoing: deque[OutgoingReply] = deque(maxlen=10_000)
        self._last_unreadable_notice: dict[str, float] = {}
        self._after_answer: list[SpeechCommand] = []
        # (producer_id, kind) -> [the count of folded urgent messages waiting to be said, how many,
        # the source it came from, the producer's name when no session names it]; its words
        # are set when it is said (:meth:`_word_count`). Kind ``_SKIPPED_UNREAD``: a count
        # the reader's skipped frames started (:meth:`count_skipped_urgent`).
        self._folded: dict[tuple[str, str], list[Any]] = {}
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
            if message.extensions and source_id not in self._mapped_sources:
                message = self._without_our_extension(message, source_id, now)
            self.events += 1
            if type(message) is not OutputStreaming:
                self._observe_clock(message, source_id)
            return self._process(self.tracker.admit(message, source_id, now), source_id, now)
        if result.kind == "handshake":
            if isinstance(result.message, SubscriptionAccepted):
                self._subscriptions[source_id] = result.message.subscription_id
            return []
        if result.kind == "reply":
            token = getattr(result.message, "reply_token", None)
            prompt = self.book.get(token) if isinstance(token, str) else None
            if prompt is not None and prompt.source_id == source_id:
                # §6.7.2: the producer passed on another subscriber's answer to it.
                commands = self._resolved_elsewhere(prompt.reply_token, now)
                self.tracker.prompt_closed(
                    source_id, prompt.session_id, prompt.reply_token, resolved=True
                )
                return commands + self._present_next(now)
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
        commands = self._skip_sequence(result, source_id, now)
        return commands + self._notice_unreadable(result, source_id, now)

    def trust_extension(self, source_id: str) -> None:
        """``source_id`` is a source announcer maps itself (ACP, hooks, agent streams).

        Only such sources may carry announcer's own ``x-announcer`` extension (no time
        limit, "allow from now on", display styles); from any other producer it is
        removed, so an AAEP producer cannot disguise its question (issue 22 item 3).
        """
        self._mapped_sources.add(source_id)

    def _without_our_extension(self, event: AaepEvent, source_id: str, now: float) -> AaepEvent:
        extensions = event.extensions or {}
        if ANNOUNCER_EXTENSION not in extensions:
            return event
        self._log_note(
            TrackerNote(
                "extension.untrusted",
                f"an AAEP producer sent announcer's own {ANNOUNCER_EXTENSION!r} extension; "
                "ignored (only sources announcer maps itself may use it)",
                event.session_id,
                event.event_id,
            ),
            source_id,
            now,
        )
        kept = {name: value for name, value in extensions.items() if name != ANNOUNCER_EXTENSION}
        return event.model_copy(update={"extensions": kept or None})

    def receive_event(self, event: AaepEvent, source_id: str, now: float) -> list[SpeechCommand]:
        self.events += 1
        if type(event) is not OutputStreaming:
            self._observe_clock(event, source_id)
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
            self.tracker.prompt_closed(
                prompt.source_id, prompt.session_id, prompt.reply_token, resolved=True
            )
            commands += self._say_expired(prompt, now)
        commands += self._say_accept_over(now)
        commands += self._present_next(now)
        commands += self._remind(now)
        commands += self._say_due_counts(now)
        commands += self.scheduler.tick(now)
        return commands

    def next_wakeup(self) -> float | None:
        """The earliest ``now`` at which :meth:`tick` has work, or None."""
        candidates = [
            self.tracker.next_wakeup(),
            self.outputs.next_wakeup(),
            self.book.next_deadline(),
            self._accept_over_due(),
            self.scheduler.next_wakeup(),
            self._present_due_at,
            self._reminder_due(),
            *(
                self._count_notice_at[kind] + COUNT_NOTICE_INTERVAL_SECONDS
                for kind in self._count_due
            ),
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
        commands += self._present_next(now)
        return commands

    def subscription_closed(self, source_id: str, now: float) -> list[SpeechCommand]:
        """§5.8.2: the producer closed the subscription and applies each question's default.

        Every question from that connection is void; the user hears which default the
        agent applies (goes ahead, rejected, stopped waiting), never "sent".
        """
        commands: list[SpeechCommand] = []
        self._subscriptions.pop(source_id, None)
        self._closed_sources.add(source_id)
        for prompt in self.book.pending():
            if prompt.source_id != source_id:
                continue
            self.book.void(prompt.reply_token)
            self.tracker.prompt_closed(prompt.source_id, prompt.session_id, prompt.reply_token)
            notice = self._notice(
                self._closed_msgid(prompt), prompt, kind="system.prompt_voided", critical=True
            )
            commands += self._withdraw(prompt, notice, now)
        commands += self._present_next(now)
        return commands

    def presented_prompt(self) -> PendingPrompt | None:
        """The question being presented: the one the user was told about and answers now.

        Questions are presented one at a time in the order they arrived; the others
        wait (and the user hears how many). A UI binds its answer keys to this one
        (``UserAnswer.event_id``), and shows the next one only when this one closes.
        """
        token = self._presented
        return self.book.get(token) if token is not None else None

    def present(self, reply_token: str, now: float) -> list[SpeechCommand]:
        """Read an open question (again) with the time left now; it becomes the presented one.

        "Say again" calls this with the presented question's token; a UI where the
        user picked another waiting question calls it with that one's token.
        """
        prompt = self.book.get(reply_token)
        if prompt is None:
            return []
        return self._present(prompt, now)

    def silence(self, now: float) -> list[SpeechCommand]:
        return self.scheduler.silence(now)

    def set_subscription(self, source_id: str, subscription_id: str) -> None:
        """Record the subscription a connection negotiated (replies must carry it)."""
        self._subscriptions[source_id] = subscription_id
        self._closed_sources.discard(source_id)

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
        at = decided_at if decided_at is not None else self.wall_clock()
        outcome = self.book.answer(answer, now, subscription, at)
        if prompt is not None and self.book.get(answer.reply_token) is None:
            # Answered, or found expired: the producer owes a state change for it.
            self.tracker.prompt_closed(
                prompt.source_id, prompt.session_id, prompt.reply_token, resolved=True
            )
            # Issue 14 c: no key hints or time left after the answer; cut the question off.
            self._after_answer += self.scheduler.question_ended(prompt.event_id, now)
            if self._presented == answer.reply_token:
                self._present_due_at = now  # the next question, at the next tick
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
            questions_set_aside=self.set_aside,
        )

    # -- internals -------------------------------------------------------------------------

    def _process(self, admission: Admission, source_id: str, now: float) -> list[SpeechCommand]:
        events = admission.events
        if (
            len(events) == 1
            and not admission.notes
            and not admission.voided_tokens
            and not admission.void_on_arrival
            and not admission.resolved_tokens
            and not admission.kept_open
        ):
            return self._handle(events[0], source_id, now)  # the usual case
        commands: list[SpeechCommand] = []
        for note in admission.notes:
            self._log_note(note, source_id, now)
        for token in admission.voided_tokens:
            prompt = self.book.void(token)
            if prompt is None:
                continue
            if prompt.timeout_seconds > 0 and now >= prompt.deadline - VOID_AT_DEADLINE_SECONDS:
                # §6.4/§6.8: the producer moved on because its time ran out (a hook's
                # own timer can beat our tick): that is a timeout, said as one.
                commands += self._say_expired(prompt, now)
                continue
            if self.scheduler.question_started_at(prompt.event_id) is None:
                # Issue 20: never heard, it is still said, at its urgency and in its place.
                commands += self._withdraw(prompt, self._unheard_void_notice(prompt), now)
                continue
            notice = self._notice(
                N_("No answer needed any more: {what}"),
                prompt,
                kind="system.prompt_voided",
                short=True,
            )
            commands += self._withdraw(prompt, notice, now)
        for token in admission.resolved_tokens:
            commands += self._resolved_elsewhere(token, now)
        commands += self._still_open(admission.kept_open, now)
        for event in admission.events:
            void = admission.void_on_arrival.get(event.event_id)
            if void is not None and isinstance(event, _PROMPTS):
                commands += self._void_on_arrival(event, void, source_id, now)
                continue
            commands += self._handle(event, source_id, now)
        commands += self._present_next(now)
        return commands

    def _resolved_elsewhere(self, token: str, now: float) -> list[SpeechCommand]:
        """§6.7.2: the producer says this question was answered elsewhere; said once.

        A later key is refused as "already answered elsewhere", never sent.
        """
        prompt = self.book.close(token, "answered_elsewhere")
        if prompt is None:
            return []
        notice = self._notice(
            N_("Answered elsewhere; no answer is needed from you: {what}"),
            prompt,
            kind="system.prompt_voided",
            short=True,
        )
        return self._withdraw(prompt, notice, now)

    def _still_open(self, tokens: list[str], now: float) -> list[SpeechCommand]:
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
        announcement = self._system_announcement(
            text, prompt, kind="system.prompt_still_open", critical=False
        )
        announcement.event_id = None  # not part of the question: never cut off with it
        return self._submit(announcement, prompt.source_id, now)

    def _handle(self, event: AaepEvent, source_id: str, now: float) -> list[SpeechCommand]:
        if type(event) is OutputStreaming:
            return self._handle_output(event, source_id, now)
        session = self.tracker.session(source_id, event.session_id)
        if session is None:  # evicted under pressure between admit and now
            return []
        commands: list[SpeechCommand] = []
        if self.outputs:
            # Issue 20: a finished sentence held for a pause comes before what follows it.
            for released in self.outputs.release_finished(source_id, event.session_id):
                commands += self._say_output(released, source_id, now)
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
        late = self._lateness(event, source_id)
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
            # A clarification has no reject: any answer after the producer's deadline by
            # the best estimate could race its default, so its whole time follows that.
            late_by=late.reject if isinstance(event, AwaitingConfirmation) else late.accept,
            accept_late_by=late.accept,
        )
        if source_id in self._closed_sources:
            # §5.8.2: after its subscription.close the producer applies defaults itself.
            self.book.refuse(prompt.reply_token, "voided")
            self.tracker.prompt_closed(source_id, prompt.session_id, prompt.reply_token)
            commands: list[SpeechCommand] = []
            notice = self._notice(
                self._closed_msgid(prompt), prompt, kind="system.prompt_voided", critical=True
            )
            for part in notice:
                commands += self._submit(part, source_id, now)
            return commands
        if prompt.deadline <= now:
            return self._expired_on_arrival(prompt, now)
        first = self.book.get(prompt.reply_token)
        problem = self.book.open(prompt)
        if problem is not None:
            if self.book.closed_reason(prompt.reply_token) == "superseded" and first is None:
                return self._set_aside_notice(prompt, now)
            self._log_note(
                TrackerNote("reply_token.reused", problem, event.session_id, event.event_id),
                source_id,
                now,
            )
            return self._refuse_reused(prompt, first, source_id, now)
        if first is not None:
            return []  # the same question delivered again: it stays as it was
        if (
            isinstance(event, AwaitingConfirmation)
            and self.settings.reply_policy == "auto_reject"
            and source_id in self._subscriptions
        ):
            # Nobody waits on the user: say it and reject it now, on the standing order.
            said = self._say_prompt(prompt, session, now)
            return said + self._auto_reject(prompt, source_id, now)
        return self._present_or_wait(prompt, now)

    def _present_or_wait(self, prompt: PendingPrompt, now: float) -> list[SpeechCommand]:
        """One question at a time, in the order they came: the others wait, counted aloud."""
        presented = self.presented_prompt()
        if presented is None or presented.reply_token == prompt.reply_token:
            return self._present(prompt, now)
        return self._waiting_notice(prompt, now)

    def _present(self, prompt: PendingPrompt, now: float) -> list[SpeechCommand]:
        self._presented = prompt.reply_token
        self.presented_at = now
        self._reminded_at = None
        self._present_due_at = None
        session = self.tracker.session(prompt.source_id, prompt.session_id)
        commands = self._say_prompt(prompt, session, now)
        waiting = len(self.book.pending()) - 1
        if waiting > 0:
            commands += self._submit(self._waiting_announcement(prompt, waiting, True), None, now)
        return commands

    def _reminder_due(self) -> float | None:
        """When the presented question is next said to be still waiting, or None.

        Only a question whose agent waits without a deadline (ACP permissions, marked
        by announcer's own extension) is reminded of: one with a deadline has its time
        left said instead. ``question_reminder_seconds`` 0 turns reminders off.
        """
        interval = self.settings.question_reminder_seconds
        prompt = self.presented_prompt()
        if interval <= 0 or prompt is None or self.presented_at is None:
            return None
        if self.policy.answer_keys is NO_ANSWERING_UI_KEYS:
            return None  # ``--ui none``: "your answer" could never come from here
        event = prompt.event
        if not isinstance(event, _PROMPTS) or not waits_without_timeout(event):
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
        for part in self._notice(
            N_("Still waiting for your answer: {what}"),
            prompt,
            kind="system.prompt_reminder",
            critical=True,
        ):
            # critical, so it is never skipped as stale; but it does not cut other speech
            commands += self._submit(dataclasses.replace(part, interrupt=False), None, now)
        return commands

    def _present_next(self, now: float) -> list[SpeechCommand]:
        """When the presented question closed, present the oldest one still waiting."""
        commands = self._recount_waiting(now)
        if self._presented is not None and self.book.get(self._presented) is not None:
            self._present_due_at = None
            return commands
        self._presented = None
        self._present_due_at = None
        pending = self.book.pending()
        if not pending:
            self.presented_at = None
            return commands
        return commands + self._present(pending[0], now)

    def _recount_waiting(self, now: float) -> list[SpeechCommand]:
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
        presented = self.presented_prompt() or pending[0]
        queued.text = self._waiting_announcement(presented, len(pending) - 1, False).text
        return []

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
        if prompt.malformed or not isinstance(event, _PROMPTS):
            notice = self._notice(
                N_("Malformed confirmation: {what}"),
                prompt,
                kind="system.prompt_malformed",
                critical=True,
            )
            if prompt.malformed:
                # §10.1.3: its words kept: consequence, risk, reversibility, deadline.
                details = self._malformed_details(prompt, now)
                if details:
                    notice.append(
                        dataclasses.replace(
                            self._system_announcement(
                                details, prompt, kind="system.prompt_malformed", critical=True
                            ),
                            continues=True,
                        )
                    )
                notice.append(
                    dataclasses.replace(
                        self._system_announcement(
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
                commands += self._submit(part, prompt.source_id, now)
            return commands
        left = math.ceil(prompt.seconds_left(now))
        if left < event.timeout_seconds:
            event = event.model_copy(update={"timeout_seconds": max(1, left)})
        commands = []
        for announcement in self.policy.decide(event, session, prompt.source_id, now):
            commands += self._submit(announcement, prompt.source_id, now)
        if (
            isinstance(event, AwaitingConfirmation)
            and not prompt.accepts(now)
            and prompt.deadline - now > LATE_TOLERANCE_SECONDS
        ):
            commands += self._say_accept_over_for(prompt, now)
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
            and prompt.source_id in self._subscriptions
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

    def _say_accept_over_for(self, prompt: PendingPrompt, now: float) -> list[SpeechCommand]:
        if (
            prompt.reply_token in self._accept_over_told
            or prompt.source_id not in self._subscriptions
        ):
            return []  # (a recording replayed cannot be answered at all)
        if len(self._accept_over_told) > 4096:
            self._accept_over_told.clear()
        self._accept_over_told.add(prompt.reply_token)
        notice = self._notice(
            N_("The time to accept is over, you can still reject: {what}"),
            prompt,
            kind="system.accept_over",
            critical=True,
        )
        commands: list[SpeechCommand] = []
        for part in notice:
            commands += self._submit(part, prompt.source_id, now)
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
        return clean_for_speech(self._raw_confirmation_details(raw), self.policy.phrase_language)

    def _waiting_announcement(
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
            self._system_announcement(text, prompt, kind="system.prompts_waiting", critical=True),
            interrupt=False,
            continues=continues,
        )

    def _waiting_notice(self, prompt: PendingPrompt, now: float) -> list[SpeechCommand]:
        """A question that must wait is counted aloud, not read over the presented one.

        One notice at a time: a newer count replaces the one still queued.
        """
        waiting = len(self.book.pending()) - 1
        announcement = self._waiting_announcement(prompt, waiting, False)
        commands, replaced = self._replace_notice(self._waiting_notice_id, now)
        if not replaced and self._recently_counted("waiting", now):
            self._count_due["waiting"] = (announcement, prompt.source_id)
            return commands
        self._notice_serial += 1
        announcement.event_id = self._waiting_notice_id = f"evt_waiting{self._notice_serial}"
        self._transcript.append(TranscriptEntry(now, announcement, prompt.source_id))
        return commands + self.scheduler.submit(announcement, now)

    def _say_due_counts(self, now: float) -> list[SpeechCommand]:
        commands: list[SpeechCommand] = []
        for kind, (announcement, source_id) in list(self._count_due.items()):
            if now - self._count_notice_at.get(kind, now) < COUNT_NOTICE_INTERVAL_SECONDS:
                continue
            del self._count_due[kind]
            self._count_notice_at[kind] = now
            self._notice_serial += 1
            announcement.event_id = f"evt_count{self._notice_serial}"
            if kind == "waiting":
                if len(self.book.pending()) <= 1:
                    continue  # nothing waits any more
                self._waiting_notice_id = announcement.event_id
            else:
                self._set_aside_notice_id = announcement.event_id
            self._transcript.append(TranscriptEntry(now, announcement, source_id))
            commands += self.scheduler.submit(announcement, now)
        return commands

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

    def _set_aside_notice(self, prompt: PendingPrompt, now: float) -> list[SpeechCommand]:
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
        announcement = self._system_announcement(
            text, prompt, kind="system.prompts_set_aside", critical=True
        )
        announcement.interrupt = False
        commands, replaced = self._replace_notice(self._set_aside_notice_id, now)
        if not replaced and self._recently_counted("set_aside", now):
            self._count_due["set_aside"] = (announcement, prompt.source_id)
            return commands
        self._notice_serial += 1
        announcement.event_id = self._set_aside_notice_id = f"evt_setaside{self._notice_serial}"
        self._transcript.append(TranscriptEntry(now, announcement, prompt.source_id))
        return commands + self.scheduler.submit(announcement, now)

    def _void_on_arrival(
        self,
        event: AwaitingConfirmation | AwaitingClarification,
        reason: str,
        source_id: str,
        now: float,
    ) -> list[SpeechCommand]:
        """§6.8: a question whose session ended (or that was cancelled) before it came."""
        prompt = self._prompt_for(event, source_id, now)
        self.book.refuse(event.reply_token, "ended" if reason == "ended" else "voided")
        msgid = self._void_on_arrival_msgid(reason)
        commands: list[SpeechCommand] = []
        for part in self._notice(
            msgid, prompt, kind="system.prompt_void_on_arrival", critical=True
        ):
            commands += self._submit(part, source_id, now)
        return commands

    def _expired_on_arrival(self, prompt: PendingPrompt, now: float) -> list[SpeechCommand]:
        """§6.4: the time to answer ran out before the question got here."""
        self.book.refuse(prompt.reply_token, "expired")
        self.tracker.prompt_closed(
            prompt.source_id, prompt.session_id, prompt.reply_token, resolved=True
        )
        commands: list[SpeechCommand] = []
        for part in self._notice(
            N_(
                "This question came after its time ran out; "
                "the agent has already applied its default: {what}"
            ),
            prompt,
            kind="system.prompt_expired",
            critical=True,
        ):
            commands += self._submit(part, prompt.source_id, now)
        return commands

    def _prompt_for(
        self, event: AwaitingConfirmation | AwaitingClarification, source_id: str, now: float
    ) -> PendingPrompt:
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
        )

    def _observe_clock(self, event: AaepEvent, source_id: str) -> None:
        """Remember how far behind our wall clock this producer's timestamps run (§6.4).

        A question is judged by the offsets seen before it (``announcer.engine.clock``):
        its own timestamp must not take part in judging whether it is late.
        """
        key = (source_id, event.producer.agent_id)
        clock = self._clocks.get(key)
        if clock is None:
            if len(self._clocks) > 1024:
                self._clocks.clear()
            clock = self._clocks[key] = ProducerClock()
        offset = (self.wall_clock() - event.timestamp).total_seconds()
        if isinstance(event, _PROMPTS):
            if len(self._late_before) > 1024:
                self._late_before.clear()
            self._late_before[event.event_id] = lateness(
                clock, offset, float(event.timeout_seconds), first_event=not clock.seen
            )
        clock.observe(offset)

    def _lateness(
        self, event: AwaitingConfirmation | AwaitingClarification, source_id: str
    ) -> Lateness:
        """How long ``event`` was under way before it arrived (§6.4, §10.1.3).

        ``reject``: expired on arrival only beyond any skew seen, else at least
        ``MIN_ANSWER_SECONDS`` left while the producer may still wait; ``accept``: by the
        best estimate of the producer's clock, so accept is not offered after its
        deadline (``announcer.engine.clock``).
        """
        late = self._late_before.pop(event.event_id, None)
        if late is not None:
            return late
        clock = self._clocks.get((source_id, event.producer.agent_id))
        offset = (self.wall_clock() - event.timestamp).total_seconds()
        # Observed already (its own offset is in the clock): judged by what came before
        # is no longer possible, so only what the clock says beyond it counts.
        return lateness(clock, offset, float(event.timeout_seconds), first_event=clock is None)

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
            producer_id=event.producer.agent_id
            if event is not None
            else self._producer_of(released, source_id),
            kind="agent.output.streaming",
        )
        hints = event.localization_hints if event is not None else None
        if hints is not None and hints.text_direction:
            announcement.direction = hints.text_direction  # §11.4
        return self._submit(announcement, source_id, now)

    def _producer_of(self, released: Released, source_id: str | None) -> str | None:
        """Whose words a sentence released by a pause or a session's end are."""
        source = source_id or released.source_id
        session = self.tracker.session(source, released.session_id) if source else None
        return session.producer_id if session is not None else None

    def _say_expired(self, prompt: PendingPrompt, now: float) -> list[SpeechCommand]:
        """A question whose time ran out: what was queued about it is dropped as timed
        out (issue 14 c), then why it ended is said."""
        notice = self._notice(self._expired_msgid(prompt), prompt, kind="system.prompt_expired")
        commands = self.scheduler.question_ended(prompt.event_id, now, "question timed out")
        return commands + self._withdraw(prompt, notice, now)

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
        self._transcript.append(TranscriptEntry(now, summary, source_id))
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
        self._transcript.append(TranscriptEntry(now, summary, source_id))
        return self.scheduler.submit(summary, now)

    def _keep_folded(self, announcement: Announcement, source_id: str | None, now: float) -> None:
        """A folded message is not spoken, but its words stay in the transcript and History."""
        self._transcript.append(TranscriptEntry(now, announcement, source_id))
        if self.scheduler.on_skip is not None:
            self.scheduler.on_skip(announcement)

    def _word_count(self, announcement: Announcement) -> None:
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
        if prompt.malformed:
            # A best-effort reading: its text is whatever string the frame held.
            raw = getattr(event, field, "")
            text = raw if isinstance(raw, str) else ""
            language = self.policy.phrase_language
            return Spoken(clean_for_speech(text, language, max_chars=160), language)
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

    def _short_subject(self, prompt: PendingPrompt) -> Spoken:
        """The question named briefly, for news that it ended (issue 14 e).

        Read out whole, "No answer needed any more: <the whole question>" took 5.5 s at
        180 words a minute while newer news waited. Its first ``SHORT_SUBJECT_WORDS``
        words name it (a producer's ``summary_terse`` is often generic: "Permission
        needed."); the whole question stays on screen and in History.
        """
        subject = self._prompt_subject(prompt)
        return Spoken(_first_words(subject.text), subject.language)

    def _notice(
        self,
        msgid: str,
        prompt: PendingPrompt,
        *,
        kind: str,
        critical: bool = False,
        short: bool = False,
        why: str = "",
    ) -> list[Announcement]:
        """Our phrase about a question, naming it by its subject (``{what}``).

        A subject in another language than our phrase is its own part, read by its
        own voice (§11.5); the parts are one message (``continues``). ``short`` names
        the question by its short subject (:meth:`_short_subject`).
        """
        template = translator(self.policy.phrase_language).gettext(msgid)
        subject = self._short_subject(prompt) if short else self._prompt_subject(prompt)
        if why:
            # Why it ended, a sentence after the subject: "…: <action>. <why>" (issue 20).
            text = subject.text.rstrip()
            if text and not text.endswith((".", "!", "?", "…", "。", "؟", "।")):
                text += "."
            subject = Spoken(text, subject.language)
            template = f"{template} {why}"
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

    def _unheard_void_notice(self, prompt: PendingPrompt) -> list[Announcement]:
        """ "Withdrawn before you could answer: <action>. <why>." (issue 20)

        Said at the question's own urgency, in its place: the user learns what the agent
        wanted to do, even though it no longer waits for an answer.
        """
        session = self.tracker.session(prompt.source_id, prompt.session_id)
        ended = session is not None and session.lifecycle != "active"
        why = translator(self.policy.phrase_language).gettext(
            N_("The session ended.") if ended else N_("The agent went on without your answer.")
        )
        event = prompt.event
        critical = (
            not isinstance(event, AaepEvent) or self.policy.urgency_of(event) is Urgency.CRITICAL
        )
        return self._notice(
            N_("Withdrawn before you could answer: {what}"),
            prompt,
            kind="system.prompt_voided",
            critical=critical,
            short=True,  # its first words name it; the whole question stays on screen
            why=why,
        )

    @staticmethod
    def _void_on_arrival_msgid(reason: str) -> str:
        if reason == "ended":
            return N_(
                "The agent's session had already ended when this question came; "
                "it cannot be answered: {what}"
            )
        return N_("This question was already withdrawn when it came; it cannot be answered: {what}")

    @staticmethod
    def _closed_msgid(prompt: PendingPrompt) -> str:
        event = prompt.event
        if isinstance(event, AwaitingConfirmation):
            return (
                N_("The agent closed the subscription, so it goes ahead with: {what}")
                if event.default_decision == "accept"
                else N_("The agent closed the subscription, so it rejected: {what}")
            )
        return N_("The agent closed the subscription and stopped waiting for: {what}")

    @staticmethod
    def _expired_msgid(prompt: PendingPrompt) -> str:
        event = prompt.event
        if isinstance(event, AwaitingConfirmation) and agent_asks_itself(event):
            # a coding-agent hook (formats/hooks.py): no answer is "ask", never a reject
            return N_("Time is up; the agent will ask you itself: {what}")
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
        """An invalid frame is never lost in silence when it asked something (§10.1.3).

        A question (confirmation, clarification, handoff) is announced at critical
        urgency every time; unreadable questions still waiting to be announced are
        grouped into one count. A confirmation with a well-formed ``reply_token`` on
        a connection that can reply opens as a malformed question: reject only.
        Other frames that claimed to be urgent get a rate-limited mention.
        """
        raw = result.raw or {}
        kind = raw.get("type") if isinstance(raw.get("type"), str) else ""
        if any(str(kind).endswith(suffix) for suffix in _QUESTION_SUFFIXES):
            return self._unreadable_question(raw, str(kind), result, source_id, now)
        if str(kind).endswith("session.errored"):
            return self._unreadable_errored(raw, source_id, now)
        urgent = raw.get("urgency") == "critical"
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
            text=text,
            language=self.policy.phrase_language,
            urgency=Urgency.CRITICAL,
            kind="system.invalid",
        )
        return self._submit(announcement, source_id, now)

    def _unreadable_errored(
        self, raw: Mapping[str, Any], source_id: str, now: float
    ) -> list[SpeechCommand]:
        """§4.4, §10.1.3: an errored session that fails validation is still said, critical,
        with the words it carries (never rate-limited: errored MUST NOT be suppressed)."""
        language = self.policy.phrase_language
        tr = translator(language)
        name = _raw_producer_name(raw, language) or source_id
        words = _raw_words(raw, ("summary_normal", "summary_terse", "summary_detailed"))
        detail = _raw_words(raw, ("error_message", "remediation_hint"))
        what = words if detail in words else f"{words} {detail}".strip()
        text = (
            tr.gettext("{name} reports an error: {what}").format(name=name, what=what)
            if what
            else tr.gettext(
                "{name} reports an error that could not be read; see the diagnostics."
            ).format(name=name)
        )
        self._notice_serial += 1
        event_id = raw.get("event_id")
        announcement = Announcement(
            text=clean_for_speech(text, language),
            language=language,
            urgency=Urgency.CRITICAL,
            interrupt=True,
            event_id=event_id if isinstance(event_id, str) else f"evt_invalid{self._notice_serial}",
            session_id=raw.get("session_id") if isinstance(raw.get("session_id"), str) else None,
            kind="system.invalid_errored",
            earcon="errored",
        )
        return self._submit(announcement, source_id, now)

    def _skip_sequence(
        self, result: DecodeResult, source_id: str, now: float
    ) -> list[SpeechCommand]:
        """An invalid frame's sequence number is not waited for: later events go on."""
        raw = result.raw or {}
        session_id = raw.get("session_id")
        sequence = raw.get("sequence_number")
        if (
            not isinstance(session_id, str)
            or not isinstance(sequence, int)
            or isinstance(sequence, bool)
        ):
            return []
        admission = self.tracker.skip_sequence(source_id, session_id, sequence, now)
        if not admission.events and not admission.voided_tokens and not admission.notes:
            return []
        return self._process(admission, source_id, now)

    def _unreadable_question(
        self,
        raw: Mapping[str, Any],
        kind: str,
        result: DecodeResult,
        source_id: str,
        now: float,
    ) -> list[SpeechCommand]:
        token = raw.get("reply_token")
        well_formed = isinstance(token, str) and _REPLY_TOKEN.fullmatch(token) is not None
        if (
            kind.endswith("awaiting.confirmation")
            and well_formed
            and source_id in self._subscriptions
        ):
            assert isinstance(token, str)
            prompt = _malformed_prompt(raw, token, result, source_id, now, self.wall_clock())
            known = self.book.get(token)
            if known is not None and known.event_id == prompt.event_id:
                return []  # the same frame again (§8.2.4)
            sequence = raw.get("sequence_number")
            void = self.tracker.void_reason(
                source_id,
                prompt.session_id,
                sequence if isinstance(sequence, int) and not isinstance(sequence, bool) else None,
            )
            if known is None and void is not None:
                self.book.refuse(token, "ended" if void == "ended" else "voided")
                commands: list[SpeechCommand] = []
                for part in self._notice(
                    self._void_on_arrival_msgid(void),
                    prompt,
                    kind="system.prompt_void_on_arrival",
                    critical=True,
                ):
                    commands += self._submit(part, source_id, now)
                return commands
            if known is None and self.book.closed_reason(token) is None:
                if self.book.open(prompt) is None:
                    self.tracker.note_prompt(
                        source_id, prompt.session_id, token, prompt.producer_id, now
                    )
                    return self._present_or_wait(prompt, now)
                return self._set_aside_notice(prompt, now)
        # §10.1.3: a question that cannot be opened still keeps its words: each one is
        # said, critical, with what could be read of it (never grouped, never limited).
        language = self.policy.phrase_language
        tr = translator(language)
        name = _raw_producer_name(raw, language) or source_id
        if kind.endswith("awaiting.confirmation"):
            words = _raw_words(raw, ("action", "summary_normal", "summary_terse"))
            details = self._raw_confirmation_details(raw)
        elif kind.endswith("awaiting.clarification"):
            words = _raw_words(raw, ("question", "summary_normal", "summary_terse"))
            details = _raw_choice_labels(raw)
        else:
            words = _raw_words(raw, ("reason", "summary_normal", "summary_terse"))
            details = ""
        what = " ".join(part for part in (words, details) if part)
        text = (
            tr.gettext(
                "Unreadable question from {name}; it cannot be answered here: {what}"
            ).format(name=name, what=what)
            if what
            else tr.gettext(
                "Unreadable questions from {name}: {count}. They cannot be answered here; "
                "see the diagnostics."
            ).format(name=name, count=1)
        )
        self._notice_serial += 1
        announcement = Announcement(
            text=clean_for_speech(text, language),
            language=language,
            urgency=Urgency.CRITICAL,
            event_id=f"evt_unreadable{self._notice_serial}",
            kind="system.invalid_question",
            earcon="needs_you",
        )
        return self._submit(announcement, source_id, now)

    def _raw_confirmation_details(self, raw: Mapping[str, Any]) -> str:
        """Consequence, risk, reversibility and deadline of a confirmation, as far as
        they can be read from a frame that failed validation (§10.1.3)."""
        tr = translator(self.policy.phrase_language)
        parts = [_raw_words(raw, ("consequence",))]
        risk = raw.get("risk_level")
        if risk == "high":
            parts.append(tr.gettext("High risk."))
        elif risk == "medium":
            parts.append(tr.gettext("Medium risk."))
        reversibility = raw.get("reversibility")
        if reversibility == "reversible":
            parts.append(tr.gettext("This can be undone."))
        elif reversibility == "reversible_with_effort":
            parts.append(tr.gettext("Undoing this takes effort."))
        elif reversibility == "irreversible" or raw.get("irreversible") is True:
            parts.append(tr.gettext("This cannot be undone."))
        timeout = raw.get("timeout_seconds")
        default = raw.get("default_decision")
        if isinstance(timeout, int) and not isinstance(timeout, bool) and timeout > 0:
            parts.append(
                self.policy.timeout_phrase(timeout, "accept" if default == "accept" else "reject")
            )
        return " ".join(part for part in parts if part)

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


def _utc_now() -> datetime:
    return datetime.now(UTC)


def _malformed_prompt(
    raw: Mapping[str, Any],
    token: str,
    result: DecodeResult,
    source_id: str,
    now: float,
    wall_now: datetime,
) -> PendingPrompt:
    """What could be read of an invalid confirmation, as a question only rejectable.

    The event is built without validation from the fields that have the right
    shape; everything else gets a plain stand-in. ``allowed_replies`` is reject only.
    """

    def text(name: str) -> str:
        value = raw.get(name)
        return value if isinstance(value, str) else ""

    timeout = raw.get("timeout_seconds")
    if not isinstance(timeout, int) or isinstance(timeout, bool) or not 0 < timeout <= 86_400:
        timeout = MALFORMED_TIMEOUT_SECONDS
    default = raw.get("default_decision")
    producer = raw.get("producer")
    agent_id = ""
    agent_name: str | None = None
    if isinstance(producer, Mapping):
        if isinstance(producer.get("agent_id"), str):
            agent_id = producer["agent_id"]
        if isinstance(producer.get("agent_name"), str):
            agent_name = producer["agent_name"]
    event_id = text("event_id")
    if _EVENT_ID.fullmatch(event_id) is None:
        event_id = f"evt_malformed{token[4:]}"
    session_id = text("session_id")
    event = AwaitingConfirmation.model_construct(
        context=text("@context") or "https://aaep-protocol.org/context/v1",
        type=text("type"),
        event_id=event_id,
        session_id=session_id,
        timestamp=wall_now,
        producer=Producer.model_construct(agent_id=agent_id or "unknown", agent_name=agent_name),
        urgency="critical",
        action=text("action"),
        consequence=text("consequence"),
        reply_token=token,
        timeout_seconds=timeout,
        default_decision=default if default in ("accept", "reject") else "reject",
        allowed_replies=["reject"],
        risk_level=raw.get("risk_level") if raw.get("risk_level") in _RISKS else None,
        irreversible=raw.get("irreversible") if isinstance(raw.get("irreversible"), bool) else None,
        reversibility=(
            raw.get("reversibility") if raw.get("reversibility") in _REVERSIBILITY else None
        ),
    )
    problems = tuple(
        f"{d.code} ({d.section})" for d in result.diagnostics if d.severity == "error"
    ) or ("invalid",)
    return PendingPrompt(
        kind="confirmation",
        reply_token=token,
        session_id=session_id,
        event_id=event_id,
        source_id=source_id,
        producer_id=agent_id or "unknown",
        producer_name=agent_name,
        received_at=now,
        timeout_seconds=float(timeout),
        event=event,
        problems=problems,
    )


_RISKS: Final = ("low", "medium", "high")
_REVERSIBILITY: Final = ("reversible", "reversible_with_effort", "irreversible")


def _raw_producer_name(raw: Mapping[str, Any], language: str) -> str:
    """The producer's name from a frame that failed validation, sanitised for speech."""
    producer = raw.get("producer")
    if isinstance(producer, Mapping):
        for key in ("agent_name", "agent_id"):
            value = producer.get(key)
            if isinstance(value, str) and value.strip():
                return clean_for_speech(value, language, max_chars=60)
    return ""


def _raw_words(raw: Mapping[str, Any], fields: tuple[str, ...]) -> str:
    """The first of ``fields`` that holds text, for speech (bounded, sanitised later)."""
    for name in fields:
        value = raw.get(name)
        if isinstance(value, str) and value.strip():
            return value.strip()[:600]
    return ""


def _raw_choice_labels(raw: Mapping[str, Any]) -> str:
    choices = raw.get("choices")
    if not isinstance(choices, list):
        return ""
    labels = [
        choice["label"].strip()[:100]
        for choice in choices[:12]
        if isinstance(choice, Mapping) and isinstance(choice.get("label"), str)
    ]
    return "; ".join(label for label in labels if label)


SHORT_SUBJECT_WORDS: Final = 12


def _first_words(text: str) -> str:
    """``text`` cut to ``SHORT_SUBJECT_WORDS`` words, with an ellipsis when cut."""
    words = text.split()
    if len(words) <= SHORT_SUBJECT_WORDS:
        return text.strip()
    return " ".join(words[:SHORT_SUBJECT_WORDS]).rstrip(",;:—-") + "…"
