"""The announcement engine: frames in, speech commands and replies out, no I/O.

:class:`Engine` ties decoding and validation (``announcer.protocol``), the session
tracker, the policy, the output coalescers, the reply book and the speech scheduler
into one object driven by plain calls and a clock you pass in (``now``, seconds on
any monotonic scale). Transports feed it frames; a speech driver executes the
commands it returns; user interfaces read its prompts, transcript and status and
hand it the user's answers.

This module keeps the inputs, ``tick``, the dispatch of events and the reading side;
the rest of the engine is objects that own their state, each handed the parts it
works with (issue 32 step 1, as h11's connection owns its reader and writer): the
questions (:class:`~.questions.QuestionDesk`, with their spoken counts in
:mod:`.question_counts` and their phrases in :mod:`.question_notices`), the
connections (:mod:`.connections`), clock skew (:mod:`.clock_skew`), the queueing and
folding of urgent floods (:mod:`.folding`), the agents' streamed words
(:mod:`.agent_words`), a turn's digest and "still working" (:mod:`.turn_news`) and
unreadable frames (:mod:`.unreadable`, :mod:`.raw_frames`). Its records live in
:mod:`.engine_records`.
"""

from __future__ import annotations

import itertools
from collections import Counter, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

from announcer.engine.agent_words import AgentWords
from announcer.engine.announcement import Announcement, Urgency
from announcer.engine.answer_keys import KEY_PRESS_ANSWER_KEYS, AnswerKeys
from announcer.engine.clock_skew import ClockSkew
from announcer.engine.connections import Connections
from announcer.engine.engine_records import (
    PROMPT_EVENTS,
    OutgoingReply,
    TranscriptEntry,
    log_note,
)
from announcer.engine.folding import UrgentFolding
from announcer.engine.literals import Literals
from announcer.engine.outputs import OutputStreams
from announcer.engine.policy import Policy
from announcer.engine.prompts import PendingPrompt, UserAnswer
from announcer.engine.questions import VOID_AT_DEADLINE_SECONDS, QuestionDesk
from announcer.engine.replies import ReplyBook, ReplyOutcome, ReplyReady
from announcer.engine.scheduler import SpeechScheduler
from announcer.engine.settings import UserSettings
from announcer.engine.speech_commands import SpeechCommand
from announcer.engine.tracker import SessionTracker
from announcer.engine.tracker_records import Admission, SessionState, TrackerNote
from announcer.engine.turn_news import TurnNews
from announcer.engine.unreadable import UnreadableFrames
from announcer.protocol.decode import DecodeResult, decode_frame
from announcer.protocol.events import (
    AaepEvent,
    OutputStreaming,
    SessionCancelled,
    SessionCompleted,
    SessionErrored,
)
from announcer.protocol.extensions import ANNOUNCER_EXTENSION
from announcer.protocol.handshake import SubscriptionAccepted
from announcer.protocol.log import DiagnosticsLog

# Engine's public records, some kept in engine_records since the split (issue 24 item 7).
__all__ = [
    "TRANSCRIPT_SIZE",
    "VOID_AT_DEADLINE_SECONDS",
    "Engine",
    "EngineStatus",
    "OutgoingReply",
    "TranscriptEntry",
]

