"""Issue 30 item 7: the plain UI with ``--speech text`` prints each announcement once.

That is the setting the no-voice notice recommends for a braille display; each line used
to arrive twice (the plain UI's line on standard output and the text voice's on standard
error). The real ``announcer demo --ui plain --speech text`` runs on real pipes here.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCENARIO = Path(__file__).parent / "scenarios" / "demo_short.json"
TIMEOUT = 60.0


def test_the_plain_demo_with_speech_text_prints_each_announcement_once() -> None:
    process = subprocess.run(
        [
            sys.executable,
            "-m",
            "announcer",
            "demo",
            "--ui",
            "plain",
            "--scenario",
            str(SCENARIO),
            "--speech",
            "text",
        ],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert process.returncode == 0, process.stderr
    lines = [line for line in (process.stdout + process.stderr).splitlines() if line.strip()]
    # Each sentence of the session is on the terminal, once (with its earcon's label).
    for sentence in ("Session started.", "Found it.", "All done."):
        assert sum(line.endswith(sentence) for line in lines) == 1, lines
    assert len(lines) == len(set(lines)), lines
