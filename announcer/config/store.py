"""The settings a running session uses, and saving what the user changes in the UI.

A settings screen hands back a whole ``UserSettings``; only the fields the user
changed since they were loaded (or last saved) are written, so a value that
came from ``--verbosity`` or ``ANNOUNCER_BACKEND`` for this run is not made
permanent by an unrelated change. Use ``store.save`` as the UI's saver callback.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from announcer.config.loader import LoadedConfig, load_config
from announcer.config.writer import save_settings
from announcer.engine.settings import UserSettings


class SettingsStore:
    """Settings in force for this run, with comment-preserving saves of the user's changes."""

    def __init__(self, loaded: LoadedConfig) -> None:
        self.loaded = loaded
        self.settings = loaded.settings

    @classmethod
    def load(
        cls,
        path: Path | None = None,
        *,
        env: Mapping[str, str] | None = None,
        flags: Mapping[str, Any] | argparse.Namespace | None = None,
        report: Callable[[str], None] | None = None,
    ) -> SettingsStore:
        """Load all layers (never raises); problems go to ``report`` in the user's language."""
        loaded = load_config(path, env=env, flags=flags)
        if report is not None:
            for problem in loaded.problems:
                report(problem.describe(loaded.ui_language))
        return cls(loaded)

    @property
    def path(self) -> Path:
        return self.loaded.path

    def save(self, settings: UserSettings) -> list[str]:
        """Write the fields that differ from the settings in force; returns their names.

        Raises ``ConfigError`` (nothing written) if the file is not valid TOML.
        """
        written = save_settings(settings, self.loaded.path, base=self.settings)
        self.settings = settings
        return written
