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
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Mapping
from functools import lru_cache
from typing import Any, Final, NamedTuple

from announcer.command_analysis import analyse, literal_for_speech
from announcer.engine.announcement import Announcement, Urgency
from announcer.engine.answer_guard import (
    accept_needs_two_keys,
    command_of,
    is_high_risk,
    plan_of,
    reads_literally,
)
from announcer.engine.answer_keys import KEY_PRESS_ANSWER_KEYS, AnswerKeys
from announcer.engine.earcons import EARCON_FOR_EVENT
from announcer.engine.phrases import N_, duration_phrase
from announcer.engine.scheduler import fold_category
from announcer.engine.settings import UserSettings
from announcer.engine.text_hygiene import clean_for_speech, strip_terminal_codes
from announcer.engine.tracker import CYCLE_STATES, SessionState
from announcer.i18n.format import format_integer, format_number, format_percent
from announcer.i18n.negotiate import pick_field_variant
from announcer.i18n.tags import primary_subtag
from announcer.i18n.text import comparison_key
from announcer.i18n.translate import catalog_language, translator
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
    short_type_of,
)
from announcer.protocol.sanitise import clean_speech

_FINAL_RESULTS: Final = (SessionCompleted, SessionCancelled, OutputStreaming)
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
# A state flicker shorter than this is not worth a word (§4.2.1 allows suppressing it).
STATE_CYCLE_QUIET_SECONDS: Final = 3.0
# Issue 20: at normal verbosity a status line is said within this many seconds at the
# user's rate (about 8 words at 180 words a minute, 14 at 300); detailed says more.
STATUS_LINE_SECONDS: Final = 2.7
STATUS_LINE_SLACK_WORDS: Final = 2
# Status news, whose lines are fitted to that time; a failure and a session's end are
# final states, said whole. A session's start is status too: said whole at 180 words a
# minute, a 12-word start held all later news back 4 s (benchmarks/pace.py); detailed
# verbosity and the screen keep it whole.
_STATUS_LINE_CLASSES: Final = (StateChanged, ProgressUpdated, ToolInvoked, SessionStarted)
# What a tool's name says it does, so folded news is summarised by kind (ACP tool kinds,
# Claude Code and Codex tool names).
_TOOL_TOPICS: Final = {
    "edit": "edit",
    "write": "edit",
    "multiedit": "edit",
    "notebookedit": "edit",
    "apply_patch": "edit",
    "delete": "edit",
    "move": "edit",
    "execute": "command",
    "bash": "command",
    "shell": "command",
    "exec": "command",
    "exec_command": "command",
    "local_shell": "command",
    "read": "read",
    "search": "read",
    "grep": "read",
    "glob": "read",
    "ls": "read",
    "fetch": "read",
    "webfetch": "read",
    "websearch": "read",
}


_CRITICAL_CLASSES: Final = (
    SessionErrored,
    AwaitingConfirmation,
    AwaitingClarification,
    HandoffRequested,
)
_URGENCIES: Final = {urgency.value: urgency for urgency in Urgency}


# Producer text often lacks a final stop ("Book the 9:04 train"); speech needs one between parts.
_SENTENCE_END = (".", "!", "?", "…", ":", ";", "。", "！", "？", "؟", "।", "۔")


def agent_asks_itself(event: AwaitingConfirmation) -> bool:
    """A hook confirmation (formats/hooks.py): no answer means the agent asks, not reject."""
    context = event.extra_context
    return isinstance(context, dict) and context.get("on_no_answer") == "agent_asks"


class Spoken(NamedTuple):
    """Text chosen for an event and the language it is in."""

    text: str
    language: str


# What a wording method returns: one part, or parts in order (maybe in several languages).
Wording = Spoken | list[Spoken] | None


@lru_cache(maxsize=1024)
def format_percent_for(percent: float, language: str) -> str:
    """AAEP ``percent`` is 0-100; babel wants a fraction."""
    return format_percent(percent / 100.0, language)


@lru_cache(maxsize=1024)
def format_number_for(value: float, language: str) -> str:
    return format_number(value, language)


def same_language(left: str, right: str) -> bool:
    """One voice reads both: ``en`` and ``en-GB`` yes, ``es`` and ``en`` no."""
    return left == right or primary_subtag(left) == primary_subtag(right)


