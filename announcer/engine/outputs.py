"""Streaming output (§4.3.3): one coalescer per ``output_id``, honouring ``coalesce_hint``.

A chunk whose hint declares a boundary (``sentence``, ``paragraph``, ``completion``)
is released at once; ``none`` and ``word`` chunks are buffered until the coalescer
finds a sentence end (subscribers MUST NOT announce ``none`` chunks directly); and
``complete: true`` flushes the rest. In low cognitive load mode the whole output is
held until completion and said once (Subscribers' Guide §7). The number of open
outputs and the text held for each are bounded.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Final

from announcer.engine.coalescer import Coalescer
from announcer.i18n.text import grapheme_floor
from announcer.protocol.events import OutputStreaming

OPEN_OUTPUTS_LIMIT: Final = 256
# Low-load mode holds a whole output; beyond this it keeps the start and counts the rest.
HELD_OUTPUT_LIMIT: Final = 64 * 1024
_RELEASING_HINTS: Final = frozenset({"sentence", "paragraph", "completion"})

OutputKey = tuple[str, str, str]


@dataclass(slots=True)
class _OpenOutput:
    coalescer: Coalescer
    language: str
    held: list[str] = field(default_factory=list)
    held_chars: int = 0
    dropped_chars: int = 0
    last_event_id: str | None = None
    # §4.3.3: chunks with coalesce_hint "none", waiting for a more meaningful boundary
    # (the next chunk with another hint, or completion); never cut at our sentence ends.
    unbounded: list[str] = field(default_factory=list)
    unbounded_chars: int = 0


# Read-only by convention, not frozen: a frozen dataclass's __init__ measured 2.6 times
# slower, and one of these is made for nearly every event (benchmarks/pipeline.py).
@dataclass(slots=True)
class Released:
    """Text of one output ready to speak, with the event that completed it."""

    text: str
    language: str
    session_id: str
    event_id: str | None
    # whose output it is, when no event completed it (a pause, the session's end)
    source_id: str | None = None


class OutputStreams:
    def __init__(self, *, pause_seconds: float = 0.3, max_chars: int = 250) -> None:
        self.pause_seconds = pause_seconds
        self.max_chars = max_chars
        self._open: OrderedDict[OutputKey, _OpenOutput] = OrderedDict()
        self.truncated_chars = 0

    def __len__(self) -> int:
        return len(self._open)

    def feed(
        self,
        event: OutputStreaming,
        source_id: str,
        language: str,
        now: float,
        *,
        hold_until_complete: bool = False,
    ) -> list[Released]:
        key = (source_id, event.session_id, event.output_id or "")
        output = self._open.get(key)
        if event.coalesce_hint == "none" and not event.complete and not hold_until_complete:
            return self._wait_for_boundary(key, output, event, language, now)
        if output is not None and not hold_until_complete and not output.held:
            # The usual chunk of an output already under way.
            output.last_event_id = event.event_id
            texts = output.coalescer.push(_with_unbounded(output, event.chunk), now)
            if event.complete:
                texts += output.coalescer.flush()
                del self._open[key]
            elif event.coalesce_hint in _RELEASING_HINTS:
                texts += output.coalescer.flush()  # a declared boundary (§4.3.3)
            if not texts:
                return []
            return [Released(t, output.language, key[1], event.event_id) for t in texts]
        released: list[Released] = []
        if output is None:
            output, released = self._open_output(key, language)
        output.last_event_id = event.event_id
        chunk = event.chunk
        if hold_until_complete:
            chunk = _with_unbounded(output, chunk)
            room = max(HELD_OUTPUT_LIMIT - output.held_chars, 0)
            # §11.3.3: what is kept ends between grapheme clusters.
            kept = chunk if len(chunk) <= room else chunk[: grapheme_floor(chunk, room)]
            if kept:
                output.held.append(kept)
                output.held_chars += len(kept)
            output.dropped_chars += len(chunk) - len(kept)
            if event.complete:
                del self._open[key]
                released += self._finish(key, output)
            return released
        if output.held:
            # The user left low-load mode mid-output: what was held goes first.
            output.coalescer.push("".join(output.held), now)
            output.held.clear()
            output.held_chars = 0
        texts = output.coalescer.push(_with_unbounded(output, chunk), now)
        if event.complete:
            texts += output.coalescer.flush()
            del self._open[key]
        elif event.coalesce_hint in _RELEASING_HINTS:
            # The producer declared a boundary at the end of this chunk (§4.3.3).
            texts += output.coalescer.flush()
        released += [Released(t, output.language, key[1], event.event_id) for t in texts]
        return released

    def _open_output(self, key: OutputKey, language: str) -> tuple[_OpenOutput, list[Released]]:
        """A new open output for ``key``, and what the oldest one said if it had to close."""
        output = _OpenOutput(
            Coalescer(language, pause_seconds=self.pause_seconds, max_chars=self.max_chars),
            language,
        )
        self._open[key] = output
        released: list[Released] = []
        if len(self._open) > OPEN_OUTPUTS_LIMIT:
            # The oldest open output is said now rather than held without bound.
            old_key, old = self._open.popitem(last=False)
            released += self._finish(old_key, old)
        return output, released

    def _wait_for_boundary(
        self,
        key: OutputKey,
        output: _OpenOutput | None,
        event: OutputStreaming,
        language: str,
        now: float,
    ) -> list[Released]:
        """§4.3.3: a ``none`` chunk is never announced by itself, nor cut at a sentence end
        of ours: it waits for the next chunk with a boundary, or for completion. Past
        ``HELD_OUTPUT_LIMIT`` characters without one, the coalescer cuts it (bounded)."""
        released: list[Released] = []
        if output is None:
            output, released = self._open_output(key, language)
        output.last_event_id = event.event_id
        output.unbounded.append(event.chunk)
        output.unbounded_chars += len(event.chunk)
        if output.unbounded_chars <= HELD_OUTPUT_LIMIT or output.held:
            return released
        texts = output.coalescer.push(_with_unbounded(output, ""), now)
        return released + [Released(t, output.language, key[1], event.event_id) for t in texts]

    def poll(self, now: float) -> list[Released]:
        """Sentences whose stream stalled after their end (see Coalescer.poll)."""
        released: list[Released] = []
        for key, output in self._open.items():
            if output.coalescer.waiting_for_pause:
                released += [
                    Released(text, output.language, key[1], output.last_event_id, key[0])
                    for text in output.coalescer.poll(now)
                ]
        return released

    def release_finished(self, source_id: str, session_id: str) -> list[Released]:
        """The finished sentences a session's outputs hold for a pause, released now.

        Issue 20: a tool call or a question of the same session comes after them, so the
        agent's intro sentence ("I'll update two files.") is said before what it introduces.
        A sentence still being written stays held.
        """
        released: list[Released] = []
        for key, output in self._open.items():
            if key[0] == source_id and key[1] == session_id and output.coalescer.waiting_for_pause:
                released += [
                    Released(text, output.language, key[1], output.last_event_id, key[0])
                    for text in output.coalescer.poll(math.inf)
                ]
        return released

    def next_wakeup(self) -> float | None:
        """When :meth:`poll` may next release a stalled sentence."""
        due = [
            output.coalescer.release_due
            for output in self._open.values()
            if output.coalescer.release_due is not None
        ]
        return min(due) if due else None

    def close_session(self, source_id: str, session_id: str) -> list[Released]:
        """The session ended: say what its outputs still hold."""
        released: list[Released] = []
        for key in [k for k in self._open if k[0] == source_id and k[1] == session_id]:
            released += self._finish(key, self._open.pop(key))
        return released

    def _finish(self, key: OutputKey, output: _OpenOutput) -> list[Released]:
        texts: list[str] = []
        if output.held:
            texts.append("".join(output.held).strip())
        if output.unbounded:
            output.coalescer.push(_with_unbounded(output, ""))
        texts += output.coalescer.flush()
        if output.dropped_chars:
            self.truncated_chars += output.dropped_chars
        return [
            Released(text, output.language, key[1], output.last_event_id, key[0])
            for text in texts
            if text
        ]


def _with_unbounded(output: _OpenOutput, chunk: str) -> str:
    """``chunk`` after the ``none`` chunks that waited for it (§4.3.3), which it releases."""
    if not output.unbounded:
        return chunk
    waiting = "".join(output.unbounded)
    output.unbounded.clear()
    output.unbounded_chars = 0
    return waiting + chunk
