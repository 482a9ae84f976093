"""Compatibility path: ``announcer.config.settings.load_settings`` and friends.

Some adapters look the loader up here; the implementation lives in ``loader`` and ``writer``.
"""

from announcer.config.loader import find_producer, load_config, load_settings, resolve_source
from announcer.config.writer import save_setting, save_settings

__all__ = [
    "find_producer",
    "load_config",
    "load_settings",
    "resolve_source",
    "save_setting",
    "save_settings",
]
