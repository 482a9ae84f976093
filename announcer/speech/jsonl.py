"""The ``jsonl`` backend: every speech decision as one JSON object per line.

The record format is shared by tests, benchmarks and the ``wav`` backend
(docs/architecture.md): ``action`` (speak|cancel), ``text``, ``language``,
``urgency``, ``interrupt``, ``event_id``, ``session_id``, ``t`` (seconds since start),
and ``direction`` (``ltr``, ``rtl``, ``auto``) when the producer declared one (§11.4).
A ``cancel`` line names the utterance that was cut off.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

from announcer.engine.announcement import Announcement
from announcer.speech.backend import BackendCapabilities, VoiceSettings


def speech_record(
    action: str, announcement: Announcement, t: float, voice: VoiceSettings | None = None
) -> dict[str, Any]:
    record = {
        "action": action,
        "text": announcement.text,
        "language": announcement.language,
        "urgency": announcement.urgency.value,
        "interrupt": announcement.interrupt,
        "event_id": announcement.event_id,
        "session_id": announcement.session_id,
        "t": round(t, 3),
    }
    if announcement.direction:  # §11.4: the declared direction travels with the words
        record["direction"] = announcement.direction
    if voice is not None and voice.voice:  # whose voice says it (several agents, issue 33)
        record["voice"] = voice.voice
    return record


class JsonlBackend:
    name = "jsonl"
    capabilities = BackendCapabilities(can_interrupt=True)

    def __init__(
        self, stream: TextIO | None = None, clock: Callable[[], float] | None = None
    ) -> None:
        self._stream = stream if stream is not None else sys.stdout
        self._clock = clock if clock is not None else time.monotonic
        self._origin = self._clock()
        self._last: Announcement | None = None

    def start(self) -> None:
        self._origin = self._clock()

    def _write(self, record: dict[str, Any]) -> None:
        self._stream.write(json.dumps(record, ensure_ascii=False) + "\n")
        self._stream.flush()

    def speak(
        self, announcement: Announcement, voice: VoiceSettings, on_done: Callable[[], None]
    ) -> None:
        self._last = announcement
        self._write(speech_record("speak", announcement, self._clock() - self._origin, voice))
        on_done()

    def stop(self) -> None:
        if self._last is not None:
            self._write(speech_record("cancel", self._last, self._clock() - self._origin))
            self._last = None

    def is_speaking(self) -> bool:
        return False

    def close(self) -> None:
        self._stream.flush()
