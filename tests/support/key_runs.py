"""Paced end-to-end runs of the scripted ACP agent for the key tests (tests/ui): a live
session with the agent as a real child process, speech by the ``paced`` backend on the
loop's clock written as the jsonl record, and the plain interface on a real pipe. The
pace is each test's own (the key tests run at the lab's 600 words a minute; the status
line test slower, to give its asserted moment room).
"""

from __future__ import annotations

import asyncio
import io
import os
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from announcer.engine.settings import UserSettings
from announcer.runtime.session import LiveSession
from announcer.speech.driver import SpeechDriver
from announcer.speech.paced import LoopClock, PacedBackend
from announcer.transports.acp import AcpTransport
from tests.support.speech_record import records, speak_records

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 60.0
#: the lab's pace, where CI caught an early key's cue cutting a status line off
LAB_PACE = 600
#: a person pressing on: a key every quarter second, for at most 60 s (a hang turns into
#: a failure; the verdict never waits on this)
EVERY = 0.25
TRIES = 240
#: the scripted agent's ``--long-settings`` line, said when its session opens
STATUS_START = "Mode: Ask before every edit and every command."
CUE = "Not yet."
#: the option the agent records for a one-time allow (sdk_agent ``ask``)
ALLOW_ONCE = "once"
#: how each interface says a risky accept's confirm step (short, issue 30 item 2); the
#: long form, "Accept: <action>? …", is on screen, on F2 and at detailed verbosity
CONFIRM_STEP = ("Enter.", "C.")
#: how each interface says that the accept went (the plain UI prints "Sent: accept.")
PLAIN_ANSWERED = "Sent."
TUI_ANSWERED = "Sent."


class Heard:
    """The jsonl record of one run, read as it grows."""

    def __init__(self, record: io.StringIO) -> None:
        self.record = record

    def lines(self) -> list[dict[str, Any]]:
        return records(self.record)

    def status(self) -> list[dict[str, Any]]:
        return [r for r in self.lines() if str(r["text"]).startswith(STATUS_START)]

    def question(self) -> list[dict[str, Any]]:
        return [
            r
            for r in speak_records(self.record)
            if str(r["text"]).startswith("Confirmation needed.")
        ]

    def status_cut_after(self, index: int) -> bool:
        """The status line was cut off after record line ``index`` (the question came)."""
        return any(
            r["action"] == "cancel" and str(r["text"]).startswith(STATUS_START)
            for r in self.lines()[index:]
        )


def session(
    folder: Path,
    backend: PacedBackend,
    pace: int,
    flags: tuple[str, ...] = ("--long-settings",),
    clock: Callable[[], float] = time.monotonic,
) -> LiveSession:
    """A live session with the scripted agent (run with ``flags``) and a paced voice;
    ``clock``: the session's (a ``HeldClock`` to hold the arming interval still)."""
    agent = AcpTransport(
        [sys.executable, "-m", "tests.acp_frontend.sdk_agent", *flags],
        name="Scripted",
        cwd=str(folder),
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    return LiveSession(
        [],
        UserSettings(pace_wpm=pace),
        transports=[agent],
        driver=SpeechDriver(backend),
        clock=clock,
    )


def backend(record: io.StringIO, pace: int) -> PacedBackend:
    return PacedBackend(LoopClock(asyncio.get_running_loop()), rate_wpm=pace, stream=record)


def choices(folder: Path) -> list[str]:
    path = folder / "choices.txt"
    return path.read_text().split() if path.exists() else []


def shown(lines: list[dict[str, Any]]) -> list[str]:
    """A record, one short line an entry, for a failure's message."""
    return [f"{r['t']:.2f} {r['action']} {str(r['text'])[:60]}" for r in lines]


class PlainRun:
    """The plain interface on a real pipe, a live session and its speech record."""

    def __init__(
        self,
        folder: Path,
        pace: int,
        flags: tuple[str, ...] = ("--long-settings",),
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        from announcer.ui.plain import PlainUi

        self.folder = folder
        self.speech = io.StringIO()
        self.heard = Heard(self.speech)
        self.out = io.StringIO()
        self.backend = backend(self.speech, pace)
        self.session = session(folder, self.backend, pace, flags, clock)
        read_end, self.write_end = os.pipe()
        self.typed = os.fdopen(read_end, encoding="utf-8")
        self.ui = PlainUi(out=self.out, inp=self.typed)
        self.ui.attach(self.session)
        self.runner = asyncio.ensure_future(self.session.run())

    def type_line(self, line: str) -> None:
        os.write(self.write_end, f"{line}\n".encode())

    def printed(self, text: str) -> Callable[[], bool]:
        return lambda: text in self.out.getvalue()

    async def close(self) -> None:
        self.session.stop()
        await asyncio.wait_for(self.runner, TIMEOUT)
        os.close(self.write_end)
        self.typed.close()


async def press_until(
    press: Callable[[], Awaitable[Any]],
    done: Callable[[], bool],
    pause: Callable[[float], Awaitable[Any]],
    before_each: Callable[[], None] = lambda: None,
) -> None:
    """Press every quarter second until ``done`` (bounded: :data:`TRIES` presses);
    ``before_each`` checks what must never happen between two presses."""
    for _ in range(TRIES):
        if done():
            return
        before_each()
        await press()
        await pause(EVERY)
    raise AssertionError(f"pressed {TRIES} times and never got through")