def _ends_sentence(text: str) -> bool:
    return text.endswith(_SENTENCE_END)


def by_language(parts: list[Spoken]) -> list[Spoken]:
    """Parts as sentences, adjacent ones in the same language joined into one utterance.

    Each part but the last ends as a sentence so a voice pauses between them; a merged
    utterance keeps the most specific tag of its parts (``en-GB`` over ``en``).
    """
    kept = [Spoken(part.text.strip(), part.language) for part in parts if part.text.strip()]
    merged: list[Spoken] = []
    for index, part in enumerate(kept):
        text = part.text
        if index < len(kept) - 1 and not _ends_sentence(text):
            text += "."
        if merged and same_language(merged[-1].language, part.language):
            previous = merged[-1]
            tag = max(previous.language, part.language, key=len)
            merged[-1] = Spoken(f"{previous.text} {text}", tag)
        else:
            merged.append(Spoken(text, part.language))
    return merged


def matches_filter(pattern: str, event_type: str) -> bool:
    """§5.3.1.7: a literal type, or a prefix ending in ``*``; ``aaep:`` is optional."""
    candidates = (event_type, "aaep:" + event_type)
    if pattern.endswith("*"):
        prefix = pattern[:-1]
        return any(candidate.startswith(prefix) for candidate in candidates)
    return pattern in candidates


