"""Shared fixtures for the speech tests: a real sink player, and the speech engine present."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from announcer.speech.audio import SinkPlayer


@pytest.fixture
def sink(tmp_path: Path) -> SinkPlayer:
    return SinkPlayer(tmp_path / "heard")


@pytest.fixture(scope="session")
def espeak() -> None:
    if shutil.which("espeak-ng") is None:
        pytest.fail("espeak-ng is not installed; ./test installs it (scripts/bootstrap.sh)")
