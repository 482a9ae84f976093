"""Make producer text fit for the ear before it is spoken.

Markdown is read naturally (no "hash hash" or "star star"), a fenced code block is
replaced by a short phrase ("code block, 12 lines, Python") the user can expand in
the transcript, URLs shrink to their host, and terminal escape sequences and
control characters never reach the synthesiser. The text stays literal: HTML is
never interpreted, and nothing here treats producer text as markup for display.

Markdown is parsed by markdown-it-py (CommonMark; already installed with Textual), not
by hand-written regexes, because benchmarks/text_hygiene.py (one run, 2 cores) shows the
regexes were wrong where the parser is right. On the 29 hand-checked tricky cases of
tests/engine/data/hygiene_cases.json: this module 0 wrong, the former regex version 8
(code spans holding markdown, escapes, setext headings, reference links, autolinks,
URLs with parentheses, backslash line breaks), mistune 2. markdown-it-py alone missed
one, ``2*3*4`` read as emphasis: a ``*`` between word characters is read literally here.
Speed, µs per call: short summaries 5.4 (regex 6.2), because text without markdown
syntax never reaches the parser; markdown answers 206 (regex 48, mistune 165); markdown
texts from the shared peer samples 94 (regex 30, mistune 71). A quarter of a
millisecond for a text that takes seconds to speak; only the first
``_PARSE_FACTOR * max_chars`` characters of a huge text are parsed. mistune is faster
but reads "10." in a list as its position and is a new dependency.
"""

from __future__ import annotations

import re
from typing import Final
from urllib.parse import urlsplit

from markdown_it import MarkdownIt
from markdown_it.token import Token

from announcer.i18n.format import format_integer
from announcer.i18n.text import grapheme_floor
from announcer.i18n.translate import translator
from announcer.protocol.sanitise import UNSAFE, clean_speech

# What the sanitiser keeps that a synthesiser should not hear: zero-width (non-)joiners.
_CONTROL: Final = re.compile(r"[\u200b-\u200f]")
_URL: Final = re.compile(r"\b(?:https?|ftp|wss?)://[^\s<>\"'`]+|\bwww\.[^\s<>\"'`]+", re.I)
_URL_TRAILER: Final = ".,;:!?'\")]}"
_FENCE_LINE: Final = re.compile(r"(?m)^ {0,3}(`{3,}|~{3,})([^\n`]*)$")
_PARAGRAPH_BREAK: Final = re.compile(r"\n[ \t\r\f\v\xa0]*\n")
_UNICODE_BULLET: Final = re.compile(r"(?m)^([ \t]*)•[ \t]+")
_LINE_END_PUNCT: Final = tuple(".!?:;,…。！？؟।۔")

_LANGUAGE_NAMES: Final = {
    "py": "Python",
    "python": "Python",
    "python3": "Python",
    "js": "JavaScript",
    "javascript": "JavaScript",
    "ts": "TypeScript",
    "typescript": "TypeScript",
    "sh": "shell",
    "bash": "shell",
    "shell": "shell",
    "zsh": "shell",
    "console": "shell",
    "json": "JSON",
    "yaml": "YAML",
    "yml": "YAML",
    "toml": "TOML",
    "html": "HTML",
    "css": "CSS",
    "sql": "SQL",
    "rust": "Rust",
    "rs": "Rust",
    "go": "Go",
    "java": "Java",
    "c": "C",
    "cpp": "C++",
    "c++": "C++",
    "csharp": "C#",
    "cs": "C#",
    "ruby": "Ruby",
    "rb": "Ruby",
    "diff": "diff",
    "xml": "XML",
    "markdown": "Markdown",
    "md": "Markdown",
    "kotlin": "Kotlin",
    "swift": "Swift",
    "php": "PHP",
}

DEFAULT_MAX_SPOKEN_CHARS: Final = 1_500
# Parse at most this many times max_chars: markdown only gets shorter when spoken,
# except code blocks, and a megabyte of producer text must not stall the engine.
_PARSE_FACTOR: Final = 10
# Text with none of these needs no rewriting at all (most summaries and sentences).
_NEEDS_WORK: Final = re.compile(
    r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069*_#\[`|~<>\\]"
    r"|://|www\.|^[ \t]*(?:[-+=•]|\d{1,9}[.)])",
    re.M,
)
# Markdown syntax once URLs are gone; `_` inside a word never marks emphasis (CommonMark §6.2).
_MARKUP: Final = re.compile(r"[*`\[<>|~#\\]|(?<!\w)_|_(?!\w)|^[ \t]*(?:[-+=•]|\d{1,9}[.)])", re.M)

