"""``NO_COLOR=1`` gives readable monochrome in the Textual UI (issue 20 item 8).

The real app in a real terminal (tmux, 256 colours): the demo runs until its first
dialog is on screen, and every cell of the pane, with its colours as the terminal has
them (``capture-pane -e``), is checked: text is there, and no cell's foreground is its
background (Textual's grey-scale filter drew every cell as ESC[38;5;16;48;5;16m).
"""

from __future__ import annotations

import re
import shlex
import shutil
import sys
import time
from pathlib import Path

import pytest

from tests.support.terminal import Terminal

ROOT = Path(__file__).resolve().parents[2]
SGR = re.compile(r"\x1b\[([0-9;:]*)m")
WAIT_S = 60.0

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is a Debian package")


def cells(captured: str) -> list[tuple[str, str | None, str | None]]:
    """Each printed character with the foreground and background it was drawn in."""
    found: list[tuple[str, str | None, str | None]] = []
    fg: str | None = None
    bg: str | None = None
    for line in captured.splitlines():
        position = 0
        for match in SGR.finditer(line):
            found.extend((ch, fg, bg) for ch in line[position : match.start()])
            codes = match.group(1).replace(":", ";").split(";") if match.group(1) else ["0"]
            index = 0
            while index < len(codes):
                code = codes[index] or "0"
                if code == "0":
                    fg = bg = None
                elif code in ("38", "48") and index + 1 < len(codes):
                    width = 3 if codes[index + 1] == "5" else 5
                    value = ";".join(codes[index + 1 : index + width])
                    if code == "38":
                        fg = value
                    else:
                        bg = value
                    index += width - 1
                elif code == "39":
                    fg = None
                elif code == "49":
                    bg = None
                elif code.isdigit() and (30 <= int(code) <= 37 or 90 <= int(code) <= 97):
                    fg = f"ansi{int(code) % 10 + (8 if int(code) >= 90 else 0)}"
                elif code.isdigit() and (40 <= int(code) <= 47 or 100 <= int(code) <= 107):
                    bg = f"ansi{int(code) % 10 + (8 if int(code) >= 100 else 0)}"
                index += 1
            position = match.end()
        found.extend((ch, fg, bg) for ch in line[position:])
    return found


def test_no_color_draws_every_cell_readable(tmp_path: Path, terminal: Terminal) -> None:
    command = shlex.join(
        [
            "env",
            "NO_COLOR=1",
            "TERM=xterm-256color",
            f"PYTHONPATH={ROOT}",
            f"ANNOUNCER_CONFIG={tmp_path / 'none.toml'}",
            sys.executable,
            "-m",
            "announcer",
            "demo",
            "--ui",
            "tui",
            "--speech",
            "none",
        ]
    )
    terminal.tmux("new-session", "-d", "-x", "100", "-y", "30", command)
    deadline = time.monotonic() + WAIT_S
    screen = ""
    while time.monotonic() < deadline:
        screen = terminal.tmux("capture-pane", "-p", "-e")
        if "Accept (A)" in screen:
            break
        time.sleep(0.2)
    assert "Accept (A)" in screen, screen
    drawn = cells(screen)
    text = [cell for cell in drawn if not cell[0].isspace()]
    assert len(text) > 200  # the dialog and the footer are there to read
    same = {(fg, bg) for _, fg, bg in text if fg is not None and fg == bg}
    assert not same, f"text drawn in its own background colour: {same}"
    # no colour at all: the user's own terminal colours
    assert all(fg is None and bg is None for _, fg, bg in drawn)
