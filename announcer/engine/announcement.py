"""What the engine decides a user should hear.

An :class:`Announcement` is the single currency between the policy engine, the
speech scheduler, the speech backends and the user interfaces. It carries no
behaviour: every decision about it is made in the engine.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import get_args

from announcer.protocol.events import Urgency as WireUrgency


class Urgency(StrEnum):
    """§2.2.9 urgency levels: the protocol's words, ranked in the protocol's order, from
    least to most pressing (tests/engine/test_vocabularies.py keeps the two the same)."""

    BACKGROUND = "background"
    NORMAL = "normal"
    CRITICAL = "critical"

    @property
    def rank(self) -> int:
        return _URGENCY_RANK[self]


#: the kind of our own sentence that a new voice took over mid-session: the interfaces
#: already showed the speech output's printed notice, so they do not print it again
SPEECH_OUTPUT_KIND = "system.speech_output"

_URGENCY_RANK = {Urgency(word): rank for rank, word in enumerate(get_args(WireUrgency))}


# Read-only by convention, not frozen: a frozen dataclass's __init__ measured 2.6 times
# slower, and one of these is made for nearly every event (benchmarks/pipeline.py).
@dataclass(slots=True)
class Announcement:
    """One thing to say to the user.

    ``kind`` is the AAEP short event type (``agent.tool.invoked``) or a
    product-level kind such as ``system.connection`` or ``system.skipped``.
    ``earcon`` is a name from the registry in ``announcer.engine.earcons`` (``needs_you`` ...).
    ``continues`` marks a later part of one message split by language (our own
    phrase in the listener's language, the producer's text in its own, §11.5):
    the scheduler keeps the parts in order and drops or keeps them together.
    ``topic`` says what a piece of status news is about ("edit", "command", "read",
    "tool", "plan", "plan_done"), so what is folded is summarised by kind (issue 20).
    ``rate_factor`` above 1 asks the voice to speak faster than the user's rate: the
    scheduler sets it when the agent's words pile up, within the user's ``max_rate_factor``.
    ``said_for`` names the other sources' events this one line says too: the same final
    state from several agents at once, said once with their count (issue 20).
    ``answers_key`` marks the UI's answer to the user's own key (``w``, F2, "where am I",
    a refused key): said at once, cutting even a question being read (issue 14 d).
    ``outcome`` marks the result of what the user just approved (the first tool result of
    a session after the user accepted its confirmation): never optional, never cut off or
    put behind its session's next question (issue 30 items 4 and 6).
    ``cue`` marks an early key's two-word cue ("Not yet.", issue 20): next in line, it
    cuts nothing off. Cutting would say the cut words again before the waiting question,
    and a user pressing on every moment would keep that question from ever being read.
    """

    text: str
    language: str = "en"
    urgency: Urgency = Urgency.NORMAL
    interrupt: bool = False
    event_id: str | None = None
    session_id: str | None = None
    producer_id: str | None = None
    kind: str = "system"
    earcon: str | None = None
    continues: bool = False
    topic: str | None = None
    rate_factor: float = 1.0
    # §11.4: the producer's declared text_direction ("ltr", "rtl", "auto") for its own
    # words; visual and braille output honour it (speech is linear, §11.4.1)
    direction: str | None = None
    said_for: tuple[str, ...] = ()
    answers_key: bool = False
    cue: bool = False
    outcome: bool = False
    # an agent's start news (its settings line), moot once the user wrote to it
    start_line: bool = False


# §11.4.2: Unicode bidirectional isolates, one per declared direction.
_ISOLATES = {"ltr": "\u2066", "rtl": "\u2067", "auto": "\u2068"}
_POP_ISOLATE = "\u2069"


def directed(text: str, direction: str | None) -> str:
    """``text`` isolated in its declared direction (§11.4), for display and braille."""
    opening = _ISOLATES.get(direction or "")
    if opening is None or not text:
        return text
    return f"{opening}{text}{_POP_ISOLATE}"
