"""Numbers typed by the user, read as their language writes them (§6.5.2, §3.8)."""

from __future__ import annotations

import re

import pytest

from announcer.i18n.numbers import read_number, typing_pattern


@pytest.mark.parametrize(
    ("text", "language", "value"),
    [
        ("3", "en", 3),
        ("-3", "en", -3),
        ("\u22123", "en", -3),
        ("66.5", "en", 66.5),
        ("1,234.5", "en", 1234.5),
        ("2,5", "de", 2.5),
        ("1.234,5", "de", 1234.5),
        ("1 234,5", "fr", 1234.5),
        ("1\u202f234,5", "fr", 1234.5),
        ("2,5", "pt-BR", 2.5),
        ("2,5", "es", 2.5),
        ("\u0661\u0662", "ar", 12),
        ("\u0662\u066b\u0665", "ar", 2.5),
        ("4", "yo", 4),
        ("9007199254740992", "en", 2**53),
    ],
)
def test_plain_numbers_in_each_language(text: str, language: str, value: float) -> None:
    reading = read_number(text, language)
    assert reading.problem is None
    assert reading.value == value
    assert type(reading.value) is type(value)


@pytest.mark.parametrize(
    ("text", "language", "problem"),
    [
        ("", "en", "empty"),
        ("2.5e3", "en", "not_a_number"),
        ("1E3", "de", "not_a_number"),
        ("inf", "en", "not_a_number"),
        ("NaN", "en", "not_a_number"),
        ("0x10", "en", "not_a_number"),
        ("2,5", "en", "not_a_number"),  # not read as 25
        ("12,34", "en", "not_a_number"),
        ("1_000", "en", "not_a_number"),
        ("--3", "en", "not_a_number"),
        ("three", "en", "not_a_number"),
        ("9007199254740993", "en", "too_large"),
        ("-9007199254740993", "en", "too_large"),
    ],
)
def test_anything_else_is_refused_with_a_reason(text: str, language: str, problem: str) -> None:
    assert read_number(text, language) == read_number(text, language)
    reading = read_number(text, language)
    assert reading.value is None
    assert reading.problem == problem


def test_the_typing_pattern_refuses_letters_and_takes_the_locale_marks() -> None:
    assert re.fullmatch(typing_pattern("de"), "-1.234,5")
    assert re.fullmatch(typing_pattern("fr"), "1\u202f234,5")
    assert not re.fullmatch(typing_pattern("en"), "2.5e3")
