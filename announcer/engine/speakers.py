"""Whose words these are, when several agents speak through one announcer.

Subscribers' Guide §9: with more than one producer, name the producer. Spoken, a name
on every sentence would double what the user hears, so the name is said the way a
chat transcript shows it: before the first words of each new speaker ("codex: The
tests pass."), and again whenever the speaker changes or our own words came between
("Sent to codex." could otherwise make the next sentence sound like codex's). A
sentence that already names its agent ("codex finished the turn.", "Confirmation
needed. codex wants to run: …") is not named twice. Our own sentences (``system.*``,
no producer) are never named.

Sans-I/O: the runtime passes each announcement as it starts to be spoken, in the order
the user hears them, and gets back the one to speak and show.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from announcer.engine.announcement import Announcement
from announcer.engine.phrases import N_

#: msgid of the named form (translated in every catalog)
NAMED = N_("{agent}: {text}")


class SpeakerNames:
    """Names the speaker of each announcement when it differs from the last one heard."""

    def __init__(self, gettext: Callable[[str], str] | None = None) -> None:
        self.gettext = gettext or (lambda message: message)
        self.names: dict[str, str] = {}  # producer id -> the name said
        self.last: str | None = None  # the producer whose words were heard last

    def learn(self, producer_id: str, name: str) -> None:
        self.names[producer_id] = name

    def name(self, announcement: Announcement) -> Announcement:
        producer = announcement.producer_id
        if producer is None or announcement.kind.startswith("system."):
            # Our own words came between ("Sent to beta."): the next agent is named again.
            if not announcement.continues:
                self.last = None
            return announcement
        if announcement.continues or producer == self.last:
            self.last = producer
            return announcement
        self.last = producer
        name = self.names.get(producer) or producer
        if not name or name.casefold() in announcement.text.casefold():
            return announcement  # it already says whose it is
        text = self.gettext(NAMED).format(agent=name, text=announcement.text)
        return replace(announcement, text=text)
