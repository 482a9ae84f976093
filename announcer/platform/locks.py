"""An exclusive, non-blocking lock on an open file: held while one announcer serves.

POSIX: ``flock``. Windows: ``msvcrt.locking`` on the file's first byte.
"""

from __future__ import annotations

import os
import sys


def open_lock_file(path: str) -> int:
    """Open (create, 0600) a lock file without following a link planted there."""
    flags = os.O_RDWR | os.O_CREAT
    if sys.platform != "win32":
        flags |= os.O_NOFOLLOW | os.O_CLOEXEC
    return os.open(path, flags, 0o600)


def try_lock(fd: int) -> bool:
    """Take the lock, or return False at once when another process holds it."""
    try:
        if sys.platform == "win32":
            import msvcrt

            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        else:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True
