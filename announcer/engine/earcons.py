"""The one registry of earcons: each sound's name, the events that play it, its words on screen.

The engine puts these names on its announcements; the speech layer plays
``announcer/voices/earcons/<name>.wav`` for them (``announcer.speech.earcons``); the plain UI
prints the label instead of a sound. A test fails when a name here has no sound file
or no label, so the engine cannot ask for a sound that never plays.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final

from announcer.engine.phrases import N_


class Earcon(StrEnum):
    """A short sound before the words: what kind of moment this is, heard at once."""

    SESSION_STARTED = "session_started"
    NEEDS_YOU = "needs_you"  # a confirmation or a question: the agent waits for the user
    COMPLETED = "completed"
    ERRORED = "errored"
    CANCELLED = "cancelled"
    HANDOFF = "handoff"
    TOOL = "tool"
    STILL_WORKING = "still_working"  # the quietest: an agent works, nothing said for a while


# Event short types (§4) -> the sound that marks them.
EARCON_FOR_EVENT: Final[dict[str, Earcon]] = {
    "agent.session.started": Earcon.SESSION_STARTED,
    "agent.session.completed": Earcon.COMPLETED,
    "agent.session.errored": Earcon.ERRORED,
    "agent.session.cancelled": Earcon.CANCELLED,
    "agent.awaiting.confirmation": Earcon.NEEDS_YOU,
    "agent.awaiting.clarification": Earcon.NEEDS_YOU,
    "agent.handoff.requested": Earcon.HANDOFF,
    "agent.tool.invoked": Earcon.TOOL,
}

# What a text interface shows where the sound would play (translated where shown).
EARCON_LABELS: Final[dict[Earcon, str]] = {
    # Translators: shown before a message when the agent waits for the user's answer.
    Earcon.NEEDS_YOU: N_("[needs you]"),
    # Translators: shown before a message saying an agent's session has finished.
    Earcon.COMPLETED: N_("[done]"),
    # Translators: shown before a message saying an agent's session has failed.
    Earcon.ERRORED: N_("[failed]"),
    # Translators: shown before a message saying an agent's session was cancelled.
    Earcon.CANCELLED: N_("[cancelled]"),
    # Translators: shown before a message saying an agent's session has started.
    Earcon.SESSION_STARTED: N_("[started]"),
    # Translators: shown before a message saying an agent hands the work to a person.
    Earcon.HANDOFF: N_("[handoff]"),
    # Translators: shown before a message saying an agent is using a tool.
    Earcon.TOOL: N_("[tool]"),
    # Translators: shown before a message saying an agent is still working after a silence.
    Earcon.STILL_WORKING: N_("[working]"),
}


def earcon_label(name: str | None) -> str | None:
    """The (English) label for an earcon name, or None for no or an unknown earcon."""
    if name is None:
        return None
    try:
        return EARCON_LABELS[Earcon(name)]
    except ValueError:
        return None
