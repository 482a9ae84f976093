"""Windows and macOS, checked here: mypy over the whole package for each platform.

Platform-specific calls live behind ``announcer/platform`` (and ``sys.platform`` checks
in the transports that need them), so ``mypy --platform win32`` and ``--platform darwin``
must find no error that ``--platform linux`` does not: an error only Windows sees is an
import or attribute error a Windows user would meet before the first word is said.

On a Linux machine the Linux run is ./test's own mypy step, repeated with its cache
(``.mypy_cache``, the same options): after that step it costs a fraction of a second,
not a whole check of the package. The Windows and macOS runs keep caches of their own.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PLATFORMS = ("linux", "win32", "darwin")
ERROR = re.compile(r"^(?P<where>[^:]+:\d+): error: (?P<what>.*)$")


def mypy_command(platform: str) -> list[str]:
    """mypy over the package (pyproject.toml's ``files``) as ``platform`` sees it."""
    command = [sys.executable, "-m", "mypy", "--no-error-summary"]
    if platform == sys.platform:
        # exactly ./test's mypy step (the host's platform, the default cache): its cache
        # holds the answer for every module that did not change since that step
        return command
    cache = ROOT / ".mypy_cache" / f"platform-{platform}"
    return [*command, "--platform", platform, "--cache-dir", str(cache)]


def test_no_error_is_peculiar_to_windows_or_macos() -> None:
    runs = {
        platform: subprocess.Popen(
            mypy_command(platform),
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for platform in PLATFORMS
    }
    errors: dict[str, set[str]] = {}
    for platform, run in runs.items():
        out, err = run.communicate(timeout=1200)
        assert run.returncode in (0, 1), err  # 1: type errors, reported below; 2: a crash
        errors[platform] = {
            f"{m['where']}: {m['what']}" for line in out.splitlines() if (m := ERROR.match(line))
        }
    for platform in ("win32", "darwin"):
        only_there = sorted(errors[platform] - errors["linux"])
        assert not only_there, f"errors only on {platform}:\n" + "\n".join(only_there)
