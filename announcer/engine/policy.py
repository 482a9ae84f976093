"""The policy engine: what an event means for the listener, and how much of it to say.

For each event the policy returns zero or more :class:`Announcement` objects. It picks
the summary for the user's verbosity (§2.2.8) in their language (§11.5.1), adapts to
cognitive load (Subscribers' Guide §7), honours urgency (§2.2.9: critical is never
suppressed, filtered or rate-limited), applies the user's event filters (§5.3.1.7) and
producer mutes, and quiets short idle/thinking/deciding flickers (§4.2.1) without ever
silencing every state change. Streaming output is coalesced in
:mod:`announcer.engine.outputs`; this module handles every other event.

Every generated phrase is an English msgid with named placeholders that goes through
``translator(language).gettext``; numbers, percentages and durations are formatted with
babel (:mod:`announcer.i18n.format`). A message mixing our phrases with the producer's
text in another language is spoken as separate announcements, one per language, so
each is read by a voice for its language (§11.5); the parts share urgency and ids and
the later ones are marked ``continues``.

The policy's rooms, each building on those after it (an import-linter contract keeps the
order): this module (:class:`Policy`: the decision, the summary for the verbosity, the
status line fitted to the user's rate), :mod:`~announcer.engine.policy_questions`
(confirmations, clarifications), :mod:`~announcer.engine.policy_wording` (every other
kind of news), :mod:`~announcer.engine.policy_rules` (urgency, filters, mutes, low load,
rate), :mod:`~announcer.engine.policy_words` (spoken parts by language, outcome words)
and :mod:`~announcer.engine.policy_topics` (what folded news is about).
"""

from __future__ import annotations

from typing import Final

from announcer.engine.announcement import Announcement, Urgency
from announcer.engine.earcons import EARCON_FOR_EVENT
from announcer.engine.policy_questions import PolicyQuestions
from announcer.engine.policy_topics import _topic_of
from announcer.engine.policy_words import Spoken, Wording, by_language, same_language
from announcer.engine.text_hygiene import clean_for_speech
from announcer.engine.tracker_records import SessionState
from announcer.protocol.events import (
    AaepEvent,
    AwaitingClarification,
    AwaitingConfirmation,
    HandoffRequested,
    OutputStreaming,
    ProgressUpdated,
    SessionCancelled,
    SessionCompleted,
    SessionErrored,
    SessionStarted,
    StateChanged,
    ToolCompleted,
    ToolInvoked,
)
from announcer.protocol.extensions import ANNOUNCER_EXTENSION

_LEVEL_FIELDS: Final = {
    "terse": ("summary_terse", "summary_normal", "summary_detailed"),
    "normal": ("summary_normal", "summary_terse", "summary_detailed"),
    "detailed": ("summary_detailed", "summary_normal", "summary_terse"),
}
_LEVEL_ORDER: Final = {
    "terse": ("terse", "normal", "detailed"),
    "normal": ("normal", "terse", "detailed"),
    "detailed": ("detailed", "normal", "terse"),
}
# Issue 20: at normal verbosity a status line is said within this many seconds at the
# user's rate (about 8 words at 180 words a minute, 14 at 300); detailed says more.
STATUS_LINE_SECONDS: Final = 2.7
STATUS_LINE_SLACK_WORDS: Final = 2
# Status news, whose lines are fitted to that time; a failure and a session's end are
# final states, said whole. A session's start is status too: said whole at 180 words a
# minute, a 12-word start held all later news back 4 s (benchmarks/pace.py); detailed
# verbosity and the screen keep it whole.
_STATUS_LINE_CLASSES: Final = (StateChanged, ProgressUpdated, ToolInvoked, SessionStarted)


