"""Command-line flags that override settings, shared by ``announcer``, ``listen`` and ``replay``.

Every flag defaults to None ("not given") so that ``load_settings(flags=args)``
can tell a flag the user typed from one they did not; flags win over the
environment and the file.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

# argparse dest -> UserSettings field (see loader.FLAG_ALIASES for the spelling differences).
SETTINGS_FLAG_DESTS = (
    "language",
    "verbosity",
    "cognitive_load",
    "backend",
    "voice",
    "rate",
    "pitch",
    "volume",
    "earcons",
    "do_not_interrupt",
    "pace",
    "max_events_per_second",
    "reply_policy",
)


def add_settings_flags(parser: argparse.ArgumentParser) -> None:
    """Add ``--language``, ``--verbosity``... and ``--config`` to a subcommand's parser.

    Flags another module already defined (same option string) are skipped, so
    a command may define its own ``--language`` and still call this.
    """
    taken = set(parser._option_string_actions)

    def add(option: str, **kwargs: Any) -> None:
        if option not in taken:
            parser.add_argument(option, default=None, **kwargs)

    add("--config", type=Path, metavar="PATH", help="settings file to use instead of the usual one")
    add(
        "--language",
        metavar="TAGS",
        help="languages you understand, most preferred first, "
        "comma-separated BCP 47 tags (e.g. yo-NG,en)",
    )
    add("--verbosity", choices=["terse", "normal", "detailed"], help="how much to say")
    add(
        "--cognitive-load",
        dest="cognitive_load",
        choices=["low", "medium", "high"],
        help="low keeps announcements short and one at a time",
    )
    add(
        "--backend",
        metavar="NAME",
        help="speech engine: auto, pyttsx3, espeak, speechd, screenreader, text, jsonl, wav",
    )
    add(
        "--voice",
        action="append",
        metavar="LANG=VOICE",
        help="voice for a language (repeatable), e.g. --voice yo=yoruba",
    )
    add("--rate", type=int, metavar="WPM", help="speaking rate in words per minute")
    add("--pitch", type=float, metavar="0-1", help="voice pitch from 0.0 to 1.0")
    add("--volume", type=float, metavar="0-1", help="volume from 0.0 to 1.0")
    add(
        "--earcons",
        action=argparse.BooleanOptionalAction,
        help="play short sounds before announcements",
    )
    add(
        "--do-not-interrupt",
        dest="do_not_interrupt",
        action=argparse.BooleanOptionalAction,
        help="only critical announcements interrupt speech",
    )
    add("--pace", type=int, metavar="WPM", help="words per minute you can follow")
    add(
        "--max-events-per-second",
        dest="max_events_per_second",
        type=float,
        metavar="N",
        help="at most N announcements a second (critical ones always pass)",
    )
    add(
        "--reply-policy",
        dest="reply_policy",
        choices=["ask", "auto_reject"],
        help="what to do with unanswered confirmations; never accepts for you",
    )


def flags_from_args(args: argparse.Namespace) -> dict[str, Any]:
    """The settings flags the user actually gave, keyed by argparse dest."""
    return {
        dest: getattr(args, dest)
        for dest in SETTINGS_FLAG_DESTS
        if getattr(args, dest, None) is not None
    }
