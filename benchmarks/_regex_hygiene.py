"""The hand-written regex text hygiene the engine used before markdown-it-py, kept
verbatim (git history: announcer/engine/text_hygiene.py before the switch) so
benchmarks/text_hygiene.py can show why it was replaced. The pieces the engine still
uses unchanged (terminal codes, URL hosts, language names) are imported from it.

Make producer text fit for the ear before it is spoken.

Markdown is read naturally (no "hash hash" or "star star"), a fenced code block is
replaced by a short phrase ("code block, 12 lines, Python") the user can expand in
the transcript, URLs shrink to their host, and terminal escape sequences and
control characters never reach the synthesiser. The text stays literal: nothing
here interprets producer text as markup for display.
"""

from __future__ import annotations

import re
from typing import Final

from announcer.engine.text_hygiene import (
    _LANGUAGE_NAMES,
    _LINE_END_PUNCT,
    DEFAULT_MAX_SPOKEN_CHARS,
    _end_sentence,
    strip_terminal_codes,
    url_host,
)
from announcer.i18n.translate import translator

_FENCE: Final = re.compile(
    r"(?ms)^[ \t]*(```|~~~)[ \t]*([\w+#.-]*)[^\n]*\n(.*?)(?:^[ \t]*\1[ \t]*$|\Z)"
)
_INLINE_FENCE: Final = re.compile(r"```([\w+#.-]*)\s(.*?)```", re.S)
_IMAGE: Final = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_LINK: Final = re.compile(r"\[([^\]]+)\]\(([^)\s]*)[^)]*\)")
_URL: Final = re.compile(r"\b(?:https?|ftp|wss?)://[^\s<>\"'`)\]]+|\bwww\.[^\s<>\"'`)\]]+", re.I)
_HEADING: Final = re.compile(r"(?m)^[ \t]{0,3}#{1,6}[ \t]+(.*?)[ \t#]*$")
_BLOCKQUOTE: Final = re.compile(r"(?m)^[ \t]*>+[ \t]?")
_RULE: Final = re.compile(r"(?m)^[ \t]*([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_BULLET: Final = re.compile(r"(?m)^[ \t]*[-*+•][ \t]+(?:\[[ xX]\][ \t]+)?")
_NUMBERED: Final = re.compile(r"(?m)^[ \t]*(\d{1,3})[.)][ \t]+")
_TABLE_RULE: Final = re.compile(
    r"(?m)^[ \t]*\|?[ \t]*:?-{3,}:?[ \t]*(?:\|[ \t]*:?-{3,}:?[ \t]*)*\|?[ \t]*$"
)
_BOLD: Final = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1", re.S)
_ITALIC_STAR: Final = re.compile(r"(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])")
_ITALIC_UNDERSCORE: Final = re.compile(r"(?<![\w_])_(?=\S)([^_\n]+?)(?<=\S)_(?![\w_])")
_STRIKE: Final = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~", re.S)
_INLINE_CODE: Final = re.compile(r"`+([^`]+)`+")
_SPACES: Final = re.compile(r"[ \t\r\f\v\xa0]+")


# Plain prose (most summaries and sentences) needs none of the rewriting below.
_NEEDS_WORK: Final = re.compile(
    r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069*_#\[`|~>]|://|www\."
    r"|^[ \t]*(?:[-+•]|\d{1,3}[.)])[ \t]"
)
# Marks a list item or table row while lines are joined (a private-use character).
_ITEM: Final = "\ue000"


def describe_code_block(code: str, language_tag: str, language: str) -> str:
    lines = len([line for line in code.rstrip("\n").split("\n")]) if code.strip() else 0
    tr = translator(language)
    name = _LANGUAGE_NAMES.get(language_tag.lower(), language_tag) if language_tag else ""
    if name:
        return tr.ngettext(
            "code block, {count} line, {name}", "code block, {count} lines, {name}", lines
        ).format(count=lines, name=name)
    return tr.ngettext("code block, {count} line", "code block, {count} lines", lines).format(
        count=lines
    )


def clean_for_speech(
    text: str, language: str = "en", *, max_chars: int = DEFAULT_MAX_SPOKEN_CHARS
) -> str:
    """Producer text (plain or markdown) as one line a synthesiser reads well."""
    if _NEEDS_WORK.search(text) is None:
        spoken = " ".join(text.split())
        return spoken if len(spoken) <= max_chars else _shorten(spoken, language, max_chars)
    text = strip_terminal_codes(text)
    if not text:
        return ""
    text = text.replace("\r\n", "\n")
    if "```" in text or "~~~" in text:
        text = _FENCE.sub(
            lambda m: "\n" + describe_code_block(m.group(3), m.group(2), language) + ".\n", text
        )
        text = _INLINE_FENCE.sub(
            lambda m: describe_code_block(m.group(2), m.group(1), language), text
        )
    if "](" in text:
        tr = translator(language)
        text = _IMAGE.sub(
            lambda m: tr.gettext("image: {alt}").format(alt=m.group(1)) if m.group(1) else "",
            text,
        )
        text = _LINK.sub(lambda m: m.group(1), text)
    if "://" in text or "www." in text:
        text = _URL.sub(lambda m: url_host(m.group()), text)
    text = _TABLE_RULE.sub("", text)
    text = _RULE.sub("", text)
    text = _HEADING.sub(lambda m: _end_sentence(m.group(1)), text)
    text = _BLOCKQUOTE.sub("", text)
    text = _BULLET.sub(_ITEM, text)
    text = _NUMBERED.sub(lambda m: _ITEM + m.group(1) + ": ", text)
    if "|" in text:
        text = "\n".join(_table_row(line) for line in text.split("\n"))
    text = _STRIKE.sub(r"\1", text)
    text = _BOLD.sub(r"\2", text)
    text = _ITALIC_STAR.sub(r"\1", text)
    text = _ITALIC_UNDERSCORE.sub(r"\1", text)
    text = _INLINE_CODE.sub(r"\1", text)
    lines = [_SPACES.sub(" ", line).strip() for line in text.split("\n")]
    spoken = _join_lines([line for line in lines if line])
    return spoken if len(spoken) <= max_chars else _shorten(spoken, language, max_chars)


def _shorten(spoken: str, language: str, max_chars: int) -> str:
    cut = spoken.rfind(" ", 0, max_chars)
    spoken = spoken[: cut if cut > max_chars // 2 else max_chars].rstrip(" ,;:")
    return spoken + " " + translator(language).gettext("(shortened, full text in the transcript)")


def _table_row(line: str) -> str:
    stripped = line.strip()
    if stripped.startswith("|") or stripped.endswith("|") or stripped.count("|") >= 2:
        cells = [cell.strip() for cell in stripped.strip("|").split("|")]
        return _end_sentence(", ".join(cell for cell in cells if cell))
    return line


def _join_lines(lines: list[str]) -> str:
    """Join lines into running speech; a list item or heading keeps a pause after it."""
    if not lines:
        return ""
    out = [lines[0].lstrip(_ITEM)]
    previous_is_item = lines[0].startswith(_ITEM)
    for line in lines[1:]:
        is_item = line.startswith(_ITEM)
        line = line.lstrip(_ITEM).strip()
        if not line:
            continue
        if (is_item or previous_is_item) and not out[-1].endswith(_LINE_END_PUNCT):
            out[-1] += "," if is_item else "."
        out.append(line)
        previous_is_item = is_item
    joined = " ".join(out)
    if previous_is_item and not joined.endswith(_LINE_END_PUNCT):
        joined += "."
    return joined
