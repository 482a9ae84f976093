"""Say once, gracefully, when a language cannot be served (§11.9.2 item 7).

A Yoruba listener must not hear Yoruba text mispronounced by an English voice
without being told, nor be told again at every event. The speech layer asks
``LanguageNotices.voice_missing(...)``; the first call for a (wanted, used)
pair returns the sentence to say, later calls return None.
"""

from __future__ import annotations

from announcer.i18n.format import language_name
from announcer.i18n.tags import primary_subtag
from announcer.i18n.translate import catalog_language, has_catalog, translator


def voice_missing_phrase(wanted: str, used: str, ui_language: str) -> str:
    """ "No Yoruba voice installed, using English." in the listener's language."""
    t = translator(ui_language)
    # The language alone: "Yoruba", not "Yoruba (Nigeria)"; the region rarely matters to a voice.
    return t.gettext("No {wanted} voice installed, using {used}.").format(
        wanted=language_name(primary_subtag(wanted), ui_language),
        used=language_name(primary_subtag(used), ui_language),
    )


def catalog_missing_phrase(wanted: str, ui_language: str) -> str:
    """Told when the product's own phrases are not translated into the user's language."""
    t = translator(ui_language)
    return t.gettext("Announcer is not translated into {wanted} yet; using {used}.").format(
        wanted=language_name(primary_subtag(wanted), ui_language),
        used=language_name(catalog_language([ui_language]), ui_language),
    )


class LanguageNotices:
    """Remembers which language fallbacks the user has already been told about."""

    def __init__(self, ui_language: str) -> None:
        self.ui_language = ui_language
        self._told: set[tuple[str, str, str]] = set()

    def _first_time(self, kind: str, wanted: str, used: str) -> bool:
        key = (kind, wanted.lower(), used.lower())
        if key in self._told:
            return False
        self._told.add(key)
        return True

    def voice_missing(self, wanted: str, used: str) -> str | None:
        """The sentence to say the first time ``wanted`` text is read with a ``used`` voice."""
        if not self._first_time("voice", wanted, used):
            return None
        return voice_missing_phrase(wanted, used, self.ui_language)

    def catalog_missing(self, user_chain: list[str] | tuple[str, ...]) -> str | None:
        """The sentence to say once when the user's first language has no catalog."""
        if not user_chain or has_catalog(user_chain[0]):
            return None
        wanted = user_chain[0]
        if not self._first_time("catalog", wanted, self.ui_language):
            return None
        return catalog_missing_phrase(wanted, self.ui_language)
