"""One earcon registry for the engine and the speech layer (issue 14 item 3).

The engine once asked for ``confirmation`` and ``session_errored`` while the files
were ``confirmation_needed`` and ``errored``: in a real-audio run only two sounds
played. These tests fail when a name the engine can use has no sound or no label.
"""

from __future__ import annotations

import asyncio
import importlib.util
import io
import json
import time
import wave
from pathlib import Path
from typing import Any

import pytest

from announcer.engine.announcement import Announcement
from announcer.engine.earcons import EARCON_FOR_EVENT, EARCON_LABELS, Earcon, earcon_label
from announcer.engine.settings import UserSettings
from announcer.runtime.session import LiveSession
from announcer.speech.driver import SpeechDriver
from announcer.speech.earcons import EARCON_NAMES, EARCONS_DIR, earcon_path
from announcer.speech.wav import WavBackend
from announcer.transports import TransportOptions
from announcer.ui.plain import PlainUi
from tests.producer.live import running
from tests.reliability.flood_producer import LoopbackProducer
from tests.support.speech_record import agent_speech

BANKING = Path(__file__).resolve().parents[2] / "announcer" / "data" / "banking_session.jsonl"


@pytest.mark.parametrize("earcon", list(Earcon))
def test_every_earcon_has_a_sound_and_a_label(earcon: Earcon) -> None:
    assert earcon_path(earcon.value) is not None, (
        f"announcer/voices/earcons/{earcon.value}.wav is missing"
    )
    assert earcon_label(earcon.value) == EARCON_LABELS[earcon]


def test_every_event_the_engine_marks_has_a_sound() -> None:
    assert set(EARCON_FOR_EVENT.values()) <= set(Earcon)
    for kind, earcon in EARCON_FOR_EVENT.items():
        assert earcon_path(earcon) is not None, kind
    assert set(EARCON_NAMES) == {earcon.value for earcon in Earcon}


def test_the_generator_makes_exactly_the_registered_sounds() -> None:
    generator = Path(__file__).resolve().parents[2] / "scripts" / "make_earcons.py"
    spec = importlib.util.spec_from_file_location("make_earcons", generator)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert set(module.EARCONS) == set(EARCON_NAMES)
    assert {p.stem for p in EARCONS_DIR.glob("*.wav")} == set(EARCON_NAMES)


def test_needs_you_done_failed_and_cancelled_sound_different() -> None:
    sounds = {
        earcon: _frames(earcon_path(earcon))  # type: ignore[arg-type]
        for earcon in (Earcon.NEEDS_YOU, Earcon.COMPLETED, Earcon.ERRORED, Earcon.CANCELLED)
    }
    assert len(set(sounds.values())) == 4


def _frames(path: Path) -> bytes:
    with wave.open(str(path), "rb") as wav:
        return wav.readframes(wav.getnframes())


def _heard_event_ids(record: Path) -> set[str]:
    return {entry["event_id"] for entry in agent_speech(record)}


async def test_a_real_session_plays_the_sounds_and_the_plain_ui_shows_them(
    tmp_path: Path,
) -> None:
    """The bundled banking session from a producer on loopback WebSocket, through the
    engine into real audio files: each utterance with an earcon starts with that sound's
    samples; the plain UI prints the label in its place.

    The producer goes on after a question or a tool's start only once it was heard, as
    a live agent waits for its user. (Read from the file all at once, both questions are
    withdrawn by the next frames before their turn comes, so they are rightly never read
    and only "No answer needed any more" is said; and each tool's start is chatter that
    its own result, already waiting, makes moot: issue 14 c and e.)
    """
    wav = WavBackend(tmp_path / "audio")
    wav.start()
    frames = BANKING.read_text(encoding="utf-8").splitlines()

    async def script(producer: LoopbackProducer, websocket: Any) -> None:
        for line in frames:
            await producer.send(websocket, line)
            frame = json.loads(line)
            kind = frame["type"].removeprefix("aaep:")
            if kind.startswith("agent.awaiting.") or kind == "agent.tool.invoked":
                deadline = time.monotonic() + 60
                while frame["event_id"] not in _heard_event_ids(wav.record_path):
                    assert time.monotonic() < deadline, f"never heard {kind}"
                    await asyncio.sleep(0.02)
        await producer.stop_flooding.wait()

    out = io.StringIO()
    ui = PlainUi(out=out, inp=io.StringIO(""))
    heard_earcons: list[str] = []  # every utterance sent to speech, in order

    class Listener:
        def announcement_made(self, announcement: Announcement) -> None:
            heard_earcons.append(announcement.earcon or "")

        def prompt_opened(self, prompt: object) -> None: ...

        def prompt_voided(self, reply_token: str, reason: str) -> None: ...

        def status_changed(self, status: object) -> None: ...

    async with LoopbackProducer(script) as producer:
        session = LiveSession(
            [producer.url], UserSettings(), TransportOptions(), driver=SpeechDriver(wav)
        )
        ui.attach(session)
        session.subscribe(Listener())
        try:
            async with running(session):
                deadline = time.monotonic() + 120
                while "evt_demo0026bank" not in _heard_event_ids(wav.record_path):
                    assert time.monotonic() < deadline, "never heard the session end"
                    await asyncio.sleep(0.05)
                while session.engine.scheduler.speaking is not None:  # "All done" finishes
                    assert time.monotonic() < deadline
                    await asyncio.sleep(0.05)
        finally:
            wav.close()
    spoken = [
        json.loads(line) for line in wav.record_path.read_text().splitlines() if '"speak"' in line
    ]
    assert len(spoken) == len(heard_earcons)
    played = 0
    for number, earcon in enumerate(heard_earcons, start=1):
        if not earcon:
            continue
        sound = _frames(earcon_path(earcon))  # type: ignore[arg-type]
        audio = tmp_path / "audio" / f"{number:04d}.wav"
        if audio.is_file():
            assert _frames(audio).startswith(sound), (number, earcon)
            played += 1
    assert {Earcon.NEEDS_YOU, Earcon.COMPLETED, Earcon.TOOL} <= set(heard_earcons)
    assert played >= 3
    printed = out.getvalue().splitlines()
    assert printed[-1].startswith("[done] All done.")
    assert any(line.startswith("[needs you] Question.") for line in printed)
    assert any(line.startswith("[tool] ") for line in printed)
