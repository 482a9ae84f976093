"""NFC for comparison only, grapheme-safe cutting, direction (§11.3, §11.4), babel formatting."""

from __future__ import annotations

import datetime as dt
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from announcer.i18n.format import (
    format_date,
    format_duration,
    format_integer,
    format_list,
    format_number,
    format_percent,
    language_name,
)
from announcer.i18n.text import (
    FSI,
    PDI,
    RLI,
    comparison_key,
    for_display,
    graphemes,
    isolate,
    language_direction,
    resolve_direction,
    same_text,
    strip_bidi_controls,
    truncate_graphemes,
)

YORUBA_NFC = unicodedata.normalize("NFC", "Ẹ ku àárọ̀. Ṣé o sun re?")
YORUBA_NFD = unicodedata.normalize("NFD", YORUBA_NFC)


# --- §11.3.2 normalisation -----------------------------------------------------------------------


def test_nfd_and_nfc_compare_equal_but_are_never_rewritten() -> None:
    assert YORUBA_NFD != YORUBA_NFC
    assert same_text(YORUBA_NFD, YORUBA_NFC)
    assert comparison_key(YORUBA_NFD) == comparison_key(YORUBA_NFC)
    # Cutting keeps the producer's own form: nothing here normalises displayed text.
    assert truncate_graphemes(YORUBA_NFD, 1000) == YORUBA_NFD


def test_comparison_folds_case() -> None:
    assert same_text("STRASSE", "straße")


# --- §11.3.3 grapheme clusters -------------------------------------------------------------------


def test_graphemes_keep_combining_marks_and_emoji_sequences_whole() -> None:
    text = "ọ̀" + "👩🏽‍💻" + "🇳🇬" + "e\u0301"
    clusters = graphemes(unicodedata.normalize("NFD", "ọ̀") + text[2:])
    assert len(clusters) == 4
    assert clusters[1] == "👩🏽‍💻" and clusters[2] == "🇳🇬"


def test_truncation_never_splits_a_yoruba_letter_from_its_tone_marks() -> None:
    for limit in range(1, len(graphemes(YORUBA_NFD)) + 2):
        cut = truncate_graphemes(YORUBA_NFD, limit)
        assert len(graphemes(cut)) <= limit
        body = cut[:-1] if cut.endswith("…") else cut
        assert YORUBA_NFD.startswith(body)
        # no cluster of the result ends part-way through a source cluster
        assert graphemes(YORUBA_NFD)[: len(graphemes(body))] == graphemes(body)


def test_truncation_prefers_a_word_boundary_and_adds_an_ellipsis() -> None:
    assert truncate_graphemes("Calculating retirement projections now", 30) == (
        "Calculating retirement…"
    )
    assert truncate_graphemes("short", 10) == "short"
    assert truncate_graphemes("anything", 0) == ""


@given(st.text(max_size=60), st.integers(min_value=1, max_value=40))
def test_truncation_respects_the_limit_for_any_text(text: str, limit: int) -> None:
    cut = truncate_graphemes(text, limit)
    assert len(graphemes(cut)) <= max(limit, 1)


# --- §11.4 direction -----------------------------------------------------------------------------


def test_declared_direction_wins() -> None:
    assert resolve_direction("hello", "rtl") == "rtl"
    assert resolve_direction("مرحبا", "ltr") == "ltr"


def test_auto_uses_the_first_strong_character() -> None:
    assert resolve_direction("١٢ مرحبا world", "auto") == "rtl"
    assert resolve_direction("build.sh فشل", "auto") == "ltr"
    assert resolve_direction("123 ...", "auto", language="ar") == "rtl"
    assert resolve_direction("123 ...", None, language="en") == "ltr"


def test_language_direction() -> None:
    assert language_direction("ar-SA") == "rtl"
    assert language_direction("he") == "rtl"
    assert language_direction("yo-NG") == "ltr"
    assert language_direction("az-Arab") == "rtl"
    assert language_direction(None) == "ltr"


def test_for_display_isolates_in_the_resolved_direction() -> None:
    assert for_display("هل تريد المتابعة؟", "auto") == f"{RLI}هل تريد المتابعة؟{PDI}"
    assert for_display("build.sh", None, "ar")[0] == "\u2066"  # first strong letter is Latin
    assert for_display("123", "rtl")[0] == RLI


def test_isolates_wrap_embedded_text_and_can_be_stripped_for_speech() -> None:
    wrapped = isolate("تقرير.pdf", "rtl")
    assert wrapped == f"{RLI}تقرير.pdf{PDI}"
    assert isolate("x")[0] == FSI
    assert strip_bidi_controls(f"Saved {wrapped}.") == "Saved تقرير.pdf."


# --- babel formatting ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("language", "expected"),
    [
        ("en", "1,234.5"),
        ("de", "1.234,5"),
        ("es", "1.234,5"),
        ("fr", "1\u202f234,5"),
        ("pt-BR", "1.234,5"),
        ("ar-SA", "١٬٢٣٤٫٥"),
    ],
)
def test_numbers_use_the_locale_separators_and_digits(language: str, expected: str) -> None:
    assert format_number(1234.5, language) == expected


def test_integers_and_percentages() -> None:
    assert format_integer(12000, "de") == "12.000"
    assert format_percent(0.42, "en") == "42%"
    assert format_percent(0.42, "fr") == "42\xa0%"
    assert format_percent(0.42, "ar-SA") == "٤٢%"


def test_unknown_language_formats_in_english_rather_than_failing() -> None:
    assert format_number(1234.5, "xx-YY") == "1,234.5"
    assert format_number(1234.5, "not a tag") == "1,234.5"


def test_dates_follow_the_locale() -> None:
    day = dt.date(2026, 11, 21)
    assert format_date(day, "en") == "November 21, 2026"
    assert format_date(day, "es") == "21 de noviembre de 2026"
    assert format_date(day, "de") == "21. November 2026"


def test_lists() -> None:
    assert format_list(["a", "b", "c"], "en") == "a, b, and c"
    assert format_list(["a", "b", "c"], "es") == "a, b y c"
    assert format_list([], "en") == ""


def test_language_names_in_the_listeners_language() -> None:
    assert language_name("yo", "en") == "Yoruba"
    assert language_name("yo-NG", "es").startswith("yoruba")
    assert language_name("ar", "ar") == "العربية"
    assert language_name("not a tag", "en") == "not a tag"


def test_english_durations() -> None:
    assert format_duration(30, "en") == "about 30 seconds"
    assert format_duration(32, "en") == "about 30 seconds"
    assert format_duration(4, "en") == "about 4 seconds"
    assert format_duration(250, "en") == "about 4 minutes"
    assert format_duration(7200, "en") == "about 2 hours"
    assert format_duration(0.2, "en") == "less than a second"
    assert format_duration(65, "en", approximate=False) == "1 minute, 5 seconds"
    assert format_duration(float("nan"), "en") == "less than a second"