_TERMINAL: Final = (SessionCompleted, SessionErrored, SessionCancelled)
TRANSCRIPT_SIZE: Final = 1_000
_URGENCY_OF: Final = {urgency.value: urgency for urgency in Urgency}


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
        # the agents' code blocks and addresses, whole, for a command (issue 31, item 14)
        self.literals = Literals()
        self.book = ReplyBook() if open_prompts_limit is None else ReplyBook(open_prompts_limit)
        # §6.3.1: a reply carries the wall-clock time of the user's decision.
        self.wall_clock: Callable[[], datetime] = wall_clock or _utc_now
        # §6.4: each producer's clock skew, taken out of a question's lateness
        self.clocks = ClockSkew(self.wall_clock)
        # each connection's subscription (replies carry it), closed or trusted (§5, §5.8)
        self.connections = Connections()
        self.scheduler = scheduler or SpeechScheduler(self.settings, paced=paced)
        self.scheduler.update_settings(self.settings)
        self._transcript: deque[TranscriptEntry] = deque(maxlen=transcript_size)
        # §2.2.9: every announcement is queued through it; an urgent flood is folded
        self.folding = UrgentFolding(
            self.scheduler, self.policy, self.tracker, self.diagnostics, self._transcript
        )
        self.scheduler.on_start = self.folding.word_count
        serial = itertools.count(1)  # our notices' event ids, one count for all of them
        self.questions = QuestionDesk(
            self.book,
            self.scheduler,
            self.policy,
            self.tracker,
            diagnostics=self.diagnostics,
            folding=self.folding,
            clocks=self.clocks,
            connections=self.connections,
            serial=serial,
        )
        self.unreadable = UnreadableFrames(
            self.questions,
            self.policy,
            self.tracker,
            self.folding,
            self.connections,
            wall_clock=self.wall_clock,
            serial=serial,
        )
        self._after_answer: list[SpeechCommand] = []
        self.frames = 0
        self.events = 0
        self.invalid_frames = 0
        self.ignored: Counter[str] = Counter()
        # issue 33: a turn's digest, and "still working" after a long silence
        self.news = TurnNews(
            self.policy,
            self.tracker,
            self.scheduler,
            self.book,
            self.folding,
            self.questions.notices,
        )
        # §4.3.3: the agents' streamed words, sentence by sentence
        self.words = AgentWords(
            self.policy, self.tracker, self.outputs, self.literals, self.folding, self.news
        )

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
            if message.extensions and not self.connections.trusted(source_id):
                message = _without_our_extension(message, self.diagnostics, source_id, now)
            self.events += 1
            if type(message) is not OutputStreaming:
                self.clocks.observe(message, source_id)
            return self._process(self.tracker.admit(message, source_id, now), source_id, now)
        if result.kind == "handshake":
            if isinstance(result.message, SubscriptionAccepted):
                self.connections.accepted(source_id, result.message.subscription_id)
            return []
        if result.kind == "reply":
            token = getattr(result.message, "reply_token", None)
            prompt = self.book.get(token) if isinstance(token, str) else None
            if prompt is not None and prompt.source_id == source_id:
                # §6.7.2: the producer passed on another subscriber's answer to it.
                said = self.questions.resolved_elsewhere(prompt.reply_token, now)
                self.tracker.prompt_closed(
                    source_id, prompt.session_id, prompt.reply_token, resolved=True
                )
                return said + self.questions.present_next(now)
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
        commands: list[SpeechCommand] = []
        skipped = _sequence_of(result)
        if skipped is not None:
            # An invalid frame's sequence number is not waited for: later events go on.
            admission = self.tracker.skip_sequence(source_id, *skipped, now)
            if admission.events or admission.voided_tokens or admission.notes:
                commands = self._process(admission, source_id, now)
        return commands + self.unreadable.notice(result, source_id, now)

    def trust_extension(self, source_id: str) -> None:
        """``source_id`` is a source announcer maps itself (ACP, hooks, agent streams).

        Only such sources may carry announcer's own ``x-announcer`` extension (no time
        limit, "allow from now on", display styles); from any other producer it is
        removed, so an AAEP producer cannot disguise its question (issue 22 item 3).
        """
        self.connections.trust(source_id)

    def receive_event(self, event: AaepEvent, source_id: str, now: float) -> list[SpeechCommand]:
        self.events += 1
        if type(event) is not OutputStreaming:
            self.clocks.observe(event, source_id)
        admission = self.tracker.admit(event, source_id, now)
        return self._process(admission, source_id, now)

    def on_speech_done(self, utterance_id: int, now: float) -> list[SpeechCommand]:
        self.news.heard(now)
        return self.scheduler.on_done(utterance_id, now)

    def tick(self, now: float) -> list[SpeechCommand]:
        commands: list[SpeechCommand] = []
        for source_id, admission in self.tracker.tick(now):
            commands += self._process(admission, source_id, now)
        commands += self.words.poll(now)
        commands += self.questions.tick(now)
        if self.scheduler.speaking is not None:
            self.news.heard(now)  # said until now (paced speech ends in this tick)
        commands += self.scheduler.tick(now)
        commands += self.news.still_working(now)
        return commands

    def next_wakeup(self) -> float | None:
        """The earliest ``now`` at which :meth:`tick` has work, or None."""
        candidates = [
            self.tracker.next_wakeup(),
            self.outputs.next_wakeup(),
            self.questions.next_wakeup(),
            self.scheduler.next_wakeup(),
            self.news.next_wakeup(),
        ]
        present = [c for c in candidates if c is not None]
        return min(present) if present else None

    def source_closed(self, source_id: str, now: float) -> list[SpeechCommand]:
        """§8.2.5: the producer applies defaults for a lost connection; close its prompts."""
        return self.questions.connection_lost(source_id, now)

    def subscription_closed(self, source_id: str, now: float) -> list[SpeechCommand]:
        """§5.8.2: the producer closed the subscription and applies each question's default."""
        return self.questions.subscription_closed(source_id, now)

    def count_skipped_urgent(
        self, producer_id: str, name: str, count: int, source_id: str | None, now: float
    ) -> list[SpeechCommand]:
        """The reader skipped ``count`` urgent frames of ``producer_id`` unread: they join
        its spoken count (§2.2.9, :meth:`UrgentFolding.count_skipped_urgent`)."""
        return self.folding.count_skipped_urgent(producer_id, name, count, source_id, now)

    def presented_prompt(self) -> PendingPrompt | None:
        """The question being presented: the one the user was told about and answers now
        (:meth:`QuestionDesk.presented_prompt`)."""
        return self.questions.presented_prompt()

    def present(self, reply_token: str, now: float) -> list[SpeechCommand]:
        """Read an open question (again) with the time left now; it becomes the presented one.

        "Say again" calls this with the presented question's token; a UI where the
        user picked another waiting question calls it with that one's token.
        """
        prompt = self.book.get(reply_token)
        if prompt is None:
            return []
        return self.questions.present(prompt, now)

    def silence(self, now: float) -> list[SpeechCommand]:
        return self.scheduler.silence(now)

    def user_wrote(self, session_id: str, now: float) -> None:
        """The user's message went to ``session_id``'s agent: its start news is moot."""
        self.scheduler.user_wrote(session_id, now)

    def set_subscription(self, source_id: str, subscription_id: str) -> None:
        """Record the subscription a connection negotiated (replies must carry it)."""
        self.connections.subscribed(source_id, subscription_id)

    def set_answer_keys(self, answer_keys: AnswerKeys) -> None:
        """The UI the user answers in: questions name its keys, or none if it says them."""
        self.policy.answer_keys = answer_keys

    def update_settings(self, settings: UserSettings) -> None:
        self.settings = settings
        self.policy.update_settings(settings)
        self.scheduler.update_settings(settings)
        self.words.refresh()

    def answer(
        self, answer: UserAnswer, now: float, decided_at: datetime | None = None
    ) -> ReplyOutcome:
        """Build the reply for the user's answer, or refuse it with a reason."""
        self.news.acted(now)  # the user just acted: a silence counts from here
        prompt = self.book.get(answer.reply_token)
        subscription = self.connections.subscription(prompt.source_id) if prompt else None
        at = decided_at if decided_at is not None else self.wall_clock()
        outcome = self.book.answer(answer, now, subscription, at)
        if prompt is not None and isinstance(outcome, ReplyReady):
            self.news.answered(prompt, answer)
        if (
            prompt is not None
            and isinstance(outcome, ReplyReady)
            and prompt.kind == "confirmation"
            and answer.decision == "accept"
        ):
            # Issue 30 item 6: what comes of it is never optional.
            state = self.tracker.session(prompt.source_id, prompt.session_id)
            if state is not None:
                state.approved_result_due = True
        if prompt is not None and self.book.get(answer.reply_token) is None:
            # Answered, or found expired: the producer owes a state change for it.
            self._after_answer += self.questions.closed_by_answer(prompt, now)
            self._after_answer += self.news.question_closed(prompt, now)
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

    def question_cut(self, prompt: PendingPrompt) -> bool:
        """``prompt``'s question was cut off by a key's answer and not yet said through
        again: not heard whole, whatever time has passed (a high-risk accept waits)."""
        return self.scheduler.question_cut(prompt.event_id)

    def take_outgoing(self) -> list[OutgoingReply]:
        """Replies made without the user (only ``auto_reject``), to send now."""
        return self.questions.take_outgoing()

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
            folded=self.folding.folded_total,
            questions_set_aside=self.questions.counts.set_aside,
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
            log_note(self.diagnostics, note, source_id, now)
        # §6.8: the state change that withdrew a question may say why, in the agent's
        # words; they are the notice's reason, said once with it (issue 30 item 1).
        withdrawn, reason_said = self.questions.withdrawn(admission, now)
        commands += withdrawn
        for token in admission.resolved_tokens:
            commands += self.questions.resolved_elsewhere(token, now)
        commands += self.questions.still_open(admission.kept_open, now)
        for event in admission.events:
            void = admission.void_on_arrival.get(event.event_id)
            if void is not None and isinstance(event, PROMPT_EVENTS):
                commands += self.questions.void_on_arrival(event, void, source_id, now)
                continue
            if event is reason_said:
                continue  # its words were the withdrawal's reason: said once, not twice
            commands += self._handle(event, source_id, now)
        commands += self.questions.present_next(now)
        return commands

    def _handle(self, event: AaepEvent, source_id: str, now: float) -> list[SpeechCommand]:
        if type(event) is OutputStreaming:
            return self.words.feed(event, source_id, now)
        session = self.tracker.session(source_id, event.session_id)
        if session is None:  # evicted under pressure between admit and now
            return []
        key = (source_id, session.session_id)
        self.news.event_seen(event, session, key, now)
        commands = self._handle_event(event, session, source_id, now)
        return commands + self.news.event_said(event, session, key, now)

    def _handle_event(
        self, event: AaepEvent, session: SessionState, source_id: str, now: float
    ) -> list[SpeechCommand]:
        # What the agent said before it comes first (issue 20; a session's end).
        commands = self.words.before(event, source_id, now)
        if isinstance(event, _TERMINAL):
            self.scheduler.drop_obsolete(
                event.session_id, now, keep_start=self.policy.urgency_of(event) is Urgency.CRITICAL
            )
        if isinstance(event, PROMPT_EVENTS):
            commands += self.questions.open_prompt(event, session, source_id, now)
            return commands
        for announcement in self.policy.decide(event, session, source_id, now):
            commands += self.folding.submit(announcement, source_id, now)
        return commands

    def say_digest(self, now: float) -> list[SpeechCommand]:
        """ "What happened": the digest of the turn running now, else of the last one."""
        return self.news.say_digest(now)


def _without_our_extension(
    event: AaepEvent, diagnostics: DiagnosticsLog, source_id: str, now: float
) -> AaepEvent:
    """``event`` without announcer's own extension, logged (§3.4.3, issue 22 item 3)."""
    extensions = event.extensions or {}
    if ANNOUNCER_EXTENSION not in extensions:
        return event
    log_note(
        diagnostics,
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


def _sequence_of(result: DecodeResult) -> tuple[str, int] | None:
    """The session and sequence number an invalid frame claimed, if it claimed both."""
    raw = result.raw or {}
    session_id = raw.get("session_id")
    sequence = raw.get("sequence_number")
    if (
        not isinstance(session_id, str)
        or not isinstance(sequence, int)
        or isinstance(sequence, bool)
    ):
        return None
    return session_id, sequence


def _utc_now() -> datetime:
    return datetime.now(UTC)
