"""The user's settings: a documented TOML file, environment variables and flags.

``load_settings()`` never fails start-up; ``save_setting()`` keeps the user's
comments. See docs/configuration.md for every field.
"""

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
from announcer.config.paths import config_path
from announcer.config.store import SettingsStore
from announcer.config.writer import (
    ConfigError,
    ensure_file,
    reset_file,
    save_setting,
    save_settings,
)

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