class Policy:
    """Decides the announcements for one validated, tracked event."""

    def __init__(
        self, settings: UserSettings, *, answer_keys: AnswerKeys = KEY_PRESS_ANSWER_KEYS
    ) -> None:
        self.settings = settings
        # The keys the answering UI binds; empty when that UI speaks its own key help.
        self.answer_keys = answer_keys
        self.suppressed: Counter[str] = Counter()
        self._rate_tokens: dict[str, tuple[float, float]] = {}
        self._filter_cache: dict[str, bool] = {}
        self._plain = self._no_rules_apply()
        self._phrase_language = catalog_language(settings.languages or ["en"])

    def passes_filters(self, short: str) -> bool:
        """§5.3.1.7 include/exclude, memoised per event type (settings reset the memo)."""
        cached = self._filter_cache.get(short)
        if cached is None:
            filters = self.settings.filters
            cached = not any(matches_filter(p, short) for p in filters.exclude) and any(
                matches_filter(p, short) for p in filters.include
            )
            if len(self._filter_cache) > 4096:
                self._filter_cache.clear()
            self._filter_cache[short] = cached
        return cached

    @property
    def language(self) -> str:
        """The user's first language: which of the producer's variants to prefer."""
        languages = self.settings.languages
        return languages[0] if languages else "en"

    @property
    def phrase_language(self) -> str:
        """The language our own phrases come out in: the best catalog for the user."""
        return self._phrase_language

    def update_settings(self, settings: UserSettings) -> None:
        self.settings = settings
        self._filter_cache.clear()
        self._plain = self._no_rules_apply()
        self._phrase_language = catalog_language(settings.languages or ["en"])

    def _no_rules_apply(self) -> bool:
        """True when no mute, filter, low-load or rate rule can stop a normal event."""
        settings = self.settings
        filters = settings.filters
        return (
            not settings.muted_producers
            and settings.cognitive_load != "low"
            and settings.max_events_per_second is None
            and not filters.exclude
            and "*" in filters.include
        )

    # -- decisions ------------------------------------------------------------------------

    def urgency_of(self, event: AaepEvent) -> Urgency:
        # §4.1.3, §4.4: these MUST be critical; treat them so even if a producer forgot.
        if isinstance(event, _CRITICAL_CLASSES):
            return Urgency.CRITICAL
        urgency = _URGENCIES[event.urgency]
        if (
            isinstance(event, ToolCompleted)
            and event.status != "success"
            and urgency is Urgency.BACKGROUND
        ):
            return Urgency.NORMAL
        return urgency

    def admits(self, event: AaepEvent, urgency: Urgency, source_id: str, now: float) -> str | None:
        """None if the event may be announced, else the reason it is suppressed."""
        if urgency is Urgency.CRITICAL:
            return None  # §5.5.4 critical bypasses filters, mutes and rate limits
        settings = self.settings
        if settings.muted_producers and event.producer.agent_id in settings.muted_producers:
            return "producer muted"
        short = type(event).SHORT_TYPE or event.short_type
        if not self.passes_filters(short):
            filters = settings.filters
            if any(matches_filter(p, short) for p in filters.exclude):
                return "excluded by filter"
            return "not included by filter"
        if settings.cognitive_load == "low" and not self._low_load_keeps(event, urgency):
            return "low cognitive load"
        limit = settings.max_events_per_second
        if (
            limit is not None
            and type(event) is not OutputStreaming  # chunks are batched by the coalescer
            and not self._take_rate_token(source_id, limit, now)
        ):
            return "rate limit"
        return None

    @staticmethod
    def _low_load_keeps(event: AaepEvent, urgency: Urgency) -> bool:
        """Low load: only critical events and final results (Subscribers' Guide §7)."""
        if urgency is Urgency.BACKGROUND:
            return False
        if isinstance(event, _FINAL_RESULTS):
            return True
        return isinstance(event, ToolCompleted) and event.status != "success"

    def _take_rate_token(self, source_id: str, limit: float, now: float) -> bool:
        tokens, last = self._rate_tokens.get(source_id, (limit, now))
        tokens = min(limit, tokens + (now - last) * limit)
        if tokens < 1.0:
            self._rate_tokens[source_id] = (tokens, now)
            return False
        self._rate_tokens[source_id] = (tokens - 1.0, now)
        if len(self._rate_tokens) > 1024:
            self._rate_tokens.clear()
        return True

    def decide(
        self, event: AaepEvent, session: SessionState, source_id: str, now: float
    ) -> list[Announcement]:
        """The announcements for ``event`` (never for streaming chunks: see outputs)."""
        urgency = self.urgency_of(event)
        if not self._plain or urgency is not Urgency.NORMAL:
            reason = self.admits(event, urgency, source_id, now)
            if reason is not None:
                self.suppressed[reason] += 1
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
            isinstance(event, _STATUS_LINE_CLASSES)
            or (isinstance(event, ToolCompleted) and event.status == "success")
        ) and self.level_for(event) == "normal":
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

    # -- wording -----------------------------------------------------------------------

    def level_for(self, event: AaepEvent) -> str:
        settings = self.settings
        if settings.cognitive_load == "low":
            return "terse"
        if settings.cognitive_load == "high" and isinstance(event, StateChanged):
            return "detailed"
        return settings.verbosity

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

    def _variant(self, event: AaepEvent, field_name: str) -> Spoken | None:
        """The best §11.5.1 variant of a text field for the user's whole language chain.

        §11.1.3: each language of the chain in turn, then the producer's fallback chain,
        so a user who speaks fr, then es, hears the Spanish variant rather than English.
        Undeclared base text is taken to be in the user's first language (§11).
        """
        payload: dict[str, object] = dict(event.model_extra or {})
        base = event.text(field_name)
        if base:
            payload[field_name] = base
        hints = event.localization_hints
        fallback = (hints.fallback_chain or []) if hints is not None else []
        # §11: beside variants that name their language, an undeclared base text is of
        # unknown language, not the user's: with --language fr,es, summary_normal_es is
        # chosen over an untagged (often English) summary_normal, and labelled es.
        declared = event.primary_language
        choice = pick_field_variant(
            payload,
            field_name,
            self.settings.languages or [self.language],
            fallback,
            declared or "und",
        )
        if choice is None:
            return None
        language = choice.language
        if language == "und":
            language = self._text_language(event)  # nothing else offered: as before
        return Spoken(clean_for_speech(choice.text, language), language)

    def _phrase(self, msgid: str, **values: object) -> str:
        # Every value put into our sentence is sanitised: a producer's name or type with
        # escape codes or bidi controls must not reach a speech backend (issue 22 item 8).
        safe = {
            key: _speakable(value) if isinstance(value, str) else value
            for key, value in values.items()
        }
        return translator(self.phrase_language).gettext(msgid).format(**safe)

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

    def _own(self, text: str) -> Spoken:
        return Spoken(text, self.phrase_language)

    def _own_phrase(self, msgid: str, **values: object) -> Spoken:
        return self._own(self._phrase(msgid, **values))

    def _text_language(self, event: AaepEvent) -> str:
        """The declared language of the producer's text; undeclared, the user's (§11.1.3)."""
        return event.primary_language or self.language

    def producer_text(self, event: AaepEvent, field_name: str) -> Spoken | None:
        """A producer text field in the user's language if offered, tagged with its own."""
        return self._producer_text(event, field_name)

    def _producer_text(self, event: AaepEvent, field_name: str) -> Spoken | None:
        if event.model_extra:
            return self._variant(event, field_name)
        text = event.text(field_name)
        if not text:
            return None
        language = self._text_language(event)
        return Spoken(clean_for_speech(text, language), language)

    def _started(self, event: SessionStarted, session: SessionState) -> Wording:
        spoken = self.summary(event)
        if spoken is not None:
            if self.level_for(event) == "detailed" and event.request_text:
                request = self._producer_text(event, "request_text")
                if request is not None and request.text not in spoken.text:
                    return [spoken, request]
            return spoken
        return self._own_phrase("{agent} started.", agent=session.display_name)

    def _completed(self, event: SessionCompleted, session: SessionState) -> Wording:
        # Level 1 requirement 4: completed, errored and cancelled must sound different.
        spoken = self.summary(event)
        if spoken is None:
            return self._own_phrase("{agent} finished.", agent=session.display_name)
        lead = self._phrase("Finished.")
        extra = None
        if self.level_for(event) == "detailed":
            extra = self._producer_text(event, "output_summary")
        if self._already_says(spoken, _COMPLETION_WORDS, lead):
            return [spoken, extra] if extra else spoken
        return [p for p in (self._own(lead), spoken, extra) if p]

    def _errored(self, event: SessionErrored) -> Wording:
        spoken = self.summary(event)
        text = spoken or self._own(self._category_phrase(event.error_category))
        parts = [self._own_phrase("Error."), text]
        hint = self._producer_text(event, "remediation_hint")
        if hint and hint.text not in text.text:
            parts.append(hint)
        if self.settings.verbosity == "detailed" and event.error_code:
            parts.append(self._own_phrase("Code {code}.", code=event.error_code))
        return parts

    def _category_phrase(self, category: str) -> str:
        phrases = {
            "transient": N_("A temporary problem stopped the agent; trying again may work."),
            "permanent": N_("The agent hit a problem that retrying will not fix."),
            "requires_user": N_("The agent needs you to act before it can go on."),
        }
        return self._phrase(phrases.get(category, N_("The agent stopped because of an error.")))

    def _cancelled(self, event: SessionCancelled) -> Wording:
        who = {
            "user": N_("Cancelled at your request."),
            "producer": N_("Cancelled by the agent."),
            "timeout": N_("Cancelled: it took too long."),
            "system": N_("Cancelled by the system."),
        }
        lead = self._phrase(who.get(event.cancelled_by, N_("Cancelled.")))
        spoken = self.summary(event)
        if spoken is None:
            return self._own(lead)
        if self._already_says(spoken, _CANCELLATION_WORDS, lead):
            return spoken
        partial = None
        if self.level_for(event) == "detailed":
            partial = self._producer_text(event, "partial_result")
        return [p for p in (self._own(lead), spoken, partial) if p]

    def _state_changed(self, event: StateChanged, session: SessionState, now: float) -> Wording:
        quiet = (
            self.settings.cognitive_load != "high"
            # the same state again carries news (a new thought), not a cycle
            and event.from_state != event.to_state
            and event.to_state in CYCLE_STATES
            and event.from_state in CYCLE_STATES
            and session.last_state_announced_at is not None
            and now - session.last_state_announced_at < STATE_CYCLE_QUIET_SECONDS
        )
        if quiet:
            # §4.2.1 may suppress short cycles; other states are always spoken.
            self.suppressed["short state cycle"] += 1
            return None
        session.last_state_announced_at = now
        spoken = self.summary(event)
        if spoken is not None and (
            self.level_for(event) != "terse" or self._producer_text(event, "summary_terse")
        ):
            return spoken
        names = {
            "idle": N_("Idle."),
            "thinking": N_("Thinking."),
            "calling_tool": N_("Calling a tool."),
            "writing_output": N_("Writing the answer."),
            "awaiting_input": N_("Waiting for your answer."),
            "deciding": N_("Deciding what to do next."),
            "handing_off": N_("Handing off."),
        }
        msgid = names.get(event.to_state)
        if msgid is not None:
            return self._own_phrase(msgid)
        return self._own_phrase("Now {state}.", state=event.to_state.replace("_", " "))

    def _progress(self, event: ProgressUpdated, session: SessionState, now: float) -> Wording:
        # Issue 20: every step reaches the scheduler, which keeps each source's newest.
        progress = event.progress
        spoken = self.summary(event)
        if spoken is not None:
            return spoken
        language = self.phrase_language
        parts: list[Spoken] = []
        if _plan_done(event) and progress.total_steps is not None:
            count = int(progress.total_steps)
            return self._own(
                translator(language)
                .ngettext("The one step is done.", "All {count} steps done.", count)
                .format(count=format_integer(count, language))
            )
        if progress.percent is not None:
            parts.append(
                self._own_phrase(
                    "{percent} done.", percent=format_percent_for(progress.percent, language)
                )
            )
        if progress.step is not None and progress.total_steps is not None:
            parts.append(
                self._own_phrase(
                    "Step {step} of {total}.",
                    step=format_number_for(progress.step, language),
                    total=format_number_for(progress.total_steps, language),
                )
            )
        elif progress.step is not None:
            parts.append(
                self._own_phrase("Step {step}.", step=format_number_for(progress.step, language))
            )
        if progress.description and self.level_for(event) != "terse":
            described = self._text_language(event)
            parts.append(Spoken(clean_for_speech(progress.description, described), described))
        return parts or None

    def _tool_invoked(self, event: ToolInvoked) -> Wording:
        spoken = self.summary(event)
        risk = None
        if event.irreversible:
            risk = self._own_phrase("This cannot be undone.")
        elif event.risk_level == "high":
            risk = self._own_phrase("High risk.")
        if spoken is None:
            parts: list[Spoken | None] = [
                self._own_phrase("Calling {tool}.", tool=_tool_name(event.tool))
            ]
            if self.level_for(event) == "detailed" and event.args_summary:
                parts.append(self._producer_text(event, "args_summary"))
            return [p for p in (*parts, risk) if p]
        args = None
        if self.level_for(event) == "detailed" and event.args_summary:
            args = self._producer_text(event, "args_summary")
            if args is not None and args.text in spoken.text:
                args = None
        return [p for p in (spoken, args, risk) if p]

    def _tool_completed(self, event: ToolCompleted) -> Wording:
        spoken = self.summary(event)
        tool = _tool_name(event.tool)
        if event.status == "success":
            if spoken is not None:
                return spoken
            return self._own(_capitalised(self._phrase("{tool} finished.", tool=tool)))
        lead = (
            _capitalised(self._phrase("{tool} failed.", tool=tool))
            if event.status == "error"
            else _capitalised(self._phrase("{tool} timed out.", tool=tool))
        )
        if spoken is not None and self._names_outcome(spoken, tool, lead):
            # "Bash was denied by ..." or "Bash failed.": our lead would say it twice,
            # or call a denial a failure
            return spoken
        if self.level_for(event) == "terse" and not self._producer_text(event, "summary_terse"):
            return self._own(lead)
        detail = spoken or self._producer_text(event, "error_message")
        return [self._own(lead), detail] if detail else self._own(lead)

    def _handoff(self, event: HandoffRequested) -> Wording:
        spoken = self.summary(event)
        if spoken is not None:
            return spoken
        targets = {
            "human": N_("Handing off to a person."),
            "specialist_agent": N_("Handing off to a specialist agent."),
            "escalation_queue": N_("Handing off to an escalation queue."),
        }
        reason = self._producer_text(event, "reason")
        target = self._own_phrase(targets[event.target_kind])
        return [target, reason] if reason else target

    def _keys(self, msgid: str) -> Spoken | None:
        """The answering UI's key help, unless that UI speaks its own."""
        return self._own_phrase(msgid) if msgid else None

    def _literal_text(self, event: AaepEvent, field_name: str) -> Spoken | None:
        """A field holding a command, read as written (issue 21): never markdown-cleaned,
        the symbols a voice drops named (``dist/*``, ``__pycache__``, ``~``)."""
        text = event.text(field_name)
        if not text:
            return None
        language = self._text_language(event)
        return Spoken(literal_for_speech(text, language), language)

    def _confirmation(self, event: AwaitingConfirmation) -> Wording:
        """Action, consequence, risk, reversibility, timeout and keys (chapter 6)."""
        level = self.level_for(event)
        parts: list[Spoken | None] = [self._own_phrase("Confirmation needed.")]
        command = command_of(event)
        if command is not None:
            # What will run is said at every verbosity, as written (issue 22).
            parts += [
                self._literal_text(event, "action"),
                self._producer_text(event, "consequence") if level != "terse" else None,
            ]
        elif reads_literally(event) and level != "terse":
            # paths and code named as written (issue 21), never tidied as markdown
            parts += [
                self._literal_text(event, "action"),
                self._producer_text(event, "consequence"),
            ]
        elif level == "terse":
            parts.append(
                self._producer_text(event, "summary_terse") or self._producer_text(event, "action")
            )
        else:
            parts += [
                self._producer_text(event, "action"),
                self._producer_text(event, "consequence"),
            ]
        # risk follows what will run: a dangerous command named in the action is high
        # risk whatever the producer declared (issue 22)
        risk = "high" if is_high_risk(event) else event.risk_level
        if risk == "high":
            parts.append(self._own_phrase("High risk."))
        elif risk == "medium":
            parts.append(self._own_phrase("Medium risk."))
        reversibility = {
            "irreversible": N_("This cannot be undone."),
            "reversible_with_effort": N_("Undoing this takes effort."),
            "reversible": N_("This can be undone."),
        }
        if event.reversibility is not None:
            how_reversible = reversibility[event.reversibility]
            parts.append(self._own_phrase(how_reversible))
        elif event.irreversible:
            cannot_undo = reversibility["irreversible"]
            parts.append(self._own_phrase(cannot_undo))
        if level == "detailed" and not reads_literally(event):
            parts.append(self._producer_text(event, "summary_detailed"))
        if waits_without_timeout(event):
            # An ACP agent waits for the answer (formats/acp.py): no deadline to announce.
            parts.append(self._own_phrase("The agent waits for your answer."))
        else:
            parts.append(
                self._own(
                    self._timeout_phrase(event.timeout_seconds, event.default_decision, event)
                )
            )
        keys = self.answer_keys
        two_keys = accept_needs_two_keys(event, self.settings.two_key_accept)
        parts.append(
            self._keys(
                keys.confirmation_two_keys
                if two_keys and keys.confirmation_two_keys
                else keys.confirmation
            )
        )
        if command is not None and analyse(command).is_long:
            parts.append(self._keys(keys.whole_command))
        elif command is None and plan_of(event) is not None:
            parts.append(self._keys(keys.whole_plan))  # the plan by steps; whole on a key
        return [part for part in parts if part]

    def _timeout_phrase(
        self, seconds: int, default: str, event: AwaitingConfirmation | None = None
    ) -> str:
        amount = duration_phrase(seconds, self.phrase_language)
        if event is not None and agent_asks_itself(event):
            # a coding-agent hook: with no answer the agent shows its own prompt
            agent = clean_for_speech(
                event.producer.agent_name or event.producer.agent_id, self.phrase_language
            )
            return self._phrase(
                "If you do not answer within {time}, {agent} will ask you itself.",
                time=amount,
                agent=agent,
            )
        if default == "accept":
            return self._phrase(
                "If you do not answer within {time}, the agent will go ahead.", time=amount
            )
        return self._phrase("If you do not answer within {time}, it will be rejected.", time=amount)

    def timeout_phrase(self, seconds: int, default: str) -> str:
        """ "If you do not answer within 1 minute, it will be rejected." (our language)."""
        return self._timeout_phrase(seconds, default)

    def _choices(self, event: AwaitingClarification, language: str) -> str:
        """Numbered labels ("1: Savings; 2: Checking") punctuated as ``language`` does."""
        tr = translator(language)
        return "; ".join(
            tr.gettext("{number}: {label}").format(
                number=format_integer(index, language),
                label=clean_for_speech(choice.label, language),
            )
            for index, choice in enumerate(event.choices or [], start=1)
        )

    def _clarification(self, event: AwaitingClarification) -> Wording:
        level = self.level_for(event)
        parts: list[Spoken | None] = [
            self._own_phrase("Question."),
            self._producer_text(event, "question"),
        ]
        if level == "detailed" and event.context_:
            language = self._text_language(event)
            parts.append(Spoken(clean_for_speech(event.context_, language), language))
        if event.choices:
            labels = self._text_language(event)
            if same_language(labels, self.phrase_language):
                choices = self._choices(event, self.phrase_language)
                parts.append(self._own_phrase("Choices: {choices}.", choices=choices))
            else:
                # Our word in our voice, the producer's labels in theirs.
                parts.append(self._own_phrase("Choices."))
                parts.append(Spoken(self._choices(event, labels) + ".", labels))
        if waits_without_timeout(event):
            # An ACP agent's own question (formats/acp.py): it waits, no deadline to announce.
            parts.append(self._own_phrase("The agent waits for your answer."))
        else:
            parts.append(
                self._own_phrase(
                    "Answer within {time}.",
                    time=duration_phrase(event.timeout_seconds, self.phrase_language),
                )
            )
        # The key help of the UI the user answers in (announcer.engine.answer_keys).
        keys = self.answer_keys
        kinds = event.accepted_response_kinds or ["freetext"]
        if "multiple_choice" in kinds and event.choices:
            parts.append(self._keys(keys.multiple_choice))
        if "yes_no" in kinds:
            parts.append(self._keys(keys.yes_no))
        if "numeric" in kinds and "freetext" not in kinds:
            parts.append(self._keys(keys.numeric))
        if "freetext" in kinds:
            parts.append(self._keys(keys.freetext))
        return [part for part in parts if part]

    def _names_outcome(self, spoken: Spoken, tool: str, lead: str) -> bool:
        """Whether a failed tool's summary names the tool and says how it ended."""
        named = words_of(tool)
        tokens = words_of(spoken.text)
        if not named or not any(tokens[i : i + len(named)] == named for i in range(len(tokens))):
            return False
        return self._already_says(spoken, _FAILURE_WORDS, lead)

    def _already_says(self, spoken: Spoken, words_msgid: str, lead: str) -> bool:
        """Whether the producer's text already conveys the outcome our ``lead`` names.

        The outcome words and the negations come from the catalog of the text's own
        language (a Yoruba summary is read with Yoruba words); our translated lead
        phrase itself counts too.
        """
        return already_says(
            spoken.text,
            outcome_words(words_msgid, spoken.language) | {words_of(lead)},
            negation_words(spoken.language),
        )


