"""Make producer values fit for the ear: paths, URLs and JSON are summarised, not spelled out.

A screen-reader user does not want ``/home/me/project/src/lib/module.rs`` read
character by character, nor a JSON object read brace by brace. AEP's
``display_style`` hints (path, url, indented_json, key_value, ...) tell us
which kind of value we hold; without a hint we guess from the value's shape.
"""

from __future__ import annotations

import json
import math
import re
import shlex
from urllib.parse import urlsplit

from announcer.command_analysis import analyse, in_question
from announcer.command_analysis import unwrap_shell as unwrap_shell
from announcer.i18n.format import format_duration
from announcer.i18n.text import grapheme_floor
from announcer.i18n.translate import SOURCE_LANGUAGE, translator

_URL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://\S+$")
_PATH = re.compile(r"^(~|\.{1,2})?/[^\s]*$|^[A-Za-z]:\\")
_MARKUP = re.compile(r"(\*\*|__|`{1,3})")
_SPACE = re.compile(r"\s+")

#: longest spoken rendering of one value; more is elided with "and more"
DEFAULT_LIMIT = 160


def clip(text: str, limit: int = DEFAULT_LIMIT) -> str:
    """Collapse whitespace and cut at a word boundary, marking the cut with an ellipsis."""
    text = _SPACE.sub(" ", text).strip()
    if len(text) <= limit:
        return text
    cut = text[: grapheme_floor(text, limit, progress=True)]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:") + "…"


def plain(text: str) -> str:
    """Drop the markdown emphasis marks a model puts in headlines (``**Checking**``)."""
    return _MARKUP.sub("", text)


def speak_path(path: str, language: str = SOURCE_LANGUAGE) -> str:
    """``/work/project/src/lib.rs`` -> ``lib.rs in src``."""
    parts = [p for p in re.split(r"[\\/]", path.rstrip("/\\")) if p and p != "~"]
    if not parts:
        return path or "/"
    if len(parts) == 1:
        return parts[0]
    return (
        translator(language).gettext("{file} in {folder}").format(file=parts[-1], folder=parts[-2])
    )


def speak_folder(path: str) -> str:
    """A working directory is named by its last folder: ``/home/me/proj`` -> ``proj``."""
    parts = [p for p in re.split(r"[\\/]", path.rstrip("/\\")) if p and p != "~"]
    return parts[-1] if parts else path or "/"


def speak_url(url: str, language: str = SOURCE_LANGUAGE) -> str:
    """``https://github.com/org/repo/pull/7`` -> ``a link to github.com``."""
    t = translator(language)
    host = urlsplit(url).hostname
    return t.gettext("a link to {host}").format(host=host) if host else t.gettext("a link")


def speak_json(value: object, language: str = SOURCE_LANGUAGE) -> str:
    """Describe structured data by its shape and field names, never brace by brace."""
    t = translator(language)
    if isinstance(value, dict):
        if not value:
            return t.gettext("no details")
        keys = ", ".join(str(k) for k in list(value)[:4])
        if len(value) > 4:
            return t.gettext("{count} fields: {names} and more").format(
                count=len(value), names=keys
            )
        return t.ngettext("{count} field: {names}", "{count} fields: {names}", len(value)).format(
            count=len(value), names=keys
        )
    if isinstance(value, list):
        return t.ngettext("a list of {count} item", "a list of {count} items", len(value)).format(
            count=len(value)
        )
    if isinstance(value, str):
        return speak_value(value, language=language)
    return json.dumps(value)


def speak_value(
    value: object,
    style: str | None = None,
    limit: int = DEFAULT_LIMIT,
    language: str = SOURCE_LANGUAGE,
) -> str:
    """Render one value for speech following an AEP ``display_style`` hint."""
    if not isinstance(value, str):
        if style in ("duration",) and isinstance(value, int | float):
            return speak_duration_ms(float(value), language)
        return speak_json(value, language)
    if style == "path" or (style is None and _PATH.match(value)):
        return speak_path(value, language)
    if style == "url" or (style is None and _URL.match(value)):
        return speak_url(value, language)
    if style in ("indented_json", "key_value"):
        try:
            return speak_json(json.loads(value), language)
        except ValueError:
            pass
    if style in ("image", "video", "audio"):
        t = translator(language)
        return {
            "image": t.gettext("an image attachment"),
            "audio": t.gettext("an audio attachment"),
            "video": t.gettext("a video attachment"),
        }[style]
    return clip(plain(value), limit)


