"""Every test (and every CLI subprocess it starts) sees an empty settings file of its own,
and the same neutral locale, whatever the developer's or CI's environment says."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def isolated_settings_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The developer's real ~/.config/announcer/config.toml must never change a test's result."""
    path = tmp_path / "isolated-config" / "config.toml"
    monkeypatch.setenv("ANNOUNCER_CONFIG", str(path))
    # ... nor may a test write the developer's diagnostics log (platformdirs state dir).
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "isolated-state"))
    # The system locale is a settings source (languages); tests that want one set it themselves.
    monkeypatch.setenv("LANG", "C.UTF-8")
    for name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(name, raising=False)
    for name in [key for key in os.environ if key.startswith("ANNOUNCER_")]:
        if name != "ANNOUNCER_CONFIG":
            monkeypatch.delenv(name, raising=False)
    return path
