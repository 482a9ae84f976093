"""A number the user types, read the way their language writes numbers (§6.5.2).

A numeric answer is a plain decimal number: digits (of any script), an optional
sign, the locale's decimal mark and, optionally, its digit grouping (``1.234,5`` in
German, ``1 234,5`` in French, ``1,234.5`` in English, ``٢٫٥`` in Arabic). Exponents,
``inf``, ``nan``, hexadecimal and anything else are refused: ``2.5e3`` is not a
number of nights. Values stay within the range every JSON peer reads exactly
(§3.8, ±2^53). babel parses strictly, so ``2,5`` in English is refused rather
than read as 25.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Literal

from babel import numbers as babel_numbers

from announcer.i18n.format import babel_locale

# §3.8: integers within ±2^53 keep their exact value in every JSON reader.
SAFE_LIMIT = 2**53
# Decimal separators other scripts use, accepted beside the locale's own.
_ARABIC_DECIMAL = "\u066b"  # ٫
_ARABIC_GROUP = "\u066c"  # ٬
_MINUS = "-\u2212"
_SPACES = " \u00a0\u202f"

Problem = Literal["empty", "not_a_number", "too_large"]


@dataclass(frozen=True, slots=True)
class NumberReading:
    """The value read, or why there is none."""

    value: int | float | None
    problem: Problem | None = None


def number_marks(language: str) -> tuple[str, str]:
    """The decimal mark and the grouping mark of the language."""
    locale = babel_locale(language)
    return babel_numbers.get_decimal_symbol(locale), babel_numbers.get_group_symbol(locale)


def typing_pattern(language: str) -> str:
    """A regex of what may be typed into a number field (for ``Input(restrict=...)``)."""
    decimal, group = number_marks(language)
    marks = re.escape(decimal + group + _ARABIC_DECIMAL + _ARABIC_GROUP + _SPACES)
    return rf"[+{re.escape(_MINUS)}]?[\d{marks}]*"


def _ascii_digits(text: str) -> str:
    return "".join(
        str(unicodedata.decimal(ch)) if ch.isdecimal() and not ch.isascii() else ch for ch in text
    )


def read_number(text: str, language: str) -> NumberReading:
    """Read a typed number in the user's language; never an exponent, never ±inf/NaN."""
    text = text.strip()
    if not text:
        return NumberReading(None, "empty")
    decimal, group = number_marks(language)
    text = _ascii_digits(text).replace(_ARABIC_DECIMAL, decimal).replace(_ARABIC_GROUP, group)
    sign = ""
    if text[0] in "+" + _MINUS:
        sign, text = ("-" if text[0] in _MINUS else ""), text[1:].lstrip()
    if group.strip() == "":  # a space groups digits (French): any kind of space does
        text = re.sub(f"[{_SPACES}]", group, text)
    if not text or (not text[0].isdigit() and text[0] != decimal):
        return NumberReading(None, "not_a_number")
    if not all((ch.isascii() and ch.isdigit()) or ch in (decimal, group) for ch in text):
        return NumberReading(None, "not_a_number")
    try:
        value = babel_numbers.parse_decimal(text, babel_locale(language), strict=True)
    except (babel_numbers.NumberFormatError, InvalidOperation, ValueError):
        return NumberReading(None, "not_a_number")
    if sign:
        value = -value
    if not value.is_finite():
        return NumberReading(None, "not_a_number")
    if abs(value) > SAFE_LIMIT:
        return NumberReading(None, "too_large")
    if decimal not in text and value == value.to_integral_value():
        return NumberReading(int(value))
    return NumberReading(_plain_float(value))


def _plain_float(value: Decimal) -> int | float:
    number = float(value)
    return int(number) if number.is_integer() and number == value else number
