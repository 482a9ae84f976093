"""The installed wheel works from any folder: version, Spanish phrases, earcons, voices.

Nothing here reads the checkout: the program runs from a fresh virtual environment in a
folder of its own, with a user's environment (no PYTHONPATH), as after ``pipx install``.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
import wave
import zipfile
from pathlib import Path

import pytest

from tests.packaging.conftest import ROOT, Installed

pytestmark = pytest.mark.slow

EARCONS = ROOT / "announcer" / "voices" / "earcons"
CATALOG_FOLDERS = ("es", "fr", "de", "pt_BR", "ar", "yo")


def frames(path: Path) -> bytes:
    with wave.open(str(path)) as reader:
        return reader.readframes(reader.getnframes())


def test_the_wheel_carries_everything_the_program_reads(installed_wheel: Installed) -> None:
    names = set(zipfile.ZipFile(installed_wheel.wheel).namelist())
    for folder in CATALOG_FOLDERS:
        assert f"announcer/locales/{folder}/LC_MESSAGES/announcer.mo" in names
    for earcon in EARCONS.glob("*.wav"):
        assert f"announcer/voices/earcons/{earcon.name}" in names
    assert "announcer/voices/profiles/es.toml" in names
    for agent in (ROOT / "announcer" / "agents").glob("*.toml"):  # the agent presets
        assert f"announcer/agents/{agent.name}" in names
    assert any(name.endswith(".dist-info/licenses/LICENSE") for name in names)
    # the code that loads them is the installed copy, not this checkout
    where = subprocess.run(
        [str(installed_wheel.python), "-c", "import announcer; print(announcer.__file__)"],
        cwd=installed_wheel.workdir,
        env=installed_wheel.env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert where.startswith(str(installed_wheel.venv))


def test_version(installed_wheel: Installed) -> None:
    done = installed_wheel.run("--version")
    assert done.returncode == 0, done.stderr
    from announcer import __version__

    assert done.stdout.strip() == f"announcer {__version__}"


def test_replay_in_spanish_speaks_spanish(installed_wheel: Installed) -> None:
    session = installed_wheel.venv.glob("lib/python*/site-packages/announcer/data/*.jsonl")
    done = installed_wheel.run(
        "replay", "--language", "es", "--speech", "jsonl", "--no-delay", str(next(session))
    )
    assert done.returncode == 0, done.stderr
    spoken = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    ours = {record["text"] for record in spoken if record.get("language") == "es"}
    assert "Pregunta." in ours and "Se necesita confirmación." in ours
    assert not {"Question.", "Confirmation needed."} & {record["text"] for record in spoken}


def earcons_heard(audio: Path, wanted: dict[str, bytes]) -> set[str]:
    found = set()
    for path in sorted(audio.glob("0*.wav")):
        try:
            data = frames(path)
        except (EOFError, wave.Error):
            continue  # still being written
        found |= {name for name, samples in wanted.items() if samples[2000:6000] in data}
    return found


def test_the_earcons_are_in_the_wav_files(installed_wheel: Installed) -> None:
    """``replay --speech wav:DIR`` where replay takes it; else the live demo records them."""
    audio = installed_wheel.workdir / "audio"
    wanted = {name: frames(EARCONS / f"{name}.wav") for name in ("session_started", "needs_you")}
    session = next(installed_wheel.venv.glob("lib/python*/site-packages/announcer/data/*.jsonl"))
    replay = installed_wheel.run("replay", "--speech", f"wav:{audio}", "--no-delay", str(session))
    if replay.returncode == 0:
        assert earcons_heard(audio, wanted) == set(wanted), replay.stderr[-2000:]
        return
    assert "a replay prints" in replay.stderr  # refused on purpose, not broken
    wanted = {"session_started": wanted["session_started"]}
    process = subprocess.Popen(
        [str(installed_wheel.announcer), "demo", "--speech", f"wav:{audio}", "--ui", "none"],
        cwd=installed_wheel.workdir,
        env=installed_wheel.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    found: set[str] = set()
    try:
        deadline = time.monotonic() + 240  # an upper bound only: it ends on the first find
        while not found and time.monotonic() < deadline and process.poll() is None:
            found = earcons_heard(audio, wanted)
            time.sleep(0.2)
    finally:
        process.send_signal(signal.SIGINT)
        try:
            _, errors = process.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            _, errors = process.communicate()
    assert found == set(wanted), errors[-2000:]


def test_voices_reports_every_backend(installed_wheel: Installed) -> None:
    done = installed_wheel.run("voices", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    names = [backend["name"] for backend in report["backends"]]
    assert names[:4] == ["screenreader", "speechd", "pyttsx3", "text"]
    assert report["profiles_dir"].startswith(str(installed_wheel.venv))
    assert any(row["profile"] == "es" for row in report["languages"])


def test_the_installed_program_lists_every_agent_preset(installed_wheel: Installed) -> None:
    done = installed_wheel.run("agent", "--list")
    assert done.returncode == 0, done.stderr
    listed = {line.split(" ", 1)[0] for line in done.stdout.splitlines()}
    assert listed == {p.stem for p in (ROOT / "announcer" / "agents").glob("*.toml")}
