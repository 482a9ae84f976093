"""README's daily-use commands, word for word: ``uv tool install`` and ``pipx install`` of
the wheel, for this user alone (their homes in a scratch folder), then the program runs."""

from __future__ import annotations

import json
import subprocess
import venv
from pathlib import Path

import pytest

from tests.packaging.conftest import CONSTRAINTS, ROOT, Installed, pip

pytestmark = pytest.mark.slow


# Session, not module: xdist may run another module's tests between this module's, and a
# module fixture would then be built again (it was: twice per run).
@pytest.fixture(scope="session")
def tools(tmp_path_factory: pytest.TempPathFactory, installed_wheel: Installed) -> Path:
    target = tmp_path_factory.mktemp("tools") / "venv"
    venv.EnvBuilder(with_pip=True, symlinks=True).create(target)
    pip(
        target / "bin" / "python",
        "install",
        "-c",
        str(CONSTRAINTS),
        "uv",
        "pipx",
        env=installed_wheel.env,
    )
    return target / "bin"


@pytest.mark.parametrize("installer", ["uv", "pipx"])
def test_the_readme_install_command_gives_a_working_announcer(
    installer: str, tools: Path, installed_wheel: Installed, tmp_path: Path
) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    command = {"uv": "uv tool install", "pipx": "pipx install"}[installer]
    wheel_name = installed_wheel.wheel.name
    assert f"    {command} ./{wheel_name}\n" in readme  # the very line a user copies
    (installed_wheel.workdir / wheel_name).write_bytes(installed_wheel.wheel.read_bytes())
    env = dict(
        installed_wheel.env,
        UV_TOOL_DIR=str(tmp_path / "uv-tools"),
        UV_TOOL_BIN_DIR=str(tmp_path / "bin"),
        UV_CACHE_DIR=str(tmp_path / "uv-cache"),
        PIPX_HOME=str(tmp_path / "pipx"),
        PIPX_BIN_DIR=str(tmp_path / "bin"),
        PIPX_MAN_DIR=str(tmp_path / "man"),
    )
    program, *args = command.split()
    done = subprocess.run(
        [str(tools / program), *args, f"./{wheel_name}"],
        cwd=installed_wheel.workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    announcer = tmp_path / "bin" / "announcer"
    version = subprocess.run(
        [str(announcer), "--version"], env=env, capture_output=True, text=True, check=True
    )
    assert version.stdout.startswith("announcer ")
    session = next(installed_wheel.venv.glob("lib/python*/site-packages/announcer/data/*.jsonl"))
    replay = subprocess.run(
        [
            str(announcer),
            "replay",
            "--language",
            "es",
            "--speech",
            "jsonl",
            "--no-delay",
            str(session),
        ],
        cwd=installed_wheel.workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    said = {json.loads(line)["text"] for line in replay.stdout.splitlines() if line.startswith("{")}
    assert "Pregunta." in said
