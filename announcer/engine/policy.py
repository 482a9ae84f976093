"""The policy engine: what an event means for the listener, and how much of it to say.

For each event the policy returns zero or more :class:`Announcement` objects. It picks
the summary for the user's verbosity (§2.2.8) in their language (§11.5.1), adapts to
cognitive load (Subscribers' Guide §7), honours urgency (§2.2.9: critical is never
suppressed, filtered or rate-limited), applies the user's event filters (§5.3.1.7) and
producer mutes, and quiets short idle/thinking/deciding flickers (§4.2.1) without ever
silencing every state change. Streaming output is coalesced in
:mod:`announcer.engine.outputs`; this module handles every other event.

Every generated phrase is an English msgid with named placeholders that goes through
``translator(language).gettext``; numbers and percentages are formatted with babel.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache
from typing import Final, NamedTuple

from babel import Locale, UnknownLocaleError
from babel.numbers import format_decimal, format_percent

from announcer.engine.announcement import Announcement, Urgency
from announcer.engine.phrases import N_, duration_phrase
from announcer.engine.settings import UserSettings
from announcer.engine.text_hygiene import clean_for_speech
from announcer.engine.tracker import CYCLE_STATES, SessionState
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
)

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
# Progress is spoken at most this often per session, except for 100 percent.
PROGRESS_MIN_INTERVAL_SECONDS: Final = 5.0
# Confirmations read out the keys the line UI and the Textual UI both bind.
DEFAULT_ANSWER_KEYS_HINT: Final = N_("Press Y to accept or N to reject.")


# Sounds in voices/earcons that mark an event before its words.
_EARCONS: Final = {
    "agent.session.started": "session_started",
    "agent.session.completed": "session_completed",
    "agent.session.errored": "session_errored",
    "agent.session.cancelled": "session_cancelled",
    "agent.awaiting.confirmation": "confirmation",
    "agent.awaiting.clarification": "clarification",
    "agent.handoff.requested": "handoff",
    "agent.tool.invoked": "tool",
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

class Spoken(NamedTuple):
    """Text chosen for an event and the language it is in."""

    text: str
    language: str


@lru_cache(maxsize=64)
def _babel_locale(language: str) -> Locale:
    tag = language.replace("-", "_")
    for candidate in (tag, tag.split("_", 1)[0], "en"):
        try:
            return Locale.parse(candidate)
        except (UnknownLocaleError, ValueError):
            continue
    return Locale.parse("en")


@lru_cache(maxsize=1024)
def format_percent_for(percent: float, language: str) -> str:
    """AAEP ``percent`` is 0-100; babel wants a fraction."""
    return str(format_percent(percent / 100.0, locale=_babel_locale(language)))


@lru_cache(maxsize=1024)
def format_number_for(value: float, language: str) -> str:
    return str(format_decimal(value, locale=_babel_locale(language)))


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
        self, settings: UserSettings, *, answer_keys_hint: str = DEFAULT_ANSWER_KEYS_HINT
    ) -> None:
        self.settings = settings
        self.answer_keys_hint = answer_keys_hint
        self.suppressed: Counter[str] = Counter()
        self._rate_tokens: dict[str, tuple[float, float]] = {}
        self._last_progress: dict[str, float] = {}
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
        spoken = self._compose(event, session, urgency, now)
        if spoken is None or not spoken.text:
            return []
        kind = type(event).SHORT_TYPE or event.short_type
        return [
            Announcement(
                text=spoken.text,
                language=spoken.language,
                urgency=urgency,
                interrupt=urgency is Urgency.CRITICAL,
                event_id=event.event_id,
                session_id=event.session_id,
                producer_id=event.producer.agent_id,
                kind=kind,
                earcon=_EARCONS.get(kind),
            )
        ]

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
                    language = event.primary_language or "en"
                    return Spoken(clean_for_speech(plain, language), language)
            return None
        variants = event.language_variants()
        for candidate in _LEVEL_ORDER.get(wanted, _LEVEL_ORDER["normal"]):
            field_name = f"summary_{candidate}"
            text = event.text(field_name, self.language)
            if text:
                language = self._language_of(event, field_name, variants)
                return Spoken(clean_for_speech(text, language), language)
        return None

    def _language_of(
        self, event: AaepEvent, field_name: str, variants: dict[str, dict[str, str]]
    ) -> str:
        """The language of the text :meth:`AaepEvent.text` picked for the user."""
        wanted = self.language.lower()
        base = wanted.split("-", 1)[0]
        for tag in variants.get(field_name, {}):
            lowered = tag.lower()
            if lowered == wanted or lowered.split("-", 1)[0] == base:
                return tag
        return event.primary_language or "en"

    def _phrase(self, msgid: str, **values: object) -> str:
        return translator(self.phrase_language).gettext(msgid).format(**values)

    def _compose(
        self, event: AaepEvent, session: SessionState, urgency: Urgency, now: float
    ) -> Spoken | None:
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

    def _join(self, *parts: str | None) -> str:
        """Join spoken parts so each one ends as a sentence: a voice pauses between them."""
        kept = [part.strip() for part in parts if part and part.strip()]
        return " ".join(
            part if part.endswith(_SENTENCE_END) or index == len(kept) - 1 else part + "."
            for index, part in enumerate(kept)
        )

    def _producer_text(self, event: AaepEvent, field_name: str) -> str | None:
        text = event.text(field_name, self.language)
        return clean_for_speech(text, event.primary_language or self.language) if text else None

    def _started(self, event: SessionStarted, session: SessionState) -> Spoken:
        spoken = self.summary(event)
        if spoken is not None:
            return spoken
        return self._own(self._phrase("{agent} started.", agent=session.display_name))

    def _completed(self, event: SessionCompleted, session: SessionState) -> Spoken:
        # Level 1 requirement 4: completed, errored and cancelled must sound different.
        spoken = self.summary(event)
        level = self.level_for(event)
        lead = self._phrase("Finished.")
        if spoken is None:
            return self._own(self._phrase("{agent} finished.", agent=session.display_name))
        extra = None
        if level == "detailed":
            extra = self._producer_text(event, "output_summary")
        if _already_says(spoken.text, _COMPLETION_WORDS, lead):
            lead = ""
        return Spoken(self._join(lead, spoken.text, extra), spoken.language)

    def _errored(self, event: SessionErrored) -> Spoken:
        spoken = self.summary(event)
        text = spoken.text if spoken else self._category_phrase(event.error_category)
        language = spoken.language if spoken else self.phrase_language
        hint = self._producer_text(event, "remediation_hint")
        parts = [self._phrase("Error."), text]
        if hint and hint not in text:
            parts.append(hint)
        if self.settings.verbosity == "detailed" and event.error_code:
            parts.append(self._phrase("Code {code}.", code=event.error_code))
        return Spoken(self._join(*parts), language)

    def _category_phrase(self, category: str) -> str:
        phrases = {
            "transient": N_("A temporary problem stopped the agent; trying again may work."),
            "permanent": N_("The agent hit a problem that retrying will not fix."),
            "requires_user": N_("The agent needs you to act before it can go on."),
        }
        return self._phrase(phrases.get(category, N_("The agent stopped because of an error.")))

    def _cancelled(self, event: SessionCancelled) -> Spoken:
        who = {
            "user": N_("Cancelled at your request."),
            "producer": N_("Cancelled by the agent."),
            "timeout": N_("Cancelled: it took too long."),
            "system": N_("Cancelled by the system."),
        }
        lead = self._phrase(who.get(event.cancelled_by, N_("Cancelled.")))
        spoken = self.summary(event)
        if spoken is None or _already_says(spoken.text, ("cancelled", "canceled"), lead):
            if spoken is None:
                return self._own(lead)
            return spoken
        partial = None
        if self.level_for(event) == "detailed":
            partial = self._producer_text(event, "partial_result")
        return Spoken(self._join(lead, spoken.text, partial), spoken.language)

    def _state_changed(
        self, event: StateChanged, session: SessionState, now: float
    ) -> Spoken | None:
        quiet = (
            self.settings.cognitive_load != "high"
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
        if spoken is not None:
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
            return self._own(self._phrase(msgid))
        return self._own(self._phrase("Now {state}.", state=event.to_state.replace("_", " ")))

    def _progress(self, event: ProgressUpdated, session: SessionState, now: float) -> Spoken | None:
        progress = event.progress
        finished = progress.percent is not None and progress.percent >= 100
        last = self._last_progress.get(session.session_id)
        if not finished and last is not None and now - last < PROGRESS_MIN_INTERVAL_SECONDS:
            self.suppressed["progress too frequent"] += 1
            return None
        self._last_progress[session.session_id] = now
        if len(self._last_progress) > 1024:
            self._last_progress.clear()
        spoken = self.summary(event)
        if spoken is not None:
            return spoken
        language = self.phrase_language
        parts: list[str] = []
        if progress.percent is not None:
            parts.append(
                self._phrase(
                    "{percent} done.", percent=format_percent_for(progress.percent, language)
                )
            )
        if progress.step is not None and progress.total_steps is not None:
            parts.append(
                self._phrase(
                    "Step {step} of {total}.",
                    step=format_number_for(progress.step, language),
                    total=format_number_for(progress.total_steps, language),
                )
            )
        elif progress.step is not None:
            parts.append(
                self._phrase("Step {step}.", step=format_number_for(progress.step, language))
            )
        if progress.description and self.level_for(event) != "terse":
            parts.append(clean_for_speech(progress.description, event.primary_language or language))
        return self._own(self._join(*parts)) if parts else None

    def _tool_invoked(self, event: ToolInvoked) -> Spoken:
        spoken = self.summary(event)
        level = self.level_for(event)
        risk = None
        if event.irreversible:
            risk = self._phrase("This cannot be undone.")
        elif event.risk_level == "high":
            risk = self._phrase("High risk.")
        if spoken is None:
            text = self._phrase("Calling {tool}.", tool=_tool_name(event.tool))
            if level == "detailed" and event.args_summary:
                text = self._join(text, clean_for_speech(event.args_summary, self.language))
            return self._own(self._join(text, risk))
        return Spoken(self._join(spoken.text, risk), spoken.language)

    def _tool_completed(self, event: ToolCompleted) -> Spoken:
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
        detail = spoken.text if spoken else self._producer_text(event, "error_message")
        return self._own(self._join(lead, detail))

    def _handoff(self, event: HandoffRequested) -> Spoken:
        spoken = self.summary(event)
        if spoken is not None:
            return spoken
        targets = {
            "human": N_("Handing off to a person."),
            "specialist_agent": N_("Handing off to a specialist agent."),
            "escalation_queue": N_("Handing off to an escalation queue."),
        }
        reason = self._producer_text(event, "reason")
        return self._own(self._join(self._phrase(targets[event.target_kind]), reason))

    def _confirmation(self, event: AwaitingConfirmation) -> Spoken:
        """Action, consequence, risk, reversibility, timeout and keys (chapter 6)."""
        level = self.level_for(event)
        language = event.primary_language or self.language
        action = self._producer_text(event, "action")
        consequence = self._producer_text(event, "consequence")
        parts: list[str | None] = [self._phrase("Confirmation needed.")]
        if level == "terse":
            terse = event.text("summary_terse", self.language)
            parts.append(clean_for_speech(terse, language) if terse else action)
        else:
            parts += [action, consequence]
        if event.risk_level == "high":
            parts.append(self._phrase("High risk."))
        elif event.risk_level == "medium":
            parts.append(self._phrase("Medium risk."))
        reversibility = {
            "irreversible": N_("This cannot be undone."),
            "reversible_with_effort": N_("Undoing this takes effort."),
            "reversible": N_("This can be undone."),
        }
        if event.reversibility is not None:
            how_reversible = reversibility[event.reversibility]
            parts.append(self._phrase(how_reversible))
        elif event.irreversible:
            cannot_undo = reversibility["irreversible"]
            parts.append(self._phrase(cannot_undo))
        if level == "detailed":
            parts.append(self._producer_text(event, "summary_detailed"))
        parts.append(self._timeout_phrase(event.timeout_seconds, event.default_decision))
        parts.append(self._phrase(self.answer_keys_hint))
        return Spoken(self._join(*parts), language)

    def _timeout_phrase(self, seconds: int, default: str) -> str:
        amount = duration_phrase(seconds, self.phrase_language)
        if default == "accept":
            return self._phrase(
                "If you do not answer within {time}, the agent will go ahead.", time=amount
            )
        return self._phrase("If you do not answer within {time}, it will be rejected.", time=amount)

    def _clarification(self, event: AwaitingClarification) -> Spoken:
        language = event.primary_language or self.language
        level = self.level_for(event)
        question = self._producer_text(event, "question")
        parts: list[str | None] = [self._phrase("Question."), question]
        if level == "detailed" and event.context_:
            parts.append(clean_for_speech(event.context_, language))
        if event.choices:
            labels = [
                self._phrase(
                    "{number}: {label}",
                    number=index,
                    label=clean_for_speech(choice.label, language),
                )
                for index, choice in enumerate(event.choices, start=1)
            ]
            parts.append(self._phrase("Choices: {choices}.", choices="; ".join(labels)))
        parts.append(
            self._phrase(
                "Answer within {time}.",
                time=duration_phrase(event.timeout_seconds, self.phrase_language),
            )
        )
        # The same key hints the answer dialogs give (announcer.ui).
        kinds = event.accepted_response_kinds or ["freetext"]
        if "multiple_choice" in kinds and event.choices:
            parts.append(self._phrase("Choose with the arrows or digits 1 to 9, then press Enter."))
        if "yes_no" in kinds:
            parts.append(self._phrase("Press Y for yes or N for no."))
        if "numeric" in kinds and "freetext" not in kinds:
            parts.append(self._phrase("Type a number and press Enter."))
        if "freetext" in kinds:
            parts.append(self._phrase("Type your answer and press Enter."))
        return Spoken(self._join(*parts), language)


def _tool_name(tool: str) -> str:
    """``fetch_balance`` reads as "fetch balance"."""
    return tool.replace("_", " ").replace(".", " ").strip()


def _capitalised(text: str) -> str:
    return text[:1].upper() + text[1:]


_WORD = re.compile(r"\w+(?:['’]\w+)*")
_NEGATIONS: Final = frozenset({"not", "never", "no", "cannot", "unable", "nothing", "yet"})


def _already_says(text: str, words: tuple[str, ...], lead: str = "") -> bool:
    """Whether the producer's summary already conveys the outcome our lead would name.

    "Codex finished." or "All done." needs no "Finished." before it; "Could not finish"
    does (a word negated within the three before it conveys the opposite; in doubt we
    keep the lead, which is merely redundant). ``lead`` is our own phrase in the
    user's language: a translated summary that repeats its first word counts too.
    """
    wanted = set(words) | set(_WORD.findall(lead.lower())[:1])
    tokens = _WORD.findall(text.lower())
    for index, token in enumerate(tokens):
        if token in wanted and not any(
            word in _NEGATIONS or word.endswith(("n't", "n’t"))
            for word in tokens[max(0, index - 3) : index]
        ):
            return True
    return False


# Words that already tell the user a session completed (Level 1 requirement 4).
_COMPLETION_WORDS: Final = ("done", "finished", "complete", "completed", "finishes", "completes")
