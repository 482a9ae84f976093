"""Shared fixtures for the speech tests: a real sink player, closed after each test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from announcer.speech.audio import SinkPlayer


@pytest.fixture
def sink(tmp_path: Path) -> Iterator[SinkPlayer]:
    player = SinkPlayer(tmp_path / "heard")
    yield player
    player.close()  # end its standby process
