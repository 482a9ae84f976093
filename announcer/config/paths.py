"""Where the settings file lives: ``$ANNOUNCER_CONFIG``, else the platform's config directory."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import platformdirs

APP_NAME = "announcer"
FILE_NAME = "config.toml"
CONFIG_VARIABLE = "ANNOUNCER_CONFIG"


def config_path(env: Mapping[str, str] | None = None) -> Path:
    """``~/.config/announcer/config.toml`` on Linux, the AppData/Library equivalents elsewhere."""
    environ = os.environ if env is None else env
    override = environ.get(CONFIG_VARIABLE)
    if override:
        return Path(override).expanduser()
    return platformdirs.user_config_path(APP_NAME, appauthor=False) / FILE_NAME
