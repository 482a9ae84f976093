"""The demo says when it ends, and offers to run it again (issue 14, item 2).

A blind user hears the agent finish, then silence: was that all, did it crash, is it
still listening? So when the demo's agent is done, the Textual and plain UIs say
and show "The demo is over", with the keys to run it again or to quit. Textual: a
real producer on loopback, the live session beside the app, keys pressed with Pilot.
Plain: the real ``announcer demo --ui plain`` in a subprocess, lines typed on its
standard input, what it said read from its jsonl speech record.
"""

from __future__ import annotations

import asyncio
import io
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("announcer.producer.server", reason="the demo producer is not on this branch")

from announcer.engine.settings import UserSettings
from announcer.producer.core import ProducerCore, ProducerOptions
from announcer.producer.scenario import load_scenario
from announcer.producer.server import ProducerServer
from announcer.runtime.session import LiveSession
from announcer.speech.driver import SpeechDriver
from announcer.speech.jsonl import JsonlBackend
from announcer.ui.tui.app import AnnouncerApp
from tests.support.producers import ws_url
from tests.support.speech_record import spoken_in
from tests.support.speech_record import spoken_in as spoken
from tests.support.waiting import until_on_pilot as until

SCENARIO = Path(__file__).parent / "scenarios" / "demo_short.json"
TIMEOUT = 60.0
TUI_OVER = "The demo is over. Press R to run it again, or Q to quit."
PLAIN_OVER = (
    "The demo is over. Type r and press Enter to run it again, or q and press Enter to quit."
)


async def _demo_app(key: str) -> tuple[LiveSession, AnnouncerApp, list[str], bool]:
    core = ProducerCore(load_scenario(str(SCENARIO)), ProducerOptions(speed=0.5))
    server = ProducerServer(core, "127.0.0.1", 0)
    await server.start()
    records = io.StringIO()
    session = LiveSession(
        [ws_url(server)],
        UserSettings(),
        driver=SpeechDriver(JsonlBackend(records)),
        exit_when_done=True,
        offer_again=True,
    )
    app = AnnouncerApp(session)
    runner: asyncio.Future[int] | None = None
    try:
        async with app.run_test() as pilot:
            runner = asyncio.ensure_future(session.run())
            await until(pilot, lambda: core.finished.is_set(), "the demo agent to finish")
            # Before the end is said, R and Q are no keys at all: nothing restarts or quits.
            assert not app.demo_is_over
            await pilot.press("q", "r")
            assert app.is_running and not session.again_requested
            await until(
                pilot,
                lambda: TUI_OVER in app.main_screen.transcript.entries,
                "the demo's end on screen",
            )
            await until(pilot, lambda: TUI_OVER in spoken(records), "the demo's end spoken")
            # "?" tells the keys that work now.
            help_text = app.help_text()
            await pilot.press(key)
            # R ends this session (its runner starts the demo again); both close the app.
            await until(pilot, lambda: not app.is_running, "the app to close")
            running = app.is_running
    finally:
        session.stop()
        if runner is not None:
            await asyncio.wait_for(asyncio.shield(runner), 10)
        await server.close()
    assert "r: Run the demo again." in help_text and "q: Quit." in help_text
    return session, app, spoken(records), running


async def test_the_textual_demo_says_it_is_over_and_r_runs_it_again() -> None:
    session, _app, heard, _running = await _demo_app("r")
    assert session.again_requested
    assert heard.index(TUI_OVER) > heard.index("All done.")
    assert heard.count(TUI_OVER) == 1


async def test_the_textual_demo_quits_with_q_once_it_is_over() -> None:
    session, _app, heard, running = await _demo_app("q")
    assert not session.again_requested
    assert not running
    assert TUI_OVER in heard


def _start_plain(tmp_path: Path, stdin: int) -> tuple[subprocess.Popen[str], Path]:
    record = tmp_path / "speech.jsonl"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "announcer",
            "demo",
            "--ui",
            "plain",
            "--scenario",
            str(SCENARIO),
            "--speech",
            f"jsonl:{record}",
        ],
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        bufsize=1,
    )
    return process, record


def _read_until(process: subprocess.Popen[str], wanted: str, seen: list[str]) -> None:
    assert process.stdout is not None
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        seen.append(line.rstrip("\n"))
        if line.rstrip("\n") == wanted:
            return
    process.kill()
    raise AssertionError(f"never printed {wanted!r}; printed {seen}")


def test_the_plain_demo_says_it_is_over_runs_again_on_r_and_quits_on_q(tmp_path: Path) -> None:
    process, record = _start_plain(tmp_path, subprocess.PIPE)
    assert process.stdin is not None
    seen: list[str] = []
    try:
        _read_until(process, PLAIN_OVER, seen)
        process.stdin.write("r\n")
        process.stdin.flush()
        _read_until(process, PLAIN_OVER, seen)  # the whole demo again, and its end
        process.stdin.write("q\n")
        process.stdin.flush()
        assert process.wait(timeout=TIMEOUT) == 0
    finally:
        if process.poll() is None:
            process.kill()
    assert seen.count("[done] All done.") == 2
    said = spoken_in(record)
    assert said.count(PLAIN_OVER) == 2
    assert said.index(PLAIN_OVER) > said.index("All done.")


def test_the_plain_demo_with_no_input_left_says_it_is_over_and_ends(tmp_path: Path) -> None:
    """A script that pipes nothing in: the end is said, then the demo exits by itself."""
    process, record = _start_plain(tmp_path, subprocess.DEVNULL)
    try:
        out, _err = process.communicate(timeout=TIMEOUT)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0
    assert out.splitlines()[-1] == PLAIN_OVER
    assert spoken_in(record)[-1] == PLAIN_OVER
