"""The words of news a flood skipped unread, kept for the transcript and History.

When more than a thousand frames of news from one connection wait, the runtime skips
the rest of the run unread, so a question sent after a flood is reached at once (§8.8,
§2.2.9); the user hears one count ("40 more updates skipped"). Nothing may be lost in
silence, so the words of each skipped frame are kept here and shown (never spoken)
where the count is said. Questions, errored, handoff and session events are never
skipped at all (the runtime's own rule), so they never come here.

Memory stays bounded: at most ``limit`` entries of at most ``max_chars`` characters
each. When full, the oldest words give way; each one forgotten is counted
(:attr:`SkippedNewsStore.forgotten`), and the count is shown in their place, so even
that is not silent.

Pure: frames (already decoded dicts) come in, words go out. No I/O, no clock.
"""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from announcer.engine.text_hygiene import clean_for_speech

#: How many skipped frames' words are kept at most (all connections together).
SKIPPED_WORDS_LIMIT: Final = 500
#: The longest text kept per skipped frame, in characters.
SKIPPED_WORDS_MAX_CHARS: Final = 300

# The order summaries are tried in, by the user's verbosity (§2.2.12).
_SUMMARIES: Final = {
    "terse": ("summary_terse", "summary_normal", "summary_detailed"),
    "normal": ("summary_normal", "summary_terse", "summary_detailed"),
    "detailed": ("summary_detailed", "summary_normal", "summary_terse"),
}
# Payload fields that say what an event is about when it carries no summary.
_WORDS_FIELDS: Final = ("description", "message", "tool", "to_state")


@dataclass(frozen=True, slots=True)
class SkippedWords:
    """What one skipped frame said: the producer's own words, sanitised and bounded."""

    producer_id: str
    event_type: str
    text: str
    language: str
    event_id: str | None = None
    session_id: str | None = None
    urgent: bool = False


def words_of(frame: Mapping[str, Any], verbosity: str = "normal") -> str:
    """The text a skipped frame carries: its summary at ``verbosity``, else a payload field."""
    for name in _SUMMARIES.get(verbosity, _SUMMARIES["normal"]) + _WORDS_FIELDS:
        value = frame.get(name)
        if isinstance(value, str) and value.strip():
            return value
    return ""


class SkippedNewsStore:
    """A bounded, counted store of skipped frames' words, taken per producer in order."""

    def __init__(
        self, limit: int = SKIPPED_WORDS_LIMIT, max_chars: int = SKIPPED_WORDS_MAX_CHARS
    ) -> None:
        self.limit = limit
        self.max_chars = max_chars
        self._words: deque[SkippedWords] = deque()
        #: every frame added (with or without words)
        self.total = 0
        #: words dropped to keep the bound, per producer (shown as a count in their place)
        self._forgotten: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._words)

    @property
    def forgotten(self) -> int:
        return sum(self._forgotten.values())

    def add(self, frame: Mapping[str, Any], producer_id: str, verbosity: str = "normal") -> None:
        """Keep the words of one skipped frame (its type and producer known to the caller)."""
        self.total += 1
        kind = frame.get("type")
        event_id = frame.get("event_id")
        session_id = frame.get("session_id")
        hints = frame.get("localization_hints")
        language = hints.get("primary_language") if isinstance(hints, dict) else None
        language = language if isinstance(language, str) and language else "en"
        # Cleaned when taken (a flood skips thousands; few are ever shown).
        text = words_of(frame, verbosity)[: self.max_chars * 2]
        if not text:
            return  # nothing to show: it is in the spoken count only
        if len(self._words) >= self.limit:
            oldest = self._words.popleft()
            self._forgotten[oldest.producer_id] = self._forgotten.get(oldest.producer_id, 0) + 1
        self._words.append(
            SkippedWords(
                producer_id=producer_id,
                event_type=kind if isinstance(kind, str) else "",
                text=text,
                language=language,
                event_id=event_id if isinstance(event_id, str) else None,
                session_id=session_id if isinstance(session_id, str) else None,
                urgent=frame.get("urgency") == "critical",
            )
        )

    def take(self, producer_id: str) -> tuple[list[SkippedWords], int]:
        """The words kept for ``producer_id`` in arrival order, and how many were forgotten.

        A frame that carried no words at all is in the spoken count only. Both are removed
        from the store: each is shown once, where its count is said.
        """
        mine = [words for words in self._words if words.producer_id == producer_id]
        if mine:
            self._words = deque(words for words in self._words if words.producer_id != producer_id)
        cleaned = [
            dataclasses.replace(
                words, text=clean_for_speech(words.text, words.language, max_chars=self.max_chars)
            )
            for words in mine
            if words.text
        ]
        return cleaned, self._forgotten.pop(producer_id, 0)
