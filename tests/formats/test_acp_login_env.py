"""Issue 29 item 3, sans-I/O: which variables of a terminal login's ``env`` are shown, which
make it high risk, and the words that say so (formats/acp_logins.py)."""

from __future__ import annotations

import pytest

from announcer.formats.acp_logins import (
    LOGIN_ENV_VALUE_CHARS,
    login_env_words,
    read_login_env,
    terminal_logins,
)


def _t(text: str) -> str:
    return text


def test_harmless_variables_are_not_shown_and_others_are_in_order() -> None:
    reading = read_login_env([("TERM", "xterm"), ("B_FLAG", "1"), ("LANG", "C"), ("A", "2")])
    assert reading.shown == (("B_FLAG", "1"), ("A", "2"))
    assert not reading.high_risk
    assert login_env_words(reading, _t) == ("It runs with B_FLAG=1, A=2.", "")


def test_nothing_beyond_the_harmless_says_nothing() -> None:
    assert login_env_words(read_login_env([("NO_COLOR", "1")]), _t) == ("", "")


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("PATH", "PATH picks which programs run."),
        ("PYTHONPATH", "PYTHONPATH can load code you were not shown."),
        ("LD_PRELOAD", "LD_PRELOAD can load code you were not shown."),
        ("LD_LIBRARY_PATH", "LD_LIBRARY_PATH can load code you were not shown."),
        ("DYLD_INSERT_LIBRARIES", "DYLD_INSERT_LIBRARIES can load code you were not shown."),
        ("NODE_OPTIONS", "NODE_OPTIONS can load code you were not shown."),
        ("PERL5LIB", "PERL5LIB can load code you were not shown."),
        ("RUBYOPT", "RUBYOPT can load code you were not shown."),
        ("BASH_ENV", "BASH_ENV runs shell code you were not shown."),
        ("ENV", "ENV runs shell code you were not shown."),
        ("PROMPT_COMMAND", "PROMPT_COMMAND runs shell code you were not shown."),
        ("GIT_SSH_COMMAND", "GIT_SSH_COMMAND names a command it may run."),
        ("https_proxy", "https_proxy changes where it connects or whom it trusts."),
        ("HOME", "HOME makes it read settings from another folder."),
        ("Path", "Path picks which programs run."),  # Windows reads names in any case
    ],
)
def test_variables_that_decide_what_runs_take_two_keys_with_the_reason(
    name: str, reason: str
) -> None:
    reading = read_login_env([(name, "/tmp/x")])
    assert reading.high_risk
    shown, risk = login_env_words(reading, _t)
    assert shown == f"It runs with {name}=/tmp/x."
    assert risk == f"High risk: {reason} It takes two keys."


def test_a_value_too_long_to_show_whole_is_cut_and_high_risk() -> None:
    value = "a" * (LOGIN_ENV_VALUE_CHARS + 50)
    reading = read_login_env([("MY_TOKEN_HINT", value)])
    assert reading.shown == (("MY_TOKEN_HINT", "a" * LOGIN_ENV_VALUE_CHARS + "…"),)
    assert login_env_words(reading, _t)[1] == (
        "High risk: MY_TOKEN_HINT is too long to show whole. It takes two keys."
    )


def test_reasons_of_one_kind_are_said_once_with_their_names() -> None:
    reading = read_login_env([("PYTHONPATH", "/a"), ("PATH", "/b"), ("NODE_OPTIONS", "-r x")])
    assert login_env_words(reading, _t)[1] == (
        "High risk: PATH picks which programs run. PYTHONPATH, NODE_OPTIONS can load code "
        "you were not shown. It takes two keys."
    )


def test_the_agents_env_reaches_the_reading_from_both_wire_forms() -> None:
    methods = [
        {"id": "a", "name": "A", "type": "terminal", "args": [], "env": {"PYTHONPATH": "/h"}},
        {"id": "b", "name": "B", "type": "terminal", "env": [{"name": "X", "value": "1"}]},
    ]
    first, second = terminal_logins(methods, ["agent", "--acp"])
    assert read_login_env(first.env).high_risk
    assert read_login_env(second.env).shown == (("X", "1"),)
