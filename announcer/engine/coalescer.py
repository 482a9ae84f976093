"""Turn a token stream into sentences a listener can follow (§4.3.3 streaming output).

Hand-written rather than built on stream2sentence or pysbd: ``benchmarks/coalescer.py``
shows both are one to two orders of magnitude too slow for per-token use and hold
sentences back by a dozen characters or more, while a screen-reader user wants each
sentence the moment its end is certain. The common push (no terminator in the chunk)
costs one regex probe and one string concatenation.

A sentence is released on the very push that brings the first non-space character
after its end; a stalled stream releases it after ``pause_seconds`` (see :meth:`poll`).
Text with no usable boundary is cut at a clause or word boundary after ``max_chars``.
"""

from __future__ import annotations

import re
from typing import Final

from announcer.i18n.text import grapheme_floor

# Characters that may end a sentence (Latin, CJK, Arabic, Devanagari, Urdu) or a line.
_TERMINATORS: Final = ".!?…。！？؟।۔"
_CASELESS_TERMINATORS: Final = frozenset("。！？؟।۔")
_CLOSERS: Final = "\"'”’»)]}」』"
_OPENERS: Final = frozenset("\"'“‘«([{¿¡「『*_")
# A chunk needs a closer look only if it holds one of these.
_INTERESTING: Final = re.compile(r"[.!?…。！？؟।۔\n`]")
_CANDIDATE: Final = re.compile(rf"[{re.escape(_TERMINATORS)}]+[{re.escape(_CLOSERS)}]*|\n|```")
_LIST_MARKER: Final = re.compile(r"[ \t]*(?:[-*+•][ \t]|\d{1,3}[.)][ \t]|#)")
_LIST_MARKER_PREFIX: Final = re.compile(r"[ \t]*(?:[-*+•]|\d{1,3}[.)]?)?\Z")
_NUMBERED_LINE_START: Final = re.compile(r"(?:^|\n)[ \t]*\d{1,3}\Z")
_CLAUSE_BREAK: Final = re.compile(r"[,;:—–](?=\s)|\s[-–—]\s")
# Whitespace a long run may be cut at; no-break spaces join what they sit between.
_WORD_SPACE: Final = re.compile(r"[^\S\u00a0\u2007\u202f]")

# Abbreviations that are (almost) never the end of a sentence: a name or more text follows.
_ALWAYS_ABBREVIATIONS: Final = {
    "en": {
        "mr",
        "mrs",
        "ms",
        "dr",
        "prof",
        "st",
        "sr",
        "jr",
        "mt",
        "gen",
        "col",
        "capt",
        "lt",
        "sgt",
        "rev",
        "hon",
        "gov",
        "sen",
        "rep",
        "vs",
        "e.g",
        "i.e",
        "cf",
        "approx",
        "dept",
        "est",
        "viz",
        "ca",
        "u.s",
        "u.k",
        "u.s.a",
        "u.n",
        "e.u",
    },
    "es": {
        "sr",
        "sra",
        "srta",
        "sres",
        "dr",
        "dra",
        "ud",
        "uds",
        "lic",
        "ing",
        "prof",
        "p.ej",
        "ej",
        "pág",
        "págs",
        "núm",
        "av",
        "avda",
        "aprox",
        "dña",
        "d",
        "vs",
    },
    "fr": {
        "m",
        "mm",
        "mme",
        "mmes",
        "mlle",
        "mlles",
        "dr",
        "pr",
        "me",
        "p.ex",
        "ex",
        "cf",
        "env",
        "av",
        "bd",
        "chap",
        "p",
        "vol",
        "n°",
        "no",
        "st",
        "ste",
    },
    "de": {
        "hr",
        "hrn",
        "fr",
        "dr",
        "prof",
        "z.b",
        "bzw",
        "d.h",
        "u.a",
        "ca",
        "nr",
        "evtl",
        "ggf",
        "vgl",
        "s",
        "str",
        "inkl",
        "zzgl",
        "bspw",
        "u.ä",
        "o.ä",
        "sog",
        "abs",
        "z",
        "b",
        "d",
    },
    "pt": {
        "sr",
        "sra",
        "srta",
        "dr",
        "dra",
        "prof",
        "profa",
        "av",
        "p.ex",
        "ex",
        "pág",
        "págs",
        "nº",
        "n.º",
        "no",
        "núm",
        "aprox",
        "exmo",
        "exma",
        "v.exa",
        "sto",
        "sta",
    },
}
# Abbreviations that end a sentence only when a capital letter follows ("etc. The").
_MAYBE_ABBREVIATIONS: Final = {
    "en": {
        "etc",
        "a.m",
        "p.m",
        "inc",
        "ltd",
        "co",
        "corp",
        "jan",
        "feb",
        "mar",
        "apr",
        "jun",
        "jul",
        "aug",
        "sep",
        "sept",
        "oct",
        "nov",
        "dec",
        "al",
    },
    "es": {"etc", "a.m", "p.m", "ee.uu", "s.a"},
    "fr": {"etc", "s.a"},
    "de": {"usw", "etc", "gmbh", "ag"},
    "pt": {"etc", "s.a", "ltda"},
}
# Abbreviations that hold on to a following number ("No. 5", "p. 12", "Nr. 3").
_NUMBER_ABBREVIATIONS: Final = frozenset(
    [
        "no",
        "nos",
        "nr",
        "p",
        "pp",
        "fig",
        "figs",
        "vol",
        "vols",
        "ch",
        "chap",
        "sec",
        "art",
        "n°",
        "nº",
        "núm",
        "pág",
        "págs",
        "s",
        "abs",
        "tel",
    ]
)
_GERMAN_MONTHS: Final = frozenset(
    [
        "januar",
        "februar",
        "märz",
        "april",
        "mai",
        "juni",
        "juli",
        "august",
        "september",
        "oktober",
        "november",
        "dezember",
        "jahrhundert",
        "jahrhunderts",
    ]
)

