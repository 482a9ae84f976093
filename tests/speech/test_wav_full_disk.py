"""Issue 29, item 14: ``--speech wav:DIR`` on a full disk was silent.

``announcer listen`` as a user runs it, with the speech record in DIR pointing at
``/dev/full`` (every write fails with "No space left on device", as on a full disk). The
user is told once why nothing is saved, every line is still shown, and the run ends as
it should; it used to carry on without a word.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BANKING = ROOT / "announcer/data/banking_session.jsonl"


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_full_disk_under_wav_is_said_once_and_every_line_still_shown(tmp_path: Path) -> None:
    audio = tmp_path / "audio"
    audio.mkdir()
    (audio / "speech.jsonl").symlink_to("/dev/full")
    done = subprocess.run(
        [sys.executable, "-m", "announcer", "listen", "--ui", "plain",
         "--speech", f"wav:{audio}", "--exit-when-done", str(BANKING)],
        cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)),
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    told = done.stdout + done.stderr
    assert told.count("Speech audio is not being saved") == 1, told
    assert "No space left on device" in told
    assert "You approved the transfer; sending it now." in done.stdout  # every line shown