def _speakable(value: str) -> str:
    """A producer value quoted in our sentence: one line, no terminal or bidi controls."""
    if value.isprintable():
        return value
    return clean_speech(strip_terminal_codes(value))


def _tool_name(tool: str) -> str:
    """``fetch_balance`` reads as "fetch balance"."""
    return tool.replace("_", " ").replace(".", " ").strip()


def _capitalised(text: str) -> str:
    return text[:1].upper() + text[1:]


# Translators: words that, in an agent's summary, already say a session finished, so
# announcer does not add its own "Finished." before it. Comma-separated, lower case, every
# form a summary may use; a phrase of several words is allowed. Not spoken.
_COMPLETION_WORDS: Final = N_("done, finished, finishes, complete, completed, completes")
# Translators: words that, in a summary naming a tool, already say how the call ended
# badly ("Bash was denied by ..."), so announcer does not add its own "<tool> failed."
# before it. Comma-separated, lower case, every form a summary may use. Not spoken.
_FAILURE_WORDS: Final = N_(
    "failed, fails, denied, declined, refused, rejected, blocked, timed out, cancelled"
)
# Translators: words that, in an agent's summary, already say a session was cancelled, so
# announcer does not add its own "Cancelled..." before it. Comma-separated, lower case, every
# form a summary may use. Not spoken.
_CANCELLATION_WORDS: Final = N_("cancelled, canceled")
# Translators: words that, up to three words before "finished" or "cancelled", turn it into
# its opposite ("could not finish"). Comma-separated, lower case. Not spoken.
_NEGATION_WORDS: Final = N_("not, never, no, cannot, unable, nothing, yet")
_LIST_SEPARATORS: Final = re.compile(r"[,،、;؛]")


