"""Make producer values fit for the ear: paths, URLs and JSON are summarised, not spelled out.

A screen-reader user does not want ``/home/me/project/src/lib/module.rs`` read
character by character, nor a JSON object read brace by brace. AEP's
``display_style`` hints (path, url, indented_json, key_value, ...) tell us
which kind of value we hold; without a hint we guess from the value's shape.
"""

from __future__ import annotations

import json
import re
from urllib.parse import urlsplit

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
    cut = text[:limit]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:") + "…"


def plain(text: str) -> str:
    """Drop the markdown emphasis marks a model puts in headlines (``**Checking**``)."""
    return _MARKUP.sub("", text)


def speak_path(path: str) -> str:
    """``/work/project/src/lib.rs`` -> ``lib.rs in src``."""
    parts = [p for p in re.split(r"[\\/]", path.rstrip("/\\")) if p and p != "~"]
    if not parts:
        return path or "/"
    if len(parts) == 1:
        return parts[0]
    return f"{parts[-1]} in {parts[-2]}"


def speak_folder(path: str) -> str:
    """A working directory is named by its last folder: ``/home/me/proj`` -> ``proj``."""
    parts = [p for p in re.split(r"[\\/]", path.rstrip("/\\")) if p and p != "~"]
    return parts[-1] if parts else path or "/"


def speak_url(url: str) -> str:
    """``https://github.com/org/repo/pull/7`` -> ``a link to github.com``."""
    host = urlsplit(url).hostname
    return f"a link to {host}" if host else "a link"


def speak_json(value: object) -> str:
    """Describe structured data by its shape and field names, never brace by brace."""
    if isinstance(value, dict):
        if not value:
            return "no details"
        keys = [str(k) for k in list(value)[:4]]
        more = " and more" if len(value) > 4 else ""
        noun = "field" if len(value) == 1 else "fields"
        return f"{len(value)} {noun}: {', '.join(keys)}{more}"
    if isinstance(value, list):
        noun = "item" if len(value) == 1 else "items"
        return f"a list of {len(value)} {noun}"
    if isinstance(value, str):
        return speak_value(value)
    return json.dumps(value)


def speak_value(value: object, style: str | None = None, limit: int = DEFAULT_LIMIT) -> str:
    """Render one value for speech following an AEP ``display_style`` hint."""
    if not isinstance(value, str):
        if style in ("duration",) and isinstance(value, int | float):
            return speak_duration_ms(float(value))
        return speak_json(value)
    if style == "path" or (style is None and _PATH.match(value)):
        return speak_path(value)
    if style == "url" or (style is None and _URL.match(value)):
        return speak_url(value)
    if style in ("indented_json", "key_value"):
        try:
            return speak_json(json.loads(value))
        except ValueError:
            pass
    if style in ("image", "video", "audio"):
        return f"an {style} attachment" if style in ("image", "audio") else "a video attachment"
    return clip(plain(value), limit)


def speak_duration_ms(ms: float) -> str:
    seconds = ms / 1000
    if seconds < 1:
        return "under a second"
    if seconds < 90:
        n = round(seconds)
        return f"{n} second" + ("" if n == 1 else "s")
    minutes = round(seconds / 60)
    return f"{minutes} minute" + ("" if minutes == 1 else "s")


def command_words(tool_input: object) -> str | None:
    """The one argument of a tool call a listener wants to hear (command, path, query...)."""
    if not isinstance(tool_input, dict):
        return None
    for key, style in (
        ("command", None),
        ("cmd", None),
        ("file_path", "path"),
        ("path", "path"),
        ("notebook_path", "path"),
        ("url", "url"),
        ("query", None),
        ("pattern", None),
        ("prompt", None),
        ("description", None),
    ):
        value = tool_input.get(key)
        if isinstance(value, str) and value.strip():
            return speak_value(value, style, limit=120)
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            return clip(" ".join(value), 120)
    return None
