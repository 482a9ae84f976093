"""packaging/announcer.spec builds a one-folder program on Linux, and it runs.

Built from the installed wheel's environment (tests/packaging/conftest.py), as a release
build would be; the smoke run is from a folder of its own with a user's environment.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.packaging.conftest import CONSTRAINTS, ROOT, Installed, pip

pytestmark = pytest.mark.slow

SPEC = ROOT / "packaging" / "announcer.spec"


# Session, not module: xdist may run another module's tests between this module's, and a
# module fixture would then be built again (it was: twice per run).
@pytest.fixture(scope="session")
def bundle(installed_wheel: Installed, tmp_path_factory: pytest.TempPathFactory) -> Path:
    pip(
        installed_wheel.python,
        "install",
        "-c",
        str(CONSTRAINTS),
        "pyinstaller",
        env=installed_wheel.env,
    )
    work = tmp_path_factory.mktemp("pyinstaller")
    done = subprocess.run(
        [
            str(installed_wheel.venv / "bin" / "pyinstaller"),
            "--noconfirm",
            "--log-level",
            "WARN",
            "--distpath",
            str(work / "dist"),
            "--workpath",
            str(work / "build"),
            str(SPEC),
        ],
        cwd=work,
        env=installed_wheel.env,
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return work / "dist" / "announcer"


def run(bundle: Path, installed: Installed, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(bundle / "announcer"), *args],
        cwd=installed.workdir,
        env=installed.env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_bundle_says_its_version(bundle: Path, installed_wheel: Installed) -> None:
    from announcer import __version__

    done = run(bundle, installed_wheel, "--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"announcer {__version__}"


def test_the_bundle_replays_in_spanish(bundle: Path, installed_wheel: Installed) -> None:
    session = bundle / "_internal" / "announcer" / "data" / "banking_session.jsonl"
    done = run(
        bundle,
        installed_wheel,
        "replay",
        "--language",
        "es",
        "--speech",
        "jsonl",
        "--no-delay",
        str(session),
    )
    assert done.returncode == 0, done.stderr
    said = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    ours = {record["text"] for record in said if record.get("language") == "es"}
    assert {"Pregunta.", "Se necesita confirmación."} <= ours


def test_the_bundle_carries_the_earcons_and_prismatoid(
    bundle: Path, installed_wheel: Installed
) -> None:
    shipped = ROOT / "announcer" / "voices" / "earcons"
    for earcon in shipped.glob("*.wav"):
        packed = bundle / "_internal" / "announcer" / "voices" / "earcons" / earcon.name
        assert packed.read_bytes() == earcon.read_bytes()
    done = run(bundle, installed_wheel, "voices", "--json")
    assert done.returncode == 0, done.stderr
    [screenreader] = [b for b in json.loads(done.stdout)["backends"] if b["name"] == "screenreader"]
    assert "prismatoid could not" not in screenreader["detail"], screenreader
