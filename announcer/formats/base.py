"""What every format adapter shares: line decoding, diagnostics, the adapter contract.

Adapters are sans-I/O: the caller hands them one line at a time with the
current clock and gets AAEP event dicts back, which the engine decodes like
any frame off the wire. Nothing a producer sends can raise out of ``feed``:
bad lines become :class:`Diagnostic` records that say what was wrong and why
the line was dropped (nothing is lost silently: docs/security.md).
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

from announcer.i18n.translate import SOURCE_LANGUAGE, catalog_language, translator

JsonObject = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One input line (or part of it) the adapter could not use, with the reason."""

    code: str
    message: str
    line_number: int | None = None
    # Never the raw line: it may hold secrets or payload text (docs/security.md).

    def __str__(self) -> str:
        where = f"line {self.line_number}: " if self.line_number is not None else ""
        return f"{where}{self.code}: {self.message}"


@dataclass(slots=True)
class AdapterOutput:
    """AAEP events (plain dicts, ready for the engine's decoder) and diagnostics.

    ``asked``: the reply tokens of the questions these events ask, as the events carry
    them, so whoever answers for the agent need not read its own events again.
    """

    events: list[JsonObject] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    asked: list[str] = field(default_factory=list)

    def extend(self, other: AdapterOutput) -> None:
        self.events.extend(other.events)
        self.diagnostics.extend(other.diagnostics)
        self.asked.extend(other.asked)


class FormatAdapter(ABC):
    """Turns one stream of some agent format into AAEP events.

    One instance per stream: it keeps the session, sequence numbers and open
    tool calls of that stream between lines.
    """

    #: the name ``get_adapter`` knows this adapter by
    name: str = ""
    #: the catalog language our own sentences are generated in (``set_language``)
    language: str = SOURCE_LANGUAGE

    def __init__(self) -> None:
        self.line_number = 0
        self._out = AdapterOutput()

    def set_language(self, language: str) -> None:
        """Say our sentences in the shipped catalog nearest ``language`` (English if none).

        Events carry that language in ``localization_hints.primary_language``
        (Chapter 11). Subclasses pass it on to their builders.
        """
        self.language = catalog_language([language])

    def _t(self, message: str) -> str:
        """One of our sentences in the adapter's language (gettext)."""
        return translator(self.language).gettext(message)

    # -- public contract -------------------------------------------------

    def feed(self, line: str | bytes, now: float) -> AdapterOutput:
        """Take one line of input (with or without its line ending)."""
        self.line_number += 1
        self._out = AdapterOutput()
        try:
            self._feed_line(line, now)
        except Exception as exc:  # a bug of ours must not take the stream down
            self.diagnose("adapter_error", f"could not translate this line ({type(exc).__name__})")
        return self._take()

    def feed_object(self, obj: JsonObject, now: float) -> AdapterOutput:
        """Take one already-decoded JSON object (a hook payload, a mapped envelope)."""
        self._out = AdapterOutput()
        try:
            self.handle(obj, now)
        except Exception as exc:
            self.diagnose(
                "adapter_error", f"could not translate this object ({type(exc).__name__})"
            )
        return self._take()

    def finish(self, now: float) -> AdapterOutput:
        """The stream ended: close whatever is still open (streams, sessions)."""
        self._out = AdapterOutput()
        try:
            self._finish(now)
        except Exception as exc:
            self.diagnose("adapter_error", f"could not close the stream ({type(exc).__name__})")
        return self._take()

    # -- for subclasses --------------------------------------------------

    def emit(self, event: JsonObject) -> None:
        self._out.events.append(event)

    def diagnose(self, code: str, message: str) -> None:
        self._out.diagnostics.append(Diagnostic(code, message, self.line_number))

    def _feed_line(self, line: str | bytes, now: float) -> None:
        text = decode_line(line)
        if text is None:
            self.diagnose("invalid_utf8", "the line is not valid UTF-8; dropped")
            return
        if not text.strip():
            return  # blank lines are separators, not input
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):
            self.diagnose("invalid_json", "the line is not JSON; dropped")
            return
        if not isinstance(value, dict):
            self.diagnose(
                "not_an_object", f"expected a JSON object, got {json_type(value)}; dropped"
            )
            return
        self.handle(value, now)

    @abstractmethod
    def handle(self, obj: JsonObject, now: float) -> None:
        """Translate one decoded JSON object."""

    def _finish(self, now: float) -> None:  # noqa: B027 - optional hook
        """Override to close open state at end of stream."""

    def _take(self) -> AdapterOutput:
        out, self._out = self._out, AdapterOutput()
        return out


def decode_line(line: str | bytes) -> str | None:
    """Decode bytes as UTF-8 and drop the line ending (LF or CRLF); None if undecodable."""
    if isinstance(line, bytes):
        try:
            line = line.decode("utf-8")
        except UnicodeDecodeError:
            return None
    if line.startswith("\ufeff"):
        line = line[1:]
    return line.rstrip("\r\n")


def json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def get_str(obj: object, *path: str | int) -> str | None:
    """Follow keys/indexes into nested JSON; return a non-empty string or None."""
    value = get_path(obj, *path)
    return value if isinstance(value, str) and value != "" else None


def get_path(obj: object, *path: str | int) -> object:
    current: object = obj
    for key in path:
        if isinstance(key, int):
            if not isinstance(current, list) or not -len(current) <= key < len(current):
                return None
            current = current[key]
        else:
            if not isinstance(current, dict):
                return None
            current = current.get(key)
    return current