# Raw HTML stays literal text; indented lines from a terminal are not code blocks.
_MARKDOWN: Final = (
    MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"]).disable("code")
)
_MAX_NESTING: Final = int(_MARKDOWN.options["maxNesting"])


def strip_terminal_codes(text: str) -> str:
    """Remove ANSI/VT escape sequences and control characters; keep newlines and tabs.

    The project's one sanitiser (:mod:`announcer.protocol.sanitise`), then the
    zero-width characters a synthesiser would stumble on.
    """
    return _CONTROL.sub("", clean_speech(text, keep_tabs=True))


def describe_code_block(code: str, language_tag: str, language: str) -> str:
    lines = len(code.rstrip("\n").split("\n")) if code.strip() else 0
    tr = translator(language)
    name = _LANGUAGE_NAMES.get(language_tag.lower(), language_tag) if language_tag else ""
    if name:
        return tr.ngettext(
            "code block, {count} line, {name}", "code block, {count} lines, {name}", lines
        ).format(count=format_integer(lines, language), name=name)
    return tr.ngettext("code block, {count} line", "code block, {count} lines", lines).format(
        count=format_integer(lines, language)
    )


def url_host(url: str) -> str:
    candidate = url if "://" in url else "http://" + url
    try:
        host = urlsplit(candidate).hostname or ""
    except ValueError:
        host = ""
    if host.startswith("www."):
        host = host[4:]
    return host or url


def clean_for_speech(
    text: str, language: str = "en", *, max_chars: int = DEFAULT_MAX_SPOKEN_CHARS
) -> str:
    """Producer text (plain or markdown) as one line a synthesiser reads well."""
    if _NEEDS_WORK.search(text) is None and UNSAFE.search(text) is None:
        spoken = _plain(text)
    else:
        text = strip_terminal_codes(text).replace("\r\n", "\n")
        limit = max(_PARSE_FACTOR * max_chars, 1_000)
        cut_code = ""
        if cut := len(text) > limit:
            text, cut_code = _cut(text, limit, language)
        if _MARKUP.search(_URL.sub(" ", text)) is None:
            spoken = _shorten_urls(_plain(text))
        else:
            spoken = _render(text, language)
        if cut_code:
            spoken = _join([("paragraph", spoken), ("code", cut_code)])
        if cut and len(spoken) <= max_chars:
            note = translator(language).gettext("(shortened, full text in the transcript)")
            return spoken + " " + note
    return spoken if len(spoken) <= max_chars else _shorten(spoken, language, max_chars)


