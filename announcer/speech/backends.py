"""The lookup ``announcer listen --speech NAME`` uses: backends by name, text on stderr.

A thin entry point over :mod:`announcer.speech.registry`; ``listen`` prints the
announcements itself on stdout, so a text fallback here writes to stderr, as its
own ``text`` option does.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import IO

from announcer.engine.settings import UserSettings
from announcer.speech import registry
from announcer.speech.auto import notify_stderr
from announcer.speech.backend import SpeechBackend

BACKEND_NAMES = registry.BACKEND_NAMES


def create_backend(
    name: str,
    settings: UserSettings | None = None,
    *,
    audio_dir: Path | None = None,
    stream: IO[str] | None = None,
    notify: Callable[[str], None] = notify_stderr,
) -> SpeechBackend:
    """Build (not start) ``name``: auto, screenreader, speechd, pyttsx3, wav, text, jsonl, paced."""
    return registry.create_backend(
        name,
        settings,
        audio_dir=audio_dir,
        stream=stream if stream is not None else sys.stderr,
        notify=notify,
    )
