"""BCP 47 language tags (§11.1.2), parsed just enough to match them (§11.1.3).

Babel's ``Locale.parse`` wants CLDR identifiers and raises on tags it has no
data for (``yo-NG`` with a private-use suffix, ``und``); matching must work on
any well-formed tag a producer sends, so the few subtags that matter here are
read by hand. Case is normalised the BCP 47 way: ``en``, ``Hant``, ``US``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# 2-3 letters: the 5-8 letter registered form is unused in practice and would let
# ``summary_normal_detailed`` pass for a language variant.
_LANGUAGE = re.compile(r"^[A-Za-z]{2,3}$")
_SCRIPT = re.compile(r"^[A-Za-z]{4}$")
_REGION = re.compile(r"^[A-Za-z]{2}$|^[0-9]{3}$")
_VARIANT = re.compile(r"^[A-Za-z0-9]{5,8}$|^[0-9][A-Za-z0-9]{3}$")


@dataclass(frozen=True, slots=True)
class LanguageTag:
    """The matching-relevant subtags of a BCP 47 tag; extensions are kept verbatim."""

    language: str
    script: str | None = None
    region: str | None = None
    variants: tuple[str, ...] = ()
    extensions: str = ""

    def __str__(self) -> str:
        parts = [self.language]
        if self.script:
            parts.append(self.script)
        if self.region:
            parts.append(self.region)
        parts.extend(self.variants)
        text = "-".join(parts)
        return f"{text}-{self.extensions}" if self.extensions else text

    def truncations(self) -> list[LanguageTag]:
        """This tag, then ever broader ones: ``zh-Hant-TW``, ``zh-Hant``, ``zh``.

        §11.1.3 rules 2 and 3: region fallback, then script fallback.
        """
        chain = [self]
        current = self
        if current.variants or current.extensions:
            current = LanguageTag(current.language, current.script, current.region)
            chain.append(current)
        if current.region:
            current = LanguageTag(current.language, current.script)
            chain.append(current)
        if current.script:
            current = LanguageTag(current.language)
            chain.append(current)
        return chain

    def covers(self, other: LanguageTag) -> bool:
        """True when ``other`` is this tag or a narrower form of it (``en`` covers ``en-US``)."""
        if self.language != other.language:
            return False
        if self.script and self.script != other.script:
            return False
        if self.region and self.region != other.region:
            return False
        return not self.variants or self.variants == other.variants

    def same_language(self, other: LanguageTag) -> bool:
        """No clashing script: ``en-GB`` ~ ``en-US``; ``sr-Latn`` ~ ``sr-Cyrl``."""
        if self.language != other.language:
            return False
        return not (self.script and other.script and self.script != other.script)


def parse_tag(text: str) -> LanguageTag | None:
    """Parse ``en-US``, ``pt_BR`` or ``zh-Hant-TW``; None when it is not a usable tag.

    Underscores are accepted because POSIX locales and per-field suffixes use them.
    """
    if not isinstance(text, str):
        return None
    pieces = [p for p in text.strip().replace("_", "-").split("-")]
    if not pieces or not pieces[0] or any(not p for p in pieces):
        return None
    if not _LANGUAGE.match(pieces[0]):
        return None
    language = pieces[0].lower()
    index = 1
    script: str | None = None
    region: str | None = None
    variants: list[str] = []
    if index < len(pieces) and _SCRIPT.match(pieces[index]):
        script = pieces[index].title()
        index += 1
    if index < len(pieces) and _REGION.match(pieces[index]):
        region = pieces[index].upper()
        index += 1
    while index < len(pieces) and _VARIANT.match(pieces[index]):
        variants.append(pieces[index].lower())
        index += 1
    rest = pieces[index:]
    if rest and (len(rest[0]) != 1 or len(rest) < 2):
        return None  # an extension is a singleton followed by at least one subtag
    extensions = "-".join(rest).lower()
    return LanguageTag(language, script, region, tuple(variants), extensions)


def normalize_tag(text: str) -> str | None:
    """The canonical spelling of a tag (``pt_br`` -> ``pt-BR``), or None if malformed."""
    tag = parse_tag(text)
    return None if tag is None else str(tag)


def primary_subtag(text: str) -> str:
    """The language subtag alone (``yo-NG`` -> ``yo``); the lowered input if malformed."""
    tag = parse_tag(text)
    return tag.language if tag is not None else text.strip().lower()
