"""Unservable languages are announced once, in the listener's language (§11.9.2 item 7)."""

from __future__ import annotations

from announcer.i18n.format import format_duration
from announcer.i18n.notices import LanguageNotices, catalog_missing_phrase, voice_missing_phrase


def test_missing_voice_is_said_once_per_language_pair() -> None:
    notices = LanguageNotices("en")
    assert notices.voice_missing("yo-NG", "en") == "No Yoruba voice installed, using English."
    assert notices.voice_missing("yo-NG", "en") is None
    assert notices.voice_missing("YO-ng", "EN") is None
    assert notices.voice_missing("ar", "en") == "No Arabic voice installed, using English."


def test_notices_are_in_the_listeners_language() -> None:
    assert voice_missing_phrase("yo", "en", "es") == (
        "No hay ninguna voz de yoruba instalada; se leerá en inglés."
    )
    assert voice_missing_phrase("yo", "en", "ar") == (
        "لا يوجد صوت مثبَّت للغة اليوروبا؛ تُستخدم الإنجليزية بدلًا منها."
    )
    assert voice_missing_phrase("ar", "en", "yo").startswith("Kò sí ohùn")


def test_missing_catalog_is_said_once_and_only_when_missing() -> None:
    notices = LanguageNotices("en")
    assert notices.catalog_missing(["es-MX", "en"]) is None
    assert notices.catalog_missing(["en-GB"]) is None
    said = notices.catalog_missing(["sw", "en"])
    assert said == "Announcer is not translated into Swahili yet; using English."
    assert notices.catalog_missing(["sw", "en"]) is None
    assert catalog_missing_phrase("ha", "fr") == (
        "Announcer n'est pas encore traduit en haoussa ; les messages restent en français."
    )


def test_durations_in_every_shipped_language() -> None:
    assert format_duration(30, "es") == "unos 30 segundos"
    assert format_duration(30, "fr") == "environ 30\u00a0secondes"
    assert format_duration(30, "de") == "etwa 30 Sekunden"
    assert format_duration(240, "pt-BR") == "cerca de 4 minutos"
    assert format_duration(2, "ar") == "ثانيتان تقريبًا"
    assert format_duration(30, "yo") == "nǹkan bí ìṣẹ́jú-àáyá 30"
    assert format_duration(7200, "yo") == "nǹkan bí wákàtí 2"
    assert format_duration(0.3, "de") == "weniger als eine Sekunde"
