"""Every process an agent started ends with it: its tree, its group, its session.

An agent announcer starts (ACP, ``stdio:``, ``watch``) runs commands of its own, and
those may leave the agent's process group (Node's ``detached``, a shell's job control,
``setsid``). Killing the group alone then leaves a command running that the user was
told had stopped (issue 21 item 8). So the family of an agent is found from ``/proc``:

- its descendants, by parent id, found while they are still linked to it;
- the members of its process groups and, when it has a session of its own, of its
  session (orphans keep the session and group they were born in);

and each is signalled by its own id. With :func:`become_subreaper`, a command whose
agent died is re-parented to announcer instead of init, so it is still found, and
reaped, here. Without ``/proc`` (macOS, Windows) only the process group is signalled.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import ctypes.util
import logging
import os
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from announcer.platform.process import ask_group_to_end, end_group_now

log = logging.getLogger("announcer.transports")

PROC = Path("/proc")
PR_SET_CHILD_SUBREAPER = 36
# How long a family has to end after SIGTERM before SIGKILL.
TERM_GRACE_SECONDS = 2.0
# How long SIGKILL may take to show (a process in uninterruptible sleep) before giving up.
KILL_WAIT_SECONDS = 5.0
POLL_SECONDS = 0.02


@dataclass(frozen=True, slots=True)
class ProcessInfo:
    pid: int
    ppid: int
    pgid: int
    sid: int
    state: str
    # clock ticks after boot: with the id, names one process even when ids are reused
    started: int = 0

    @property
    def alive(self) -> bool:
        return self.state not in ("Z", "X")  # a zombie has ended; it waits to be reaped


def read_process(pid: int) -> ProcessInfo | None:
    """``/proc/PID/stat``: parent, group, session and state; None if it is gone."""
    try:  # os.open, not pathlib: a listing reads this for every process on the machine
        handle = os.open(f"{PROC}/{pid}/stat", os.O_RDONLY)
        try:
            text = os.read(handle, 4096).decode("utf-8", "replace")
        finally:
            os.close(handle)
    except OSError:
        return None
    # "pid (comm) state ppid pgrp session ...": comm may hold spaces and parentheses
    fields = text[text.rfind(")") + 2 :].split()
    try:
        return ProcessInfo(
            pid, int(fields[1]), int(fields[2]), int(fields[3]), fields[0], int(fields[19])
        )
    except (IndexError, ValueError):
        return None


def all_processes() -> list[ProcessInfo]:
    found = []
    try:
        entries = os.listdir(PROC)
    except OSError:
        return []
    for entry in entries:
        if entry.isdigit():
            info = read_process(int(entry))
            if info is not None:
                found.append(info)
    return found


def command_line(pid: int) -> str:
    """The process's command line, words joined by spaces ("" when gone or unreadable)."""
    try:
        raw = (PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        return ""
    return " ".join(part.decode("utf-8", "replace") for part in raw.split(b"\0") if part)


def family(root: int, *, own_session: bool = True, tree: bool = True) -> list[ProcessInfo]:
    """``root``'s living descendants, and the members of their process groups.

    ``own_session``: the root was started in a session of its own (``setsid``), so every
    process of that session is its family too, orphans included. False for a child that
    shares announcer's terminal session (``watch``), whose session holds the user's shell.
    ``tree``: False once the root has been reaped, when its id may name a stranger; a
    session or group id is never reused while a member lives, so those stay safe.
    """
    if sys.platform == "win32":
        return []  # no /proc: Windows ends the tree itself (announcer.platform.process)
    processes = all_processes()
    by_parent: dict[int, list[ProcessInfo]] = {}
    for info in processes:
        by_parent.setdefault(info.ppid, []).append(info)
    members: dict[int, ProcessInfo] = {}
    root_info = next((info for info in processes if info.pid == root), None)
    stack = [root_info] if root_info is not None and tree else []
    while stack:
        info = stack.pop()
        if info.pid in members:
            continue
        members[info.pid] = info
        stack.extend(by_parent.get(info.pid, []))
    mine = os.getpid()
    own_group = os.getpgid(0)
    groups = {info.pgid for info in members.values()} - {own_group}
    if own_session:
        groups.add(root)
    for info in processes:
        if info.pid == mine or info.pid in members:
            continue
        if info.pgid in groups or (own_session and info.sid == root):
            members[info.pid] = info
    return [info for info in members.values() if info.alive and info.pid != mine]


def snapshot(root: int) -> dict[int, int]:
    """``root``'s living family now, the root excluded: id -> start time.

    Taken while the root lives, so a command that left its session (``setsid``) is
    still known as the root's when the root dies and the link is gone.
    """
    if not PROC.is_dir():
        return {}
    return {info.pid: info.started for info in family(root) if info.pid != root}


def same_processes(seen: dict[int, int]) -> list[int]:
    """Those of ``seen`` that still run as the same process (not a reused id)."""
    alive = []
    for pid, started in seen.items():
        info = read_process(pid)
        if info is not None and info.alive and info.started == started:
            alive.append(pid)
    return alive


def innermost(pids: list[int]) -> int | None:
    """The first of ``pids`` that started none of the others: the command itself, not
    the shell wrapped around it (``bash -c 'sleep 300'`` is heard as ``sleep 300``)."""
    parents = {info.ppid for pid in pids if (info := read_process(pid)) is not None}
    return next((pid for pid in pids if pid not in parents), pids[0] if pids else None)


def reap(pid: int) -> None:
    """Collect an adopted orphan's exit status once it has ended (no zombie is kept)."""
    if sys.platform == "win32":
        return
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)


