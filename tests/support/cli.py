"""announcer's own CLI as a child process, started the one way every test starts it.

``python -m announcer`` from this checkout, in the test's environment: tests/conftest.py has
already given it a settings file and a state folder of its own, a neutral locale and no
other ``ANNOUNCER_`` variable, so a test adds only what it is about (``env``). Output is
read as UTF-8 whatever the locale. A test that wants a bare environment (no inherited
variable at all) passes ``inherit_env=False``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def announcer_env(env: dict[str, str] | None = None, *, inherit: bool = True) -> dict[str, str]:
    """The environment a started announcer sees: the test's own (or none), this checkout
    on the path, UTF-8 on its pipes, then ``env``."""
    base = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONIOENCODING": "utf-8"} if inherit else {}
    return {**base, **(env or {})}


def announcer_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "announcer", *args]


def run_announcer(
    *args: str,
    env: dict[str, str] | None = None,
    inherit_env: bool = True,
    timeout: float = 180,
    stdin: Any = subprocess.DEVNULL,
) -> subprocess.CompletedProcess[str]:
    """``announcer ARGS`` run to its end (a bound, not a wait: it turns a hang into a
    failure); its exit status, standard output and standard error."""
    return subprocess.run(
        announcer_command(*args),
        cwd=ROOT,
        env=announcer_env(env, inherit=inherit_env),
        stdin=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=timeout,
        check=False,
    )


def start_announcer(
    *args: str, env: dict[str, str] | None = None, stdin: Any = subprocess.PIPE
) -> subprocess.Popen[str]:
    """``announcer ARGS`` started and left running, its output on pipes (stop it yourself)."""
    return subprocess.Popen(
        announcer_command(*args),
        cwd=ROOT,
        env=announcer_env(env),
        text=True,
        encoding="utf-8",
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
