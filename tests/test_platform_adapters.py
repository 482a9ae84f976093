"""The small platform adapters: what to install for speech, process groups, identity."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from announcer.platform import process
from announcer.platform.identity import current_uid, owned_by_me
from announcer.platform.speech_install import speech_install_hint

ROOT = Path(__file__).resolve().parents[1]


def os_release(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "os-release"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_install_hint_names_this_systems_packages(tmp_path: Path) -> None:
    ubuntu = os_release(tmp_path, 'ID=ubuntu\nID_LIKE="debian"\n')
    missing = ["libespeak-ng1", "speech-dispatcher-espeak-ng"]
    assert (
        speech_install_hint("linux", ubuntu, missing)
        == "sudo apt install libespeak-ng1 speech-dispatcher-espeak-ng"
    )
    fedora = os_release(tmp_path, "ID=fedora\n")
    assert (
        speech_install_hint("linux", fedora, missing)
        == "sudo dnf install espeak-ng speech-dispatcher"
    )
    unknown = os_release(tmp_path, "ID=plan9\n")
    assert speech_install_hint("linux", unknown, ["alsa-utils"]) == "alsa-utils"
    assert speech_install_hint("linux", ubuntu, []) is None  # then the sound device fails
    assert "NVDA" in (speech_install_hint("win32") or "")
    assert "VoiceOver" in (speech_install_hint("darwin") or "")


def test_voices_says_what_to_install_when_nothing_speaks() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANNOUNCER_")}
    env.update(PYTHONPATH=str(ROOT), LANG="es_ES.UTF-8", ANNOUNCER_CONFIG=os.devnull)
    done = subprocess.run(
        [sys.executable, "-m", "announcer", "voices", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    speaks = any(
        b["available"]
        for b in report["backends"]
        if b["name"] in ("screenreader", "speechd", "pyttsx3")
    )
    if speaks:
        assert report["install"] is None
    else:  # as on this project's machines: no sound device
        assert report["install"].startswith("Aquí todavía no hay nada que pueda hablar")


def test_a_childs_whole_group_is_ended() -> None:
    script = (
        "import subprocess, sys, time; "
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); "
        "print('ready', flush=True); time.sleep(60)"
    )
    parent = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, **process.own_group()
    )
    assert parent.stdout is not None and parent.stdout.readline() == "ready\n"
    process.contain(parent.pid)  # POSIX: nothing to do (Windows: a job object)
    process.ask_group_to_end(parent.pid)
    assert parent.wait(timeout=30) is not None
    process.end_group_now(parent.pid)  # the grandchild too, and a second end is harmless
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            os.killpg(parent.pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        raise AssertionError("the group outlived its end")


def test_identity_on_posix(tmp_path: Path) -> None:
    assert current_uid() == os.getuid()
    assert owned_by_me(tmp_path.stat().st_uid)
    assert not owned_by_me(os.getuid() + 1)
