"""Shared fixtures for the speech tests: a real sink player, closed after each test; a
private PulseAudio and speech-dispatcher speaking into it (tests/speech/sound_server.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from announcer.speech.audio import SinkPlayer
from tests.speech.sound_server import pulse, speechd_on_pulse

__all__ = ["pulse", "sink", "speechd_on_pulse"]


@pytest.fixture
def sink(tmp_path: Path) -> Iterator[SinkPlayer]:
    player = SinkPlayer(tmp_path / "heard")
    yield player
    player.close()  # end its standby process
