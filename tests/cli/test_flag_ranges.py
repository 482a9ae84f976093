"""A settings flag out of its range is refused in words: which option, which rule, what was
typed; never a raw validation error, on every command that takes the flag."""

from __future__ import annotations

import pytest

from announcer.cli.main import build_parser

COMMANDS = (
    ["listen", "ws://127.0.0.1:9/x"],
    ["demo"],
    ["replay", "session.jsonl"],
    ["watch", "--", "codex"],
    ["agent", "claude"],
)

REFUSED = (
    (["--rate", "900"], "argument --rate: must be between 60 and 600 (got 900)"),
    (["--rate", "59"], "argument --rate: must be between 60 and 600 (got 59)"),
    (["--rate", "fast"], "argument --rate: must be a whole number (got 'fast')"),
    (["--pace", "5"], "argument --pace: must be between 60 and 600 (got 5)"),
    (["--pitch", "3"], "argument --pitch: must be between 0 and 1 (got 3)"),
    (["--volume", "-0.5"], "argument --volume: must be between 0 and 1 (got -0.5)"),
    (["--volume", "nan"], "argument --volume: must be a number (got 'nan')"),
    (
        ["--max-events-per-second", "0"],
        "argument --max-events-per-second: must be more than 0 (got 0)",
    ),
    (
        ["--reminder-seconds", "-1"],
        "argument --reminder-seconds: must be between 0 and 86400 (got -1)",
    ),
)


@pytest.mark.parametrize("command", COMMANDS, ids=lambda words: words[0])
@pytest.mark.parametrize(
    ("flag", "said"), REFUSED, ids=lambda v: " ".join(v) if isinstance(v, list) else ""
)
def test_an_out_of_range_flag_is_refused_naming_the_option_and_the_rule(
    command: list[str], flag: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    words = [command[0], *flag, *command[1:]]
    with pytest.raises(SystemExit) as exited:
        build_parser(words).parse_args(words)
    assert exited.value.code == 2
    error = capsys.readouterr().err
    assert f"announcer {command[0]}: error: {said}" in error
    assert "ValidationError" not in error and "pydantic" not in error


@pytest.mark.parametrize("command", COMMANDS, ids=lambda words: words[0])
def test_the_bounds_themselves_are_accepted(command: list[str]) -> None:
    flags = ["--rate", "600", "--pace", "60", "--pitch", "0", "--volume", "1"]
    flags += ["--max-events-per-second", "0.5", "--reminder-seconds", "0"]
    words = [command[0], *flags, *command[1:]]
    args = build_parser(words).parse_args(words)
    assert (args.rate, args.pace, args.pitch, args.volume) == (600, 60, 0.0, 1.0)
    assert (args.max_events_per_second, args.question_reminder_seconds) == (0.5, 0.0)
