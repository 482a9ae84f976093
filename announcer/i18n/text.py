"""Text handling that respects every script: comparison, cutting, direction.

- §11.3.2: input in any normalisation form is accepted as is; NFC is used only
  to compare and search (``comparison_key``), never to alter what is shown or
  spoken.
- §11.3.3: long text is cut between grapheme clusters (UAX #29, via the
  ``regex`` module's ``\\X``), so a Yoruba ``ẹ́`` or an emoji flag is never split
  from its marks. The standard library has no grapheme segmentation.
- §11.4: the direction of a text is the declared ``text_direction``, or for
  ``auto`` its first strong character (UAX #9 rules P2-P3); producer text
  embedded in our own phrases is wrapped in directional isolates so an Arabic
  file name inside an English sentence (or the reverse) keeps its order.
"""

from __future__ import annotations

import unicodedata
from typing import Literal

import regex

from announcer.i18n.tags import parse_tag

__all__ = [
    "Direction",
    "comparison_key",
    "first_strong_direction",
    "for_display",
    "grapheme_floor",
    "graphemes",
    "isolate",
    "language_direction",
    "resolve_direction",
    "same_text",
    "strip_bidi_controls",
    "truncate_graphemes",
]

Direction = Literal["ltr", "rtl"]

_GRAPHEME = regex.compile(r"\X")
# Directional isolates (UAX #9 §2.7): they stop embedded text from reordering its surroundings.
LRI, RLI, FSI, PDI = "\u2066", "\u2067", "\u2068", "\u2069"
_STRONG_RTL = {"R", "AL"}
_BIDI_CONTROLS = frozenset("\u2066\u2067\u2068\u2069\u202a\u202b\u202c\u202d\u202e\u200e\u200f")
# Scripts written right to left (ISO 15924) and languages whose default script is one of them.
_RTL_SCRIPTS = {"Arab", "Hebr", "Syrc", "Thaa", "Nkoo", "Adlm", "Rohg", "Mand", "Samr"}
_RTL_LANGUAGES = {
    "ar", "arc", "ckb", "dv", "fa", "he", "iw", "ks", "ku", "nqo", "ps", "sd", "syr", "ug", "ur",
    "yi",
}  # fmt: skip


def comparison_key(text: str) -> str:
    """NFC + case folding: the form to compare or search in, never to display (§11.3.2)."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", text).casefold())


def same_text(left: str, right: str) -> bool:
    """True when two strings are the same text, whatever their normalisation form or case."""
    return comparison_key(left) == comparison_key(right)


def graphemes(text: str) -> list[str]:
    """The user-perceived characters of ``text`` (extended grapheme clusters)."""
    found: list[str] = _GRAPHEME.findall(text)
    return found


def grapheme_floor(text: str, index: int, *, progress: bool = False) -> int:
    """The last grapheme-cluster boundary at or before code point ``index`` (§11.3.3).

    Every cut of producer text goes through here, so a Thai tone mark, a Devanagari
    vowel sign or an emoji ZWJ sequence stays with its base. With ``progress`` a cut
    never comes back empty: when the first cluster alone is longer than ``index``,
    the whole first cluster is kept, so a loop that cuts a text into pieces ends.
    """
    if index >= len(text):
        return len(text)
    if index <= 0:
        return 0
    if " " <= text[index - 1] <= "~" and " " <= text[index] <= "~":
        # Between two printable ASCII characters there is always a boundary (UAX #29
        # GB999: neither is a control, an extender, a joiner or a prepend), and the
        # coalescer's cuts nearly always fall at a space: no scan from the start.
        return index
    boundary = 0
    for match in _GRAPHEME.finditer(text):
        end: int = match.end()
        if end > index:
            if boundary == 0 and progress:
                return end
            break
        boundary = end
    return boundary


def truncate_graphemes(text: str, max_graphemes: int, ellipsis: str = "…") -> str:
    """Cut ``text`` to at most ``max_graphemes`` clusters, the ellipsis included.

    Prefers to cut at a space in the last 40% so words stay whole.
    """
    if max_graphemes <= 0:
        return ""
    clusters = graphemes(text)
    if len(clusters) <= max_graphemes:
        return text
    room = max(0, max_graphemes - len(graphemes(ellipsis)))
    kept = clusters[:room]
    for index in range(len(kept) - 1, max(0, int(room * 0.6)) - 1, -1):
        if kept[index].isspace():
            kept = kept[:index]
            break
    return "".join(kept).rstrip() + ellipsis if room else "".join(clusters[:max_graphemes])


def first_strong_direction(text: str) -> Direction | None:
    """UAX #9 P2-P3: the direction of the first strong character, skipping isolates."""
    depth = 0
    for char in text:
        if char in (LRI, RLI, FSI):
            depth += 1
            continue
        if char == PDI:
            depth = max(0, depth - 1)
            continue
        if depth:
            continue
        kind = unicodedata.bidirectional(char)
        if kind == "L":
            return "ltr"
        if kind in _STRONG_RTL:
            return "rtl"
    return None


def language_direction(language: str | None) -> Direction:
    """The usual direction of a language tag: ``ar``, ``he``, ``ur`` are right to left."""
    tag = parse_tag(language) if language else None
    if tag is None:
        return "ltr"
    if tag.script:
        return "rtl" if tag.script in _RTL_SCRIPTS else "ltr"
    return "rtl" if tag.language in _RTL_LANGUAGES else "ltr"


def resolve_direction(
    text: str, declared: str | None = None, language: str | None = None
) -> Direction:
    """§11.4.1: a declared ``ltr``/``rtl`` wins; ``auto`` looks at the text, then the language."""
    if declared in ("ltr", "rtl"):
        return "rtl" if declared == "rtl" else "ltr"
    found = first_strong_direction(text)
    if found is not None:
        return found
    return language_direction(language)


def isolate(text: str, direction: str | None = None) -> str:
    """Wrap producer text for embedding in our own phrases (§11.4.2).

    ``ltr``/``rtl`` use LRI/RLI; anything else lets the text decide (FSI).
    """
    opener = {"ltr": LRI, "rtl": RLI}.get(direction or "", FSI)
    return f"{opener}{text}{PDI}"


def for_display(text: str, declared: str | None = None, language: str | None = None) -> str:
    """Producer text ready to sit in a UI line next to our own labels (§11.4.1, §11.4.2).

    Isolated in its resolved direction, so ``"Question from bot: " + for_display(arabic)``
    keeps both parts in order on a bidi-capable terminal; the controls are zero-width.
    """
    return isolate(text, resolve_direction(text, declared, language))


def strip_bidi_controls(text: str) -> str:
    """Remove isolates and embeddings before speech: synthesisers may read them aloud."""
    return "".join(ch for ch in text if ch not in _BIDI_CONTROLS)
