"""Producer text made safe to draw, and the UI's translated phrases.

Producer text is data, never markup: widgets that render it are given plain
``rich.text.Text`` objects or ``markup=False`` widgets, and terminal control
sequences are removed first so a producer cannot move the cursor, retitle the
window or hide text (§10 security; issue 6 "Safety").
"""

from __future__ import annotations

from rich.text import Text

from announcer.i18n.translate import translator
from announcer.protocol.sanitise import clean_display
from announcer.protocol.sanitise import one_line as _one_line


def printable(text: str) -> str:
    """Remove terminal control sequences; keep letters of every script as they are."""
    return clean_display(text)


def one_line(text: str) -> str:
    """A producer string for a one-line place (status, list rows)."""
    return _one_line(text)


def literal(text: str) -> Text:
    """A Rich ``Text`` that shows ``text`` verbatim: ``[b]`` stays ``[b]``."""
    return Text(printable(text), no_wrap=False)


_language = "en"


def set_language(language: str) -> None:
    """Follow the user's first language for the UI's own phrases."""
    global _language
    _language = language


def _(message: str) -> str:
    """Translate one of the UI's own phrases (never producer text)."""
    return translator(_language).gettext(message)


def ngettext(singular: str, plural: str, count: int) -> str:
    """Translate a phrase with a count, with the language's plural forms."""
    return translator(_language).ngettext(singular, plural, count)


def N_(message: str) -> str:
    """Mark a string kept in a table; it is translated where it is used."""
    return message


def current_language() -> str:
    """The language the UI's own phrases are in (the user's first language)."""
    return _language


def localize_bindings(node: object) -> None:
    """Show a node's key descriptions in the user's language (Footer and spoken help).

    Descriptions are written as English msgids in ``BINDINGS``; each node gets
    translated copies, so changing language later translates from the originals.
    """
    import dataclasses

    from announcer.ui.tui.textual_private import class_bindings, node_bindings

    originals = class_bindings(node)
    current = node_bindings(node)
    if originals is None or current is None:
        return
    for key, bindings in originals.key_to_bindings.items():
        current.key_to_bindings[key] = [
            dataclasses.replace(b, description=_(b.description)) if b.description else b
            for b in bindings
        ]
