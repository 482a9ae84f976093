"""Every shipped catalog is complete, consistent with the code, and loads with its plural rules."""

from __future__ import annotations

import os
import shutil
import string
import unicodedata
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog, Message
from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po

from announcer.i18n import translate
from announcer.i18n.text import first_strong_direction
from announcer.i18n.translate import CATALOG_FOLDERS, catalog_language, has_catalog, translator

ROOT = Path(__file__).resolve().parents[2]
LOCALES = ROOT / "locales"
TEMPLATE = LOCALES / "announcer.pot"
UPDATE_COMMAND = (
    "pybabel extract -F babel.cfg -o locales/announcer.pot -w 100 --no-location --sort-output "
    "--project announcer --add-comments Translators: . && pybabel update -i locales/announcer.pot "
    "-d locales -D announcer -w 100 --no-fuzzy-matching"
)


def _read(path: Path, locale: str | None = None) -> Catalog:
    with path.open("rb") as handle:
        return read_po(handle, locale=locale, domain="announcer")


def _key(message: Message) -> tuple[str | None, str | tuple[str, ...]]:
    ident = message.id if isinstance(message.id, str) else tuple(message.id)
    return (message.context, ident)


def _ids(message: Message) -> list[str]:
    return [message.id] if isinstance(message.id, str) else list(message.id)


def _strings(message: Message) -> list[str]:
    return [message.string] if isinstance(message.string, str) else list(message.string)


