"""A real terminal for a test: a tmux server of its own.

Each test gets its own server (``tmux -L NAME``), so tests on parallel workers never see
each other's sessions, and a server started by one test never hands its environment
(``ANNOUNCER_CONFIG``, ``TERM``) to the next. Closing the server ends every process in it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import uuid
from pathlib import Path


class Terminal:
    def __init__(self) -> None:
        self.server = f"announcer-tests-{uuid.uuid4().hex[:12]}"
        # Every tmux command for this terminal starts with these words.
        self.command = ["tmux", "-L", self.server]

    def tmux(self, *args: str) -> str:
        """A tmux command's output, on this terminal's server."""
        return subprocess.run(
            [*self.command, *args], check=True, capture_output=True, text=True, timeout=30
        ).stdout

    def start(self, command: str, *, name: str, width: int = 100, height: int = 30) -> str:
        """Run ``command`` (a shell line) in a new detached session, in a window of
        ``width`` x ``height`` as an xterm would have it: the session's name."""
        session = f"{name}-{uuid.uuid4().hex[:8]}"
        size = ["-x", str(width), "-y", str(height)]
        subprocess.run(
            [*self.command, "new-session", "-d", "-s", session, *size, command],
            check=True,
            env={**os.environ, "TERM": "xterm-256color"},
            timeout=30,
        )
        return session

    def screen(self, session: str, *, gone: str | None = None) -> str:
        """What the session's window shows now; ``gone`` (if given) once it has closed."""
        try:
            return self.tmux("capture-pane", "-p", "-t", session)
        except subprocess.CalledProcessError:
            if gone is None:
                raise
            return gone

    def type(self, session: str, *keys: str, literally: bool = False) -> None:
        """Keys as the terminal sends them (tmux key names, ``literally``: text)."""
        self.tmux("send-keys", "-t", session, *(["-l"] if literally else []), *keys)

    def pane_pid(self, session: str) -> int:
        """The process the session's window runs (its shell, or the command exec'd)."""
        return int(self.tmux("display-message", "-p", "-t", session, "#{pane_pid}"))

    def end(self, session: str) -> None:
        """Close the session's window (its processes get a hang-up)."""
        subprocess.run([*self.command, "kill-session", "-t", session], timeout=30, check=False)

    def close(self) -> None:
        subprocess.run([*self.command, "kill-server"], capture_output=True, timeout=30, check=False)
        folder = Path(os.environ.get("TMUX_TMPDIR") or "/tmp") / f"tmux-{os.getuid()}"
        with contextlib.suppress(OSError):
            (folder / self.server).unlink()


def tmux_installed() -> bool:
    return shutil.which("tmux") is not None
