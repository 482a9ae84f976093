"""Every test (and every CLI subprocess it starts) sees an empty settings file of its own."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def isolated_settings_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The developer's real ~/.config/announcer/config.toml must never change a test's result."""
    path = tmp_path / "isolated-config" / "config.toml"
    monkeypatch.setenv("ANNOUNCER_CONFIG", str(path))
    return path
