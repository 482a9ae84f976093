"""Our phrases and the producer's text as spoken parts, each in its language.

:class:`Spoken` is one part; adjacent parts in one language become one utterance
(:func:`by_language`, §11.5); numbers are formatted by babel for the language. The
outcome words of each catalog say whether a producer's summary already says what our
lead ("Finished.", "<tool> failed.") would, in the summary's own language.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Final, NamedTuple

from announcer.engine.phrases import N_
from announcer.engine.text_hygiene import strip_terminal_codes
from announcer.i18n.format import format_number, format_percent
from announcer.i18n.tags import primary_subtag
from announcer.i18n.text import comparison_key
from announcer.i18n.translate import translator
from announcer.protocol.sanitise import clean_speech

# Producer text often lacks a final stop ("Book the 9:04 train"); speech needs one between parts.
_SENTENCE_END = (".", "!", "?", "…", ":", ";", "。", "！", "？", "؟", "।", "۔")


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
