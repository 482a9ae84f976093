"""The kinds of SOURCE ``announcer listen`` takes are one table (issue 32, step 3).

``listen --help`` prints it, docs/transports.md shows it row for row, a source not
understood is answered with it, and no other text lists the sources again (seven files
once did, and drifted: the hook socket was missing from the docs' table).
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from announcer.cli.main import build_parser
from announcer.transports import TransportError, TransportOptions, open_transport
from announcer.transports.schemes import SOURCE_SCHEMES

ROOT = Path(__file__).resolve().parents[2]
TRANSPORTS_DOC = ROOT / "docs" / "transports.md"


def listen_help() -> str:
    parser = build_parser(["listen", "--help"])
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices["listen"].format_help()


def docs_table() -> list[str]:
    """The rows of the SOURCE table under "## Listening" in docs/transports.md."""
    text = TRANSPORTS_DOC.read_text(encoding="utf-8")
    listening = text.split("## Listening", 1)[1]
    header = "| SOURCE | Binding (AAEP Appendix B) |\n|---|---|\n"
    assert header in listening
    rows = listening.split(header, 1)[1].split("\n\n", 1)[0]
    return rows.splitlines()


def test_listen_help_prints_every_source_of_the_table() -> None:
    lines = listen_help().splitlines()
    for scheme in SOURCE_SCHEMES:
        assert f"  {scheme.help_line}" in lines, scheme.written
    # plain text for a terminal: a screen reader would say each backtick
    assert "`" not in listen_help()


def test_the_docs_show_the_same_table_row_for_row() -> None:
    assert docs_table() == [scheme.markdown_row for scheme in SOURCE_SCHEMES]


def test_a_source_not_understood_is_answered_with_every_kind_the_table_has() -> None:
    with pytest.raises(TransportError, match="unknown source scheme 'gopher'") as refused:
        open_transport("gopher://127.0.0.1/aaep", TransportOptions())
    for scheme in SOURCE_SCHEMES:
        for form in scheme.written:
            assert form in str(refused.value)


# What marks a list of the sources: three of these in one paragraph.
_SCHEME_MARKS = ("ws://", "unix:", "stdio:", "acp:", "hooks:")


def _texts() -> list[Path]:
    docs = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    code = sorted((ROOT / "announcer").rglob("*.py"))
    return [*docs, *code]


def test_no_other_text_lists_the_sources_again() -> None:
    """A second list drifts from the table; a text points at ``listen --help`` instead."""
    allowed = {TRANSPORTS_DOC, ROOT / "announcer" / "transports" / "schemes.py"}
    lists = []
    for path in _texts():
        if path in allowed:
            continue
        for paragraph in re.split(r"\n\s*\n", path.read_text(encoding="utf-8")):
            named = sorted(mark for mark in _SCHEME_MARKS if mark in paragraph)
            if len(named) >= 3:
                lists.append(f"{path.relative_to(ROOT)}: {named}: {paragraph[:80]!r}")
    assert not lists, "\n".join(lists)
