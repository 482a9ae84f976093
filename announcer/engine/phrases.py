"""Helpers for the engine's own phrases (English msgids, translated through gettext).

``N_`` marks a msgid kept in a table so ``pybabel extract`` finds it; the phrase is
translated where it is used, with ``translator(language).gettext``.
"""

from __future__ import annotations

from announcer.i18n.format import format_duration


def N_(message: str) -> str:
    return message


def duration_phrase(seconds: float, language: str) -> str:
    """An exact duration as people say it, in ``language`` with its plural rules.

    "1 minute", "2 minutes", "1 minute and 30 seconds", "dos minutos", "ìṣẹ́jú 2": babel's
    CLDR units, or our catalog where CLDR lacks full unit names
    (:func:`announcer.i18n.format.format_duration`). Never "1 minutes".
    """
    return format_duration(seconds, language, approximate=False, list_style="standard")
