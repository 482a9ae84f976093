"""Every ``--flag`` the README and docs name exists on the command they name it for.

Docs that promise a flag the parser does not have leave a user typing something
that fails ("--audio-dir is unrecognized"). A flag inside a command line
(`announcer listen ... --flag`, `./run replay --flag`) must exist on that very
subcommand; a flag named on its own must exist on at least one. Flags of other
programs the docs mention (pytest, npm, Claude Code, ...) are listed below with
their program, so a new unknown flag fails here until it is built or explained.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from announcer.cli.main import build_parser

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

# Flags of other programs that the docs quote, with the program they belong to.
FOREIGN_FLAGS = {
    "--no-install-recommends": "apt-get",
    "--no-fuzzy-matching": "pybabel",
    "--add-comments": "pybabel",
    "--project": "pybabel",
    "--no-location": "pybabel",
    "--sort-output": "pybabel",
    "--snapshot-update": "pytest (pytest-textual-snapshot)",
    "--dist": "pytest (pytest-xdist)",
    "--strict-markers": "pytest",
    "--durations": "pytest",
    "--cpu": "stress-ng (docs/testing.md: the suite beside a CPU load)",
    "--checks": "./test (docs/testing.md)",
    "--fast": "./test (docs/testing.md: the sans-I/O tier)",
    "--ignore": "pytest",
    "--check": "ruff format",
    "--output-format": "claude",
    "--include-partial-messages": "claude",
    "--ax-screen-reader": "claude",
    "--permission-mode": "claude",
    "--acp": "gemini, qwen, cline and copilot (ACP mode)",
    "--approval-mode": "gemini and qwen",
    "--screen-reader": "gemini, qwen and copilot (their own screen-reader modes)",
    "--recursive": "rm (docs/tui.md: a long option read as its short form)",
    "--force": "git push",
    "--user": "pip",
}

_FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*[a-z0-9]")
_SPAN = re.compile(r"`([^`\n]+)`")
_COMMAND = re.compile(r"(?:\bannouncer|\./run)\s+([a-z][a-z-]*)(?:\s+([a-z][a-z-]*))?")


def parsers() -> dict[str, argparse.ArgumentParser]:
    """Every parser by command path: "", "listen", "config show", "hook claude-code"."""
    found: dict[str, argparse.ArgumentParser] = {}

    def walk(path: str, parser: argparse.ArgumentParser) -> None:
        found[path] = parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, child in action.choices.items():
                    walk(f"{path} {name}".strip(), child)

    walk("", build_parser())
    return found


def options(parser: argparse.ArgumentParser) -> set[str]:
    return set(parser._option_string_actions)


def documented() -> list[tuple[str, str, str | None]]:
    """(doc, flag, command path or None) for each flag the docs name."""
    known = parsers()
    found: list[tuple[str, str, str | None]] = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        # Lines of code blocks are command lines too.
        pieces = _SPAN.findall(text) + [
            line for line in text.splitlines() if line.startswith("    ") or "--" in line
        ]
        for piece in pieces:
            command: str | None = None
            match = _COMMAND.search(piece)
            if match:
                first, second = match.group(1), match.group(2)
                if second and f"{first} {second}" in known:
                    command = f"{first} {second}"
                elif first in known:
                    command = first
                # ``announcer -- COMMAND`` forms and prose such as "announcer is" name no command.
                if command is not None:
                    # Flags after " -- " belong to the wrapped program (watch -- claude ...).
                    piece = piece.split(" -- ", 1)[0]
            for flag in _FLAG.findall(piece):
                found.append((doc.name, flag, command))
    return found


def test_the_docs_name_flags_at_all() -> None:
    flags = {flag for _, flag, _ in documented()}
    assert {"--speech", "--language", "--verbosity", "--rate", "--pace"} <= flags


@pytest.mark.parametrize("doc", [d.name for d in DOCS])
def test_every_flag_a_doc_names_exists(doc: str) -> None:
    known = parsers()
    everywhere = set().union(*(options(p) for p in known.values()))
    missing: list[str] = []
    for name, flag, command in documented():
        if name != doc or flag in FOREIGN_FLAGS:
            continue
        if command is not None:
            # The flag may sit on the command or on one of its subcommands.
            family = [
                p for path, p in known.items() if path == command or path.startswith(command + " ")
            ]
            if not any(flag in options(p) for p in family):
                missing.append(f"{flag} (on 'announcer {command}')")
        elif flag not in everywhere:
            missing.append(flag)
    assert not missing, f"{doc} names flags no parser has: {sorted(set(missing))}"


@pytest.mark.parametrize("command", ["listen", "demo", "replay"])
def test_speech_and_voice_flags_are_on_every_command_that_speaks(command: str) -> None:
    have = options(parsers()[command])
    for flag in (
        "--speech", "--language", "--verbosity", "--cognitive-load", "--rate", "--pitch",
        "--volume", "--voice", "--earcons", "--no-earcons", "--do-not-interrupt", "--pace",
        "--config",
    ):  # fmt: skip
        assert flag in have, f"announcer {command} has no {flag}"
    assert "--backend" not in have, "one name per concept: --speech, not --backend"
