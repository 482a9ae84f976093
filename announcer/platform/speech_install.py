"""What to install so that announcer can speak, for this very system.

A user install (uv, pipx) brings prismatoid and pyttsx3, and no root. What those need
from the system differs: Windows has SAPI voices and macOS its own, so there the answer
is the screen reader; Linux needs espeak-ng's library (pyttsx3) or Speech Dispatcher
(prismatoid), from the distribution's package manager.
"""

from __future__ import annotations

import ctypes.util
import shutil
import sys
from pathlib import Path

# What pyttsx3 (espeak-ng's library, a player) and prismatoid (Speech Dispatcher) need,
# as Debian names them: (package, how to see that it is there).
LINUX_PIECES: tuple[tuple[str, str], ...] = (
    ("espeak-ng", "bin:espeak-ng"),
    ("libespeak-ng1", "lib:espeak-ng"),
    ("alsa-utils", "bin:aplay"),
    ("speech-dispatcher", "bin:speech-dispatcher"),
    ("speech-dispatcher-espeak-ng", "file:/usr/lib/speech-dispatcher-modules/sd_espeak-ng"),
)
# distribution id (os-release ID or ID_LIKE) -> the command that installs packages, and
# whether it names packages the Debian way
LINUX_INSTALLERS: dict[str, tuple[str, bool]] = {
    "debian": ("sudo apt install", True),
    "ubuntu": ("sudo apt install", True),
    "fedora": ("sudo dnf install", False),
    "rhel": ("sudo dnf install", False),
    "arch": ("sudo pacman -S", False),
    "opensuse": ("sudo zypper install", False),
    "suse": ("sudo zypper install", False),
    "alpine": ("sudo apk add", False),
}
WINDOWS = (
    "NVDA (https://www.nvaccess.org/download/), or reinstall announcer so that pyttsx3 can "
    "use Windows' own SAPI voices: uv tool install --reinstall announcer"
)
MACOS = (
    "nothing: turn VoiceOver on (Command-F5), or reinstall announcer so that pyttsx3 can "
    "use macOS's own voices: uv tool install --reinstall announcer"
)


def linux_distribution(os_release: Path = Path("/etc/os-release")) -> list[str]:
    """``ID`` then ``ID_LIKE`` from os-release, lowercased (``["ubuntu", "debian"]``)."""
    try:
        text = os_release.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    found: dict[str, str] = {}
    for line in text.splitlines():
        key, _, value = line.partition("=")
        found[key.strip()] = value.strip().strip("\"'").lower()
    return [found.get("ID", ""), *found.get("ID_LIKE", "").split()]


def _present(check: str) -> bool:
    kind, _, name = check.partition(":")
    if kind == "bin":
        return shutil.which(name) is not None
    if kind == "lib":
        return ctypes.util.find_library(name) is not None
    return Path(name).exists()


def missing_linux_packages() -> list[str]:
    return [package for package, check in LINUX_PIECES if not _present(check)]


def speech_install_hint(
    platform: str = sys.platform,
    os_release: Path = Path("/etc/os-release"),
    missing: list[str] | None = None,
) -> str | None:
    """What to install here so that something can speak (a command where there is one);
    None on Linux when every piece is installed (then the sound device is what fails)."""
    if platform == "win32":
        return WINDOWS
    if platform == "darwin":
        return MACOS
    missing = missing_linux_packages() if missing is None else missing
    if not missing:
        return None
    for distribution in linux_distribution(os_release):
        for known, (command, debian_names) in LINUX_INSTALLERS.items():
            if distribution == known or distribution.startswith(known):
                names = missing if debian_names else _generic(missing)
                return f"{command} {' '.join(names)}"
    return ", ".join(_generic(missing))


def _generic(missing: list[str]) -> list[str]:
    """Package names outside Debian: the library comes with espeak-ng, the module with it."""
    names = {"libespeak-ng1": "espeak-ng", "speech-dispatcher-espeak-ng": "speech-dispatcher"}
    return list(dict.fromkeys(names.get(package, package) for package in missing))
