"""The user's settings: a documented TOML file, environment variables and flags.

``load_settings()`` never fails start-up; ``save_setting()`` keeps the user's
comments. See docs/configuration.md for every field.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from announcer.config.flags import (
        add_language_flag,
        add_settings_flags,
        flags_from_args,
        parse_language_list,
    )
    from announcer.config.loader import (
        ConfigProblem,
        LoadedConfig,
        find_producer,
        load_config,
        load_settings,
        resolve_source,
        system_languages,
    )
    from announcer.config.paths import (
        config_path,
    )
    from announcer.config.store import (
        SettingsStore,
    )
    from announcer.config.writer import (
        ConfigError,
        ensure_file,
        reset_file,
        save_setting,
        save_settings,
    )

# Loaded on first use, so `--help`, `validate` and `hook` (which only need the
# `--language` flag) never import the settings model and its engine types.
_WHERE = {
    "add_language_flag": "announcer.config.flags",
    "add_settings_flags": "announcer.config.flags",
    "flags_from_args": "announcer.config.flags",
    "parse_language_list": "announcer.config.flags",
    "ConfigProblem": "announcer.config.loader",
    "LoadedConfig": "announcer.config.loader",
    "find_producer": "announcer.config.loader",
    "load_config": "announcer.config.loader",
    "load_settings": "announcer.config.loader",
    "resolve_source": "announcer.config.loader",
    "system_languages": "announcer.config.loader",
    "config_path": "announcer.config.paths",
    "SettingsStore": "announcer.config.store",
    "ConfigError": "announcer.config.writer",
    "ensure_file": "announcer.config.writer",
    "reset_file": "announcer.config.writer",
    "save_setting": "announcer.config.writer",
    "save_settings": "announcer.config.writer",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "ConfigError",
    "ConfigProblem",
    "LoadedConfig",
    "SettingsStore",
    "add_language_flag",
    "add_settings_flags",
    "config_path",
    "ensure_file",
    "find_producer",
    "flags_from_args",
    "load_config",
    "load_settings",
    "parse_language_list",
    "reset_file",
    "resolve_source",
    "save_setting",
    "save_settings",
    "system_languages",
]
