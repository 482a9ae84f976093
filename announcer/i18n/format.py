"""Numbers, percentages, durations, dates and lists in the listener's locale, with babel.

Every generated phrase that carries a value formats it here, so a German
listener hears "1.234,5", an Arabic one "٤٢٪" where her locale writes it so,
and everyone hears "about 30 seconds" in their own words. Numbers use the
locale's default numbering system (``ar-SA`` has Arabic-Indic digits, ``ar``
and ``ar-MA`` Latin ones, as CLDR says).

Duration units come from CLDR where it has full ("long") unit names; where it
does not (Yoruba's CLDR data only has abbreviations such as "ìṣ", which a
speech synthesiser cannot read), our own catalog's plural phrases are used.
"""

from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Sequence
from functools import lru_cache
from typing import Literal

from babel import Locale, UnknownLocaleError
from babel import dates as babel_dates
from babel import lists as babel_lists
from babel import numbers as babel_numbers
from babel import units as babel_units

from announcer.i18n.tags import parse_tag
from announcer.i18n.translate import translator

__all__ = [
    "babel_locale",
    "format_date",
    "format_datetime",
    "format_duration",
    "format_integer",
    "format_list",
    "format_number",
    "format_percent",
    "format_time",
    "language_name",
]

_FALLBACK_LOCALE = "en"


@lru_cache(maxsize=128)
def babel_locale(language: str) -> Locale:
    """The babel locale for a BCP 47 tag: the tag, then its broader forms, then English."""
    tag = parse_tag(language) if isinstance(language, str) else None
    candidates: list[str] = []
    if tag is not None:
        candidates = [str(t) for t in tag.truncations()]
    for candidate in [*candidates, _FALLBACK_LOCALE]:
        try:
            return Locale.parse(candidate, sep="-")
        except (ValueError, TypeError, UnknownLocaleError):
            continue
    return Locale.parse(_FALLBACK_LOCALE)


# Babel applies a numbering system's symbols but keeps ASCII digits; CLDR locales whose default
# system is one of these (ar-SA, fa, bn...) write their own digits, so they are put in here.
_DIGIT_ZERO = {"arab": 0x0660, "arabext": 0x06F0, "beng": 0x09E6, "deva": 0x0966, "mymr": 0x1040}


def _native_digits(text: str, language: str) -> str:
    zero = _DIGIT_ZERO.get(babel_locale(language).default_numbering_system)
    if zero is None:
        return text
    return text.translate({ord("0") + i: chr(zero + i) for i in range(10)})


def format_number(value: float, language: str, *, max_fraction_digits: int = 2) -> str:
    """A decimal number with the locale's separators: ``1,234.5`` / ``1.234,5``."""
    pattern = "#,##0." + "#" * max_fraction_digits if max_fraction_digits > 0 else "#,##0"
    return _native_digits(
        babel_numbers.format_decimal(
            value, format=pattern, locale=babel_locale(language), numbering_system="default"
        ),
        language,
    )


def format_integer(value: int, language: str) -> str:
    """A whole number with the locale's grouping (``12,000``, ``12.000``, ``12 000``)."""
    return _native_digits(
        babel_numbers.format_decimal(
            value, format="#,##0", locale=babel_locale(language), numbering_system="default"
        ),
        language,
    )


def format_percent(fraction: float, language: str) -> str:
    """``0.42`` -> ``42%`` / ``42 %``; AAEP progress ``percent`` fields are 0-100, divide first."""
    return _native_digits(
        babel_numbers.format_percent(
            fraction, locale=babel_locale(language), numbering_system="default"
        ),
        language,
    )


ListStyle = Literal[
    "standard", "standard-short", "or", "or-short", "unit", "unit-short", "unit-narrow"
]


def _has_long_units(locale: Locale) -> bool:
    """CLDR has spoken-length words for seconds, minutes and hours in this language.

    A "long" pattern that is the short one again (babel 2.19's Yoruba: "2 ìṣ", with or
    without the space) is an abbreviation a voice cannot read; the catalog's words
    are used instead.
    """
    patterns = locale._data["unit_patterns"]
    for unit in ("duration-second", "duration-minute", "duration-hour"):
        try:
            long_form = patterns[unit]["long"]["other"]
            short_form = patterns[unit]["short"]["other"]
        except KeyError:
            return False
        if "".join(str(long_form).split()) == "".join(str(short_form).split()):
            return False
    return True