def speak_duration_ms(ms: float, language: str = SOURCE_LANGUAGE) -> str:
    """How long something took, in the user's language with its plural rules.

    Kept brief for speech: whole seconds under 90 s, whole minutes (and hours)
    beyond. The words come from :func:`announcer.i18n.format.format_duration`,
    as the engine's own do, so no language ever hears "1 minutes".
    """
    seconds = ms / 1000 if math.isfinite(ms) else 0.0
    if seconds >= 90:
        seconds = round(seconds / 60) * 60.0
    return format_duration(seconds, language, approximate=False, list_style="standard")


def command_words(tool_input: object, language: str = SOURCE_LANGUAGE) -> str | None:
    """The one argument of a tool call a listener wants to hear (command, path, query...)."""
    if not isinstance(tool_input, dict):
        return None
    for key, style in (
        ("command", "command"),
        ("cmd", "command"),
        ("file_path", "path"),
        # a search is named by what it looks for (Grep, Glob), not where it looks
        ("pattern", "literal"),
        ("path", "path"),
        ("notebook_path", "path"),
        ("url", "url"),
        ("query", None),
        ("description", None),
        ("prompt", None),
    ):
        value = tool_input.get(key)
        if isinstance(value, str) and value.strip():
            if style == "command":
                # never cut so the dangerous part is lost (issue 22): literal when short,
                # else its length, start, end and every dangerous part
                return command_in_words(value, language)
            if style == "literal":  # a glob's ** is not markdown emphasis
                return clip(value, 120)
            return speak_value(value, style, limit=120, language=language)
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            if style == "command":
                return command_in_words(value, language)
            return clip(" ".join(value), 120)
    return None


def command_in_words(
    command: str | list[str], language: str = SOURCE_LANGUAGE, length: int | None = None
) -> str:
    """A command as a listener is told it (announcer.command_analysis): literally when short,
    else a summary naming its start, end and every dangerous part; never cut blindly.
    ``length``: its true length, when only its start was given (said, and high risk)."""
    if isinstance(command, list):
        command = shlex.join(str(word) for word in command)
    analysis = analyse(command, length)
    said = in_question(analysis, language)
    if analysis.is_long or analysis.unreadable:
        return said.rstrip(".")  # a sentence around it ends it
    return " ".join(said.split())


_HEADLINE = re.compile(
    r"^\s*(?:\*\*|__)(?P<head>[^*_\n]{1,200})(?:\*\*|__)\s*(?:\n+|$)(?P<body>.*)$", re.DOTALL
)


def thought_parts(text: str) -> tuple[str, str]:
    """A model's thought as (headline, body): ``**Checking files**\\n\\nI will...`` is two parts.

    Without a bold headline the first sentence is the headline.
    """
    match = _HEADLINE.match(text)
    if match:
        return match.group("head").strip(), _SPACE.sub(" ", plain(match.group("body"))).strip()
    flat = _SPACE.sub(" ", plain(text)).strip()
    end = re.search(r"[.!?…](?:\s|$)", flat)
    if end and end.end() < len(flat):
        return flat[: end.end()].strip(), flat[end.end() :].strip()
    return flat, ""


_ABSOLUTE_PATH = re.compile(r"(?<![\w/.~:])(?:~/|/)(?:[\w.@+-]+/)+[\w.@+-]*[\w@+-]")


def shorten_paths(text: str, language: str = SOURCE_LANGUAGE) -> str:
    """Paths inside an agent's message said for the ear (``lib.rs in src``), the rest kept."""
    return _ABSOLUTE_PATH.sub(lambda m: speak_path(m.group(0), language), text)
