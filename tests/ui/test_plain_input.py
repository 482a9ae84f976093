"""The plain UI reads a pipe or a terminal in its event loop: whole lines, however they arrive.

A key typed in a flood is answered in the loop turn after it arrives, with no reading
thread waiting for the interpreter lock first (issue 13, benchmarks/flood.py). These
tests type on a real pipe, in pieces, with a bad byte, and end the input mid-line.
"""

from __future__ import annotations

import asyncio
import io
import os
import threading
from collections.abc import Callable

from announcer.engine.announcement import Announcement
from announcer.ui.plain import PlainUi
from tests.ui.conftest import prompt_from_event
from tests.ui.test_plain_keys import FakeLineSession, _confirmation

TIMEOUT = 30.0


async def until(condition: Callable[[], bool], what: str) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + TIMEOUT
    while not condition():
        if loop.time() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        await asyncio.sleep(0.01)


prompt_kind = "agent.awaiting.confirmation"


async def test_lines_typed_in_pieces_on_a_pipe_are_read_whole_by_the_loop() -> None:
    session = FakeLineSession()
    out = io.StringIO()
    read_end, write_end = os.pipe()
    threads_before = {t.name for t in threading.enumerate()}
    with os.fdopen(read_end, encoding="utf-8") as typed:
        ui = PlainUi(out=out, inp=typed)
        ui.attach(session)  # type: ignore[arg-type]
        assert "plain-ui-input" not in {t.name for t in threading.enumerate()} - threads_before
        prompt = prompt_from_event(_confirmation("rpl_pipe1", "Delete the cache", low_risk=True), 0)
        ui.prompt_opened(prompt)
        ui.announcement_made(  # the engine reads it out: its keys arm
            Announcement("Delete the cache?", event_id=prompt.event_id, kind=prompt_kind)
        )
        session.clock.now += 10  # past the arming interval
        os.write(write_end, b":he")  # half a command: nothing yet
        await asyncio.sleep(0.05)
        assert "Commands:" not in out.getvalue()
        os.write(write_end, b"lp\r\n")
        await until(lambda: "Commands:" in out.getvalue(), "the command typed in two pieces")
        os.write(write_end, "caf\u00e9\n".encode()[:4])  # a character cut in two
        os.write(write_end, "caf\u00e9\n".encode()[4:] + b"\xff\n")
        await until(
            lambda: out.getvalue().count("Please type a to accept or r to reject") == 2,
            "both lines refused as answers, the bad byte included",
        )
        assert session.answers == []
        os.write(write_end, b"r")  # the last line, with no line ending, then the end
        os.close(write_end)
        await until(lambda: bool(session.answers), "the last line, read at the end of input")
    [answer] = session.answers
    assert (answer.reply_token, answer.decision) == ("rpl_pipe1", "reject")


async def test_a_stream_without_a_file_descriptor_is_read_by_a_thread() -> None:
    session = FakeLineSession()
    out = io.StringIO()
    ui = PlainUi(out=out, inp=io.StringIO(":help\n"))
    ui.attach(session)  # type: ignore[arg-type]
    await until(lambda: "Commands:" in out.getvalue(), "the line from the in-memory stream")
