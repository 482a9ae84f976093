"""Voice profiles (``announcer/voices/profiles/*.toml``) and BCP 47 matching of languages to voices.

A profile is data: for one language tag it names the engine voice to prefer per
backend and a default rate. Matching follows RFC 4647 "lookup": ``en-US`` tries
``en-us`` then ``en``; if nothing matches, any profile with the same primary
language (``en-GB`` for ``en``) is better than the wrong language.
"""

from __future__ import annotations

import os
import re
import tomllib
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from announcer.speech.backend import VoiceSettings


def _packaged_voices() -> Path:
    """The profiles and earcons shipped inside the package (``announcer/voices``).

    They are files on disk in a wheel, a checkout and a PyInstaller folder alike, so the
    Path API (``glob``, ``is_file``) works on what ``importlib.resources`` finds.
    """
    return Path(str(resources.files("announcer") / "voices"))


VOICES_DIR = Path(os.environ.get("ANNOUNCER_VOICES_DIR") or _packaged_voices())
PROFILES_DIR = VOICES_DIR / "profiles"


class VoiceProfileError(ValueError):
    """A profile file breaks a rule; the message names the file and the field."""


@dataclass(frozen=True, slots=True)
class VoiceProfile:
    language: str
    name: str
    rate_wpm: int | None = None
    pitch: float | None = None
    volume: float | None = None
    # backend name -> engine voice names to try, most preferred first
    engine_voices: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    source: Path | None = None
    # [reading]: no voice speaks the language itself, so its text is made readable first
    without_marks: bool = False
    letters: Mapping[str, str] = field(default_factory=dict)


def normalise_tag(tag: str) -> str:
    return tag.strip().replace("_", "-").lower()


def lookup_chain(tag: str) -> list[str]:
    """RFC 4647 §3.4 lookup fallback: ``zh-Hant-TW`` -> ``zh-hant-tw``, ``zh-hant``, ``zh``."""
    parts = [p for p in normalise_tag(tag).split("-") if p]
    chain = []
    while parts:
        chain.append("-".join(parts))
        parts.pop()
        # a lone single-letter subtag (an extension singleton) never ends a range
        while parts and len(parts[-1]) == 1:
            parts.pop()
    return chain


def match_language(requested: str, available: Iterable[str]) -> str | None:
    """The best available tag for ``requested`` (as spelled in ``available``), or None."""
    by_norm = {normalise_tag(tag): tag for tag in available}
    for candidate in lookup_chain(requested):
        if candidate in by_norm:
            return by_norm[candidate]
    chain = lookup_chain(requested)
    if not chain:
        return None
    primary = chain[-1]
    for norm in sorted(by_norm):
        if norm.split("-")[0] == primary:
            return by_norm[norm]
    return None


def _number(data: Mapping[str, Any], key: str, path: Path, lo: float, hi: float) -> Any:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not lo <= value <= hi:
        raise VoiceProfileError(f"{path}: field '{key}' must be a number from {lo} to {hi}")
    return value


def load_profile(path: Path) -> VoiceProfile:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise VoiceProfileError(f"{path}: {exc}") from exc
    language = data.get("language")
    if not isinstance(language, str) or not lookup_chain(language):
        raise VoiceProfileError(f"{path}: field 'language' must be a BCP 47 tag such as 'en-US'")
    engines = data.get("engines", {})
    if not isinstance(engines, dict):
        raise VoiceProfileError(f"{path}: field 'engines' must be a table of backend names")
    engine_voices: dict[str, tuple[str, ...]] = {}
    for backend, table in engines.items():
        voices = table.get("voices", []) if isinstance(table, dict) else None
        if not isinstance(voices, list) or not all(isinstance(v, str) for v in voices):
            raise VoiceProfileError(
                f"{path}: field 'engines.{backend}.voices' must be a list of voice names"
            )
        engine_voices[backend] = tuple(voices)
    rate = _number(data, "rate_wpm", path, 60, 600)
    reading = data.get("reading", {})
    if not isinstance(reading, dict):
        raise VoiceProfileError(f"{path}: field 'reading' must be a table")
    without_marks = reading.get("without_marks", False)
    if not isinstance(without_marks, bool):
        raise VoiceProfileError(f"{path}: field 'reading.without_marks' must be true or false")
    letters = reading.get("letters", {})
    if not isinstance(letters, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in letters.items()
    ):
        raise VoiceProfileError(
            f"{path}: field 'reading.letters' must be a table of letters and their spellings"
        )
    return VoiceProfile(
        language=language,
        name=str(data.get("name", language)),
        rate_wpm=int(rate) if rate is not None else None,
        pitch=_number(data, "pitch", path, 0.0, 1.0),
        volume=_number(data, "volume", path, 0.0, 1.0),
        engine_voices=engine_voices,
        source=path,
        without_marks=without_marks,
        letters={unicodedata.normalize("NFC", k): v for k, v in letters.items()},
    )


