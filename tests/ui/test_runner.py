"""run_with_session: the app and a session share one loop and end together."""

from __future__ import annotations

import asyncio
import io
import logging
import sys

import pytest

from announcer.engine.announcement import Announcement
from announcer.ui.tui.runner import run_with_session
from tests.ui.conftest import Harness


class FiniteSession:
    """A LocalSession that runs a short scripted session, then ends (--exit-when-done)."""

    def __init__(self, harness: Harness) -> None:
        self.harness = harness
        self.stopped = asyncio.Event()
        self.stop_calls = 0
        self.exit_when_done = True  # like `listen --exit-when-done` and the demo

    def __getattr__(self, name: str):
        return getattr(self.harness.session, name)

    async def run(self) -> int:
        await asyncio.sleep(0)  # let the app mount and subscribe
        for _ in range(200):
            if self.harness.session._listeners:
                break
            await asyncio.sleep(0.05)
        self.harness.session.announce(Announcement("Session finished."))
        return 0

    def stop(self) -> None:
        self.stop_calls += 1


async def test_app_closes_when_the_session_ends(harness: Harness) -> None:
    session = FiniteSession(harness)
    code = await asyncio.wait_for(
        run_with_session(session, headless=True, save_settings=harness.saved.append), timeout=60
    )
    assert code == 0
    assert session.stop_calls == 1
    assert harness.backend.said("Session finished.")


class LoggingSession(FiniteSession):
    """Logs an error while the app owns the terminal, as a failing source does."""

    def __init__(self, harness: Harness, terminal: io.StringIO) -> None:
        super().__init__(harness)
        self.terminal = terminal
        self.written_while_running: list[str] = []

    async def run(self) -> int:
        await asyncio.sleep(0.2)
        logging.getLogger("announcer.runtime").error("source ws://x failed: refused")
        self.written_while_running.append(self.terminal.getvalue())
        return await super().run()


async def test_log_lines_wait_until_the_app_has_given_the_terminal_back(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    terminal = io.StringIO()
    monkeypatch.setattr(sys, "stderr", terminal)
    handler = logging.StreamHandler(sys.stderr)
    root = logging.getLogger()
    root.addHandler(handler)
    session = LoggingSession(harness, terminal)
    try:
        code = await asyncio.wait_for(
            run_with_session(session, headless=True, save_settings=harness.saved.append),
            timeout=60,
        )
        assert handler in root.handlers  # given back
    finally:
        root.removeHandler(handler)
    assert code == 0
    assert session.written_while_running == [""]  # nothing reached the terminal under the app
    assert terminal.getvalue() == "source ws://x failed: refused\n"  # and nothing was lost


def test_speech_text_under_textual_is_the_transcript_not_lines_beneath_it() -> None:
    from announcer.cli.launch import make_driver
    from announcer.speech.text import PrintedBackend, TextBackend

    assert isinstance(make_driver("text", ui="tui").backend, PrintedBackend)
    # issue 30 item 7: the plain UI prints each line itself; a text voice would print it twice
    assert isinstance(make_driver("text", ui="plain").backend, PrintedBackend)
    assert isinstance(make_driver("text").backend, TextBackend)


def test_a_backend_switched_to_under_textual_writes_nothing_beneath_the_app() -> None:
    """The settings screen switches through the session's factory: text is the transcript,
    and auto's notices go to the object the app already listens to."""
    from announcer.cli.launch import speech_backend, speech_switcher
    from announcer.engine.settings import UserSettings
    from announcer.speech.text import PrintedBackend

    started = speech_backend("auto", UserSettings(), ui="tui")
    driver = type("Driver", (), {"backend": started})()
    switch = speech_switcher("tui", driver)
    assert isinstance(switch("text", UserSettings()), PrintedBackend)
    again = switch("auto", UserSettings())
    assert again.notices is started.notices is not None
    with pytest.raises(ValueError, match="turns speech off"):
        switch("none", UserSettings())


def test_log_lines_beyond_what_is_held_are_counted_at_the_level_they_had() -> None:
    """At the default level (errors only) the count of lost lines is still written."""
    from announcer.ui.tui.runner import HELD_LOG_RECORDS, logs_held_while_the_app_runs

    terminal = io.StringIO()
    handler = logging.StreamHandler(sys.stderr)
    handler.stream = terminal  # a terminal handler, as logging.basicConfig makes one
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.ERROR)
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(sys, "stderr", terminal)
            with logs_held_while_the_app_runs():
                for number in range(HELD_LOG_RECORDS + 5):
                    logging.getLogger("announcer.runtime").error("failure %d", number)
                assert terminal.getvalue() == ""
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
    lines = terminal.getvalue().splitlines()
    assert lines[0] == "5 earlier log lines from while the app ran were not kept"
    assert lines[1:] == [f"failure {n}" for n in range(5, HELD_LOG_RECORDS + 5)]
