"""The speech backend chosen in Settings takes over at once on a live session (Pilot).

A real ``LiveSession`` listens on a real Unix socket; the app is driven with key
presses. The old backend is the jsonl recorder, the new one the text backend
writing to a stream we read back.
"""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.widgets import Select

from announcer.engine.settings import UserSettings
from announcer.runtime.session import LiveSession
from announcer.speech.driver import SpeechDriver
from announcer.speech.jsonl import JsonlBackend
from announcer.speech.text import TextBackend
from announcer.transports import TransportOptions
from announcer.ui.tui.app import AnnouncerApp
from announcer.ui.tui.screens import SettingsScreen
from tests.support.waiting import until_on_pilot as until

TIMEOUT = 60.0


async def quiet_producer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await reader.read()  # an agent with nothing to say yet: the connection stays open
    writer.close()


def said(path: Path) -> list[str]:
    return [json.loads(line)["text"] for line in path.read_text(encoding="utf-8").splitlines()]


async def choose_backend(pilot: Any, app: AnnouncerApp, moves: str) -> None:
    await pilot.press("o")
    await until(pilot, lambda: isinstance(app.screen, SettingsScreen), "the settings screen")
    app.screen.query_one("#backend", Select).focus()
    await pilot.pause()
    await pilot.press("enter")  # open the list: auto, screenreader, speechd, pyttsx3, text, jsonl
    await pilot.pause()
    await pilot.press(moves, "enter")
    await pilot.pause()


async def run_switch(
    tmp_path: Path, factory: Callable[[str, UserSettings], Any], moves: str
) -> tuple[LiveSession, Path]:
    socket_path = tmp_path / "agent.sock"
    server = await asyncio.start_unix_server(quiet_producer, str(socket_path))
    old_record = tmp_path / "old.jsonl"
    old_stream = old_record.open("w", encoding="utf-8")
    session = LiveSession(
        [f"unix:{socket_path}"],
        UserSettings(backend="jsonl"),
        TransportOptions(unix_framing="ndjson"),
        driver=SpeechDriver(JsonlBackend(old_stream)),
        handshake_timeout=0.5,
        backend_factory=factory,
    )
    app = AnnouncerApp(session)
    try:
        async with app.run_test(size=(100, 40)) as pilot:
            runner = asyncio.ensure_future(session.run())
            # "Connected to ..." is said once the quiet stream has stayed open a moment
            await until(pilot, lambda: "Connected to" in old_record.read_text(), "connected")
            await choose_backend(pilot, app, moves)
            await until(pilot, lambda: bool(app.screen.focused), "settings settled")
            session.stop()
            await asyncio.wait_for(runner, TIMEOUT)
    finally:
        session.stop()
        server.close()
        await server.wait_closed()
        old_stream.close()
    return session, old_record


async def test_a_new_backend_speaks_at_once_and_the_old_one_is_closed(tmp_path: Path) -> None:
    heard = io.StringIO()
    made: list[TextBackend] = []

    def factory(name: str, settings: UserSettings) -> Any:
        assert name == "text"
        made.append(TextBackend(heard))
        return made[-1]

    session, old_record = await run_switch(tmp_path, factory, "up")
    assert session.settings.backend == "text"
    assert session.driver is not None and session.driver.backend is made[0]
    # the choice is confirmed through the new voice, not "at the next start"
    assert "Speech backend: text." in heard.getvalue()
    assert "next time" not in heard.getvalue()
    old = said(old_record)
    assert any(text.startswith("Settings.") for text in old)  # the old one spoke until then
    assert "Speech backend: text." not in old


async def test_a_backend_that_cannot_start_changes_nothing_and_says_why(tmp_path: Path) -> None:
    def factory(name: str, settings: UserSettings) -> Any:
        raise RuntimeError(f"no {name} on this machine")

    session, old_record = await run_switch(tmp_path, factory, "up")
    assert session.settings.backend == "jsonl"
    assert isinstance(session.driver.backend, JsonlBackend)
    assert said(old_record)[-1] == (
        "Setting not changed: the speech backend text could not start (no text on this machine)"
    )
