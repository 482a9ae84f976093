"""An agent's terminal login (ACP terminal auth) as a child that never outlives announcer.

Both interfaces hand the terminal to the login and wait for it on the event loop, so a
closed terminal (SIGHUP), SIGTERM and SIGINT are still heard while it runs. When the wait
is given up (announcer is stopping), the login is ended too.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys

#: how long a login has to end on SIGTERM before it is killed
LOGIN_END_SECONDS = 3.0


async def run_login(argv: list[str], env: dict[str, str], cwd: str) -> int:
    """Run the login with this terminal and return its exit status. Cancelled (announcer
    stops), the login is sent SIGTERM at once, and SIGKILL if it does not end."""
    process = await asyncio.create_subprocess_exec(*argv, env=env, cwd=cwd)
    try:
        return await process.wait()
    finally:
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.terminate()  # at once: the loop may close before the wait ends
            await _reap(process)


async def _reap(process: asyncio.subprocess.Process) -> None:
    """Wait a little for the login to end on SIGTERM, then kill it and wait for that."""
    try:
        await asyncio.wait_for(asyncio.shield(process.wait()), LOGIN_END_SECONDS)
        return
    except TimeoutError:
        pass
    except asyncio.CancelledError:  # stopped again: no more waiting
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        raise
    with contextlib.suppress(ProcessLookupError):
        process.kill()
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.shield(process.wait()), LOGIN_END_SECONDS)


def terminal_gone(fd: int | None = None) -> bool:
    """Whether the terminal has closed (hung up: its attributes can no longer be read).
    Standard input that is no terminal at all counts as gone too."""
    import termios  # POSIX only, like the suspend that asks

    if fd is None:
        stdin = sys.__stdin__
        if stdin is None:
            return True
        try:
            fd = stdin.fileno()
        except (OSError, ValueError):
            return True
    try:
        if not os.isatty(fd):
            return True
        termios.tcgetattr(fd)
    except (OSError, termios.error):
        return True
    return False
