"""How many examples hypothesis tries: the ``full`` profile (today's counts, for ``./test``
with no arguments and so for CI) or the ``dev`` profile (a tenth, at least ten: the default
for a developer's targeted run, ``./test -k ...`` or ``./test --fast``).

``ANNOUNCER_HYPOTHESIS_PROFILE`` picks one (``./test`` sets ``full`` for its whole run).
A test that sets its own count writes ``max_examples=examples(300)``: 300 in ``full``, 30 in
``dev``. Neither profile has a deadline or the too-slow health check: both are wall time,
and a loaded machine failed them (one CI-like run did, at 333 ms); properties are about
what happens, not how fast.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

PROFILES = ("full", "dev")
PROFILE = os.environ.get("ANNOUNCER_HYPOTHESIS_PROFILE") or "dev"
if PROFILE not in PROFILES:
    raise SystemExit(f"ANNOUNCER_HYPOTHESIS_PROFILE={PROFILE!r}: use one of {', '.join(PROFILES)}")
FULL_DEFAULT = 100  # hypothesis's own default, the count of every test that sets none
DEV_SHARE = 10


def examples(full: int) -> int:
    """The number of examples for a test that tries ``full`` of them in the full run."""
    return full if PROFILE == "full" else max(10, full // DEV_SHARE)


def load_profile() -> None:
    """Register both profiles and load the chosen one (tests/conftest.py, at import)."""
    untimed = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}
    settings.register_profile("full", max_examples=FULL_DEFAULT, **untimed)
    settings.register_profile("dev", max_examples=examples(FULL_DEFAULT), **untimed)
    settings.load_profile(PROFILE)