def _cut(text: str, limit: int, language: str) -> tuple[str, str]:
    """The head of a huge text to parse, and the phrase for a code block the cut falls
    in (counted over the whole block, so a long listing is not under-reported)."""
    opening: re.Match[str] | None = None
    for fence in _FENCE_LINE.finditer(text):
        if opening is None:
            if fence.start() >= limit:
                break
            opening = fence
        elif (
            fence.group(1)[0] == opening.group(1)[0]
            and len(fence.group(1)) >= len(opening.group(1))
            and not fence.group(2).strip()
        ):
            if fence.start() >= limit:
                body = text[opening.end() + 1 : fence.start()]
                return text[: opening.start()], _describe_fence(body, opening, language)
            opening = None
    if opening is not None:  # an unclosed fence runs to the end (CommonMark §4.5)
        body = text[opening.end() + 1 :]
        return text[: opening.start()], _describe_fence(body, opening, language)
    end = text.rfind("\n", limit // 2, limit)
    return text[: end if end > 0 else grapheme_floor(text, limit, progress=True)], ""


def _describe_fence(body: str, opening: re.Match[str], language: str) -> str:
    info = opening.group(2).split()
    return describe_code_block(body, info[0] if info else "", language)


def _plain(text: str) -> str:
    """Plain text: paragraphs end as sentences, everything else is one running line."""
    if "\n" not in text:
        return " ".join(text.split())
    paragraphs = [" ".join(part.split()) for part in _PARAGRAPH_BREAK.split(text)]
    return _join([("paragraph", p) for p in paragraphs if p])


def _shorten_urls(text: str) -> str:
    return _URL.sub(_url_replacement, text) if "://" in text or "www." in text else text


def _url_replacement(match: re.Match[str]) -> str:
    url = match.group()
    trailer = ""
    # A URL keeps balanced parentheses (Wikipedia titles) but not the sentence's punctuation.
    while (
        url
        and url[-1] in _URL_TRAILER
        and not (url[-1] == ")" and url.count("(") >= url.count(")"))
    ):
        trailer = url[-1] + trailer
        url = url[:-1]
    return url_host(url) + trailer


def _render(text: str, language: str) -> str:
    text = _UNICODE_BULLET.sub(r"\1- ", text)
    tokens = _MARKDOWN.parse(text)
    if any(token.level >= _MAX_NESTING - 1 for token in tokens):
        # The parser silently drops what is nested deeper than this: read it all plainly.
        return _shorten_urls(_plain(text))
    blocks: list[tuple[str, str]] = []
    items: list[str] = []  # the number to read for each open list item, "" once read
    cells: list[str] = []
    kind = "paragraph"
    for token in tokens:
        token_type = token.type
        if token_type == "inline":
            spoken = _inline(token.children or [], language)
            if kind == "cell":
                cells.append(spoken)
            elif items and kind == "paragraph":
                blocks.append(("item", items[-1] + spoken))
                items[-1] = ""
            else:
                blocks.append((kind, spoken))
        elif token_type == "heading_open":
            kind = "heading"
        elif token_type in ("th_open", "td_open"):
            kind = "cell"
        elif token_type == "tr_open":
            cells = []
        elif token_type == "tr_close":
            blocks.append(("row", ", ".join(cell for cell in cells if cell.strip())))
            kind = "paragraph"
        elif token_type == "list_item_open":
            items.append(f"{token.info}: " if token.info else "")
        elif token_type == "list_item_close":
            items.pop()
        elif token_type == "fence":
            tag = token.info.split()[0] if token.info.strip() else ""
            blocks.append(("code", describe_code_block(token.content, tag, language)))
        elif token_type == "heading_close":
            kind = "paragraph"
    return _join([(kind, " ".join(text.split())) for kind, text in blocks])


def _inline(children: list[Token], language: str) -> str:
    parts: list[str] = []
    literal: list[str] = []  # per open emphasis: its marker if read literally, else ""
    for index, token in enumerate(children):
        token_type = token.type
        if token_type == "text":
            parts.append(_shorten_urls(token.content))
        elif token_type == "code_inline":
            parts.append(token.content)
        elif token_type in ("softbreak", "hardbreak"):
            parts.append(" ")
        elif token_type in ("em_open", "strong_open"):
            literal.append(token.markup if _intraword_star(token, parts, children, index) else "")
            parts.append(literal[-1])
        elif token_type in ("em_close", "strong_close"):
            parts.append(literal.pop() if literal else "")
        elif token_type == "image":
            alt = _inline(token.children or [], language).strip()
            if alt:
                parts.append(translator(language).gettext("image: {alt}").format(alt=alt))
    return "".join(parts)


def _intraword_star(token: Token, parts: list[str], children: list[Token], index: int) -> bool:
    """`2*3*4` or `*.py*` globs: a star between word characters is not emphasis here."""
    if not token.markup.startswith("*") or not parts or not parts[-1]:
        return False
    following = children[index + 1] if index + 1 < len(children) else None
    return (
        parts[-1][-1].isalnum()
        and following is not None
        and following.type == "text"
        and following.content[:1].isalnum()
    )


def _join(blocks: list[tuple[str, str]]) -> str:
    """Blocks as running speech: headings, rows, code phrases and paragraphs followed by
    more end as sentences; list items are read with a pause (a comma) between them."""
    out: list[str] = []
    previous = ""
    for kind, text in blocks:
        if not text:
            continue
        if out and not out[-1].endswith(_LINE_END_PUNCT):
            if previous == "item":
                out[-1] += "," if kind == "item" else "."
            elif previous == "paragraph":
                out[-1] += "."
        out.append(text if kind in ("paragraph", "item") else _end_sentence(text))
        previous = kind
    if out and previous == "item":
        out[-1] = _end_sentence(out[-1])
    return " ".join(out)


def _shorten(spoken: str, language: str, max_chars: int) -> str:
    cut = spoken.rfind(" ", 0, max_chars)
    if cut < max_chars // 2:
        cut = grapheme_floor(spoken, max_chars, progress=True)
    spoken = spoken[:cut].rstrip(" ,;:")
    return spoken + " " + translator(language).gettext("(shortened, full text in the transcript)")


def _end_sentence(line: str) -> str:
    line = line.strip()
    return line if not line or line.endswith(_LINE_END_PUNCT) else line + "."
