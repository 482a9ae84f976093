"""A wheel built from this checkout, installed with its declared dependencies into a fresh
virtual environment outside the checkout, as a user's ``pipx``/``uv tool install`` would."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONSTRAINTS = ROOT / "packaging" / "constraints.txt"


def clean_environment(home: Path) -> dict[str, str]:
    """The environment of a user's shell: none of the test run's paths or settings."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("ANNOUNCER_", "PYTHON", "VIRTUAL_ENV"))
    }
    env["ANNOUNCER_CONFIG"] = str(home / "config.toml")
    env["XDG_STATE_HOME"] = str(home / "state")
    env["LANG"] = "C.UTF-8"
    return env


@dataclass(frozen=True)
class Installed:
    venv: Path
    wheel: Path
    workdir: Path  # a folder outside the checkout to run from
    env: dict[str, str]

    @property
    def announcer(self) -> Path:
        return self.venv / "bin" / "announcer"

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    def run(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.announcer), *args],
            cwd=self.workdir,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )


def pip(python: Path, *args: str, env: dict[str, str]) -> None:
    """pip with the machine's own index configuration (pip.conf, PIP_* variables)."""
    done = subprocess.run(
        [str(python), "-m", "pip", "--disable-pip-version-check", *args],
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


def clean_copy(target: Path) -> Path:
    """The checkout's files as git sees them (tracked and new, not ignored), without the
    build/ and egg-info that setuptools leaves behind: a stale build/lib would slip
    files that no longer exist into the wheel."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout
    for name in filter(None, listed.decode().split("\0")):
        source = ROOT / name
        if source.is_file() and not source.is_symlink():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


@pytest.fixture(scope="session")
def installed_wheel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    base = tmp_path_factory.mktemp("installed-wheel")
    env = clean_environment(base / "home")
    wheels = base / "wheels"
    source = clean_copy(base / "source")
    pip(Path(sys.executable), "wheel", "--no-deps", "-w", str(wheels), str(source), env=env)
    [wheel] = sorted(wheels.glob("announcer-*.whl"))
    target = base / "venv"
    venv.EnvBuilder(with_pip=True, symlinks=True).create(target)
    pip(target / "bin" / "python", "install", "-c", str(CONSTRAINTS), str(wheel), env=env)
    workdir = base / "elsewhere"
    workdir.mkdir()
    yield Installed(target, wheel, workdir, env)
