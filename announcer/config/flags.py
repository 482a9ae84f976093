"""Command-line flags that override settings, shared by ``listen``, ``demo``, ``replay``,
``watch`` and ``config show``.

Every flag defaults to None ("not given") so that ``load_settings(flags=args)``
can tell a flag the user typed from one they did not; flags win over the
environment and the file.
"""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Callable, Iterable, Sequence
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
    "after_interrupt",
    "pace",
    "max_events_per_second",
    "reply_policy",
    "question_reminder_seconds",
)


# One option names the speech output on every command that speaks (listen, demo, replay, watch).
SPEECH_FLAG_HELP = (
    "where speech goes: auto, pyttsx3, speechd, screenreader, screenreader:NAME (nvda, jaws, "
    "voiceover, orca, speechd, sapi, onecore), text, jsonl (standard output), "
    "jsonl:PATH, wav:DIR (one WAV per utterance), or none (print only)"
)

LANGUAGE_FLAG_HELP = (
    "languages you understand, most preferred first: comma-separated BCP 47 tags "
    "(e.g. yo-NG,en); may be repeated"
)


def parse_language_list(values: str | Iterable[str]) -> list[str]:
    """``yo-NG,en`` (or several such values) as canonical tags, most preferred first.

    The one parser for every ``--language`` flag, so ``listen``, ``replay``,
    ``demo``, ``watch`` and ``hook serve`` agree. Raises ValueError naming the
    first tag that is not BCP 47.
    """
    # imported here: `hook claude-code` registers `hook serve`'s --language but never parses it
    from announcer.i18n.tags import normalize_tag

    items = [values] if isinstance(values, str) else list(values)
    tags: list[str] = []
    for item in items:
        for text in re.split(r"[,\s]+", str(item).strip()):
            if not text:
                continue
            tag = normalize_tag(text)
            if tag is None:
                raise ValueError(f"{text!r} is not a BCP 47 language tag (e.g. yo-NG,en)")
            if tag not in tags:
                tags.append(tag)
    return tags


class LanguageListAction(argparse.Action):
    """``--language yo-NG,en``: a list of tags; repeating the flag adds to it."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        try:
            tags = parse_language_list([] if values is None else values)
        except ValueError as exc:
            parser.error(f"argument {option_string or self.dest}: {exc}")
        if not tags:
            parser.error(f"argument {option_string or self.dest}: give at least one language tag")
        current = getattr(namespace, self.dest, None) or []
        setattr(namespace, self.dest, [*current, *(t for t in tags if t not in current)])


def add_language_flag(parser: argparse.ArgumentParser | Any, dest: str = "language") -> None:
    """Add the shared ``--language`` flag (to a parser or an argument group)."""
    parser.add_argument(
        "--language",
        dest=dest,
        action=LanguageListAction,
        default=None,
        metavar="TAGS",
        help=LANGUAGE_FLAG_HELP,
    )


def in_range(setting: str, number: type[int] | type[float] = int) -> Callable[[str], Any]:
    """An argparse type for a flag whose setting has bounds: a value outside them is refused
    with the rule in words (``--rate must be between 60 and 600``), read from the setting's
    own field in ``UserSettings``, so the flag and the settings file never disagree."""

    def parse(text: str) -> int | float:
        try:
            value = number(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value):
            kind = "a whole number" if number is int else "a number"
            raise argparse.ArgumentTypeError(f"must be {kind} (got {text!r})")
        rule = _range_rule(setting, value)
        if rule:
            raise argparse.ArgumentTypeError(f"{rule} (got {text})")
        return value

    parse.__name__ = number.__name__  # argparse names the type in its own messages
    return parse


def _range_rule(setting: str, value: float) -> str:
    """The bound ``value`` breaks, in words, or "" when it keeps them all."""
    from announcer.engine.settings import UserSettings  # only when a ranged flag is given

    low = high = None
    low_open = False
    for bound in UserSettings.model_fields[setting].metadata:
        if getattr(bound, "ge", None) is not None:
            low = bound.ge
        if getattr(bound, "gt", None) is not None:
            low, low_open = bound.gt, True
        if getattr(bound, "le", None) is not None:
            high = bound.le
    too_low = low is not None and (value <= low if low_open else value < low)
    too_high = high is not None and value > high
    if not (too_low or too_high):
        return ""
    if low is not None and high is not None and not low_open:
        return f"must be between {low:g} and {high:g}"
    if too_high:
        return f"must be at most {high:g}"
    return f"must be more than {low:g}" if low_open else f"must be at least {low:g}"


def add_settings_flags(parser: argparse.ArgumentParser) -> None:
    """Add ``--language``, ``--verbosity``, ``--speech``, the voice flags and ``--config``.

    Flags another module already defined (same option string) are skipped, so
    a command may define its own ``--language`` and still call this.
    """
    taken = set(parser._option_string_actions)

    def add(option: str, **kwargs: Any) -> None:
        if option not in taken:
            parser.add_argument(option, default=None, **kwargs)

    add("--config", type=Path, metavar="PATH", help="settings file to use instead of the usual one")
    if "--language" not in taken:
        add_language_flag(parser)
    add("--verbosity", choices=["terse", "normal", "detailed"], help="how much to say")
    add(
        "--cognitive-load",
        dest="cognitive_load",
        choices=["low", "medium", "high"],
        help="low keeps announcements short and one at a time",
    )
    add(
        "--speech",
        dest="backend",
        metavar="NAME[:ARG]",
        help=SPEECH_FLAG_HELP,
    )
    add(
        "--voice",
        action="append",
        metavar="LANG=VOICE",
        help="voice for a language (repeatable), e.g. --voice yo=yoruba",
    )
    add(
        "--rate",
        type=in_range("rate_wpm"),
        metavar="WPM",
        help="speaking rate in words per minute",
    )
    add("--pitch", type=in_range("pitch", float), metavar="0-1", help="voice pitch from 0.0 to 1.0")
    add("--volume", type=in_range("volume", float), metavar="0-1", help="volume from 0.0 to 1.0")
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
    add(
        "--after-interrupt",
        dest="after_interrupt",
        choices=["resume", "drop"],
        help="what happens to queued speech after a critical interruption",
    )
    add("--pace", type=in_range("pace_wpm"), metavar="WPM", help="words per minute you can follow")
    add(
        "--max-events-per-second",
        dest="max_events_per_second",
        type=in_range("max_events_per_second", float),
        metavar="N",
        help="at most N announcements a second (critical ones always pass)",
    )
    add(
        "--reply-policy",
        dest="reply_policy",
        choices=["ask", "auto_reject"],
        help="what to do with unanswered confirmations; never accepts for you",
    )
    add(
        "--reminder-seconds",
        dest="question_reminder_seconds",
        type=in_range("question_reminder_seconds", float),
        metavar="SECONDS",
        help="say that a question without a deadline is still waiting every SECONDS (0: off)",
    )


def flags_from_args(args: argparse.Namespace) -> dict[str, Any]:
    """The settings flags the user actually gave, keyed by argparse dest."""
    return {
        dest: getattr(args, dest)
        for dest in SETTINGS_FLAG_DESTS
        if getattr(args, dest, None) is not None
    }
