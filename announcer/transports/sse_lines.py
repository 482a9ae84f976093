"""A byte-bounded reader for ``text/event-stream`` bodies, in front of httpx-sse's decoder.

httpx-sse's ``EventSource`` reads a whole line, and a whole event, before we
see its size: a producer sending an endless ``data:`` line could grow our
memory without bound. This reader splits the raw bytes into lines itself and
holds at most ``limit`` bytes of one event (its lines, without comments). An
event that grows past the limit is discarded as it arrives (the rest of its
bytes are counted, never kept) until the blank line that ends it; the stream
then carries on with the next event, since SSE events are delimited by blank
lines and resynchronising needs nothing else. Whole events within the limit are
handed to httpx-sse's ``SSEDecoder``, so field parsing stays the library's.

``SSEDecoder`` lives in ``httpx_sse._decoders`` (not re-exported); pyproject pins
``httpx-sse<0.5`` so a rename shows up as a failing test, not a silent change.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from httpx_sse import ServerSentEvent
from httpx_sse._decoders import SSEDecoder

_LINE_END = re.compile(rb"[\r\n]")
_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True, slots=True)
class OversizeEvent:
    """An event dropped for size: how many bytes it had (at least) when it ended."""

    size: int


@dataclass(frozen=True, slots=True)
class NotUtf8Event:
    """An event dropped because a line of it is not UTF-8 (one rule on every transport)."""


class BoundedSseReader:
    """Feed raw body chunks; get whole events back, never holding more than ``limit`` bytes."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._decoder = SSEDecoder()
        self._line = bytearray()  # the line being read, without its ending
        self._event_lines: list[str] = []  # finished lines of the event being read
        self._event_bytes = 0  # bytes held in _event_lines (each line plus one for its end)
        self._oversize_bytes = 0  # > 0: the current event is too big and being skipped
        self._skipped_line_bytes = 0  # bytes of the line being skipped (0 at a blank line)
        self._skip_lf = False  # a chunk ended with CR: a LF starting the next one is its pair
        self._at_start = True  # a UTF-8 BOM may open the stream (WHATWG event-stream)
        self._not_utf8 = False  # a line of the current event is not UTF-8
        #: most bytes this reader ever held at once (tests check memory stays bounded)
        self.peak_buffered = 0
        #: whole lines ended since the caller last reset it (a slow-loris check: bytes
        #: that never make a line are no sign of life)
        self.lines_done = 0

    @property
    def buffered(self) -> int:
        return len(self._line) + self._event_bytes

    @property
    def mid_event(self) -> bool:
        """Part of an event has come and its end has not: silence now is a stall.

        Between events a producer may be silent as long as it likes (AAEP requires no
        heartbeat); inside one, the rest of it is owed (issue 29 item 5).
        """
        return self.buffered > 0 or self._oversize_bytes > 0

    def feed(self, chunk: bytes) -> list[ServerSentEvent | OversizeEvent | NotUtf8Event]:
        """Take the next piece of the body; return the events it completed, in order."""
        out: list[ServerSentEvent | OversizeEvent | NotUtf8Event] = []
        pos = 0
        if self._skip_lf and chunk[:1] == b"\n":
            pos = 1
        self._skip_lf = False
        size = len(chunk)
        while pos < size:
            match = _LINE_END.search(chunk, pos)
            end = match.start() if match else size
            self._take(chunk, pos, end)
            if match is None:
                break
            # CRLF, LF or CR ends a line (WHATWG event-stream)
            pos = end + 1
            if chunk[end : end + 1] == b"\r":
                if pos < size and chunk[pos : pos + 1] == b"\n":
                    pos += 1
                elif pos == size:
                    self._skip_lf = True
            self._line_done(out)
        return out

    def _take(self, chunk: bytes, start: int, end: int) -> None:
        """Add part of a line, or count it if the event is already too big."""
        length = end - start
        if self._oversize_bytes:
            self._oversize_bytes += length
            self._skipped_line_bytes += length
            return
        if self.buffered + length > self.limit:
            # over the limit: forget what we held of this event and skip the rest of it
            self._oversize_bytes = self.buffered + length
            self._not_utf8 = False
            self._skipped_line_bytes = len(self._line) + length
            self._line.clear()
            self._event_lines.clear()
            self._event_bytes = 0
            return
        self._line += chunk[start:end]
        self.peak_buffered = max(self.peak_buffered, self.buffered)

    def _line_done(self, out: list[ServerSentEvent | OversizeEvent | NotUtf8Event]) -> None:
        self.lines_done += 1
        if self._oversize_bytes:
            if self._skipped_line_bytes:  # a line of the big event ended; skip on
                self._skipped_line_bytes = 0
                return
            out.append(OversizeEvent(self._oversize_bytes))  # the blank line ending it
            self._oversize_bytes = 0
            return
        raw = bytes(self._line)
        self._line.clear()
        if self._at_start:
            self._at_start = False
            raw = raw.removeprefix(_BOM)
        if raw:
            if raw.startswith(b":"):
                return  # a comment (heartbeat): nothing to keep
            try:
                self._event_lines.append(raw.decode("utf-8"))
            except UnicodeDecodeError:
                self._not_utf8 = True  # dropped whole at its end, never shown as U+FFFD
            self._event_bytes += len(raw) + 1
            return
        # a blank line dispatches the event (WHATWG event-stream "dispatch the event")
        lines, self._event_lines, self._event_bytes = self._event_lines, [], 0
        if self._not_utf8:
            self._not_utf8 = False
            out.append(NotUtf8Event())
            return
        for line in lines:
            self._decoder.decode(line)
        event = self._decoder.decode("")
        if event is not None:
            out.append(event)