def _placeholders(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


def _template_messages() -> dict[tuple[str | None, str | tuple[str, ...]], Message]:
    return {_key(m): m for m in _read(TEMPLATE) if m.id}


@pytest.fixture(scope="module")
def code_messages() -> set[tuple[str | None, str | tuple[str, ...]]]:
    found: set[tuple[str | None, str | tuple[str, ...]]] = set()
    with (ROOT / "babel.cfg").open(encoding="utf-8") as handle:
        method_map, options_map = parse_mapping_cfg(handle, "babel.cfg")
    for _file, _line, message, _comments, context in extract_from_dir(
        str(ROOT), method_map=method_map, options_map=options_map
    ):
        ident = message if isinstance(message, str) else tuple(m for m in message if m)
        if isinstance(ident, tuple) and len(ident) == 1:
            ident = ident[0]
        found.add((context, ident))
    return found


def test_template_lists_every_user_facing_string_in_the_code(
    code_messages: set[tuple[str | None, str | tuple[str, ...]]],
) -> None:
    missing = sorted(map(repr, code_messages - set(_template_messages())))
    assert not missing, (
        f"{len(missing)} strings in the code are not in the catalogs yet; run `{UPDATE_COMMAND}` "
        "and translate them (docs/localization.md): " + "; ".join(missing[:20])
    )


@pytest.mark.parametrize("folder", sorted(CATALOG_FOLDERS.values()))
def test_catalog_is_complete_and_not_fuzzy(folder: str) -> None:
    catalog = _read(LOCALES / folder / "LC_MESSAGES" / "announcer.po", folder)
    translated = {_key(m): m for m in catalog if m.id}
    problems: list[str] = []
    for key, template in _template_messages().items():
        message = translated.get(key)
        if message is None:
            problems.append(f"missing {key!r}")
            continue
        if message.fuzzy:
            problems.append(f"fuzzy {key!r}")
        strings = _strings(message)
        if not all(s.strip() for s in strings):
            problems.append(f"untranslated {key!r}")
            continue
        if message.pluralizable and len(strings) != catalog.num_plurals:
            problems.append(f"{key!r} has {len(strings)} plural forms, needs {catalog.num_plurals}")
        english = set().union(*(_placeholders(s) for s in _ids(template)))
        used = [_placeholders(s) for s in strings]
        if message.pluralizable:
            # A plural form may leave out the count ("ثانية واحدة"), never add a name.
            if any(not u <= english for u in used) or set().union(*used) != english:
                problems.append(f"placeholders differ in {key!r}: {used} vs {english}")
        elif used[0] != english:
            problems.append(f"placeholders differ in {key!r}: {used[0]} vs {english}")
        for text in strings:
            if unicodedata.normalize("NFC", text) != text:
                problems.append(f"not NFC (§11.3.2): {key!r}")
            try:
                text.format(**dict.fromkeys(english, "x"))
            except (ValueError, IndexError, KeyError) as exc:
                problems.append(f"{key!r} does not format: {exc}")
    assert not problems, f"{folder}: " + "; ".join(problems[:30])


def test_catalogs_declare_the_right_plural_rules() -> None:
    arabic = _read(LOCALES / "ar" / "LC_MESSAGES" / "announcer.po", "ar")
    assert arabic.num_plurals == 6
    yoruba = _read(LOCALES / "yo" / "LC_MESSAGES" / "announcer.po", "yo")
    assert yoruba.num_plurals == 1  # Yoruba nouns do not change with number
    french = _read(LOCALES / "fr" / "LC_MESSAGES" / "announcer.po", "fr")
    assert french.plural_expr.replace(" ", "") in {"(n>1)", "n>1"}


def test_arabic_plural_forms_at_run_time() -> None:
    t = translator("ar")
    said = {
        n: t.ngettext("{count} second", "{count} seconds", n).format(count=n)
        for n in (0, 1, 2, 3, 10, 11, 99, 100, 102, 103)
    }
    assert said[1] == "ثانية واحدة"
    assert said[2] == "ثانيتان"
    assert said[3] == "3 ثوانٍ" and said[10] == "10 ثوانٍ" and said[103] == "103 ثوانٍ"
    assert said[11] == "11 ثانية" and said[99] == "99 ثانية" and said[100] == "100 ثانية"


def test_arabic_translations_read_right_to_left() -> None:
    catalog = _read(LOCALES / "ar" / "LC_MESSAGES" / "announcer.po", "ar")
    for message in catalog:
        if not message.id:
            continue
        for text in _strings(message):
            # The words around the placeholders; the first strong letter must be Arabic.
            bare = "".join(part for part, *_ in string.Formatter().parse(text))
            if any(ch.isalpha() for ch in bare):
                assert first_strong_direction(bare) == "rtl", text


def test_yoruba_translations_carry_tone_marks() -> None:
    catalog = _read(LOCALES / "yo" / "LC_MESSAGES" / "announcer.po", "yo")
    marks = {"\u0300", "\u0301", "\u0323"}  # grave, acute, dot below
    texts = [s for m in catalog if m.id for s in _strings(m)]
    words = [t for t in texts if sum(ch.isalpha() for ch in t) >= 6]
    marked = [t for t in words if marks & set(unicodedata.normalize("NFD", t))]
    assert len(marked) >= 0.9 * len(words), set(words) - set(marked)


def test_regional_and_unknown_tags_find_the_right_catalog() -> None:
    assert catalog_language("es-MX") == "es"
    assert catalog_language(["pt-PT"]) == "pt-BR"
    assert catalog_language(["sw", "fr-CA", "en"]) == "fr"
    assert catalog_language(["sw"]) == "en"
    assert catalog_language(["en-GB", "es"]) == "en"
    assert has_catalog("yo-NG") and has_catalog("en-AU") and not has_catalog("ha")
    assert translator("es-MX").gettext("less than a second") == "menos de un segundo"
    assert translator("sw").gettext("less than a second") == "less than a second"
    assert translator("ar-EG").gettext("yes") == "نعم"


def test_an_edited_po_is_used_and_a_stale_mo_is_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree = tmp_path / "locales"
    shutil.copytree(LOCALES, tree)
    monkeypatch.setenv(translate.LOCALE_DIR_VARIABLE, str(tree))
    po = tree / "de" / "LC_MESSAGES" / "announcer.po"
    mo = po.with_suffix(".mo")
    mo.write_bytes(b"not a catalog")  # older than the .po below, so never read
    text = po.read_text("utf-8").replace(
        'msgstr "weniger als eine Sekunde"', 'msgstr "unter einer Sekunde"'
    )
    po.write_text(text, encoding="utf-8")
    os.utime(mo, (1, 1))
    translate.clear_cache()
    try:
        assert translator("de").gettext("less than a second") == "unter einer Sekunde"
    finally:
        translate.clear_cache()


def test_a_compiled_mo_is_preferred_when_fresh(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree = tmp_path / "locales"
    shutil.copytree(LOCALES, tree)
    monkeypatch.setenv(translate.LOCALE_DIR_VARIABLE, str(tree))
    po = tree / "fr" / "LC_MESSAGES" / "announcer.po"
    catalog = _read(po, "fr")
    catalog["less than a second"].string = "moins d'une seconde (compilé)"
    with po.with_suffix(".mo").open("wb") as handle:
        write_mo(handle, catalog)
    translate.clear_cache()
    try:
        assert translator("fr").gettext("less than a second") == "moins d'une seconde (compilé)"
    finally:
        translate.clear_cache()


def _heard_phrase_tables() -> dict[str, list[str]]:
    """Every table of phrases the user hears or reads, by where it lives (issue 24)."""
    from announcer.engine import subscription
    from announcer.runtime import failures, session
    from announcer.ui import status

    return {
        "producers' refusal reasons (§5.5.3)": list(subscription.REJECTION_REASONS.values()),
        "producers' close reasons (§5.8.1)": [
            *subscription.CLOSE_REASONS.values(),
            subscription.NO_CLOSE_REASON,
        ],
        "WebSocket close codes (B.2.6)": list(subscription.WEBSOCKET_CLOSE_REASONS.values()),
        "connection failures": list(failures.FAULT_WORDS.values()),
        "why a question closed": list(session._CLOSED_WORDS.values()),
        "connection words": list(status.CONNECTION_WORDS.values()),
        "link states": list(status.LINK_WORDS.values()),
        "session states": list(status.SESSION_STATE_WORDS.values()),
    }


@pytest.mark.parametrize("folder", sorted(CATALOG_FOLDERS.values()))
def test_every_phrase_table_the_user_hears_is_in_the_catalogs(folder: str) -> None:
    """A table of phrases kept as data is translated too: a German listener never hears
    "it gave no reason" (issue 24). Each entry must be in the template and translated."""
    catalog = _read(LOCALES / folder / "LC_MESSAGES" / "announcer.po", folder)
    translated = {m.id: m.string for m in catalog if m.id and isinstance(m.id, str)}
    template = _template_messages()
    missing = [
        f"{table}: {msgid!r}"
        for table, msgids in _heard_phrase_tables().items()
        for msgid in msgids
        if (None, msgid) not in template or not str(translated.get(msgid) or "").strip()
    ]
    assert not missing, f"{folder}: not in the catalogs: " + "; ".join(missing)


def test_every_link_state_and_connection_has_words() -> None:
    from announcer.engine.subscription import LinkState
    from announcer.runtime.contract import Connection
    from announcer.ui.status import CONNECTION_WORDS, LINK_WORDS

    assert set(LINK_WORDS) == set(LinkState)
    assert set(CONNECTION_WORDS) == set(Connection)


def test_the_template_lists_no_string_the_code_no_longer_has(
    code_messages: set[tuple[str | None, str | tuple[str, ...]]],
) -> None:
    """A phrase left in the catalogs after its code went is a translation nobody hears, and
    a sign that a sentence the user should hear may have been lost on the way."""
    unused = sorted(map(repr, set(_template_messages()) - code_messages))
    assert not unused, (
        f"{len(unused)} catalog strings are in no code; run `{UPDATE_COMMAND}`: "
        + "; ".join(unused[:20])
    )


@pytest.mark.parametrize(
    "path",
    [TEMPLATE, *sorted(LOCALES.glob("*/LC_MESSAGES/announcer.po"))],
    ids=lambda p: p.parent.parent.name if p.suffix == ".po" else "template",
)
def test_every_catalog_is_well_formed(path: Path) -> None:
    """Catalogs merge with git's union driver, which can leave a msgid without its msgstr;
    babel then only warns and a translation silently goes missing. Read strictly."""
    with path.open("rb") as handle:
        read_po(handle, domain="announcer", abort_invalid=True)
