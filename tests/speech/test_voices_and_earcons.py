"""Voice profiles as data, BCP 47 matching, and the project's earcons."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

from announcer.speech.audio import wav_info, wav_rms
from announcer.speech.backend import VoiceSettings
from announcer.speech.earcons import EARCON_NAMES, EARCONS_DIR, earcon_path
from announcer.speech.pyttsx3_backend import shared_synthesizer
from announcer.speech.voices import (
    PROFILES_DIR,
    VoiceProfile,
    VoiceProfileError,
    VoiceResolver,
    load_profile,
    load_profiles,
    lookup_chain,
    match_language,
)

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("requested", "available", "expected"),
    [
        ("en-US", ["en", "fr"], "en"),
        ("en_us", ["en-US", "en"], "en-US"),
        ("EN", ["en-GB"], "en-GB"),  # same primary language beats nothing
        ("zh-Hant-TW", ["zh-Hant", "zh"], "zh-Hant"),
        ("yo", ["en", "fr"], None),
        ("", ["en"], None),
    ],
)
def test_bcp47_lookup(requested: str, available: list[str], expected: str | None) -> None:
    assert match_language(requested, available) == expected


def test_lookup_chain_drops_extension_singletons() -> None:
    assert lookup_chain("de-CH-x-phonebk") == ["de-ch-x-phonebk", "de-ch", "de"]


def test_every_shipped_profile_loads_and_names_installed_espeak_voices() -> None:
    profiles = load_profiles()
    assert {"en", "es", "fr", "de"} <= set(profiles)
    synth = shared_synthesizer()
    synth.start()
    installed = {v.id.lower() for v in synth.voices}
    for profile in profiles.values():
        assert profile.rate_wpm is not None and 60 <= profile.rate_wpm <= 600
        espeak_ids = [v for v in profile.engine_voices["pyttsx3"] if "/" in v]
        assert any(v.lower() in installed for v in espeak_ids), profile.language


def test_a_broken_profile_names_its_file_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('language = "en"\nrate_wpm = 5000\n')
    with pytest.raises(VoiceProfileError, match=r"bad.toml: field 'rate_wpm' must be"):
        load_profile(bad)
    bad.write_text("rate_wpm = 100\n")
    with pytest.raises(VoiceProfileError, match="field 'language'"):
        load_profile(bad)
    bad.write_text('language = "en"\n[engines.pyttsx3]\nvoices = "gmw/en"\n')
    with pytest.raises(VoiceProfileError, match=r"'engines.pyttsx3.voices' must be a list"):
        load_profile(bad)


def test_resolution_order_profile_then_user_then_explicit() -> None:
    profiles = {
        "en": VoiceProfile("en", "English", rate_wpm=180, engine_voices={"x": ("a", "b")}),
    }
    resolver = VoiceResolver(
        "x", profiles, user=VoiceSettings(rate_wpm=220, volume=0.5), installed=["b"]
    )
    choice = resolver.choose("en-AU")
    assert choice.matched and choice.settings == VoiceSettings("b", 220, None, 0.5)
    assert resolver.choose("en", VoiceSettings(rate_wpm=300)).settings.rate_wpm == 300
    assert not resolver.choose("ja").matched
    by_user = VoiceResolver("x", profiles, user_voices={"en": "mine"})
    assert by_user.choose("en-US").settings.voice == "mine"


def test_profiles_directory_is_in_the_repository() -> None:
    assert PROFILES_DIR.is_dir() and any(PROFILES_DIR.glob("*.toml"))


# ---------------------------------------------------------------- earcons


@pytest.mark.parametrize("name", EARCON_NAMES)
def test_each_earcon_is_a_short_valid_audible_wav(name: str) -> None:
    path = earcon_path(name)
    assert path is not None and path.is_file()
    info = wav_info(path)
    assert (info.channels, info.sample_width, info.frame_rate) == (1, 2, 22050)
    assert 0.1 < info.duration_s < 0.6  # short: it must never delay the words
    assert wav_rms(path) > 0.03


def test_earcons_are_distinct() -> None:
    digests = {hashlib.sha256(earcon_path(n).read_bytes()).hexdigest() for n in EARCON_NAMES}  # type: ignore[union-attr]
    assert len(digests) == len(EARCON_NAMES)


def test_unknown_earcons_are_ignored() -> None:
    assert earcon_path("fanfare") is None and earcon_path(None) is None


def test_the_generator_rebuilds_the_same_files(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, str(REPO / "scripts" / "make_earcons.py"), str(tmp_path)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    for name in EARCON_NAMES:
        assert (tmp_path / f"{name}.wav").read_bytes() == (EARCONS_DIR / f"{name}.wav").read_bytes()
