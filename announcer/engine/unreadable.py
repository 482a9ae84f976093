"""Unreadable frames are never lost in silence: questions, errors, urgent news (§10.1.3)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime
from typing import Any, Final

from announcer.engine.announcement import Announcement, Urgency
from announcer.engine.connections import Connections
from announcer.engine.folding import UrgentFolding
from announcer.engine.policy import Policy
from announcer.engine.questions import QuestionDesk
from announcer.engine.raw_frames import (
    _as_sentence,
    _malformed_prompt,
    _raw_choice_labels,
    _raw_producer_name,
    _raw_words,
)
from announcer.engine.speech_commands import SpeechCommand
from announcer.engine.text_hygiene import clean_for_speech
from announcer.engine.tracker import SessionTracker
from announcer.i18n.translate import translator
from announcer.protocol.decode import DecodeResult

# Frame types that ask the user something (§4.4): unreadable ones are always announced.
_QUESTION_SUFFIXES: Final = (
    "awaiting.confirmation",
    "awaiting.clarification",
    "handoff.requested",
)
_REPLY_TOKEN: Final = re.compile(r"rpl_[A-Za-z0-9]{1,64}")


class UnreadableFrames:
    """Says what an invalid frame asked or reported, or opens it as a malformed question.

    ``questions`` opens a malformed question; ``serial`` numbers the event ids of our
    notices (shared with the question counts).
    """

    def __init__(
        self,
        questions: QuestionDesk,
        policy: Policy,
        tracker: SessionTracker,
        folding: UrgentFolding,
        connections: Connections,
        *,
        wall_clock: Callable[[], datetime],
        serial: Iterator[int],
    ) -> None:
        self.questions = questions
        self.book = questions.book
        self.notices = questions.notices
        self.policy = policy
        self.tracker = tracker
        self.folding = folding
        self.connections = connections
        self.wall_clock = wall_clock
        self._serial = serial

    def notice(self, result: DecodeResult, source_id: str, now: float) -> list[SpeechCommand]:
        """An invalid frame is never lost in silence when it asked something (§10.1.3).

        A question (confirmation, clarification, handoff) is announced at critical
        urgency every time; unreadable questions still waiting to be announced are
        grouped into one count. A confirmation with a well-formed ``reply_token`` on
        a connection that can reply opens as a malformed question: reject only.
        Every other frame that claimed to be urgent is mentioned, each time: critical is
        never rate-limited (§9.3.2(7), §2.2.9; issue 29 item 9). A flood of them is
        bounded where every flood is, by the reader (runtime/backpressure.py).
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
        text = translator(self.policy.phrase_language).gettext(
            "An agent sent an urgent message that could not be read. See the diagnostics."
        )
        announcement = Announcement(
            text=text,
            language=self.policy.phrase_language,
            urgency=Urgency.CRITICAL,
            kind="system.invalid",
        )
        return self.folding.submit(announcement, source_id, now)

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
        serial = next(self._serial)
        event_id = raw.get("event_id")
        announcement = Announcement(
            text=clean_for_speech(text, language),
            language=language,
            urgency=Urgency.CRITICAL,
            interrupt=True,
            event_id=event_id if isinstance(event_id, str) else f"evt_invalid{serial}",
            session_id=raw.get("session_id") if isinstance(raw.get("session_id"), str) else None,
            kind="system.invalid_errored",
            earcon="errored",
        )
        return self.folding.submit(announcement, source_id, now)

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
            and self.connections.can_reply(source_id)
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
                for part in self.notices.notice(
                    self.notices.void_on_arrival_msgid(void),
                    prompt,
                    kind="system.prompt_void_on_arrival",
                    critical=True,
                ):
                    commands += self.folding.submit(part, source_id, now)
                return commands
            if known is None and self.book.closed_reason(token) is None:
                if self.book.open(prompt) is None:
                    self.tracker.note_prompt(
                        source_id, prompt.session_id, token, prompt.producer_id, now
                    )
                    return self.questions.present_or_wait(prompt, now)
                return self.questions.counts.set_aside_notice(prompt, now)
        # §10.1.3: a question that cannot be opened still keeps its words: each one is
        # said, critical, with what could be read of it (never grouped, never limited).
        language = self.policy.phrase_language
        tr = translator(language)
        name = _raw_producer_name(raw, language) or source_id
        if kind.endswith("awaiting.confirmation"):
            words = _raw_words(raw, ("action", "summary_normal", "summary_terse"))
            details = self.notices.raw_confirmation_details(raw)
        elif kind.endswith("awaiting.clarification"):
            words = _raw_words(raw, ("question", "summary_normal", "summary_terse"))
            details = _raw_choice_labels(raw)
        else:
            words = _raw_words(raw, ("reason", "summary_normal", "summary_terse"))
            details = ""
        if details:  # the producer's words end as a sentence before ours follow
            words = _as_sentence(words)
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
        announcement = Announcement(
            text=clean_for_speech(text, language),
            language=language,
            urgency=Urgency.CRITICAL,
            event_id=f"evt_unreadable{next(self._serial)}",
            kind="system.invalid_question",
            earcon="needs_you",
        )
        return self.folding.submit(announcement, source_id, now)
