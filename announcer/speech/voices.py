"""Voice profiles (``voices/profiles/*.toml``) and BCP 47 matching of languages to voices.

A profile is data: for one language tag it names the engine voice to prefer per
backend and a default rate. Matching follows RFC 4647 "lookup": ``en-US`` tries
``en-us`` then ``en``; if nothing matches, any profile with the same primary
language (``en-GB`` for ``en``) is better than the wrong language.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from announcer.speech.backend import VoiceSettings

VOICES_DIR = Path(
    os.environ.get("ANNOUNCER_VOICES_DIR", Path(__file__).resolve().parents[2] / "voices")
)
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
    return VoiceProfile(
        language=language,
        name=str(data.get("name", language)),
        rate_wpm=int(rate) if rate is not None else None,
        pitch=_number(data, "pitch", path, 0.0, 1.0),
        volume=_number(data, "volume", path, 0.0, 1.0),
        engine_voices=engine_voices,
        source=path,
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
