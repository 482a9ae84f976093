"""The no-voice notice names the real cause (issue 20 item 8): no audio device, or the
package that is missing, with the way to install it.

The real ``auto`` chain under the Textual UI: on this machine (no sound card) the real
pyttsx3 output fails to open an audio device; the missing-package cases use the exact
reasons the real outputs give when espeak-ng or aplay is not installed.
"""

from __future__ import annotations

from typing import Any

import pytest

from announcer.cli.launch import make_driver
from announcer.engine.settings import UserSettings
from announcer.platform.speech_install import speech_install_hint
from announcer.speech.auto import why_no_voice
from announcer.speech.backend import BackendUnavailable
from tests.ui.test_no_voice import run_app, voices


def notice(entries: list[str]) -> str:
    return next(e for e in entries if e.startswith("No voice works here"))


async def test_no_audio_device_is_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))  # no ALSA device of the user's own
    monkeypatch.setenv("SPEECHD_ADDRESS", f"unix_socket:{tmp_path / 'none.sock'}")
    driver = make_driver("auto", UserSettings(), ui="tui")
    if driver.backend.active_name != "printed text":
        pytest.skip(f"this machine has a voice: {driver.backend.active_name}")
    skipped = dict(driver.backend.skipped)
    local = skipped.get("pyttsx3", "")
    if not (local.startswith("no audio output:") and "cannot open an audio device" in local):
        pytest.skip(f"the local voice failed otherwise here: {skipped.get('pyttsx3')}")
    text = notice(await run_app(driver, lambda app: None))
    assert text.startswith("No voice works here: no audio device could be opened (")
    assert "cannot open an audio device" in text
    assert "Connect speakers or headphones" in text
    assert "install espeak-ng" not in text  # it is installed: the advice would be wrong


@pytest.mark.parametrize(
    ("reason", "package", "packages"),
    [
        (
            "pyttsx3 found no speech engine (install espeak-ng and libespeak-ng1): "
            "libespeak-ng.so.1: cannot open shared object file",
            "espeak-ng, libespeak-ng1",
            ["espeak-ng", "libespeak-ng1"],
        ),
        (
            "no audio output: no audio player found (install alsa-utils for aplay)",
            "alsa-utils",
            ["alsa-utils"],
        ),
    ],
)
async def test_a_missing_package_is_named_with_its_install_command(
    reason: str, package: str, packages: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # the command that installs them on this very system ("sudo apt install ..." on Debian)
    command = speech_install_hint(missing=packages)

    def make(name: str) -> Any:
        if name == "pyttsx3":
            raise BackendUnavailable(reason)
        raise BackendUnavailable(f"{name} cannot start here")

    voices(monkeypatch, make)
    driver = make_driver("auto", UserSettings(), ui="tui")
    text = notice(await run_app(driver, lambda app: None))
    assert text.startswith(f"No voice works here: {package} is not installed.")
    assert f"({command})" in text


def test_a_screen_reader_not_running_is_not_the_cause() -> None:
    cause = why_no_voice(
        [
            ("screenreader", "no screen reader is running (Orca is not running)"),
            ("speechd", "no speech-dispatcher server answers ([Errno 111] Connection refused)"),
            ("pyttsx3", "no audio output: aplay cannot open an audio device (no card)"),
        ]
    )
    assert cause.kind == "no_audio_device" and cause.detail.startswith("aplay cannot open")
