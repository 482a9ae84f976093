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

__all__ = ["ANNOUNCER_EXTENSION", "ANNOUNCER_EXTENSION_CONTEXT"]
