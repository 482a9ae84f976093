"""The life of one subscription to one source, as the core sees it: pure logic.

A source (an AAEP producer, an agent, a recorded file) is in exactly one ``LinkState``
at a time. The runtime's transports report what happened; this module decides the
state, and the UIs word the state in the user's language. Handshake outcomes
(§8.2.5, §8.2.6) will be decided here too, so no layer above reads handshake dicts.
"""

from __future__ import annotations

from enum import StrEnum


class LinkState(StrEnum):
    """Where one source's connection stands (replaces a set of booleans)."""

    CONNECTING = "connecting"  # not delivered yet: handshake under way or retrying
    OPEN = "open"  # delivering events
    LOST = "lost"  # was delivering, broke; reconnecting
    CLOSED_BY_PRODUCER = "closed_by_producer"  # the producer refused or ended the subscription
    FINISHED = "finished"  # a finite source (file, stdio, agent) ended normally
    GIVEN_UP = "given_up"  # we stopped retrying
