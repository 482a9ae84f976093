"""Reading what the user heard: the ``jsonl`` speech backend's record
(announcer/speech/jsonl.py), one JSON object a line, ``action`` ``speak`` or ``cancel``;
or the utterances of a ``PacedBackend`` (announcer/speech/paced.py), which lasted as long
as a voice at the user's rate would take (``heard()``)."""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from announcer.speech.paced import PacedBackend

Record = str | Path | io.StringIO | Iterable[dict[str, Any]]


def records(source: Record) -> list[dict[str, Any]]:
    """Every line of a record: its text, a file (none yet if it does not exist), a
    ``StringIO`` the backend writes to, or lines already read."""
    if isinstance(source, Path):
        if not source.exists():
            return []
        source = source.read_text(encoding="utf-8")
    elif isinstance(source, io.StringIO):
        source = source.getvalue()
    if isinstance(source, str):
        return [json.loads(line) for line in source.splitlines() if line.strip()]
    return list(source)


def speak_records(source: Record) -> list[dict[str, Any]]:
    """The ``speak`` lines of a record, in order."""
    return [entry for entry in records(source) if entry.get("action") == "speak"]


def spoken_in(source: Record) -> list[str]:
    """What the user heard: the text of every ``speak`` line, in order."""
    return [entry["text"] for entry in speak_records(source)]


def agent_speech(source: Record) -> list[dict[str, Any]]:
    """The ``speak`` lines that say an event (they carry its ``event_id``): the agent's own
    news, without announcer's own words (its notices, keys and counts)."""
    return [entry for entry in speak_records(source) if entry.get("event_id")]


def heard(backend: PacedBackend, since: float | None = None) -> list[str]:
    """What a paced backend said, in order: every utterance's text (``since``: only those
    that started at or after that moment of its clock)."""
    return [
        utterance.announcement.text
        for utterance in backend.utterances
        if since is None or utterance.started >= since
    ]


def follow(stream: Iterable[str]) -> list[dict[str, Any]]:
    """The record a backend writes to ``stream`` as it comes (a child's stderr, where
    ``--speech paced`` writes it), read in a daemon thread into the list returned; other
    lines are skipped. Read it through ``spoken_in(list(...))``."""
    found: list[dict[str, Any]] = []

    def read() -> None:
        for line in stream:
            if line.startswith("{"):
                found.append(json.loads(line))

    threading.Thread(target=read, daemon=True).start()
    return found
