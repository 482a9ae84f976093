"""No voice works: the Textual UI says so on screen at once, and how to fix it (issue 14).

Under Textual, ``auto``'s notices ("speaking through …", why each output failed) went
to standard error, raw underneath the app, and its last resort printed there too:
a user with no working voice saw a silent app. Here the real ``make_driver`` builds
``auto`` for the Textual UI with every voice failing to start (or failing in the
middle of the session), a real demo producer runs on loopback, and the app is
driven with Pilot: the notices, the way to get a voice, and the app's own words are
in the transcript, and nothing is written to standard error.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("announcer.producer.server", reason="the demo producer is not on this branch")

from announcer.cli.launch import make_driver
from announcer.engine.announcement import Announcement
from announcer.engine.settings import UserSettings
from announcer.producer.core import ProducerCore, ProducerOptions
from announcer.producer.scenario import load_scenario
from announcer.producer.server import ProducerServer
from announcer.runtime.session import LiveSession
from announcer.speech import registry
from announcer.speech.backend import BackendCapabilities, BackendUnavailable, VoiceSettings
from announcer.speech.jsonl import JsonlBackend
from announcer.ui.tui.app import AnnouncerApp
from tests.support.producers import ws_url
from tests.support.waiting import until_on_pilot as until

SCENARIO = Path(__file__).parent / "scenarios" / "demo_short.json"
NO_VOICE = "No voice works here, so announcements are only shown on screen."


class LosesItsDevice:
    """A voice that starts, then fails on its first sentence (a headset unplugged)."""

    name = "pyttsx3"
    capabilities = BackendCapabilities(can_interrupt=True)

    def start(self) -> None:
        pass

    def speak(self, announcement: Announcement, voice: VoiceSettings, on_done: Any) -> None:
        raise RuntimeError("the audio device went away")

    def stop(self) -> None:
        pass

    def is_speaking(self) -> bool:
        return False

    def close(self) -> None:
        pass


def voices(monkeypatch: pytest.MonkeyPatch, make: Callable[[str], Any]) -> None:
    """Every voice ``auto`` tries is built by ``make(name)``."""

    def factory(name: str, settings: object = None, **_: object) -> Callable[[], Any]:
        return lambda: make(name)

    monkeypatch.setattr(registry, "backend_factory", factory)


def unavailable(name: str) -> Any:
    raise BackendUnavailable(f"{name} cannot start here")


async def run_app(driver: Any, check: Callable[[AnnouncerApp], Any]) -> list[str]:
    core = ProducerCore(load_scenario(str(SCENARIO)), ProducerOptions(speed=0.5))
    server = ProducerServer(core, "127.0.0.1", 0)
    await server.start()
    session = LiveSession([ws_url(server)], UserSettings(), driver=driver)
    app = AnnouncerApp(session)
    runner: asyncio.Future[int] | None = None
    try:
        async with app.run_test() as pilot:
            runner = asyncio.ensure_future(session.run())
            entries = app.main_screen.transcript.entries
            await until(pilot, lambda: "All done." in entries, "the demo agent's last news")
            await check(app, pilot) if asyncio.iscoroutinefunction(check) else check(app)
            return list(entries)
    finally:
        session.stop()
        if runner is not None:
            await asyncio.wait_for(asyncio.shield(runner), 10)
        await server.close()


async def test_with_no_voice_the_app_says_so_on_screen_with_the_fix(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    voices(monkeypatch, unavailable)
    driver = make_driver("auto", UserSettings(), ui="tui")
    assert driver is not None and driver.backend.active_name == "printed text"

    async def where_am_i(app: AnnouncerApp, pilot: Any) -> None:
        await pilot.press("w")
        await until(
            pilot,
            lambda: any(
                e.startswith("Main screen. Connection") for e in app.main_screen.transcript.entries
            ),
            "the answer to w on screen",
        )

    entries = await run_app(driver, where_am_i)
    # At once: the first lines, before any news.
    [notice] = [e for e in entries if e.startswith("Speech output: speaking through printed text")]
    assert "pyttsx3: pyttsx3 cannot start here" in notice
    assert "screenreader: screenreader cannot start here" in notice
    fix = next(e for e in entries if e.startswith(NO_VOICE))
    assert "install espeak-ng" in fix and "--ui plain --speech text" in fix
    assert entries.index(fix) < entries.index("Session started.")
    # The app's own words are shown too, as news is.
    assert "announcer is listening. Press question mark for help." in entries
    assert entries.count(fix) == 1
    # Nothing raw underneath the app.
    assert "announcer:" not in capsys.readouterr().err


async def test_a_voice_lost_mid_session_is_shown_with_the_fix(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    voices(monkeypatch, lambda name: LosesItsDevice() if name == "pyttsx3" else unavailable(name))
    driver = make_driver("auto", UserSettings(), ui="tui")
    assert driver.backend.active_name == "pyttsx3"
    entries = await run_app(driver, lambda app: None)
    assert any(e.startswith("Speech output: speaking through pyttsx3") for e in entries)
    switched = next(e for e in entries if "switching to printed text" in e)
    assert "the audio device went away" in switched
    assert any(e.startswith(NO_VOICE) for e in entries)
    assert "announcer:" not in capsys.readouterr().err


async def test_with_a_voice_the_app_names_it_once_and_shows_no_fix(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    records = io.StringIO()

    def make(name: str) -> Any:
        if name == "pyttsx3":
            backend = JsonlBackend(records)
            backend.name = "pyttsx3"  # type: ignore[misc]
            return backend
        return unavailable(name)

    voices(monkeypatch, make)
    driver = make_driver("auto", UserSettings(), ui="tui")
    entries = await run_app(driver, lambda app: None)
    assert [e for e in entries if e.startswith("Speech output:")] == [
        "Speech output: speaking through pyttsx3 (screenreader: screenreader cannot start "
        "here; speechd: speechd cannot start here)"
    ]
    assert not any(e.startswith(NO_VOICE) for e in entries)
    # Spoken, so not written again: the app's own words stay out of the transcript.
    assert "announcer is listening. Press question mark for help." not in entries
    assert "announcer is listening" in records.getvalue()
