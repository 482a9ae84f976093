"""Desktop integration for Linux: the desktop entry and AppStream metainfo validate, the
entry starts the Textual UI in a terminal, and the screenshot is the one shipped."""

from __future__ import annotations

import configparser
import shlex
import shutil
import struct
import subprocess
import xml.etree.ElementTree as ET

import pytest

from announcer.cli.main import build_parser
from tests.packaging.conftest import ROOT

PACKAGING = ROOT / "packaging"
DESKTOP = PACKAGING / "io.github.announcer.desktop"
METAINFO = PACKAGING / "io.github.announcer.metainfo.xml"


def tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is missing; ./test installs it (scripts/bootstrap.sh)")
    return path


def test_the_desktop_entry_validates_and_starts_the_textual_ui_in_a_terminal() -> None:
    done = subprocess.run(
        [tool("desktop-file-validate"), str(DESKTOP)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0 and not done.stdout.strip(), done.stdout + done.stderr
    entry = configparser.ConfigParser(interpolation=None)
    entry.optionxform = str  # type: ignore[assignment,method-assign]
    entry.read(DESKTOP, encoding="utf-8")
    section = entry["Desktop Entry"]
    assert section["Terminal"] == "true"
    argv = shlex.split(section["Exec"])
    assert argv[0] == "announcer"
    args = build_parser(argv[1:]).parse_args(argv[1:])
    assert args.command == "demo" and args.ui == "tui"


def test_the_metainfo_validates_and_describes_accessibility() -> None:
    done = subprocess.run(
        [tool("appstreamcli"), "validate", "--no-net", str(METAINFO)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "W:" not in done.stdout and "E:" not in done.stdout, done.stdout
    root = ET.parse(METAINFO).getroot()
    assert root.findtext("launchable") == DESKTOP.name
    assert root.find("content_rating") is not None
    description = ET.tostring(root.find("description"), encoding="unicode")
    for word in ("screen reader", "braille", "keyboard", "NVDA", "VoiceOver"):
        assert word in description


def test_the_screenshot_is_shipped_at_the_size_the_metainfo_says() -> None:
    image = ET.parse(METAINFO).getroot().find("screenshots/screenshot/image")
    assert image is not None and image.text is not None
    shipped = PACKAGING / "screenshots" / image.text.rsplit("/", 1)[1]
    header = shipped.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", header[16:24])
    assert (str(width), str(height)) == (image.get("width"), image.get("height"))