def words_of(text: str) -> tuple[str, ...]:
    """Words to compare, in NFC and case-folded, combining marks kept (§11.3.2).

    ``\\w`` alone would cut a Yoruba "ẹ̀" or an Arabic word with harakat in two.
    """
    words: list[str] = []
    current: list[str] = []
    for char in comparison_key(text):
        inside = char in "'’" and bool(current)
        if inside or char.isalnum() or char == "_" or unicodedata.category(char)[0] == "M":
            current.append(char)
        elif current:
            words.append("".join(current).rstrip("'’"))
            current = []
    if current:
        words.append("".join(current).rstrip("'’"))
    return tuple(words)


@lru_cache(maxsize=256)
def outcome_words(msgid: str, language: str) -> frozenset[tuple[str, ...]]:
    """The catalog's word list ``msgid`` for ``language``, each entry as its words."""
    listed = translator(language).gettext(msgid)
    entries = (words_of(entry) for entry in _LIST_SEPARATORS.split(listed))
    return frozenset(entry for entry in entries if entry)


@lru_cache(maxsize=64)
def negation_words(language: str) -> frozenset[str]:
    return frozenset(word for entry in outcome_words(_NEGATION_WORDS, language) for word in entry)


def already_says(
    text: str, phrases: frozenset[tuple[str, ...]] | set[tuple[str, ...]], negations: frozenset[str]
) -> bool:
    """Whether ``text`` contains one of ``phrases``, not negated in the three words before.

    "Codex finished." or "All done." needs no "Finished." before it; "Could not finish"
    does: a negated word conveys the opposite, and in doubt we keep our lead, which is
    merely redundant.
    """
    tokens = words_of(text)
    for index in range(len(tokens)):
        for phrase in phrases:
            if (
                phrase
                and tokens[index : index + len(phrase)] == phrase
                and not any(
                    word in negations or word.endswith(("n't", "n’t"))
                    for word in tokens[max(0, index - 3) : index]
                )
            ):
                return True
    return False


