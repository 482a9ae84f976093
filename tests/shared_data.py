"""Where the shared AAEP fixtures, schemas, seeds and peer samples are.

CI clones the project with ``shared/`` beside the checkout; ANNOUNCER_SHARED
points elsewhere when needed.
"""

from __future__ import annotations

import os
from pathlib import Path

_BESIDE_CHECKOUT = Path(__file__).resolve().parents[2] / "shared"


def _find_shared() -> Path:
    if "ANNOUNCER_SHARED" in os.environ:
        return Path(os.environ["ANNOUNCER_SHARED"])
    if _BESIDE_CHECKOUT.is_dir():
        return _BESIDE_CHECKOUT
    return Path("/work/shared")


SHARED = _find_shared()
