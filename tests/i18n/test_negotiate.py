"""§11.1.3 tag matching, rule by rule, and the per-field / per-chunk selections of §11.5."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from announcer.i18n.negotiate import (
    choose_language,
    chunk_language,
    closest_language,
    field_variants,
    match_language,
    pick_field_variant,
)
from announcer.i18n.tags import normalize_tag, parse_tag
from tests.shared_data import SHARED as SHARED_ROOT

# The official AAEP fixtures (shared/ beside the checkout); our own copies of the fields used
# here stand in where shared/ is not present.
_SHARED = [Path(__file__).resolve().parents[3] / "shared", SHARED_ROOT]
FIXTURES = next(
    (p / "aaep/fixtures/valid" for p in _SHARED if (p / "aaep/fixtures/valid").is_dir()), None
)
_OWN_COPIES: dict[str, dict[str, object]] = {
    "agent.session.started.json": {
        "type": "aaep:agent.session.started",
        "localization_hints": {
            "primary_language": "en-US",
            "available_languages": ["en-US", "yo-NG", "es-419"],
        },
        "summary_terse": "Started.",
        "summary_normal": "Retirement Planning Assistant is processing your request.",
    },
    "agent.output.streaming.yoruba.json": {
        "type": "aaep:agent.output.streaming",
        "localization_hints": {"primary_language": "yo-NG", "text_direction": "ltr"},
        "chunk": "Ẹ ku àárọ̀. Ṣé o sun re?",
        "language": "yo-NG",
    },
}


def _fixture(name: str) -> dict[str, object]:
    if FIXTURES is not None and (FIXTURES / name).is_file():
        loaded: dict[str, object] = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
        return loaded
    return dict(_OWN_COPIES[name])


# --- BCP 47 parsing (§11.1.2) --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        ("en", "en"),
        ("en-us", "en-US"),
        ("EN_US", "en-US"),
        ("pt_br", "pt-BR"),
        ("es-419", "es-419"),
        ("zh-hant-tw", "zh-Hant-TW"),
        ("yo-NG", "yo-NG"),
        ("sr-Latn-RS", "sr-Latn-RS"),
        ("de-CH-1996", "de-CH-1996"),
        ("en-US-u-ca-gregory", "en-US-u-ca-gregory"),
    ],
)
def test_tags_are_normalised_the_bcp47_way(raw: str, canonical: str) -> None:
    assert normalize_tag(raw) == canonical


@pytest.mark.parametrize("raw", ["", "-", "e", "english!", "en--US", "12", "en-US-x"])
def test_malformed_tags_are_rejected_not_guessed(raw: str) -> None:
    assert parse_tag(raw) is None


# --- §11.1.3 rules in order ----------------------------------------------------------------------


def test_rule1_exact_match_wins_over_broader_offer() -> None:
    assert choose_language(["en", "en-US"], ["en-US"]) == "en-US"


def test_rule1_exact_match_ignores_case_and_separator_and_keeps_producer_spelling() -> None:
    assert choose_language(["pt_BR"], ["pt-br"]) == "pt_BR"


def test_rule2_region_fallback() -> None:
    assert choose_language(["fr", "en"], ["en-US"]) == "en"


def test_rule3_script_fallback() -> None:
    assert choose_language(["ja", "zh"], ["zh-Hant"]) == "zh"
    assert choose_language(["zh-Hant", "zh"], ["zh-Hant-TW"]) == "zh-Hant"


def test_bare_request_matches_regional_offer() -> None:
    # §11.1.2: "When a subscriber requests en and the producer offers en-US, the match is positive."
    assert choose_language(["en-US"], ["en"]) == "en-US"
    assert choose_language(["fr-FR", "yo-NG"], ["yo"]) == "yo-NG"


def test_region_fallback_does_not_jump_to_a_sibling_before_later_user_choices() -> None:
    # en-US does not match en-GB under rules 1-3, so the user's second choice is tried (rule 4).
    assert choose_language(["en-GB", "es-419"], ["en-US", "es"]) == "es-419"


def test_rule4_subscriber_chain_in_order() -> None:
    chain = ["yo-NG", "ha-NG", "ig-NG", "en-NG", "en-US"]
    assert choose_language(["en-US", "ig-NG"], chain) == "ig-NG"
    assert choose_language(["en-US", "ha"], chain) == "ha"


def test_sibling_region_of_a_user_language_beats_the_producer_fallback() -> None:
    assert choose_language(["fr", "en-US"], ["en-GB"], producer_fallback=["fr"]) == "en-US"


def test_sibling_never_crosses_scripts() -> None:
    assert choose_language(["sr-Cyrl"], ["sr-Latn"], event_language="sr-Cyrl") == "sr-Cyrl"
    assert choose_language(["sr-Cyrl", "en"], ["sr-Latn"], producer_fallback=["en"]) == "en"


def test_rule5_producer_fallback_chain() -> None:
    assert choose_language(["de", "fr", "en-US"], ["yo"], producer_fallback=["fr", "en"]) == "fr"
    assert choose_language(["de", "en-US"], ["yo"], producer_fallback=["en"]) == "en-US"


def test_rule6_event_language_when_nothing_matches() -> None:
    assert choose_language(["de"], ["yo"], producer_fallback=["fr"], event_language="de") == "de"


def test_nothing_to_choose_from() -> None:
    assert choose_language([], ["en"]) is None
    assert choose_language([], ["en"], event_language="fr") == "fr"


def test_invalid_tags_are_skipped_not_fatal() -> None:
    assert choose_language(["not a tag", "es"], ["??", "es-MX"]) == "es"


def test_match_language_single_request() -> None:
    assert match_language("en-US", ["es", "en"]) == "en"
    assert match_language("en-US", ["es"]) is None


@given(
    st.lists(
        st.sampled_from(["en", "en-US", "es", "es-419", "yo-NG", "ar", "zh-Hant", "fr"]), max_size=5
    ),
    st.lists(st.sampled_from(["en", "en-GB", "yo", "ar-SA", "zh-Hant-TW", "de"]), max_size=4),
    st.lists(st.sampled_from(["en", "fr", "es"]), max_size=3),
)
def test_choice_is_always_offered_or_the_event_language(
    available: list[str], chain: list[str], fallback: list[str]
) -> None:
    chosen = choose_language(available, chain, fallback, event_language="und")
    assert chosen == "und" or chosen in available


# --- per-field variants (§11.5.1) ----------------------------------------------------------------


YORUBA = "Mo ń ṣírò àbáwọn àkànkàn fífí ìfẹ̀hìn-tì-iṣẹ́ silẹ̀."


def _event_with_variants() -> dict[str, object]:
    event = _fixture("agent.session.started.json")
    event["summary_normal_yo"] = YORUBA
    event["summary_normal_es_419"] = "El asistente está procesando su solicitud."
    return event


def test_field_variants_are_found_with_their_languages() -> None:
    event = _event_with_variants()
    found = field_variants(event, "summary_normal", "en-US")
    assert [(lang, key) for lang, _, key in found] == [
        ("en-US", "summary_normal"),
        ("yo", "summary_normal_yo"),
        ("es-419", "summary_normal_es_419"),
    ]


def test_yoruba_listener_gets_the_yoruba_variant() -> None:
    event = _event_with_variants()
    choice = pick_field_variant(event, "summary_normal", ["yo-NG", "en"], primary_language="en-US")
    assert choice is not None
    assert (choice.text, choice.language, choice.key) == (YORUBA, "yo", "summary_normal_yo")


def test_spanish_latin_america_listener_gets_es_419_via_bare_tag() -> None:
    event = _event_with_variants()
    choice = pick_field_variant(event, "summary_normal", ["es"], primary_language="en-US")
    assert choice is not None and choice.key == "summary_normal_es_419"


def test_listener_without_a_match_gets_the_primary_text() -> None:
    event = _event_with_variants()
    choice = pick_field_variant(event, "summary_normal", ["de"], primary_language="en-US")
    assert choice is not None
    assert choice.text == event["summary_normal"] and choice.language == "en-US"


def test_producer_fallback_chain_picks_among_variants() -> None:
    event = {"summary_normal": "Hola", "summary_normal_fr": "Bonjour", "summary_normal_en": "Hi"}
    choice = pick_field_variant(event, "summary_normal", ["de"], ["fr", "en"], "es")
    assert choice is not None and choice.text == "Bonjour"


def test_other_fields_are_not_taken_for_variants() -> None:
    event = {
        "summary_normal": "Hi",
        "summary_normal_detailed_stuff": "x",
        "summary_normal_": "y",
        "summary_normal_yo": 5,
        "summary_normal_fr": "   ",
    }
    keys = [key for _, _, key in field_variants(event, "summary_normal", "en")]
    assert keys == ["summary_normal"]


def test_only_variants_no_base_field() -> None:
    event = {"summary_terse_ar": "بدأ.", "summary_terse_fr": "Commencé."}
    choice = pick_field_variant(event, "summary_terse", ["fr-CA"], primary_language="ar")
    assert choice is not None and choice.text == "Commencé."
    fallback = pick_field_variant(event, "summary_terse", ["de"], primary_language="ar")
    assert fallback is not None and fallback.text == "بدأ."


def test_missing_field_gives_none() -> None:
    assert pick_field_variant({"summary_normal": ""}, "summary_normal", ["en"]) is None


# --- streaming chunks (§11.5.3) ------------------------------------------------------------------


def test_chunk_language_from_the_yoruba_fixture() -> None:
    event = _fixture("agent.output.streaming.yoruba.json")
    hints = event["localization_hints"]
    assert isinstance(hints, dict)
    primary = hints["primary_language"]
    assert chunk_language(event.get("language"), primary) == "yo-NG"


def test_chunk_language_overrides_primary_and_invalid_ones_fall_back() -> None:
    assert chunk_language("fr-FR", "en-US") == "fr-FR"
    assert chunk_language(None, "en-US") == "en-US"
    assert chunk_language("???", "ar") == "ar"
    assert chunk_language(7, None) == "und"


# --- voices and other per-language resources ---


def test_closest_language_for_voices_never_crosses_languages() -> None:
    voices = ["en-US", "es-ES", "pt-BR", "ar"]
    assert closest_language("en-GB", voices) == "en-US"
    assert closest_language("es-419", voices) == "es-ES"
    assert closest_language("ar-EG", voices) == "ar"
    assert closest_language("pt", voices) == "pt-BR"
    assert closest_language("yo-NG", voices) is None
    assert closest_language("not a tag", voices) is None
