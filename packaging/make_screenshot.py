"""Take the AppStream screenshot from the real app: the Textual UI in tmux, as a PNG.

Run from the checkout: ``.venv/bin/python packaging/make_screenshot.py``. It starts
``announcer demo --ui tui --speech none`` in a private tmux server (100x30), waits for
the demo agent's first confirmation, captures the pane with its colours, renders it with
rich to SVG and converts that with ``rsvg-convert`` (Debian: librsvg2-bin) into
``packaging/screenshots/announcer-confirmation.png``.
"""

from __future__ import annotations

import io
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.text import Text

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "packaging" / "screenshots" / "announcer-confirmation.png"
WIDTH, HEIGHT = 100, 30
WAIT_FOR = "Accept (A)"


def tmux(*args: str) -> str:
    return subprocess.run(
        ["tmux", "-L", "announcer-shot", *args], capture_output=True, text=True, check=True
    ).stdout


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="announcer-shot-") as scratch:
        command = (
            f"env PYTHONPATH={ROOT} ANNOUNCER_CONFIG={scratch}/config.toml "
            f"XDG_STATE_HOME={scratch} TERM=xterm-256color "
            f"{sys.executable} -m announcer demo --ui tui --speech none"
        )
        tmux("new-session", "-d", "-s", "shot", "-x", str(WIDTH), "-y", str(HEIGHT), command)
        try:
            deadline = time.monotonic() + 120
            screen = ""
            while WAIT_FOR not in screen and time.monotonic() < deadline:
                time.sleep(0.5)
                screen = tmux("capture-pane", "-p", "-t", "shot")
            if WAIT_FOR not in screen:
                print("the confirmation never appeared", file=sys.stderr)
                return 1
            ansi = tmux("capture-pane", "-p", "-e", "-t", "shot")
        finally:
            subprocess.run(["tmux", "-L", "announcer-shot", "kill-server"], check=False)
        console = Console(record=True, width=WIDTH, color_system="truecolor", file=io.StringIO())
        console.print(Text.from_ansi(ansi.rstrip("\n")), end="")
        svg = Path(scratch) / "screen.svg"
        svg.write_text(console.export_svg(title="announcer"), encoding="utf-8")
        OUT.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["rsvg-convert", "--width", "1248", "-o", str(OUT), str(svg)], check=True)
    print(OUT)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
