"""Helpers for the engine's own phrases (English msgids, translated through gettext).

``N_`` marks a msgid kept in a table so ``pybabel extract`` finds it; the phrase is
translated where it is used, with ``translator(language).gettext``.
"""

from __future__ import annotations

from announcer.i18n.translate import translator


def N_(message: str) -> str:
    return message


def duration_phrase(seconds: int, language: str) -> str:
    """A prompt timeout as people say it: "5 minutes", "90 seconds"."""
    tr = translator(language)
    if seconds >= 120 and seconds % 60 == 0:
        minutes = seconds // 60
        return tr.ngettext("{count} minute", "{count} minutes", minutes).format(count=minutes)
    return tr.ngettext("{count} second", "{count} seconds", seconds).format(count=seconds)
