"""Choose which language to present, following AAEP §11.1.3 rule by rule.

``choose_language`` picks one of the languages an event's text exists in;
``pick_field_variant`` applies it to per-field variants such as
``summary_normal_yo`` (§11.5.1); ``chunk_language`` handles the per-chunk
``language`` of streaming output (§11.5.3).

Order of the rules, for the user's chain ``[u1, u2, ...]``:

1. exact match of ``u1`` (case-insensitive, ``_`` or ``-``);
2. region fallback: ``en-US`` takes ``en``;
3. script fallback: ``zh-Hant`` takes ``zh``;
   (and, §11.1.2, a bare request takes a regional offer: ``en`` takes ``en-US``);
4. the same for ``u2``, ``u3``... (subscriber fallback chain);
   then, where no rule matched for any of them, a sibling region of a language
   the user asked for (``en-GB`` takes ``en-US``): a British English listener
   understands American English better than the producer's fallback language;
5. the producer's ``fallback_chain`` from ``localization_hints``;
6. no match: the event's own language, which the caller must present gracefully.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from announcer.i18n.tags import LanguageTag, parse_tag

__all__ = [
    "FieldChoice",
    "choose_language",
    "chunk_language",
    "closest_language",
    "field_variants",
    "match_language",
    "pick_field_variant",
]


def _parsed(tags: Iterable[str]) -> list[tuple[str, LanguageTag]]:
    parsed: list[tuple[str, LanguageTag]] = []
    for raw in tags:
        tag = parse_tag(raw) if isinstance(raw, str) else None
        if tag is not None:
            parsed.append((raw, tag))
    return parsed


def _match_one(request: LanguageTag, offers: list[tuple[str, LanguageTag]]) -> str | None:
    """Rules 1-3 for one requested tag; returns the offered tag as spelled by the producer."""
    # Rule 1, then rules 2 and 3: the request, then its broader forms, matched exactly.
    for candidate in request.truncations():
        for raw, offered in offers:
            if offered == candidate:
                return raw
    # §11.1.2: "When a subscriber requests en and the producer offers en-US, the match is positive."
    for raw, offered in offers:
        if request.covers(offered):
            return raw
    return None


def match_language(request: str, available: Sequence[str]) -> str | None:
    """Rules 1-3 of §11.1.3 for a single requested tag."""
    tag = parse_tag(request)
    if tag is None:
        return None
    return _match_one(tag, _parsed(available))


def choose_language(
    available: Sequence[str],
    user_chain: Sequence[str],
    producer_fallback: Sequence[str] = (),
    event_language: str | None = None,
) -> str | None:
    """The language to present, as spelled in ``available``; see the module docstring.

    ``available`` lists the languages the text exists in (the event's
    ``primary_language`` and any per-field variants). Returns
    ``event_language`` when nothing matches (rule 6), or None when there is
    nothing at all to choose from.
    """
    offers = _parsed(available)
    requests = [tag for _, tag in _parsed(user_chain)]
    if offers:
        # Rules 1-4: each language of the user's chain in turn.
        for request in requests:
            found = _match_one(request, offers)
            if found is not None:
                return found
        # Rule 4, widened: a sibling region of a language the user speaks.
        for request in requests:
            for raw, offered in offers:
                if request.same_language(offered):
                    return raw
        # Rule 5: the producer's own fallback chain.
        for _, fallback in _parsed(producer_fallback):
            found = _match_one(fallback, offers)
            if found is not None:
                return found
    # Rule 6: the event's own language.
    if event_language:
        return event_language
    return offers[0][0] if offers else None


def closest_language(language: str, supported: Sequence[str]) -> str | None:
    """The supported language (a voice's, a braille table's) nearest to ``language``, or None.

    Rules 1-3 of §11.1.3, then a sibling region (an ``en-US`` voice reads ``en-GB``
    text well); never a different language: None means "no voice for this
    language", which the caller must say (``notices.LanguageNotices``).
    """
    tag = parse_tag(language)
    if tag is None:
        return None
    offers = _parsed(supported)
    found = _match_one(tag, offers)
    if found is not None:
        return found
    for raw, offered in offers:
        if tag.same_language(offered):
            return raw
    return None


def field_variants(
    payload: Mapping[str, object], field: str, primary_language: str | None
) -> list[tuple[str, str, str]]:
    """Every non-empty text for ``field``: ``(language, text, key)``, the base field first.

    §11.5.1: ``summary_normal_yo`` is the Yoruba variant of ``summary_normal``;
    region suffixes may use ``_`` or ``-`` in any case (``summary_normal_pt_br``).
    """
    found: list[tuple[str, str, str]] = []
    base = payload.get(field)
    if isinstance(base, str) and base.strip():
        found.append((primary_language or "und", base, field))
    prefix = field + "_"
    for key, value in payload.items():
        if not isinstance(key, str) or not key.startswith(prefix):
            continue
        if not isinstance(value, str) or not value.strip():
            continue
        tag = parse_tag(key[len(prefix) :])
        if tag is None:
            continue
        found.append((str(tag), value, key))
    return found


@dataclass(frozen=True, slots=True)
class FieldChoice:
    """The text picked for a field, its language, and the key it came from."""

    text: str
    language: str
    key: str


def pick_field_variant(
    payload: Mapping[str, object],
    field: str,
    user_chain: Sequence[str],
    producer_fallback: Sequence[str] = (),
    primary_language: str | None = None,
) -> FieldChoice | None:
    """The best variant of ``field`` for the user (§11.5.1 with the §11.1.3 rules).

    None when the payload has no text for the field in any language.
    """
    variants = field_variants(payload, field, primary_language)
    if not variants:
        return None
    chosen = choose_language(
        [language for language, _, _ in variants],
        user_chain,
        producer_fallback,
        event_language=variants[0][0],
    )
    for language, text, key in variants:
        if language == chosen:
            return FieldChoice(text=text, language=language, key=key)
    language, text, key = variants[0]
    return FieldChoice(text=text, language=language, key=key)


def chunk_language(chunk_language_tag: object, primary_language: str | None) -> str:
    """The language of one streaming chunk: its own ``language`` if valid, else the event's.

    §11.5.3: a chunk may differ from the envelope's ``primary_language``.
    """
    if isinstance(chunk_language_tag, str) and parse_tag(chunk_language_tag) is not None:
        return chunk_language_tag
    return primary_language or "und"
