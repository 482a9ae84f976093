"""What an agent wrote that speech cannot give whole: its code blocks and its addresses.

Speech says a fenced code block as "code block, 30 lines, Python" and a URL by its host
(:mod:`announcer.engine.text_hygiene`); the listener gets them whole and literally on a
command (``:code``, ``:links`` in the plain interface, issue 31 item 14). Sans-I/O: the
engine notes each sentence of agent output it says; the latest few are kept, bounded.
"""

from __future__ import annotations

import re
from collections import deque
from typing import Final

#: how many of each kind are kept, and how long one may be
KEPT: Final = 20
MAX_LITERAL: Final = 65_536
#: how much of one text is searched
MAX_TEXT: Final = 262_144

_FENCE: Final = re.compile(
    r"^[ ]{0,3}(`{3,}|~{3,})[^\n]*\n(.*?)(?:^[ ]{0,3}\1[ \t]*$|\Z)", re.M | re.S
)
_URL: Final = re.compile(r"\bhttps?://[^\s<>\"'`]+", re.I)
_URL_TAIL: Final = ".,;:!?)]}*_"


def code_blocks(text: str) -> list[str]:
    """The fenced code blocks of a markdown text, each as written (its lines, no fences)."""
    return [block.group(2).rstrip("\n")[:MAX_LITERAL] for block in _FENCE.finditer(text[:MAX_TEXT])]


def links(text: str) -> list[str]:
    """The web addresses in a text, whole (a sentence's closing punctuation left out)."""
    found: list[str] = []
    for match in _URL.finditer(text[:MAX_TEXT]):
        url = match.group(0)
        while url and url[-1] in _URL_TAIL:
            if url[-1] == ")" and url.count(")") <= url.count("("):
                break  # a balanced parenthesis is part of the address (a wiki page)
            url = url[:-1]
        if url and url not in found:
            found.append(url[:MAX_LITERAL])
    return found


class Literals:
    """The latest code blocks and addresses the agents wrote, newest last, bounded."""

    def __init__(self) -> None:
        self._kept: dict[str, deque[str]] = {
            "code": deque(maxlen=KEPT),
            "links": deque(maxlen=KEPT),
        }

    def note(self, text: str) -> None:
        if "```" in text or "~~~" in text:
            self._kept["code"].extend(code_blocks(text))
        if "://" in text:
            self._kept["links"].extend(u for u in links(text) if u not in self._kept["links"])

    def latest(self, kind: str) -> list[str]:
        """``code``: the last code block (a list of one); ``links``: the addresses kept."""
        kept = self._kept.get(kind)
        if not kept:
            return []
        return [kept[-1]] if kind == "code" else list(kept)