class Policy(PolicyQuestions):
    """Decides the announcements for one validated, tracked event."""

    def decide(
        self, event: AaepEvent, session: SessionState, source_id: str, now: float
    ) -> list[Announcement]:
        """The announcements for ``event`` (never for streaming chunks: see outputs)."""
        urgency = self.urgency_of(event)
        outcome = isinstance(event, ToolCompleted) and session.approved_result_due
        if outcome:
            session.approved_result_due = False  # issue 30 item 6: this is what came of it
        if _detailed_only(event) and self.level_for(event) != "detailed":
            self.suppressed["detailed verbosity only"] += 1
            return []
        if not self._plain or urgency is not Urgency.NORMAL:
            reason = self.admits(event, urgency, source_id, now, outcome=outcome)
            if reason is not None:
                self.suppressed[reason] += 1
                return []
        if urgency is not Urgency.CRITICAL and _kept_quiet(event):
            self.suppressed["said already"] += 1
            return []
        wording = self._compose(event, session, urgency, now)
        if urgency is Urgency.CRITICAL and (
            wording is None or (isinstance(wording, Spoken) and not wording.text)
        ):
            # §9.3.2(7): critical news is never suppressed, even when it brings no words.
            wording = self._own_phrase(
                "Urgent {type} from {agent}.",
                type=event.short_type.replace("_", " "),
                agent=session.display_name,
            )
        if wording is None:
            return []
        if isinstance(wording, Spoken):
            if not wording.text:
                return []
            parts = [wording]
        else:
            parts = by_language(wording)
        if (
            (
                isinstance(event, _STATUS_LINE_CLASSES)
                or (isinstance(event, ToolCompleted) and event.status == "success")
            )
            and self.level_for(event) == "normal"
            and not _said_whole(event)
        ):
            parts = self._fit_status_line(parts)
        kind = type(event).SHORT_TYPE or event.short_type
        earcon = EARCON_FOR_EVENT.get(kind)
        topic = _topic_of(event)
        hints = event.localization_hints
        declared = hints.text_direction if hints is not None else None
        producer_language = self._text_language(event) if declared else None
        return [
            Announcement(
                text=part.text,
                language=part.language,
                urgency=urgency,
                interrupt=urgency is Urgency.CRITICAL,
                event_id=event.event_id,
                session_id=event.session_id,
                producer_id=event.producer.agent_id,
                kind=kind,
                earcon=earcon if index == 0 else None,
                continues=index > 0,
                topic=topic,
                outcome=outcome,
                start_line=_start_line(event),
                # §11.4: the producer's direction for its own words (ours are our own)
                direction=declared
                if declared and same_language(part.language, producer_language or "")
                else None,
            )
            for index, part in enumerate(parts)
        ]

    def status_line_words(self) -> int:
        """How many words a status line may have at normal verbosity (issue 20)."""
        wpm = self.settings.rate_wpm or self.settings.pace_wpm
        return max(4, round(wpm * STATUS_LINE_SECONDS / 60.0))

    def _fit_status_line(self, parts: list[Spoken]) -> list[Spoken]:
        """Cut a status line to the time its user's rate allows (the screen keeps it whole).

        Our own risk warning ("This cannot be undone.") is never cut.
        """
        budget = self.status_line_words()
        if sum(len(part.text.split()) for part in parts) <= budget + STATUS_LINE_SLACK_WORDS:
            return parts  # cutting a word or two would save little and could lose the point
        tail: list[Spoken] = []
        body = list(parts)
        for warning in (self._phrase("This cannot be undone."), self._phrase("High risk.")):
            last = body[-1]
            if last.text.endswith(warning):
                tail = [Spoken(warning, last.language)]
                rest = last.text[: -len(warning)].rstrip()
                body[-1:] = [Spoken(rest, last.language)] if rest else []
                break
        if not body:
            return parts
        left = budget  # a warning does not count: it is never cut
        fitted: list[Spoken] = []
        for part in body:
            words = part.text.split()
            if not words:
                continue
            if len(words) <= left:
                fitted.append(part)
                left -= len(words)
                continue
            if left > 0:
                cut = " ".join(words[:left]).rstrip(",;:—-")
                fitted.append(Spoken(cut + "…", part.language))
            break
        if tail and fitted and same_language(fitted[-1].language, tail[0].language):
            last = fitted.pop()
            tail = [Spoken(f"{last.text} {tail[0].text}", last.language)]
        return fitted + tail

    def summary(self, event: AaepEvent, level: str | None = None) -> Spoken | None:
        """The producer's summary nearest to ``level``, in the user's language if offered."""
        wanted = level or self.level_for(event)
        if not event.model_extra:
            # No §11.5.1 variants: the plain fields are all there is.
            for field_name in _LEVEL_FIELDS.get(wanted, _LEVEL_FIELDS["normal"]):
                plain: str | None = getattr(event, field_name)
                if plain:
                    language = self._text_language(event)
                    return Spoken(clean_for_speech(plain, language), language)
            return None
        for candidate in _LEVEL_ORDER.get(wanted, _LEVEL_ORDER["normal"]):
            spoken = self._variant(event, f"summary_{candidate}")
            if spoken is not None:
                return spoken
        return None

    def _compose(
        self, event: AaepEvent, session: SessionState, urgency: Urgency, now: float
    ) -> Wording:
        # The most frequent types first.
        if isinstance(event, ToolInvoked):
            return self._tool_invoked(event)
        if isinstance(event, ToolCompleted):
            return self._tool_completed(event)
        if isinstance(event, ProgressUpdated):
            return self._progress(event, session, now)
        if isinstance(event, StateChanged):
            return self._state_changed(event, session, now)
        if isinstance(event, AwaitingConfirmation):
            return self._confirmation(event)
        if isinstance(event, AwaitingClarification):
            return self._clarification(event)
        if isinstance(event, SessionErrored):
            return self._errored(event)
        if isinstance(event, SessionCancelled):
            return self._cancelled(event)
        if isinstance(event, SessionCompleted):
            return self._completed(event, session)
        if isinstance(event, SessionStarted):
            return self._started(event, session)
        if isinstance(event, HandoffRequested):
            return self._handoff(event)
        if isinstance(event, OutputStreaming):
            return None
        # Unknown or foreign types: summary_normal if present, else nothing (Level 1).
        return self.summary(event, "normal") if event.summary_normal else None