def waits_without_timeout(event: AaepEvent) -> bool:
    """announcer's own §7 extension marks a question whose agent has no deadline."""
    ours = (event.extensions or {}).get("x-announcer")
    return isinstance(ours, dict) and ours.get("no_timeout") is True


def _plan_done(event: ProgressUpdated) -> bool:
    """Every step of a plan is done (issue 20: "All 4 steps done." is always said)."""
    progress = event.progress
    if progress.percent is not None and progress.percent >= 100:
        return True
    return (
        progress.step is not None
        and progress.total_steps is not None
        and progress.step > progress.total_steps
    )


def tool_topic(tool: str) -> str | None:
    """``edit``, ``command`` or ``read`` for a tool's name (MCP and dotted names too)."""
    return _TOOL_TOPICS.get(tool.rsplit("__", 1)[-1].rsplit(".", 1)[-1].lower())


def _topic_of(event: AaepEvent) -> str | None:
    """What status news is about, for the scheduler's summary of folded news by kind."""
    if isinstance(event, ToolCompleted) and event.status != "success":
        return "failed"  # a failure is always said
    if isinstance(event, (ToolInvoked, ToolCompleted)):
        return tool_topic(event.tool)
    if isinstance(event, ProgressUpdated):
        return "plan_done" if _plan_done(event) else "plan"
    return None


def frame_fold_category(frame: Mapping[str, Any]) -> str:
    """The kind news a flood made us skip unread is counted under ("2 edits, 1 command").

    Only the envelope is read (a skipped frame is never validated): its type and its
    tool's name, counted as the scheduler counts the news it folds (issue 20).
    """
    kind = frame.get("type")
    short = short_type_of(kind) if isinstance(kind, str) else "agent"
    tool = frame.get("tool")
    topic = tool_topic(tool) if isinstance(tool, str) else None
    return fold_category(Announcement(text="", kind=short, topic=topic))
