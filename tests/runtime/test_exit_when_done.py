"""``--exit-when-done`` waits for queued speech: every announcement is heard, on real audio."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from announcer.cli.commands.listen import format_adapter
from announcer.engine.settings import UserSettings
from announcer.runtime.session import LiveSession
from announcer.speech.audio import SinkPlayer, wav_info, wav_rms
from announcer.speech.driver import SpeechDriver
from announcer.speech.pyttsx3_backend import Pyttsx3Backend
from announcer.transports import TransportOptions
from tests.shared_data import SHARED as SHARED_ROOT
from tests.support.producers import short_source

STEP_FINISH = SHARED_ROOT / "peers/agent-cli-streams/opencode__run_json__v1__step_finish.jsonl"


async def test_the_last_announcement_is_spoken_before_the_listener_exits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """OpenCode's "finished a step" waits in the engine while "session started" plays;
    the source has ended by then, and exiting must not drop it (replay speaks it)."""
    sink = SinkPlayer(tmp_path / "heard")
    backend = Pyttsx3Backend(sink)
    backend.start()
    try:
        session = LiveSession(
            [short_source(STEP_FINISH, tmp_path, monkeypatch)],
            UserSettings(),
            TransportOptions(),
            driver=SpeechDriver(backend),
            exit_when_done=True,
            adapter_factory=format_adapter("opencode"),
        )
        assert await asyncio.wait_for(session.run(), 180) == 0
    finally:
        backend.close()
    heard = [announcement.text for announcement, _ in backend.history]
    assert heard[-2:] == ["OpenCode session started.", "OpenCode finished a step."]
    # ...and it was played whole and audible, not cut short by the exit
    words = [out for source, out in sink.played if source.name.startswith("utterance-")]
    assert len(words) == len(heard)
    assert wav_rms(words[-1]) > 0.02
    assert wav_info(words[-1]).duration_s > 1.0
    assert backend.is_speaking() is False