def _start_line(event: AaepEvent) -> bool:
    """announcer's own mapping marked an agent's settings line as it starts (``x-announcer``
    ``start_line``): moot once the user wrote to that agent (issue 31, item 11)."""
    ours = (event.extensions or {}).get(ANNOUNCER_EXTENSION)
    return isinstance(ours, dict) and ours.get("start_line") is True


def _detailed_only(event: AaepEvent) -> bool:
    """announcer's own mapping marked news for detailed verbosity alone (``x-announcer``
    ``detailed_only``: an agent's suggested next prompt, issue 33 item 5)."""
    ours = (event.extensions or {}).get(ANNOUNCER_EXTENSION)
    return isinstance(ours, dict) and ours.get("detailed_only") is True


def _kept_quiet(event: AaepEvent) -> bool:
    """announcer's own mapping marked news not to be said (``x-announcer`` ``quiet``):
    an agent's start while the user's message waits for it, a call's success right after
    the line that named it. Honoured only for those two kinds: a question, a failure or an
    outcome with words of its own is never kept quiet by a flag."""
    ours = (event.extensions or {}).get(ANNOUNCER_EXTENSION)
    if not (isinstance(ours, dict) and ours.get("quiet") is True):
        return False
    return isinstance(event, SessionStarted) or (
        isinstance(event, ToolCompleted) and event.status == "success"
    )


def _said_whole(event: AaepEvent) -> bool:
    """announcer's own mapping marked news that carries the agent's words (``x-announcer``
    ``whole``, trusted only from sources it maps itself): never cut to a status line."""
    ours = (event.extensions or {}).get(ANNOUNCER_EXTENSION)
    return isinstance(ours, dict) and ours.get("whole") is True
