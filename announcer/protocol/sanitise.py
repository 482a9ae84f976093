"""The one sanitiser every piece of producer text passes before it is shown or spoken.

A producer's strings (summaries, names, languages, reasons, choices) are data. On a
terminal they must not move the cursor, retitle the window, write the clipboard
(OSC 52) or reorder what the user reads (Trojan Source bidi overrides, §10); in a
synthesiser they must not be read out as noise. So every output path (plain UI,
Textual UI, the text speech fallback, the runtime's own sentences that quote the
handshake, speech) calls :func:`clean_display` or :func:`clean_speech`; both remove:

- terminal escape sequences: CSI, OSC/DCS/PM/APC/SOS strings up to BEL or ST, two-byte
  escapes, and their 8-bit C1 forms;
- the remaining C0 controls (newline kept; tab and carriage return become space and
  newline), DEL and the C1 controls;
- bidi embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069): the UI
  isolates producer text itself (``announcer.i18n.text.for_display``), so a producer
  cannot leave an override open across our labels;
- invisible characters that only hide or smuggle text: zero width space, word joiner
  and invisible operators (U+200B, U+2060-U+2064), BOM (U+FEFF), Mongolian vowel
  separator (U+180E) and Unicode tag characters (U+E0000-U+E007F);
- line and paragraph separators (U+2028, U+2029) become newlines.

Zero-width joiner and non-joiner (U+200C, U+200D) stay: Persian, Indic scripts and
emoji sequences need them. :func:`clean_speech` also drops the directional marks
(LRM, RLM, ALM), which a synthesiser may spell out. Nothing is escaped or quoted:
the text stays literal, minus what could act on the terminal.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any, Final

# ESC-introduced sequences: CSI (ESC [ ... final), OSC/DCS/SOS/PM/APC strings up to BEL
# or ST (or the end of the text), and two-byte escapes; then the 8-bit C1 forms.
_ESCAPE_SEQUENCE: Final = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]?"
    r"|\x1b[\]PX^_][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[ -/]*[0-~]?"
    r"|\x9b[0-?]*[ -/]*[@-~]?"
    r"|[\x90\x9d\x98\x9e\x9f][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
)
_INVISIBLE: Final = (
    "\x00-\x08\x0b-\x1f\x7f-\x9f"  # C0 (not tab, newline), DEL, C1
    "\u202a-\u202e\u2066-\u2069"  # bidi embeddings, overrides, isolates
    "\u200b\u2060-\u2064\ufeff\u180e"  # zero width space, word joiner, invisible operators
    "\U000e0000-\U000e007f"  # tag characters (hidden ASCII)
)
_REMOVE_DISPLAY: Final = re.compile(f"[{_INVISIBLE}]")
_REMOVE_SPEECH: Final = re.compile(f"[{_INVISIBLE}\u200e\u200f\u061c]")
#: anything either function would change: most text needs no work at all
UNSAFE: Final = re.compile(f"[{_INVISIBLE}\x09\x1b\u200e\u200f\u061c\u2028\u2029]")


def _clean(text: str, remove: re.Pattern[str], keep_tabs: bool) -> str:
    if UNSAFE.search(text) is None:
        return text
    text = _ESCAPE_SEQUENCE.sub("", text)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = text.replace("\u2028", "\n").replace("\u2029", "\n")
    if not keep_tabs:
        text = text.replace("\t", " ")
    return remove.sub("", text)


def clean_display(text: str) -> str:
    """Producer text safe to print or draw: literal, with nothing that acts on the terminal."""
    return _clean(text, _REMOVE_DISPLAY, keep_tabs=False)


def clean_speech(text: str, *, keep_tabs: bool = False) -> str:
    """Producer text safe to hand a synthesiser: as for display, without directional marks."""
    return _clean(text, _REMOVE_SPEECH, keep_tabs)


def one_line(text: str) -> str:
    """Producer text for a one-line place (status line, list row, a printed line)."""
    return " ".join(clean_display(text).split())


def text_field(value: Any, *, limit: int = 200) -> str | None:
    """A producer-supplied field that should be a string (an agent name, a reason):
    cleaned and capped, or None when it is not a non-empty string (``{"x": 1}``, 12345)."""
    if not isinstance(value, str):
        return None
    cleaned = one_line(value)
    if len(cleaned) > limit:
        cut = limit - 1
        # never tear a mark or a joiner from its base character (§11.3.3)
        while cut > 1 and (
            unicodedata.category(cleaned[cut]).startswith("M") or cleaned[cut - 1] == "\u200d"
        ):
            cut -= 1
        cleaned = cleaned[:cut].rstrip() + "…"
    return cleaned or None
