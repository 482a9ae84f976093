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


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` now, from ``/proc``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if int(stat[stat.rfind(")") + 2 :].split()[1]) == pid:
            found.append(int(entry.name))
    return found


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` now (children, their children, ...)."""
    found: list[int] = []
    below = children(pid)
    while below:
        found.extend(below)
        below = [grandchild for child in below for grandchild in children(child)]
    return found


def command_line(pid: int) -> str:
    """A process's arguments joined by spaces; empty once it has ended."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
    except OSError:
        return ""
