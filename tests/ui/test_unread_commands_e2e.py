"""One key never allows a command announcer could not read in full (issue 29, items 1-2),
end to end with the real programs.

Hooks: ``announcer listen hooks:SOCK --ui plain`` with the jsonl speech record, and a real
``announcer hook claude-code`` process standing in for Claude Code (what it prints is what
the agent receives). ACP: a live session with the scripted ACP agent as a real child
process asking to run the command (what it logs is what it received).

The user presses ``a`` until announcer asks for the second key: an accept that one key
sent would show as "Sent" (or the agent's answer) first, and fails the test at once.
A control command (``npm test``) shows the same loop does see a one-key accept.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from tests.formats.test_hook_bridge import PRE_TOOL_USE, WAIT, Served, hook_output, run_hook
from tests.formats.test_hook_bridge import sock as sock
from tests.formats.test_unreadable_commands import long_command
from tests.support.key_runs import LAB_PACE, PlainRun, choices
from tests.ui.test_command_keys_e2e import spoken

#: how soon a key that got "Not yet." is pressed again, and how many times at most
PRESS_AGAIN = 0.3
TRIES = 200
CONFIRM_STEP = "Accept: "


def press_a_until_asked_for_a_second_key(listening: Served) -> str:
    """Press ``a`` until the question was heard and the key answered: the confirm step's
    line, or (one key sent it) the line that says so."""
    for _ in range(TRIES):
        listening.type("a\n")
        line = listening.wait_for("")
        while not line.startswith(("Not yet.", CONFIRM_STEP, "Sent", "Allowed")):
            line = listening.wait_for("")
        if not line.startswith("Not yet."):
            return line
        time.sleep(PRESS_AGAIN)
    raise AssertionError(f"pressed {TRIES} times; saw {listening.seen[-20:]}")


@pytest.mark.parametrize(
    ("command", "why"),
    [
        (long_command(5_000), "Dangerous: rm -rf tilde /project."),
        (long_command(20_028), "Only the first 16,384 of its 20,028 characters were checked."),
        (long_command(1_200_000), "of its 1,200,000 characters were checked."),
        ("echo cm0gLXJmIH4= | base64 -d | sh", "It runs text it decodes first."),
        ("X=rm; $X -rf ~", "Its program is built when it runs."),
        ('node -e \'require("fs").rmSync("/home/ada", {recursive: true})\'', "cannot check"),
        ("docker system prune -af", "High risk."),
    ],
    ids=["5000", "20028", "1200000", "base64-sh", "variable", "node-e", "prune"],
)
def test_one_key_never_allows_an_unread_command_through_the_hook(
    command: str, why: str, sock: Path, tmp_path: Path, isolated_settings_file: Path
) -> None:
    isolated_settings_file.parent.mkdir(parents=True, exist_ok=True)
    isolated_settings_file.write_text(f"pace_wpm = {LAB_PACE}\n")
    heard = tmp_path / "heard.jsonl"
    listening = Served(
        sock, "listen", f"hooks:{sock}", "--ui", "plain", "--speech", f"jsonl:{heard}"
    )
    try:
        listening.wait_for("Connected to coding-agent hooks")
        payload = dict(PRE_TOOL_USE, tool_input={"command": command, "description": "Tidy"})
        hook = run_hook(payload, sock)
        listening.wait_for("Accept or reject:")
        line = press_a_until_asked_for_a_second_key(listening)
        assert line.startswith(CONFIRM_STEP), line  # one key sent nothing
        assert hook.poll() is None  # the agent has received nothing
        question = " ".join(t for t in spoken(heard) if t.startswith("Confirmation needed."))
        assert why in question
        listening.type("r\n")  # rejecting takes one key, also at the confirm step
        decision = hook_output(hook)["hookSpecificOutput"]["permissionDecision"]
        assert decision == "deny"
    finally:
        listening.stop()


def test_the_same_loop_sees_an_ordinary_command_go_with_one_key(
    sock: Path, tmp_path: Path, isolated_settings_file: Path
) -> None:
    isolated_settings_file.parent.mkdir(parents=True, exist_ok=True)
    isolated_settings_file.write_text(f"pace_wpm = {LAB_PACE}\n")
    listening = Served(sock, "listen", f"hooks:{sock}", "--ui", "plain", "--speech", "none")
    try:
        listening.wait_for("Connected to coding-agent hooks")
        hook = run_hook(dict(PRE_TOOL_USE, tool_input={"command": "npm test"}), sock)
        listening.wait_for("Accept or reject:")
        assert press_a_until_asked_for_a_second_key(listening).startswith("Sent")
        assert hook_output(hook)["hookSpecificOutput"]["permissionDecision"] == "allow"
    finally:
        listening.stop()


async def until(condition, what: str) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + WAIT
    while not condition():
        assert time.monotonic() < deadline, f"never {what}"
        await asyncio.sleep(0.05)


@pytest.mark.parametrize(
    "command",
    [
        long_command(20_028),
        "printf '\\x72\\x6d\\x20\\x2d\\x72\\x66\\x20\\x7e' | sh",
        "{rm,-rf,~}",
        "terraform destroy -auto-approve",
    ],
    ids=["20028", "printf-sh", "braces", "terraform"],
)
async def test_one_key_never_allows_an_unread_command_through_acp(
    command: str, tmp_path: Path
) -> None:
    (tmp_path / "command.txt").write_text(command, encoding="utf-8")
    run = PlainRun(tmp_path, LAB_PACE, flags=())
    try:
        await until(run.printed("is ready"), "ready")
        run.type_line("run command.txt")
        await until(run.printed("Accept or reject:"), "the question")
        for _ in range(TRIES):
            if CONFIRM_STEP in run.out.getvalue() or choices(tmp_path):
                break
            run.type_line("a")
            await asyncio.sleep(PRESS_AGAIN)
        assert choices(tmp_path) == []  # the agent received nothing from one key
        assert CONFIRM_STEP in run.out.getvalue()
        run.type_line("r")  # rejecting takes one key, also at the confirm step
        await until(lambda: bool(choices(tmp_path)), "the agent's answer")
        assert choices(tmp_path) == ["no"]
    finally:
        await run.close()


# -- the Textual UI under Pilot, on the live runtime ------------------------------------


@pytest.mark.parametrize(
    ("command", "why"),
    [
        (long_command(20_028), "Only the first 16,384 of its 20,028 characters were checked."),
        ("echo cm0gLXJmIH4= | base64 -d | sh", "It runs text it decodes first."),
    ],
    ids=["20028", "base64-sh"],
)
async def test_textual_one_key_never_allows_an_unread_command(
    command: str, why: str, sock: Path, tmp_path: Path
) -> None:
    from textual.widgets import Static

    from announcer.ui.tui.app import AnnouncerApp
    from announcer.ui.tui.modals import ConfirmScreen
    from tests.ui.test_command_keys_e2e import _textual_session, _until

    heard = tmp_path / "heard.jsonl"
    session, stream = _textual_session(sock, heard, pace_wpm=LAB_PACE)
    app = AnnouncerApp(session)
    hook = None
    try:
        async with app.run_test() as pilot:
            runner = asyncio.ensure_future(session.run())
            await _until(pilot, lambda: sock.exists(), "the hook socket")
            hook = run_hook(dict(PRE_TOOL_USE, tool_input={"command": command}), sock)
            await _until(
                pilot,
                lambda: isinstance(app.screen, ConfirmScreen) and bool(app.screen.query("#hidden")),
                "the dialog, with why it cannot be read in full",
            )
            assert why in str(app.screen.query_one("#hidden", Static).content)
            await _until(
                pilot,
                lambda: (at := app.key_guard.heard_at()) is not None and session.now() >= at,
                "the question to have been said through",
            )
            await pilot.press("a")
            await _until(pilot, lambda: app.key_guard.confirming, "the confirm step")
            assert hook.poll() is None  # one key sent nothing
            await pilot.press("r")
            await _until(pilot, lambda: hook.poll() is not None, "the agent's answer")
            session.stop()
            await asyncio.wait_for(runner, WAIT)
        assert hook_output(hook)["hookSpecificOutput"]["permissionDecision"] == "deny"
    finally:
        session.stop()
        stream.close()
        if hook is not None and hook.poll() is None:
            hook.kill()