def still_running(
    root: int, *, own_session: bool = True, tree: bool = True
) -> list[tuple[int, str]]:
    """What is left of ``root``'s family, with each command line, the root excluded."""
    return [
        (info.pid, command_line(info.pid))
        for info in family(root, own_session=own_session, tree=tree)
        if info.pid != root
    ]


def _signal_all(pids: list[int], sig: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def _reap(pids: list[int], root: int) -> None:
    """Collect the exit status of those that are announcer's own children (adopted
    orphans included), so no zombie stays behind while announcer runs on. Never the
    root: its owner (asyncio, ``Popen``) waits for it and must get its status."""
    if sys.platform == "win32":
        return
    for pid in pids:
        if pid == root:
            continue
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(pid, os.WNOHANG)


def _living(pids: list[int]) -> list[int]:
    living = []
    for pid in pids:
        info = read_process(pid)
        if info is not None and info.alive:
            living.append(pid)
    return living


def _targets(root: int, own_session: bool, tree: bool) -> list[int]:
    if not PROC.is_dir():
        return [root] if tree else []
    return [info.pid for info in family(root, own_session=own_session, tree=tree)]


def _group_signal(root: int, sig: int, own_session: bool) -> None:
    """Where ``/proc`` is missing, the group is all that can be found."""
    if sys.platform == "win32":
        return
    if own_session:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(root, sig)


def kill_family_now(root: int, *, own_session: bool = True, tree: bool = True) -> int:
    """SIGKILL to ``root`` and its whole family at once (announcer is exiting); how many."""
    if sys.platform == "win32":
        if tree:
            end_group_now(root)  # the whole process tree (and the job object at exit)
        return 1 if tree else 0
    targets = _targets(root, own_session, tree)
    _group_signal(root, signal.SIGKILL, own_session)
    _signal_all(targets, signal.SIGKILL)
    _reap(targets, root)
    return len(targets)


async def end_family(
    root: int,
    *,
    own_session: bool = True,
    tree: bool = True,
    grace: float = TERM_GRACE_SECONDS,
    skip_term: bool = False,
) -> list[int]:
    """SIGTERM to ``root``'s family, SIGKILL to whoever is left after ``grace``.

    Returns the ids that were still alive when asked to end, the root included.
    Never raises for a process that is already gone.
    """
    if sys.platform == "win32":
        if tree:
            if own_session and not skip_term:  # CTRL_BREAK only to a group of its own
                ask_group_to_end(root)
                await asyncio.sleep(min(grace, POLL_SECONDS * 10))
            end_group_now(root)  # then the whole process tree
        return [root] if tree else []
    if not PROC.is_dir():
        return await _end_group(root, own_session=own_session, tree=tree, grace=grace)
    targets = _targets(root, own_session, tree)
    if not targets:
        return []
    if not skip_term:
        _group_signal(root, signal.SIGTERM, own_session)
        _signal_all(targets, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            _reap(targets, root)
            if not _living(targets):
                return targets
            await asyncio.sleep(POLL_SECONDS)
    # whoever is still here, and whatever they started meanwhile
    left = sorted(set(_living(targets)) | set(_targets(root, own_session, tree)))
    _group_signal(root, signal.SIGKILL, own_session)
    _signal_all(left, signal.SIGKILL)
    deadline = time.monotonic() + KILL_WAIT_SECONDS
    while time.monotonic() < deadline:
        _reap(left, root)
        if not _living(left):
            break
        await asyncio.sleep(POLL_SECONDS)
    return targets


async def _end_group(root: int, *, own_session: bool, tree: bool, grace: float) -> list[int]:
    """Without ``/proc`` (macOS): SIGTERM, then SIGKILL, to the root's group when it has
    one of its own, else to the root alone (still announcer's, unreaped, when ``tree``)."""
    if sys.platform == "win32":
        return []

    def send(sig: int) -> bool:
        try:
            if own_session:
                os.killpg(root, sig)
            elif tree:
                os.kill(root, sig)
            else:
                return False
        except (ProcessLookupError, PermissionError):
            return False
        return True

    if not send(signal.SIGTERM):
        return []
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and send(0):
        await asyncio.sleep(POLL_SECONDS)
    send(signal.SIGKILL)
    return [root]


# Every agent process started in this run: (id, started in a session of its own).
_started: dict[int, bool] = {}


def track(pid: int, *, own_session: bool = True) -> None:
    """Remember an agent announcer started, so :func:`end_all_started` ends it at exit."""
    _started[pid] = own_session


def end_all_started() -> int:
    """SIGKILL every family still alive of the agents started in this run; how many
    processes. The last word on the way out, however the run ended (``announcer``'s
    ``main`` and ``atexit``): a goodbye cut short must not leave anything running."""
    ended = 0
    mine = os.getpid()
    for pid, own_session in list(_started.items()):
        info = read_process(pid)
        # still our unreaped child: its id is its own, so its tree may be walked
        ours = info is not None and info.ppid == mine
        ended += kill_family_now(pid, own_session=own_session, tree=ours)
    return ended


def can_watch_exits() -> bool:
    """Whether :func:`exited` can see a child's exit here (a pidfd or ``/proc``)."""
    return hasattr(os, "pidfd_open") or PROC.is_dir()


async def exited(pid: int, poll_seconds: float = 0.25) -> int | None:
    """Wait until child ``pid`` has exited, without reaping it; its status if known.

    ``asyncio``'s ``Process.wait()`` also waits for the child's pipes to close, and a
    command the agent started may hold them open long after the agent died: its death
    would go unnoticed (and unsaid) for as long as the command runs. A pidfd (Linux)
    becomes readable at the exit itself; elsewhere the process table is polled.
    """
    loop = asyncio.get_running_loop()
    pidfd_open = getattr(os, "pidfd_open", None)
    fd: int | None = None
    if pidfd_open is not None:
        with contextlib.suppress(OSError):
            fd = pidfd_open(pid)
    try:
        if fd is not None:
            ready: asyncio.Future[None] = loop.create_future()

            def readable() -> None:
                if not ready.done():
                    ready.set_result(None)

            loop.add_reader(fd, readable)
            try:
                await ready
            finally:
                loop.remove_reader(fd)
        else:
            while True:
                info = read_process(pid)
                if info is None or not info.alive:
                    break
                await asyncio.sleep(poll_seconds)
    finally:
        if fd is not None:
            os.close(fd)
    if not sys.platform.startswith("linux"):
        return None  # its owner reaps it and has the status
    try:
        status = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except (ChildProcessError, OSError, AttributeError):
        return None  # already reaped by its owner, which has the status
    if status is None:
        return None
    return status.si_status if status.si_code == os.CLD_EXITED else -status.si_status


_subreaper = False


def become_subreaper() -> bool:
    """Linux: orphans of the agents announcer starts are re-parented to announcer.

    So a command whose agent died is still announcer's to find and end. Harmless
    elsewhere (returns False). Called once by the ``agent`` and ``listen`` commands
    before the first agent starts: it is a property of the whole process, so a
    library user (or a test run) is not made the parent of every orphan below it.
    """
    global _subreaper
    if _subreaper:
        return True
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
            return False
    except (OSError, AttributeError) as exc:
        log.info("cannot adopt orphaned agent commands: %s", exc)
        return False
    _subreaper = True
    return True


__all__ = [
    "ProcessInfo",
    "become_subreaper",
    "can_watch_exits",
    "command_line",
    "end_all_started",
    "end_family",
    "exited",
    "family",
    "innermost",
    "kill_family_now",
    "read_process",
    "reap",
    "same_processes",
    "snapshot",
    "still_running",
    "track",
]
