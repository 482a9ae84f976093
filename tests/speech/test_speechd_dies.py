"""speech-dispatcher killed mid-session under ``--speech speechd`` (issue 29 item 4).

A real ``announcer listen --ui plain --speech speechd`` speaks through a private
speech-dispatcher into a private PulseAudio sink (tests/speech/sound_server.py); the
server is killed between two announcements. Before, everything after was silent and
nothing said why (only ``-v`` logged it). Now the failure is printed once, the
fallback voice (pyttsx3, into the same sink) says it, and the question that follows
is printed, heard on real audio, and answered.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.reliability.hostile import ACCEPTED, WsProducer, event, frame
from tests.speech.sound_server import Capture
from tests.support.waiting import TIMEOUT

ROOT = Path(__file__).resolve().parents[2]
NOTICE = "switching to pyttsx3"


def confirmation() -> dict[str, Any]:
    body = event("Confirmation needed.", 2)
    del body["from_state"], body["to_state"]
    body.update(
        type="aaep:agent.awaiting.confirmation",
        event_id="evt_dies0002",
        urgency="critical",
        action="Delete the build folder",
        consequence="The folder goes away.",
        reply_token="rpl_dies0001",
        timeout_seconds=300,
        default_decision="reject",
        risk_level="low",
    )
    return body


class Lines:
    """A child's output stream, line by line, as it comes."""

    def __init__(self, stream: asyncio.StreamReader) -> None:
        self.lines: list[str] = []
        self._changed = asyncio.Event()
        self._task = asyncio.ensure_future(self._read(stream))

    async def _read(self, stream: asyncio.StreamReader) -> None:
        while line := await stream.readline():
            self.lines.append(line.decode(errors="replace").rstrip("\n"))
            self._changed.set()

    async def wait_for(self, needle: str) -> str:
        async def seen() -> str:
            while True:
                found = next((line for line in self.lines if needle in line), None)
                if found is not None:
                    return found
                self._changed.clear()
                await self._changed.wait()

        try:
            return await asyncio.wait_for(seen(), TIMEOUT)
        except TimeoutError:
            raise AssertionError(f"never printed {needle!r}; printed: {self.lines}") from None


async def heard_after(capture: Capture, mark: int) -> None:
    """Wait until the sink plays speech after ``mark`` (polled: audio has no event)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + TIMEOUT
    while not capture.heard_since(mark):
        assert loop.time() < deadline, "nothing was heard"
        await asyncio.sleep(0.1)


@pytest.mark.parametrize("speech", ["speechd", "screenreader:speechd"])
async def test_a_killed_speech_dispatcher_is_said_and_the_next_question_is_heard(
    speech: str, tmp_path: Path, pulse: tuple[str, Capture], speechd_on_pulse: Capture
) -> None:
    pulse_server, capture = pulse
    go, answered = asyncio.Event(), asyncio.Event()
    replies: list[dict[str, Any]] = []

    async def serve(ws: Any, producer: WsProducer) -> None:
        await producer.take(ws)
        await ws.send(frame(ACCEPTED))
        await ws.send(frame(event("The build has started.", 1)))
        await go.wait()
        await ws.send(frame(confirmation()))
        async for raw in ws:
            replies.append(json.loads(raw))
            if replies[-1].get("type") == "confirmation.reply":
                answered.set()

    producer = await WsProducer(serve).start()
    child = await asyncio.create_subprocess_exec(
        *[sys.executable, "-m", "announcer", "listen", "--ui", "plain", "--speech", speech],
        producer.url,
        cwd=ROOT,
        env={
            **os.environ,  # SPEECHD_ADDRESS: the private server (speechd_on_pulse)
            "PULSE_SERVER": pulse_server,  # the fallback voice plays into the same sink
            "ANNOUNCER_CONFIG": str(tmp_path / "none.toml"),
            "ANNOUNCER_ANSWER_ARMING_SECONDS": "0.2",
        },
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert child.stdin is not None and child.stdout is not None and child.stderr is not None
    out, err = Lines(child.stdout), Lines(child.stderr)
    try:
        start = capture.mark()
        await out.wait_for("The build has started.")
        await heard_after(capture, start)  # speech-dispatcher speaks
        # the server dies between two announcements
        server_pid = int((tmp_path / "speechd.pid").read_text().split()[0])
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server_pid, signal.SIGKILL)
        after_kill = capture.mark()
        go.set()
        await err.wait_for(NOTICE)
        await out.wait_for("Delete the build folder")  # the question is printed ...
        await heard_after(capture, after_kill)  # ... and heard, from the fallback voice
        await out.wait_for("[needs you] Confirmation needed.")  # its speech has begun
        for _ in range(100):  # typed again while the key is not armed yet ("Not yet.")
            child.stdin.write(b"r\n")
            await child.stdin.drain()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(answered.wait(), 1.0)
                break
        assert answered.is_set(), out.lines
    finally:
        go.set()
        with contextlib.suppress(ProcessLookupError):
            child.send_signal(signal.SIGINT)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(child.wait(), TIMEOUT)
        if child.returncode is None:
            child.kill()
            await child.wait()
        await producer.close()
    assert [r.get("decision") for r in replies if r.get("type") == "confirmation.reply"] == [
        "reject"
    ]
    printed = "\n".join(err.lines)
    killed = speech.partition(":")[0]  # the output that was killed: its failure said once
    assert sum(line.startswith(f"announcer: {killed} failed (") for line in err.lines) == 1, printed
    assert "Traceback" not in printed
