"""Turn the user's settings into a §5.3 capability declaration.

The capabilities are what the producer may send this user; they must describe
the user honestly (a pace the user can follow, the languages they speak). Where a
producer granted less (§5.4.4) is said by the core
(``announcer.engine.subscription.honoured_differences``).
"""

from __future__ import annotations

import math
from typing import Any

from announcer import __version__
from announcer.engine.settings import UserSettings

AAEP_VERSION = "1.0.0"
SUBSCRIBER_ID = "announcer"


def capabilities_from_settings(settings: UserSettings, *, can_reply: bool = True) -> dict[str, Any]:
    capabilities: dict[str, Any] = {
        "preferred_verbosity": settings.verbosity,
        "languages": list(settings.languages) or ["en"],
        "supports_confirmation_reply": can_reply,
        "supports_clarification_reply": can_reply,
        # A speech user wants whole sentences, and the end of each answer (§5.6.3).
        "coalesce_boundaries": ["sentence", "completion"],
        "event_filters": {
            "include": [_qualify(p) for p in settings.filters.include],
            "exclude": [_qualify(p) for p in settings.filters.exclude],
        },
        "supported_conformance_levels": [1, 2, 3] if can_reply else [1],
        "cognitive_load": settings.cognitive_load,
        "pace_wpm": max(50, min(1000, settings.rate_wpm or settings.pace_wpm)),
    }
    if settings.max_events_per_second is not None:
        capabilities["max_events_per_second"] = max(1, math.floor(settings.max_events_per_second))
    return capabilities


def subscription_request(settings: UserSettings, *, can_reply: bool = True) -> dict[str, Any]:
    return {
        "type": "subscription.request",
        "aaep_version": AAEP_VERSION,
        "subscriber_id": SUBSCRIBER_ID,
        "subscriber_name": f"announcer {__version__}",
        "subscriber_version": __version__,
        "capabilities": capabilities_from_settings(settings, can_reply=can_reply),
    }


def _qualify(pattern: str) -> str:
    """Our settings say ``agent.tool.*``; the wire says ``aaep:agent.tool.*`` (§5.3.1.7)."""
    if pattern == "*":
        return "aaep:agent.*"
    if ":" in pattern:
        return pattern
    return f"aaep:{pattern}"
