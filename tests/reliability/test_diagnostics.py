"""Every dropped frame is counted with its reason and readable without ``-v`` (issue 13).

Three places: the plain UI's ``:diagnostics`` command (the real ``announcer listen``
against a hostile producer on loopback), the Textual UI's diagnostics screen (key D),
and ``diagnostics.log`` in the user's state directory, which holds envelope fields
and reasons only, never payload text.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

from textual.widgets import OptionList

from announcer.engine.pipeline import Engine
from announcer.protocol.log import DiagnosticsLog
from announcer.runtime.diagnostics import DiagnosticsFile, diagnostics_report
from announcer.speech.jsonl import JsonlBackend
from announcer.transports.base import release_process_pipes
from announcer.ui.tui.app import AnnouncerApp
from tests.reliability.flood_producer import LoopbackProducer, event
from tests.support.engine_session import EngineSession

SECRET = "SECRET-PAYLOAD-4242"
WORKTREE = Path(__file__).resolve().parents[2]


def hostile_frames() -> list[str]:
    broken_time = json.loads(event(2, "agent.tool.invoked", summary_normal=f"Using {SECRET}."))
    broken_time["timestamp"] = "yesterday"
    broken_time["tool"] = "read_file"
    return [
        event(0, "agent.session.started", summary_normal="Go."),
        event(1, "agent.purple.flamingo", summary_terse=SECRET),  # unknown, nothing to say
        json.dumps(broken_time),
        "{not json " + SECRET,
        event(3, "agent.tool.invoked", tool="read_file", summary_normal="Reading the README."),
    ]


async def read_until(stream: asyncio.StreamReader, needle: str, timeout: float) -> list[str]:
    lines: list[str] = []
    deadline = time.monotonic() + timeout
    while True:
        remaining = deadline - time.monotonic()
        assert remaining > 0, f"never printed {needle!r}; printed {lines}"
        raw = await asyncio.wait_for(stream.readline(), remaining)
        assert raw, f"output ended before {needle!r}; printed {lines}"
        lines.append(raw.decode("utf-8", "replace").rstrip("\n"))
        if needle in lines[-1]:
            return lines


async def test_the_plain_ui_lists_every_drop_and_the_log_file_keeps_no_payload(
    tmp_path: Path,
) -> None:
    async def script(producer: LoopbackProducer, websocket: Any) -> None:
        for frame in hostile_frames():
            await producer.send(websocket, frame)
        await producer.stop_flooding.wait()

    state_home = tmp_path / "state"
    async with LoopbackProducer(script) as producer:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "announcer",
            "listen",
            producer.url,
            "--ui",
            "plain",
            "--speech",
            f"jsonl:{tmp_path / 'speech.jsonl'}",
            cwd=WORKTREE,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env={**os.environ, "XDG_STATE_HOME": str(state_home)},
        )
        try:
            assert process.stdout is not None and process.stdin is not None
            await read_until(process.stdout, "Reading the README.", 60)
            process.stdin.write(b":diagnostics\n")
            printed = await read_until(process.stdout, "Log file:", 30)
            process.send_signal(signal.SIGINT)
            await asyncio.wait_for(process.wait(), 30)
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
            release_process_pipes(process)
    report = "\n".join(printed)
    assert "type.unknown_core: 1" in report
    assert "timestamp.format: 1" in report
    assert "json.syntax" in report or "json" in report.lower()
    assert "type=aaep:agent.purple.flamingo event_id=evt_1" in report  # which frame
    assert SECRET not in report
    log_file = state_home / "announcer" / "diagnostics.log"
    assert f"Log file: {log_file}" in report
    logged = log_file.read_text(encoding="utf-8")
    assert "type.unknown_core" in logged and "timestamp" in logged
    dropped = [line for line in logged.splitlines() if "] dropped from ws://" in line]
    assert len(dropped) == 3, logged  # one line per dropped frame
    assert SECRET not in logged  # envelope fields and reasons only (§11.2)
    assert process.returncode == 0


async def test_the_textual_ui_has_a_diagnostics_screen() -> None:
    records = io.StringIO()
    session = EngineSession(Engine(), JsonlBackend(records))
    app = AnnouncerApp(session)
    async with app.run_test() as pilot:
        await pilot.pause()
        for frame in hostile_frames():
            session.receive(frame, "ws://127.0.0.1:1")
        await pilot.pause()
        await pilot.press("d")
        await pilot.pause()
        rows = app.screen.query_one(OptionList)
        shown = [str(rows.get_option_at_index(i).prompt) for i in range(rows.option_count)]
        assert "type.unknown_core: 1" in shown
        assert any("timestamp.format" in row for row in shown)
        assert not any(SECRET in row for row in shown)
        spoken = [json.loads(line)["text"] for line in records.getvalue().splitlines()]
        assert any(text.startswith("Diagnostics.") for text in spoken)  # the screen says itself
        await pilot.press("escape")
        await pilot.pause()
        assert type(app.screen).__name__ == "MainScreen"


def test_the_log_file_is_bounded_in_rate_and_a_broken_one_is_reported(tmp_path: Path) -> None:
    now = [0.0]
    log = DiagnosticsLog()
    log_file = DiagnosticsFile(tmp_path / "d.log", clock=lambda: now[0], burst=5)
    log.listeners.append(log_file)
    for index in range(50):  # a flood of drops at one instant
        log.record_drop("limits.frame_bytes", "frame over the size limit", source=f"s{index}")
    assert log_file.written == 5 and log_file.left_out == 45
    now[0] = 10.0
    log.record_drop("limits.frame_bytes", "frame over the size limit")
    lines = (tmp_path / "d.log").read_text(encoding="utf-8").splitlines()
    assert "45 more records were left out" in lines[-2]
    assert log.counts() == {"limits.frame_bytes": 51}  # all counted all the same

    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the folder should be")
    broken = DiagnosticsFile(blocked / "announcer" / "diagnostics.log")
    with contextlib.suppress(Exception):
        log.listeners.append(broken)
    log.record_drop("frame.unhandled", "a frame could not be handled")
    assert broken.error is not None
    lines = diagnostics_report(
        counts=log.counts(),
        recent=log.recent(),
        speech_drops={},
        suppressed={},
        transport_drops={},
        log_file=broken,
        _t=lambda text: text,
    )
    assert any("cannot be written" in line for line in lines)
