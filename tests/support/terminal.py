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

    def close(self) -> None:
        subprocess.run([*self.command, "kill-server"], capture_output=True, timeout=30, check=False)
        folder = Path(os.environ.get("TMUX_TMPDIR") or "/tmp") / f"tmux-{os.getuid()}"
        with contextlib.suppress(OSError):
            (folder / self.server).unlink()


def tmux_installed() -> bool:
    return shutil.which("tmux") is not None
