"""Decisions the sans-I/O speech scheduler hands to a speech adapter.

The scheduler never talks to a backend. It returns these commands; an adapter
(``announcer.speech.driver``) carries them out and reports back when an
utterance finished, so the scheduler can be tested with plain function calls.
"""

from __future__ import annotations

from dataclasses import dataclass

from announcer.engine.announcement import Announcement


# Read-only by convention, not frozen: a frozen dataclass's __init__ measured 2.6 times
# slower, and one of these is made for nearly every event (benchmarks/pipeline.py).
@dataclass(slots=True)
class Speak:
    """Start saying ``announcement``; report ``utterance_id`` when it ends."""

    utterance_id: int
    announcement: Announcement


# Read-only by convention, not frozen: a frozen dataclass's __init__ measured 2.6 times
# slower, and one of these is made for nearly every event (benchmarks/pipeline.py).
@dataclass(slots=True)
class Cancel:
    """Stop whatever is being said now (barge-in or user "stop speech")."""

    utterance_id: int | None
    reason: str


SpeechCommand = Speak | Cancel
