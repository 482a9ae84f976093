"""Process groups: start a child in a group of its own, and end the whole group.

POSIX: a new session (``start_new_session``), then SIGTERM/SIGKILL to the group.
Windows: ``CREATE_NEW_PROCESS_GROUP``, CTRL_BREAK_EVENT to ask, ``taskkill /T /F`` to end
the process tree (a job object would need pywin32; the tree kill needs nothing).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from typing import Any


def own_group() -> dict[str, Any]:
    """``subprocess``/``asyncio`` keyword arguments that start a child in a group of its own."""
    if sys.platform == "win32":
        return {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}
    return {"start_new_session": True}


def ask_group_to_end(pid: int) -> None:
    """Politely: SIGTERM to the group (POSIX), CTRL_BREAK_EVENT (Windows)."""
    with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
        if sys.platform == "win32":
            os.kill(pid, signal.CTRL_BREAK_EVENT)
        else:
            os.killpg(pid, signal.SIGTERM)


def end_group_now(pid: int) -> None:
    """At once: SIGKILL to the group (POSIX), the whole process tree (Windows)."""
    if sys.platform == "win32":
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            subprocess.run(
                ["taskkill", "/PID", str(pid), "/T", "/F"],
                capture_output=True,
                timeout=10,
                check=False,
            )
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def leave_group() -> None:
    """Start a session of our own (a detached hook); Windows processes have none to leave."""
    if sys.platform != "win32":
        os.setsid()
