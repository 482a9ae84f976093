"""The lookup ``--speech NAME[:ARG]`` uses on listen and demo: backends by name, text on stderr.

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
    screen_reader: str | None = None,
) -> SpeechBackend:
    """Build (not start) ``name``: auto, screenreader, speechd, pyttsx3, wav, text, jsonl, paced."""
    return registry.create_backend(
        name,
        settings,
        audio_dir=audio_dir,
        stream=stream if stream is not None else sys.stderr,
        notify=notify,
        screen_reader=screen_reader,
    )


def backend_from_spec(
    spec: str,
    settings: UserSettings | None = None,
    *,
    stream: IO[str] | None = None,
    notify: Callable[[str], None] = notify_stderr,
) -> SpeechBackend | None:
    """The backend ``--speech NAME[:ARG]`` (or the ``backend`` setting) names, not started.

    ``none`` is None (print only); ``jsonl:PATH`` records to a new file (kept open as long
    as the process runs), ``jsonl`` and ``text`` write to ``stream`` (standard error);
    ``wav:DIR`` saves one WAV per utterance, and ``speech.jsonl``, in DIR;
    ``screenreader:NAME`` speaks through that screen reader or speech API (nvda, jaws, ...).
    Raises ValueError for a spec :func:`registry.split_speech_spec` refuses.
    """
    name, argument = registry.split_speech_spec(spec)
    if name == "none":
        return None
    if name == "jsonl" and argument:
        stream = open(argument, "w", encoding="utf-8")  # noqa: SIM115 (lives as long as we do)
    audio_dir = Path(argument) if name == "wav" else None
    screen_reader = argument if name == "screenreader" and argument else None
    return create_backend(
        name,
        settings,
        audio_dir=audio_dir,
        stream=stream,
        notify=notify,
        screen_reader=screen_reader,
    )
