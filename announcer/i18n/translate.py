"""Gettext translators for the product's own phrases, one per language.

Generated announcements, UI labels and user-facing errors go through
``translator(language).gettext`` (or ``ngettext`` for counts). The catalogs'
sources are ``locales/<code>/LC_MESSAGES/announcer.po`` in the checkout
(docs/localization.md). Building the package (setup.py) compiles them into
``announcer/locales/<code>/LC_MESSAGES/announcer.mo`` inside the wheel, which an
installed announcer reads through ``importlib.resources``. In a checkout a compiled
``announcer.mo`` beside the ``.po`` is used when it is at least as new
(``pybabel compile -d locales -D announcer``); otherwise babel compiles the ``.po``
in memory on first use, so a fresh checkout needs no build step and a translator's
edit shows up on the next start. A language with no catalog gets the English
source text.
"""

from __future__ import annotations

import gettext
import io
import os
from collections.abc import Sequence
from functools import lru_cache
from importlib import resources
from pathlib import Path

from announcer.i18n.negotiate import choose_language
from announcer.i18n.tags import primary_subtag

DOMAIN = "announcer"
SOURCE_LANGUAGE = "en"
# BCP 47 tag -> folder under locales/ (POSIX spelling, as babel and gettext expect).
CATALOG_FOLDERS: dict[str, str] = {
    "es": "es",
    "fr": "fr",
    "de": "de",
    "pt-BR": "pt_BR",
    "ar": "ar",
    "yo": "yo",
}
SHIPPED_LANGUAGES: tuple[str, ...] = (SOURCE_LANGUAGE, *CATALOG_FOLDERS)
# Set to point at another catalog tree (a translator's working copy, an installed share/ dir).
LOCALE_DIR_VARIABLE = "ANNOUNCER_LOCALE_DIR"


# Where setup.py's build step puts the compiled catalogs inside the package.
PACKAGED_CATALOGS = "locales"


def checkout_locale_dir() -> Path | None:
    """The checkout's ``locales/`` (the ``.po`` sources), when running from a checkout."""
    root = Path(__file__).resolve().parents[2]
    if (root / "pyproject.toml").is_file() and (root / "locales").is_dir():
        return root / "locales"
    return None


def packaged_locale_dir() -> Path:
    """The catalogs compiled into the installed package (a wheel, a PyInstaller folder)."""
    return Path(str(resources.files("announcer") / PACKAGED_CATALOGS))


def locale_dir() -> Path:
    """Where the catalogs are: ``$ANNOUNCER_LOCALE_DIR``, the checkout's ``locales/``, or the
    compiled catalogs inside the installed package."""
    override = os.environ.get(LOCALE_DIR_VARIABLE)
    if override:
        return Path(override)
    return checkout_locale_dir() or packaged_locale_dir()


def catalog_language(user_chain: Sequence[str] | str) -> str:
    """The shipped catalog that best serves the user's chain (§11.1.3); English if none.

    ``es-MX`` gets ``es``, ``pt`` and ``pt-PT`` get ``pt-BR``, ``sw`` gets ``en``.
    """
    chain = [user_chain] if isinstance(user_chain, str) else list(user_chain)
    chosen = choose_language(SHIPPED_LANGUAGES, chain, event_language=SOURCE_LANGUAGE)
    return chosen or SOURCE_LANGUAGE


def has_catalog(language: str) -> bool:
    """True when generated phrases can be said in ``language`` or a close relative of it."""
    if catalog_language([language]) != SOURCE_LANGUAGE:
        return True
    return primary_subtag(language) == SOURCE_LANGUAGE


def po_path(language: str) -> Path:
    """The ``.po`` source of a shipped catalog (``pt-BR`` -> ``pt_BR/LC_MESSAGES/announcer.po``)."""
    folder = CATALOG_FOLDERS[language]
    return locale_dir() / folder / "LC_MESSAGES" / f"{DOMAIN}.po"


def _load(language: str) -> gettext.NullTranslations:
    source = po_path(language)
    compiled = source.with_suffix(".mo")
    try:
        if compiled.is_file() and (
            not source.is_file() or compiled.stat().st_mtime >= source.stat().st_mtime
        ):
            with compiled.open("rb") as handle:
                return gettext.GNUTranslations(handle)
        # babel's catalog reader only for a checkout's uncompiled .po: an installed
        # announcer reads compiled catalogs, and English reads none
        from babel.messages.pofile import read_po

        with source.open("rb") as handle:
            catalog = read_po(handle, locale=CATALOG_FOLDERS[language], domain=DOMAIN)
    except OSError:
        return gettext.NullTranslations()
    from babel.messages.mofile import write_mo

    buffer = io.BytesIO()
    write_mo(buffer, catalog, use_fuzzy=False)
    buffer.seek(0)
    return gettext.GNUTranslations(buffer)


@lru_cache(maxsize=64)
def translator(language: str) -> gettext.NullTranslations:
    """Return the translator for a BCP 47 tag such as ``es``, ``es-MX`` or ``pt-BR``.

    Regional and bare tags find the nearest shipped catalog; a language with
    no catalog, or English, gets the source text unchanged.
    """
    chosen = catalog_language([language]) if isinstance(language, str) else SOURCE_LANGUAGE
    if chosen == SOURCE_LANGUAGE:
        return gettext.NullTranslations()
    return _load(chosen)


def N_(message: str) -> str:
    """Mark a string for extraction without translating it yet (tables of phrases).

    ``PHRASES = {"transient": N_("A temporary problem...")}`` is found by
    ``pybabel extract``; translate it where it is used: ``t.gettext(PHRASES[key])``.
    """
    return message


def clear_cache() -> None:
    """Forget loaded catalogs (after a translator edits a ``.po``, or in tests)."""
    translator.cache_clear()
