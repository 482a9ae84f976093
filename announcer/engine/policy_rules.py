"""Whether an event is said at all, how urgently, and at which verbosity.

§2.2.9: critical is never suppressed, filtered or rate-limited; otherwise the user's
event filters (§5.3.1.7), producer mutes, low cognitive load (Subscribers' Guide §7) and
the rate limit may each suppress it, and each suppression is counted by its reason.
"""

from __future__ import annotations

from collections import Counter
from typing import Final

from announcer.engine.announcement import Urgency
from announcer.engine.answer_keys import KEY_PRESS_ANSWER_KEYS, AnswerKeys
from announcer.engine.settings import UserSettings
from announcer.i18n.translate import catalog_language
from announcer.protocol.events import (
    AaepEvent,
    AwaitingClarification,
    AwaitingConfirmation,
    HandoffRequested,
    OutputStreaming,
    SessionCancelled,
    SessionCompleted,
    SessionErrored,
    StateChanged,
    ToolCompleted,
)

_FINAL_RESULTS: Final = (SessionCompleted, SessionCancelled, OutputStreaming)
_CRITICAL_CLASSES: Final = (
    SessionErrored,
    AwaitingConfirmation,
    AwaitingClarification,
    HandoffRequested,
)
_URGENCIES: Final = {urgency.value: urgency for urgency in Urgency}
# Low cognitive load folds the states that only say the agent is at work (§4.2.1's
# working states and idle): what it then does or says tells more. Every other change is
# said: into ``awaiting_input`` (it waits for you), out of it (what came of your
# answer), ``handing_off`` (a person is needed) and any state §4.2.1 does not define,
# which announcer cannot tell to be routine (issue 30 item 6).
LOW_LOAD_FOLDED_STATES: Final = frozenset(
    {"idle", "thinking", "calling_tool", "writing_output", "deciding"}
)
_AWAITING_INPUT: Final = "awaiting_input"


def matches_filter(pattern: str, event_type: str) -> bool:
    """§5.3.1.7: a literal type, or a prefix ending in ``*``; ``aaep:`` is optional."""
    candidates = (event_type, "aaep:" + event_type)
    if pattern.endswith("*"):
        prefix = pattern[:-1]
        return any(candidate.startswith(prefix) for candidate in candidates)
    return pattern in candidates


class PolicyRules:
    """The listener's settings and the rules that admit an event; the rooms above word it."""

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

    def admits(
        self,
        event: AaepEvent,
        urgency: Urgency,
        source_id: str,
        now: float,
        *,
        outcome: bool = False,
    ) -> str | None:
        """None if the event may be announced, else the reason it is suppressed.

        ``outcome``: the result of what the user just approved (never optional at low load).
        """
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
        if settings.cognitive_load == "low" and not self._low_load_keeps(event, urgency, outcome):
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
    def _low_load_keeps(event: AaepEvent, urgency: Urgency, outcome: bool = False) -> bool:
        """Low load: only critical events and final results (Subscribers' Guide §7).

        Never optional (issue 30 item 6): the result of what the user just approved, and
        a state change that concerns the user (:data:`LOW_LOAD_FOLDED_STATES`), whatever
        urgency the producer gave them.
        """
        if outcome:
            return True
        if isinstance(event, StateChanged):
            return (
                event.from_state == _AWAITING_INPUT or event.to_state not in LOW_LOAD_FOLDED_STATES
            )
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

    def level_for(self, event: AaepEvent) -> str:
        settings = self.settings
        if settings.cognitive_load == "low":
            return "terse"
        if settings.cognitive_load == "high" and isinstance(event, StateChanged):
            return "detailed"
        return settings.verbosity
