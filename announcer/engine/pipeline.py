"""The announcement engine: frames in, speech commands and replies out, no I/O.

:class:`Engine` ties decoding and validation (``announcer.protocol``), the session
tracker, the policy, the output coalescers, the reply book and the speech scheduler
into one object driven by plain calls and a clock you pass in (``now``, seconds on
any monotonic scale). Transports feed it frames; a speech driver executes the
commands it returns; user interfaces read its prompts, transcript and status and
hand it the user's answers.

This module keeps the inputs and the reading side; the rest of the engine lives in
one module per concept, joined as :class:`Engine`'s bases (the state they share is
declared in :mod:`~announcer.engine.engine_state`): questions (:mod:`.questions`,
their spoken counts in :mod:`.question_counts`, their phrases in
:mod:`.question_notices`), clock skew (:mod:`.clock_skew`), folding of urgent floods
(:mod:`.folding`) and unreadable frames (:mod:`.unreadable`, :mod:`.raw_frames`).
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

from announcer.engine.announcement import Announcement, Urgency
from announcer.engine.answer_keys import KEY_PRESS_ANSWER_KEYS, AnswerKeys
from announcer.engine.clock import Lateness, ProducerClock
from announcer.engine.digest import TurnDigests, TurnRecord, digest_text
from announcer.engine.earcons import Earcon
from announcer.engine.engine_state import _PROMPTS, OutgoingReply, TranscriptEntry
from announcer.engine.literals import Literals
from announcer.engine.outputs import OutputStreams, Released
from announcer.engine.phrases import N_, duration_phrase
from announcer.engine.policy import Policy
from announcer.engine.policy_words import Spoken
from announcer.engine.prompts import PendingPrompt, UserAnswer
from announcer.engine.question_counts import COUNT_NOTICE_INTERVAL_SECONDS
from announcer.engine.replies import ReplyBook, ReplyOutcome, ReplyReady
from announcer.engine.scheduler import SpeechScheduler
from announcer.engine.settings import UserSettings
from announcer.engine.silence import RESTING_STATES, SilenceWatch, is_working
from announcer.engine.speech_commands import SpeechCommand
from announcer.engine.text_hygiene import clean_for_speech
from announcer.engine.tracker import SessionTracker
from announcer.engine.tracker_records import Admission, SessionState, TrackerNote
from announcer.engine.unreadable import UnreadableFrames
from announcer.i18n.translate import translator
from announcer.protocol.decode import DecodeResult, decode_frame
from announcer.protocol.events import (
    AaepEvent,
    OutputStreaming,
    SessionCancelled,
    SessionCompleted,
    SessionErrored,
    StateChanged,
    ToolCompleted,
    ToolInvoked,
)
from announcer.protocol.extensions import ANNOUNCER_EXTENSION
from announcer.protocol.handshake import SubscriptionAccepted
from announcer.protocol.log import DiagnosticsLog

# Engine's public records, some kept in engine_state since the split (issue 24 item 7).
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
#: A question the producer withdraws this close to its deadline (or later) ran out of
#: time: a hook's own timer and our tick race for the same moment.
VOID_AT_DEADLINE_SECONDS: Final = 1.0
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


class Engine(UnreadableFrames):
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
        # issue 33, item 3: when the user last heard anything while an agent works
        self._silence = SilenceWatch()
        # issue 33, item 2: each working session's turn, and the last one, for the digest
        self._digests = TurnDigests()
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
        self._silence.heard(now)
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
        if self.scheduler.speaking is not None:
            self._silence.heard(now)  # said until now (paced speech ends in this tick)
        commands += self.scheduler.tick(now)
        commands += self._still_working(now)
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
            self._silence.due(self.settings.silence_notice_seconds),
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

    def user_wrote(self, session_id: str, now: float) -> None:
        """The user's message went to ``session_id``'s agent: its start news is moot."""
        self.scheduler.user_wrote(session_id, now)

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
        self._silence.heard(now)  # the user just acted: a silence counts from here
        prompt = self.book.get(answer.reply_token)
        subscription = self._subscriptions.get(prompt.source_id) if prompt else None
        at = decided_at if decided_at is not None else self.wall_clock()
        outcome = self.book.answer(answer, now, subscription, at)
        if prompt is not None and isinstance(outcome, ReplyReady):
            self._note_answer(prompt, answer)
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
            self.tracker.prompt_closed(
                prompt.source_id, prompt.session_id, prompt.reply_token, resolved=True
            )
            # Issue 14 c: no key hints or time left after the answer; cut the question off.
            self._after_answer += self.scheduler.question_ended(prompt.event_id, now)
            key = (prompt.source_id, prompt.session_id)
            session = self.tracker.session(prompt.source_id, prompt.session_id)
            if (
                session is not None
                and not session.open_prompts
                and self._digests.ends_when_answered(key)
            ):
                self._after_answer += self._turn_digest(key, now)
            if self._presented == answer.reply_token:
                self._present_due_at = now  # the next question, at the next tick
        return outcome

    def _note_answer(self, prompt: PendingPrompt, answer: UserAnswer) -> None:
        """For the turn's digest: the question, briefly, and how the user answered it."""
        _ = translator(self.policy.phrase_language).gettext
        what = self._short_subject(prompt).text.rstrip(" .")
        if answer.decision == "accept":
            said = _("allowed: {what}").format(what=what)
        elif answer.decision == "reject":
            said = _("rejected: {what}").format(what=what)
        else:
            said = _("answered: {what}").format(what=what)
        self._digests.answered((prompt.source_id, prompt.session_id), said[:200])

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
        # §6.8: the state change that withdrew a question may say why, in the agent's
        # words; they are the notice's reason, said once with it (issue 30 item 1).
        withdrawing, reason = self._withdrawal_reason(admission)
        said_reason = False
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
                notice = self._unheard_void_notice(prompt, reason)
            else:
                alone = len(admission.voided_tokens) == 1 and not self.book.pending()
                notice = self._withdrawn_notice(prompt, reason, alone=alone)
            said_reason = said_reason or reason is not None
            commands += self._withdraw(prompt, notice, now)
        for token in admission.resolved_tokens:
            commands += self._resolved_elsewhere(token, now)
        commands += self._still_open(admission.kept_open, now)
        for event in admission.events:
            void = admission.void_on_arrival.get(event.event_id)
            if void is not None and isinstance(event, _PROMPTS):
                commands += self._void_on_arrival(event, void, source_id, now)
                continue
            if said_reason and event is withdrawing:
                continue  # its words were the withdrawal's reason: said once, not twice
            commands += self._handle(event, source_id, now)
        commands += self._present_next(now)
        return commands

    def _withdrawal_reason(self, admission: Admission) -> tuple[StateChanged | None, Spoken | None]:
        """The state change that withdrew questions, and its own summary (the agent's
        reason), if it gave one (§6.8: a change away from ``awaiting_input``)."""
        if not admission.voided_tokens:
            return None, None
        for event in admission.events:
            if isinstance(event, StateChanged) and event.from_state == "awaiting_input":
                return event, self.policy.summary(event)
        return None, None

    def _handle(self, event: AaepEvent, source_id: str, now: float) -> list[SpeechCommand]:
        if type(event) is OutputStreaming:
            return self._handle_output(event, source_id, now)
        session = self.tracker.session(source_id, event.session_id)
        if session is None:  # evicted under pressure between admit and now
            return []
        key = (source_id, session.session_id)
        if isinstance(event, ToolInvoked):
            self._silence.tool_started(event.event_id, now)
        self._silence.session_seen(session, now)
        if self._silence.tracks(key) or isinstance(event, _PROMPTS):
            self._digests.started(key, session.display_name, now)
        if isinstance(event, ToolInvoked):
            self._digests.tool_invoked(key, event)
        elif isinstance(event, ToolCompleted):
            self._digests.tool_completed(key, event)
        elif isinstance(event, SessionErrored):
            self._digests.errored(key)
        commands = self._handle_event(event, session, source_id, now)
        turn_over = isinstance(event, _TERMINAL) or (
            isinstance(event, StateChanged) and event.to_state in RESTING_STATES
        )
        if turn_over and self._digests.recording(key):
            # the agent says it waits for the user, or the session ended: the turn's
            # digest, if it was long; a question still open is answered first
            if session.open_prompts and not isinstance(event, _TERMINAL):
                self._digests.end_when_answered(key)
            else:
                commands += self._turn_digest(key, now)
        return commands

    def _handle_event(
        self, event: AaepEvent, session: SessionState, source_id: str, now: float
    ) -> list[SpeechCommand]:
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

    def _turn_digest(self, key: tuple[str, str], now: float) -> list[SpeechCommand]:
        """Issue 33, item 2: a turn ended; one digest when it lasted at least
        ``digest_after_seconds`` (0: only on request)."""
        record = self._digests.ended(key)
        after = self.settings.digest_after_seconds
        if record is None or after <= 0 or now - record.started < after:
            return []
        return self._say_digest_of(record, now)

    def say_digest(self, now: float) -> list[SpeechCommand]:
        """ "What happened": the digest of the turn running now, else of the last one."""
        record = self._digests.current()
        if record is None:
            language = self.policy.phrase_language
            text = translator(language).gettext("No turn to sum up yet.")
            return self._submit(Announcement(text, language, kind="system.digest"), None, now)
        return self._say_digest_of(record, now)

    def _say_digest_of(self, record: TurnRecord, now: float) -> list[SpeechCommand]:
        language = self.policy.phrase_language
        text = digest_text(record, language, self.settings.verbosity)
        notice = Announcement(clean_for_speech(text, language, max_chars=2000), language,
                              Urgency.NORMAL, kind="system.digest")  # fmt: skip
        return self._submit(notice, None, now)

    def _still_working(self, now: float) -> list[SpeechCommand]:
        """Issue 33, item 3: an agent works and nothing was said for
        ``silence_notice_seconds``: one short "Still working: <what runs>, 45 seconds."
        with a quiet earcon. Never over speech or a question: while anything is said,
        waits to be said, or a question is open, the silence counts again from now."""
        due = self._silence.due(self.settings.silence_notice_seconds)
        if due is None or now < due:
            return []
        self._silence.heard(now)
        if self.scheduler.speaking is not None or self.scheduler.queued() or self.book.pending():
            return []
        sessions: list[SessionState] = []
        gone: list[tuple[str, str]] = []
        for source_id, session_id in self._silence.working():
            session = self.tracker.session(source_id, session_id)
            if session is None or not is_working(session):
                gone.append((source_id, session_id))
            else:
                sessions.append(session)
        self._silence.forget(gone)
        what = self._silence.what(sessions, now)
        if what is None:
            return []
        language = self.policy.phrase_language
        _ = translator(language).gettext
        duration = duration_phrase(what.seconds, language)
        if what.tool:
            tool = clean_for_speech(what.tool, language, max_chars=100).rstrip(" .")
            if len({source for source, _session in self._silence.working()}) > 1:
                # several agents work: the one that runs it is named
                tool = f"{clean_for_speech(what.agent, language, max_chars=60)}, {tool}"
            text = _("Still working: {what}, {duration}.").format(what=tool, duration=duration)
        else:
            text = _("{agent} is still working, {duration}.").format(
                agent=clean_for_speech(what.agent, language, max_chars=60), duration=duration
            )
        notice = Announcement(
            text, language, Urgency.NORMAL, kind="system.still_working", earcon=Earcon.STILL_WORKING
        )
        return self._submit(notice, None, now)

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

    def _say_output(
        self,
        released: Released,
        source_id: str | None,
        now: float,
        urgency: Urgency = Urgency.NORMAL,
        event: OutputStreaming | None = None,
    ) -> list[SpeechCommand]:
        self.literals.note(released.text)  # its code and addresses, whole, on a command
        text = clean_for_speech(released.text, released.language)
        if not text:
            return []
        self._digests.words((source_id or released.source_id or "", released.session_id), text)
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


def _utc_now() -> datetime:
    return datetime.now(UTC)