def _unit_phrase(count: int, unit: str, language: str) -> str:
    locale = babel_locale(language)
    if _has_long_units(locale):
        return _native_digits(
            babel_units.format_unit(
                count, f"duration-{unit}", length="long", locale=locale, numbering_system="default"
            ),
            language,
        )
    t = translator(language)
    number = format_integer(count, language)
    if unit == "second":
        return t.ngettext("{count} second", "{count} seconds", count).format(count=number)
    if unit == "minute":
        return t.ngettext("{count} minute", "{count} minutes", count).format(count=number)
    return t.ngettext("{count} hour", "{count} hours", count).format(count=number)


def _rounded(seconds: float) -> tuple[int, str]:
    """Round a duration the way people say it: 7 s, 30 s, 4 min, 2 h."""
    if seconds < 10:
        return max(1, round(seconds)), "second"
    if seconds < 57.5:
        return int(5 * round(seconds / 5)), "second"
    if seconds < 59.5 * 60:
        return max(1, round(seconds / 60)), "minute"
    return max(1, round(seconds / 3600)), "hour"


def format_duration(
    seconds: float,
    language: str,
    *,
    approximate: bool = True,
    list_style: ListStyle = "unit",
) -> str:
    """``about 30 seconds``, ``about 4 minutes``; exact: ``1 minute, 5 seconds``.

    Approximate durations are for estimates (AAEP ``estimated_remaining``);
    exact ones for elapsed times the user asked for. ``list_style="standard"``
    joins exact units as a sentence does: ``1 minute and 5 seconds``.
    """
    t = translator(language)
    if not math.isfinite(seconds) or seconds < 0:
        seconds = 0.0
    if approximate:
        if seconds < 1:
            return t.gettext("less than a second")
        count, unit = _rounded(seconds)
        return t.gettext("about {duration}").format(duration=_unit_phrase(count, unit, language))
    whole = round(seconds)
    if whole < 1:
        return t.gettext("less than a second")
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [
        _unit_phrase(value, unit, language)
        for value, unit in ((hours, "hour"), (minutes, "minute"), (secs, "second"))
        if value
    ]
    return format_list(parts, language, style=list_style)


def format_date(value: _dt.date | _dt.datetime, language: str, *, length: str = "long") -> str:
    """A calendar date: ``21 November 2026`` / ``21 de noviembre de 2026``."""
    return babel_dates.format_date(value, format=length, locale=babel_locale(language))


def format_time(value: _dt.time | _dt.datetime, language: str, *, length: str = "short") -> str:
    """A clock time: ``2:05 PM`` / ``14:05``."""
    return babel_dates.format_time(value, format=length, locale=babel_locale(language))


def format_datetime(value: _dt.datetime, language: str, *, length: str = "medium") -> str:
    """A date and time together, in the locale's order."""
    return babel_dates.format_datetime(value, format=length, locale=babel_locale(language))


def format_list(items: Sequence[str], language: str, *, style: ListStyle = "standard") -> str:
    """``a, b and c`` / ``a, b y c`` / ``a وb وc``."""
    if not items:
        return ""
    locale = babel_locale(language)
    try:
        joined = babel_lists.format_list(list(items), style=style, locale=locale)
    except KeyError:  # some locales' CLDR data lacks the unit list patterns
        joined = babel_lists.format_list(list(items), style="standard", locale=locale)
    if len(items) > 1 and locale.language in _GLUED_CONJUNCTIONS:
        # CLDR writes Yoruba "{0} àti{1}": a voice then reads "àtiìṣẹ́jú" as one word.
        glued = _GLUED_CONJUNCTIONS[locale.language]
        last = items[-1]
        if joined.endswith(glued + last):
            joined = joined[: -len(glued + last)] + glued + " " + last
    return joined


# Conjunctions CLDR glues to the next item though they are words of their own
# (Arabic "و" is a real proclitic and stays attached).
_GLUED_CONJUNCTIONS = {"yo": "àti"}


def language_name(tag: str, in_language: str) -> str:
    """The name of language ``tag`` in ``in_language`` ("Yoruba", "yoruba", "اليوروبا").

    Falls back to the tag itself when CLDR has no name for it.
    """
    parsed = parse_tag(tag)
    if parsed is None:
        return tag
    try:
        named = Locale.parse(str(parsed), sep="-")
    except (ValueError, TypeError, UnknownLocaleError):
        try:
            named = Locale.parse(parsed.language)
        except (ValueError, TypeError, UnknownLocaleError):
            return tag
    name = named.get_display_name(babel_locale(in_language))
    return name or tag
