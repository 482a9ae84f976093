"""Issue 30 item 8: ``announcer demo --recorded --speech none | head`` ends quietly.

The reader of standard output closes the pipe after a few lines. Before, each later
announcement failed as "speech failed ([Errno 32] Broken pipe)" on standard error, and
the replay went on to its end. Now nobody is left to read, so the command ends: exit 0,
nothing on standard error. A real pipe, closed by the reader as ``head`` does.
"""

from __future__ import annotations

import subprocess
import sys


def test_a_closed_standard_output_ends_the_replay_quietly() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "announcer", "demo", "--recorded", "--speech", "none"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None and process.stderr is not None
    try:
        first = process.stdout.readline()
        assert first.strip(), "the replay printed nothing"
        process.stdout.close()  # as `head -1` does once it has its line
        errors = process.stderr.read()  # until the process has closed it: it ended
        code = process.wait(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=30)
    assert "Broken pipe" not in errors, errors
    assert "speech failed" not in errors, errors
    assert "Traceback" not in errors, errors
    assert errors == "", errors
    assert code == 0
