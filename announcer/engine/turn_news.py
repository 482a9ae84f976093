"""News of a turn as a whole: its digest when it ends (issue 33, item 2) and "still
working" after a long silence while an agent works (issue 33, item 3)."""

from __future__ import annotations

from typing import Final

from announcer.engine.announcement import Announcement, Urgency
from announcer.engine.digest import TurnDigests, TurnRecord, digest_text
from announcer.engine.earcons import Earcon
from announcer.engine.engine_records import PROMPT_EVENTS
from announcer.engine.folding import UrgentFolding
from announcer.engine.phrases import duration_phrase
from announcer.engine.policy import Policy
from announcer.engine.prompts import PendingPrompt, UserAnswer
from announcer.engine.question_notices import QuestionNotices
from announcer.engine.replies import ReplyBook
from announcer.engine.scheduler import SpeechScheduler
from announcer.engine.silence import RESTING_STATES, SilenceWatch, is_working
from announcer.engine.speech_commands import SpeechCommand
from announcer.engine.text_hygiene import clean_for_speech
from announcer.engine.tracker import SessionTracker
from announcer.engine.tracker_records import SessionState
from announcer.i18n.translate import translator
from announcer.protocol.events import (
    AaepEvent,
    SessionCancelled,
    SessionCompleted,
    SessionErrored,
    StateChanged,
    ToolCompleted,
    ToolInvoked,
)

_TERMINAL: Final = (SessionCompleted, SessionErrored, SessionCancelled)


#: the kind of the "still working" notice (issue 33, item 3)
STILL_WORKING_KIND: Final = "system.still_working"


class TurnNews:
    """Owns what a turn did (for its digest) and when the user last heard anything.

    Handed the policy (settings, language), the tracker (sessions), the scheduler and
    the reply book (nothing is said over speech or an open question), the folding
    (where it queues what it says) and the question notices (a question named briefly
    in the digest).
    """

    def __init__(
        self,
        policy: Policy,
        tracker: SessionTracker,
        scheduler: SpeechScheduler,
        book: ReplyBook,
        folding: UrgentFolding,
        notices: QuestionNotices,
    ) -> None:
        self.policy = policy
        self.tracker = tracker
        self.scheduler = scheduler
        self.book = book
        self.folding = folding
        self.notices = notices
        # issue 33, item 3: when the user last heard anything while an agent works
        self._silence = SilenceWatch()
        # issue 33, item 2: each working session's turn, and the last one, for the digest
        self._digests = TurnDigests()

    def heard(self, now: float) -> None:
        """The user heard something, or acted: a silence counts from ``now`` (the "still
        working" notice itself does not end the silence it is about)."""
        speaking = self.scheduler.speaking
        self._silence.heard(now, ours=speaking is not None and speaking.kind == STILL_WORKING_KIND)

    def acted(self, now: float) -> None:
        """The user acted: a silence counts from ``now``, and waits its first interval."""
        self._silence.heard(now)

    def next_wakeup(self) -> float | None:
        """When a silence is long enough to say "still working", or None."""
        return self._silence.due(self.policy.settings.silence_notice_seconds)

    def words(self, key: tuple[str, str], text: str) -> None:
        """The agent said ``text`` in session ``key``: part of its turn."""
        self._digests.words(key, text)

    def event_seen(
        self, event: AaepEvent, session: SessionState, key: tuple[str, str], now: float
    ) -> None:
        """An event of ``session`` arrived: a tool started, the turn began, ended in error."""
        if isinstance(event, ToolInvoked):
            self._silence.tool_started(event.event_id, now)
        self._silence.session_seen(session, now)
        if self._silence.tracks(key) or isinstance(event, PROMPT_EVENTS):
            self._digests.started(key, session.display_name, now)
        if isinstance(event, ToolInvoked):
            self._digests.tool_invoked(key, event)
        elif isinstance(event, ToolCompleted):
            self._digests.tool_completed(key, event)
        elif isinstance(event, SessionErrored):
            self._digests.errored(key)

    def event_said(
        self, event: AaepEvent, session: SessionState, key: tuple[str, str], now: float
    ) -> list[SpeechCommand]:
        """After ``event`` was said: the turn's digest if it ended the turn."""
        turn_over = isinstance(event, _TERMINAL) or (
            isinstance(event, StateChanged) and event.to_state in RESTING_STATES
        )
        if not turn_over or not self._digests.recording(key):
            return []
        # the agent says it waits for the user, or the session ended: the turn's
        # digest, if it was long; a question still open is answered first
        if session.open_prompts and not isinstance(event, _TERMINAL):
            self._digests.end_when_answered(key)
            return []
        return self._turn_digest(key, now)

    def answered(self, prompt: PendingPrompt, answer: UserAnswer) -> None:
        """For the turn's digest: the question, briefly, and how the user answered it."""
        _ = translator(self.policy.phrase_language).gettext
        what = self.notices.short_subject(prompt).text.rstrip(" .")
        if answer.decision == "accept":
            said = _("allowed: {what}").format(what=what)
        elif answer.decision == "reject":
            said = _("rejected: {what}").format(what=what)
        else:
            said = _("answered: {what}").format(what=what)
        self._digests.answered((prompt.source_id, prompt.session_id), said[:200])

    def question_closed(self, prompt: PendingPrompt, now: float) -> list[SpeechCommand]:
        """``prompt`` was answered: the turn it held open may end now, with its digest."""
        key = (prompt.source_id, prompt.session_id)
        session = self.tracker.session(prompt.source_id, prompt.session_id)
        if (
            session is not None
            and not session.open_prompts
            and self._digests.ends_when_answered(key)
        ):
            return self._turn_digest(key, now)
        return []

    def _turn_digest(self, key: tuple[str, str], now: float) -> list[SpeechCommand]:
        """Issue 33, item 2: a turn ended; one digest when it lasted at least
        ``digest_after_seconds`` (0: only on request)."""
        record = self._digests.ended(key)
        after = self.policy.settings.digest_after_seconds
        if record is None or after <= 0 or now - record.started < after:
            return []
        return self._say_digest_of(record, now)

    def say_digest(self, now: float) -> list[SpeechCommand]:
        """ "What happened": the digest of the turn running now, else of the last one."""
        record = self._digests.current()
        if record is None:
            language = self.policy.phrase_language
            text = translator(language).gettext("No turn to sum up yet.")
            return self.folding.submit(
                Announcement(text, language, kind="system.digest"), None, now
            )
        return self._say_digest_of(record, now)

    def _say_digest_of(self, record: TurnRecord, now: float) -> list[SpeechCommand]:
        language = self.policy.phrase_language
        text = digest_text(record, language, self.policy.settings.verbosity)
        notice = Announcement(clean_for_speech(text, language, max_chars=2000), language,
                              Urgency.NORMAL, kind="system.digest")  # fmt: skip
        return self.folding.submit(notice, None, now)

    def still_working(self, now: float) -> list[SpeechCommand]:
        """Issue 33, item 3: an agent works and nothing was said for
        ``silence_notice_seconds``: one short "Still working: <what runs>, 45 seconds."
        with a quiet earcon. Never over speech or a question: while anything is said,
        waits to be said, or a question is open, the silence counts again from now."""
        due = self._silence.due(self.policy.settings.silence_notice_seconds)
        if due is None or now < due:
            return []
        self._silence.heard(now, ours=True)
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
            text, language, Urgency.NORMAL, kind=STILL_WORKING_KIND, earcon=Earcon.STILL_WORKING
        )
        self._silence.notified(now)
        return self.folding.submit(notice, None, now)
