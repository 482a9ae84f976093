"""The ``text`` backend: one announcement per line, plain text, nothing else.

Usable on a braille display or piped into another program. Lines are written
literally (producer text is never treated as markup) and flushed at once.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TextIO

from announcer.engine.announcement import Announcement
from announcer.engine.phrases import N_
from announcer.protocol.sanitise import one_line
from announcer.speech.backend import BackendCapabilities, ReaderGone, VoiceSettings


class TextBackend:
    name = "text"
    capabilities = BackendCapabilities(can_interrupt=False, supports_braille=True)

    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = stream if stream is not None else sys.stdout

    def start(self) -> None:
        """Nothing to acquire: the stream is already open."""

    def speak(
        self, announcement: Announcement, voice: VoiceSettings, on_done: Callable[[], None]
    ) -> None:
        # One line per announcement, whatever the producer put in the text, and nothing
        # in it that could drive the terminal (this is the fallback when no voice works).
        line = one_line(announcement.text)
        if line:
            try:
                self._stream.write(line + "\n")
                self._stream.flush()
            except BrokenPipeError as exc:
                raise ReaderGone(*exc.args) from exc
        on_done()

    def stop(self) -> None:
        """A written line cannot be taken back; the next one simply follows."""

    def is_speaking(self) -> bool:
        return False

    def close(self) -> None:
        self._stream.flush()


class PrintedBackend:
    """The last resort of an interface that prints every announcement itself (plain UI).

    When no speech output is left, the words are still on screen: this backend ends
    each utterance at once, so the queue keeps moving and nothing waits on silence.
    """

    # Translators: the last speech output, when every voice failed: the lines on screen.
    name = N_("printed text")
    capabilities = BackendCapabilities(can_interrupt=True, supports_braille=True)

    def start(self) -> None:
        """Nothing to acquire: the interface prints."""

    def speak(
        self, announcement: Announcement, voice: VoiceSettings, on_done: Callable[[], None]
    ) -> None:
        on_done()

    def stop(self) -> None:
        """Nothing is playing."""

    def is_speaking(self) -> bool:
        return False

    def close(self) -> None:
        """Nothing to release."""
