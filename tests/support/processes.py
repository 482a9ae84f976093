"""Whether a process a test started (or its agent started) still runs, from ``/proc``."""

from __future__ import annotations

from pathlib import Path


def alive(pid: int) -> bool:
    """Whether ``pid`` runs. A zombie has ended: it only waits for its parent to reap it,
    which on a loaded machine may come later than the test looks."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] not in "ZX"