DEFAULT_PAUSE_SECONDS: Final = 0.3
DEFAULT_MAX_CHARS: Final = 250
# A code block is held whole (text hygiene replaces it by a phrase) up to this size.
MAX_CODE_BLOCK_CHARS: Final = 65_536


def _base_language(language: str) -> str:
    return language.replace("_", "-").split("-", 1)[0].lower()


class Coalescer:
    """Stream text in with :meth:`push`; speakable sentences come out.

    ``push(text)`` returns the sentences completed by this chunk (usually none);
    ``flush()`` returns whatever is left at the end of the output. ``poll(now)``
    releases a finished sentence whose stream stalled for ``pause_seconds``; it
    only works if pushes were given ``now`` too. Released sentences are stripped
    of surrounding whitespace and never empty.
    """

    __slots__ = (
        "_always",
        "_buf",
        "_german",
        "_in_code",
        "_last_push",
        "_max_chars",
        "_maybe",
        "_pending_end",
        "_scan_from",
        "pause_seconds",
    )

    def __init__(
        self,
        language: str = "en",
        *,
        pause_seconds: float = DEFAULT_PAUSE_SECONDS,
        max_chars: int = DEFAULT_MAX_CHARS,
    ) -> None:
        if max_chars < 20:
            raise ValueError("max_chars: must be at least 20 characters")
        if pause_seconds < 0:
            raise ValueError("pause_seconds: must not be negative")
        base = _base_language(language)
        self._always = _ALWAYS_ABBREVIATIONS["en"] | _ALWAYS_ABBREVIATIONS.get(base, set())
        self._maybe = _MAYBE_ABBREVIATIONS["en"] | _MAYBE_ABBREVIATIONS.get(base, set())
        self._german = base == "de"
        self.pause_seconds = pause_seconds
        self._max_chars = max_chars
        self._buf = ""
        self._scan_from = 0
        # End offset of a terminator whose verdict needs the next non-space character.
        self._pending_end = -1
        self._in_code = False
        self._last_push: float | None = None

    @property
    def buffered(self) -> str:
        """Text received but not yet released."""
        return self._buf

    def push(self, text: str, now: float | None = None) -> list[str]:
        buf = self._buf + text
        self._buf = buf
        if now is not None:
            self._last_push = now
        if self._pending_end < 0 and _INTERESTING.search(text) is None:
            if len(buf) > self._max_chars and not self._in_code:
                return self._cut_long()
            return []
        return self._scan()

    def poll(self, now: float) -> list[str]:
        """Release a finished sentence if the stream stalled after its terminator."""
        if (
            self._pending_end >= 0
            and self._last_push is not None
            # (the moment ``release_due`` names, even when a timer fires a hair early)
            and now + 1e-6 >= self._last_push + self.pause_seconds
            and not self._in_code
            and not self._ends_with_abbreviation(self._pending_end)
        ):
            sentence = self._buf[: self._pending_end]
            self._release_to(self._pending_end)
            stripped = sentence.strip()
            return [stripped] if stripped else []
        return []

    @property
    def waiting_for_pause(self) -> bool:
        """True when a sentence end is known and only a stall or more text decides it."""
        return self._pending_end >= 0

    @property
    def release_due(self) -> float | None:
        """When :meth:`poll` would release the waiting sentence, if one waits."""
        if (
            self._pending_end < 0
            or self._last_push is None
            # A pause never releases these (poll): promising a moment would make a driver
            # wake at it for ever (found by benchmarks/listen.py on a CLI stream).
            or self._in_code
            or self._ends_with_abbreviation(self._pending_end)
        ):
            return None
        return self._last_push + self.pause_seconds

    def flush(self) -> list[str]:
        rest = self._buf.strip()
        self._buf = ""
        self._scan_from = 0
        self._pending_end = -1
        self._in_code = False
        return [rest] if rest else []

    # -- internals ---------------------------------------------------------------

    def _release_to(self, end: int) -> None:
        self._buf = self._buf[end:].lstrip()
        self._scan_from = 0
        self._pending_end = -1

    def _scan(self) -> list[str]:
        released: list[str] = []
        while True:
            buf = self._buf
            match = _CANDIDATE.search(buf, self._scan_from)
            if match is None:
                # Keep two characters back: a code fence may be arriving one tick at a time.
                self._scan_from = max(self._scan_from, len(buf) - 2)
                break
            token = match.group()
            end = match.end()
            if token == "```":
                self._in_code = not self._in_code
                self._scan_from = end
                if not self._in_code:
                    # The closing fence ends the block: release it as one piece.
                    line_end = buf.find("\n", end)
                    if line_end < 0:
                        self._pending_end = -1
                        self._scan_from = match.start()
                        self._in_code = True
                        break
                    released.append(buf[:line_end].strip())
                    self._release_to(line_end)
                continue
            if self._in_code:
                self._scan_from = end
                if len(buf) > MAX_CODE_BLOCK_CHARS:
                    released.append(buf.strip())
                    self._buf = ""
                    self._scan_from = 0
                    self._in_code = False
                    break
                continue
            verdict = self._judge(buf, match.start(), end, token)
            if verdict is None:
                # Undecided until more text arrives: look at this candidate again then.
                self._pending_end = end
                self._scan_from = match.start()
                break
            self._pending_end = -1
            if verdict:
                sentence = buf[:end].strip()
                self._release_to(end)
                if sentence:
                    released.append(sentence)
            else:
                self._scan_from = end
        if not self._in_code and len(self._buf) > self._max_chars:
            released.extend(self._cut_long())
        return released

    def _judge(self, buf: str, start: int, end: int, token: str) -> bool | None:
        """True: a boundary at ``end``; False: not one; None: need more text."""
        size = len(buf)
        if token == "\n":
            return self._judge_newline(buf, start)
        nxt = end
        while nxt < size and buf[nxt] in " \t\r\xa0":
            nxt += 1
        if nxt >= size:
            return None
        follower = buf[nxt]
        spaced = nxt > end
        last = token.rstrip(_CLOSERS)[-1]
        if last in _CASELESS_TERMINATORS:
            return True
        if follower == "\n":
            # A terminator at the end of a line ends the sentence.
            return True
        if not spaced:
            if token[-1] in _CLOSERS or follower in _OPENERS:
                return follower.isupper() or follower in _OPENERS
            # "for you.Your order" splits; "report.pdf", "3.11.7", "a.m." do not.
            return bool(follower.isupper() and last in ".!?" and self._glued_sentence(buf, start))
        if follower.islower():
            return False
        if last in "!?" and token.count(".") == 0:
            return True
        word = self._word_before(buf, start)
        lowered = word.lower()
        if token.startswith(".") and not token.startswith(".."):
            if follower.isdigit():
                return not (
                    lowered in self._always
                    or lowered in _NUMBER_ABBREVIATIONS
                    or _NUMBERED_LINE_START.search(buf, 0, start)
                )
            if lowered in self._always:
                return False
            if len(word) == 1 and word.isalpha() and word.isupper():
                return False  # an initial, as in J. R. R. Tolkien
            if word.isdigit() and _NUMBERED_LINE_START.search(buf, 0, start):
                return False  # "1. " list marker
            if self._german and word.isdigit():
                following = self._next_word(buf, nxt)
                if nxt + len(following) >= size:
                    return None  # the month name is still arriving
                if following.lower() in _GERMAN_MONTHS:
                    return False  # "am 3. Oktober"
        return True

    def _judge_newline(self, buf: str, start: int) -> bool | None:
        size = len(buf)
        line_start = buf.rfind("\n", 0, start) + 1
        line = buf[line_start:start].strip()
        if not line:
            # A blank line: a paragraph break ends whatever came before.
            return True
        if line.startswith("#"):
            return True  # a markdown heading is its own sentence
        after = buf[start + 1 :]
        if after.strip(" \t") == "":
            return None
        if after.lstrip(" \t").startswith("\n"):
            return True
        if _LIST_MARKER.match(after):
            return True
        if size - start < 6 and _LIST_MARKER_PREFIX.match(after):
            return None
        return False

    def _glued_sentence(self, buf: str, start: int) -> bool:
        word = self._word_before(buf, start)
        if len(word) < 2 or not word.isalpha() or not word[-1].islower():
            return False
        token_start = max(buf.rfind(" ", 0, start), buf.rfind("\n", 0, start)) + 1
        token = buf[token_start:start]
        return not ("/" in token or "@" in token or "www" in token.lower())

    @staticmethod
    def _word_before(buf: str, start: int) -> str:
        token_start = max(buf.rfind(" ", 0, start), buf.rfind("\n", 0, start)) + 1
        return buf[token_start:start].lstrip("\"'“‘«([{¿¡*_")

    @staticmethod
    def _next_word(buf: str, index: int) -> str:
        match = re.match(r"\w+", buf[index : index + 20])
        return match.group() if match else ""

    def _ends_with_abbreviation(self, end: int) -> bool:
        body = self._buf[:end].rstrip(_CLOSERS)
        if not body.endswith("."):
            return False
        word = self._word_before(body, len(body) - 1)
        return word.lower() in self._always or (len(word) == 1 and word.isupper())

    def _cut_long(self) -> list[str]:
        """Cut unpunctuated text so the listener is never left in silence."""
        buf = self._buf
        limit = self._max_chars
        window = buf[:limit]
        cut = -1
        for match in _CLAUSE_BREAK.finditer(window):
            if match.end() >= limit * 0.4:
                cut = match.end()
        if cut < 0:
            # Any space between words, a line break included (``ls`` output is one name a
            # line): "debconf.conf de" / "bian_version" was cut inside a word (issue 31,
            # item 13). A short piece is better than a torn word; only a run with no
            # space at all (a URL, Thai) is cut inside, between graphemes.
            # (one past the window: a word that ends at the limit stays in this piece)
            spaces = [match.start() for match in _WORD_SPACE.finditer(buf, 0, limit + 1)]
            space = spaces[-1] if spaces else 0
            cut = space if space > 0 else limit
        # §11.3.3: never tear a mark from its base (Thai has no spaces to cut at).
        cut = grapheme_floor(buf, cut, progress=True)
        piece = buf[:cut].strip()
        self._buf = buf[cut:].lstrip()
        self._scan_from = 0
        self._pending_end = -1
        released = [piece] if piece else []
        if len(self._buf) > limit:
            released.extend(self._cut_long())
        return released
