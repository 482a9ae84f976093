"""Process groups: start a child in a group of its own, and end the whole group.

POSIX: a new session (``start_new_session``), then SIGTERM/SIGKILL to the group.
Windows: ``CREATE_NEW_PROCESS_GROUP``, CTRL_BREAK_EVENT to ask, ``taskkill /T /F`` to end
the process tree, and :func:`contain` puts the child in a job object that Windows ends
when announcer's handle to it closes, so the child ends however announcer ends.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import sys
from typing import Any

log = logging.getLogger(__name__)


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


_job: Any = None  # Windows: the one job object our children go into (kept open while we run)


def contain(pid: int) -> None:
    """Windows: put ``pid`` in a job object with KILL_ON_JOB_CLOSE, so Windows ends it when
    announcer ends, even by a crash. POSIX: nothing to do (the group is ended by us)."""
    if sys.platform != "win32":
        return
    global _job
    import ctypes
    from ctypes import wintypes

    class IoCounters(ctypes.Structure):
        _fields_ = [
            (name, ctypes.c_ulonglong)
            for name in ("Read", "Write", "Other", "ReadBytes", "WriteBytes", "OtherBytes")
        ]

    class BasicLimits(ctypes.Structure):
        _fields_ = [
            ("PerProcessUserTimeLimit", ctypes.c_int64),
            ("PerJobUserTimeLimit", ctypes.c_int64),
            ("LimitFlags", wintypes.DWORD),
            ("MinimumWorkingSetSize", ctypes.c_size_t),
            ("MaximumWorkingSetSize", ctypes.c_size_t),
            ("ActiveProcessLimit", wintypes.DWORD),
            ("Affinity", ctypes.c_size_t),
            ("PriorityClass", wintypes.DWORD),
            ("SchedulingClass", wintypes.DWORD),
        ]

    class ExtendedLimits(ctypes.Structure):
        _fields_ = [
            ("BasicLimitInformation", BasicLimits),
            ("IoInfo", IoCounters),
            ("ProcessMemoryLimit", ctypes.c_size_t),
            ("JobMemoryLimit", ctypes.c_size_t),
            ("PeakProcessMemoryUsed", ctypes.c_size_t),
            ("PeakJobMemoryUsed", ctypes.c_size_t),
        ]

    kill_on_job_close = 0x2000
    extended_limit_information = 9
    set_quota_and_terminate = 0x0100 | 0x0001
    try:
        kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
        if _job is None:
            job = kernel32.CreateJobObjectW(None, None)
            if not job:
                raise ctypes.WinError(ctypes.get_last_error())
            limits = ExtendedLimits()
            limits.BasicLimitInformation.LimitFlags = kill_on_job_close
            if not kernel32.SetInformationJobObject(
                job, extended_limit_information, ctypes.byref(limits), ctypes.sizeof(limits)
            ):
                raise ctypes.WinError(ctypes.get_last_error())
            _job = job
        child = kernel32.OpenProcess(set_quota_and_terminate, False, pid)
        if not child:
            raise ctypes.WinError(ctypes.get_last_error())
        try:
            if not kernel32.AssignProcessToJobObject(_job, child):
                raise ctypes.WinError(ctypes.get_last_error())
        finally:
            kernel32.CloseHandle(child)
    except OSError as exc:  # the group is still ended by end_group_now on the way out
        log.warning("could not tie process %d to announcer's lifetime: %s", pid, exc)
