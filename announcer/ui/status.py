"""A session's typed status in the user's words, for every UI (plain lines, Textual).

The runtime reports :class:`~announcer.runtime.contract.SessionStatus` (counts and each
source's link state); the words are chosen here and translated with the caller's
``gettext``, so the plain UI's ``:status`` and the Textual status line say the same.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Final

from announcer.engine.phrases import N_
from announcer.engine.subscription import LinkState
from announcer.protocol.sanitise import one_line
from announcer.runtime.contract import Connection, SessionStatus

Gettext = Callable[[str], str]

CONNECTION_WORDS: Final[Mapping[Connection, str]] = {
    Connection.NOT_CONNECTED: N_("not connected"),
    Connection.CONNECTED: N_("connected"),
    Connection.PARTLY: N_("partly connected"),
    Connection.CLOSED_BY_PRODUCER: N_("closed by the producer"),
}
LINK_WORDS: Final[Mapping[LinkState, str]] = {
    LinkState.CONNECTING: N_("connecting"),
    LinkState.OPEN: N_("connected"),
    LinkState.LOST: N_("connection lost, reconnecting"),
    LinkState.CLOSED_BY_PRODUCER: N_("closed by the producer"),
    LinkState.FINISHED: N_("finished"),
    LinkState.GIVEN_UP: N_("given up"),
}
# AAEP session states (§4) the user hears; a state a producer named itself (the names
# are open) is said as the producer wrote it, underscores as spaces.
SESSION_STATE_WORDS: Final[Mapping[str, str]] = {
    "idle": N_("idle"),
    "active": N_("active"),
    "working": N_("working"),
    "thinking": N_("thinking"),
    "calling_tool": N_("calling a tool"),
    "writing_output": N_("writing the answer"),
    "awaiting_input": N_("waiting for your answer"),
    "deciding": N_("deciding"),
    "handing_off": N_("handing off"),
    "completed": N_("finished"),
    "errored": N_("failed"),
    "cancelled": N_("cancelled"),
}


def connection_words(status: SessionStatus, gettext: Gettext) -> str:
    """ "connected", "connected to 1 of 2", "closed by the producer" in the user's language."""
    connection = status.connection
    if connection is Connection.PARTLY:
        return gettext("connected to {count} of {total}").format(
            count=status.connected, total=status.sources
        )
    return gettext(CONNECTION_WORDS[connection])


def session_state_words(state: str, gettext: Gettext) -> str:
    state = one_line(state)
    known = SESSION_STATE_WORDS.get(state)
    return gettext(known) if known is not None else state.replace("_", " ")


def producers_words(status: SessionStatus, gettext: Gettext) -> str:
    return ", ".join(one_line(p) for p in status.producers) or gettext("no producer")


def sources_words(status: SessionStatus, gettext: Gettext) -> str:
    """Each source with where it stands ("Bank: connected, Build: finished") when there
    are several; otherwise the producer's name alone (the connection says the rest)."""
    if len(status.links) < 2 or len(status.links) != len(status.producers):
        return producers_words(status, gettext)
    return ", ".join(
        gettext("{name}: {state}").format(name=one_line(name), state=gettext(LINK_WORDS[link]))
        for name, link in zip(status.producers, status.links, strict=True)
    )