def load_profiles(directory: Path = PROFILES_DIR) -> dict[str, VoiceProfile]:
    profiles: dict[str, VoiceProfile] = {}
    for path in sorted(directory.glob("*.toml")):
        profile = load_profile(path)
        profiles[normalise_tag(profile.language)] = profile
    return profiles


@dataclass(frozen=True, slots=True)
class VoiceChoice:
    """What to say a language with, and whether it is really that language."""

    settings: VoiceSettings
    profile: VoiceProfile | None
    matched: bool


class VoiceResolver:
    """Per-language voice settings for one backend: profile, then the user's choices on top."""

    def __init__(
        self,
        backend: str,
        profiles: Mapping[str, VoiceProfile] | None = None,
        *,
        user: VoiceSettings | None = None,
        user_voices: Mapping[str, str] | None = None,
        installed: Iterable[str] | None = None,
    ) -> None:
        self.backend = backend
        self.profiles = dict(load_profiles() if profiles is None else profiles)
        self.user = user or VoiceSettings()
        self.user_voices = dict(user_voices or {})
        self.installed = None if installed is None else {v.lower(): v for v in installed}

    def choose(self, language: str, voice: VoiceSettings | None = None) -> VoiceChoice:
        """Merge, lowest first: profile defaults, user settings, explicit ``voice``."""
        key = match_language(language, self.profiles)
        profile = self.profiles.get(key) if key else None
        name: str | None = None
        user_key = match_language(language, self.user_voices)
        if user_key is not None:
            name = self.user_voices[user_key]
        elif profile is not None:
            name = self._first_installed(profile.engine_voices.get(self.backend, ()))
        explicit = voice or VoiceSettings()
        settings = VoiceSettings(
            voice=explicit.voice or name or self.user.voice,
            rate_wpm=explicit.rate_wpm
            or self.user.rate_wpm
            or (profile.rate_wpm if profile else None),
            pitch=_first(explicit.pitch, self.user.pitch, profile.pitch if profile else None),
            volume=_first(explicit.volume, self.user.volume, profile.volume if profile else None),
        )
        return VoiceChoice(settings, profile, matched=profile is not None)

    def _first_installed(self, names: Iterable[str]) -> str | None:
        for name in names:
            if self.installed is None:
                return name
            if name.lower() in self.installed:
                return self.installed[name.lower()]
        return None


def _first(*values: float | None) -> float | None:
    for value in values:
        if value is not None:
            return value
    return None


# Latin combining diacritics (U+0300-U+036F): tone marks, dots below, macrons. A voice for
# another language names them ("grave", "acute", "dot below") instead of saying the word.
_LATIN_MARKS = re.compile("[\u0300-\u036f]")


def without_marks(text: str, letters: Mapping[str, str] | None = None) -> str:
    """``text`` with its Latin diacritics removed, after spelling ``letters`` out (ṣ -> sh).

    Only the combining diacritics block goes: the vowel signs of Devanagari or Thai,
    which are marks too, are letters of those scripts and stay.
    """
    text = unicodedata.normalize("NFC", text)
    for letter, spelling in (letters or {}).items():
        text = text.replace(letter, spelling)
    bare = _LATIN_MARKS.sub("", unicodedata.normalize("NFD", text))
    return unicodedata.normalize("NFC", bare)


def speakable_text(
    text: str, language: str, profile: VoiceProfile | None, voice_languages: Iterable[str]
) -> str:
    """The text as the chosen voice should get it.

    A profile that says ``[reading] without_marks = true`` (Yoruba: espeak-ng has no
    voice for it) gets its marks removed and its letters spelled for the voice it names;
    a language with no profile and no installed voice that speaks it is read by some
    other language's voice, so its marks go too. Otherwise the text is unchanged.
    """
    if profile is not None:
        return without_marks(text, profile.letters) if profile.without_marks else text
    if match_language(language, voice_languages) is None:
        return without_marks(text)
    return text
