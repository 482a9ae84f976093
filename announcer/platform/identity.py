"""Who the user is, for the ownership rules on sockets, folders and secret files.

POSIX compares numeric user ids. Windows has no uid: there the per-user folder
(platformdirs' user runtime/state dir, under the user's profile, which only the user and
administrators can read) is what makes a file the user's own.
"""

from __future__ import annotations

import os
import sys


def current_uid() -> int | None:
    """The user's numeric id, or None where there is none (Windows)."""
    if sys.platform == "win32":
        return None
    return os.getuid()


def owned_by_me(st_uid: int) -> bool:
    """A file's owner is this user (always true where files carry no POSIX owner)."""
    uid = current_uid()
    return uid is None or st_uid == uid


def user_tag() -> str:
    """A short name for this user, for per-user paths in a shared temporary folder."""
    uid = current_uid()
    if uid is not None:
        return str(uid)
    return os.environ.get("USERNAME", "user")
