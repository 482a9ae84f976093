"""announcer's own extension of AAEP events (§7 extensions).

announcer's mappings (ACP, hooks, agent streams, AEP) leave hints for its engine and
interfaces under one key, and declare it in the event's ``@context`` (§3.4.3). Only
sources announcer maps itself are trusted with it (engine.pipeline).
"""

from __future__ import annotations

from typing import Final

#: where announcer's own hints travel inside an event (§7)
ANNOUNCER_EXTENSION: Final = "x-announcer"
#: the ``@context`` entry that declares that prefix (§3.4.3)
ANNOUNCER_EXTENSION_CONTEXT: Final = "urn:announcer:x-announcer:v1"

#: the choices announcer adds to an agent's form (formats/acp_forms.py) to leave it: decline
#: to answer, cancel the question. Reachable by a typed word or the arrows, never read as
#: numbered choices (issue 30 item 3; engine.prompts.set_aside_choice).
DECLINE_CHOICE: Final = "x-announcer:decline"
CANCEL_CHOICE: Final = "x-announcer:cancel"

__all__ = ["ANNOUNCER_EXTENSION", "ANNOUNCER_EXTENSION_CONTEXT", "CANCEL_CHOICE", "DECLINE_CHOICE"]
