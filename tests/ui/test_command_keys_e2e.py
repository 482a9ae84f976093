"""Keys at awkward moments on a disguised command, end to end (issues 20 and 22).

The real programs: ``announcer listen hooks:SOCK --ui plain`` over pipes with the jsonl
speech record, and a real ``announcer hook claude-code`` process standing in for Claude
Code (what it prints is what the agent receives). The command is the audit's 446
characters of padding before ``rm -rf ~``.

Checked: what the user sees (the whole command), hears (a summary naming the rm, the
two keys, an early key's two-word cue, never a re-reading, W reading it whole) and
what the agent receives (nothing until the second key, then allow).
"""

from __future__ import annotations

import time
from pathlib import Path

from tests.formats.test_disguise import padded
from tests.formats.test_hook_bridge import PRE_TOOL_USE, WAIT, Served, hook_output, run_hook
from tests.formats.test_hook_bridge import sock as sock
from tests.support.speech_record import spoken_in as spoken

COMMAND = padded(446)
# A quick listener (the top of the setting's range): the question is said through sooner.
# These tests are about the keys and what they send, not about the pace.
QUICK_PACE = 600
# How soon a key that got "Not yet." is pressed again (the count of tries is not checked:
# an early key costs nothing, issue 20).
PRESS_AGAIN = 0.3


def wait_heard(path: Path, check, what: str) -> list[str]:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        said = spoken(path)
        if check(said):
            return said
        time.sleep(0.05)
    raise AssertionError(f"never heard {what}; heard {spoken(path)}")


def test_a_long_disguised_command_from_the_first_key_to_the_agents_answer(
    sock: Path,
    tmp_path: Path,
    isolated_settings_file: Path,
) -> None:
    # A quick listener: the question is said through sooner (and the test ends sooner).
    isolated_settings_file.parent.mkdir(parents=True, exist_ok=True)
    isolated_settings_file.write_text(f"pace_wpm = {QUICK_PACE}\n")
    heard = tmp_path / "heard.jsonl"
    listening = Served(
        sock, "listen", f"hooks:{sock}", "--ui", "plain", "--speech", f"jsonl:{heard}"
    )
    try:
        listening.wait_for("Connected to coding-agent hooks")
        payload = dict(
            PRE_TOOL_USE,
            tool_use_id="toolu_padded",
            tool_input={"command": COMMAND, "description": "Tidy up"},
        )
        hook = run_hook(payload, sock)
        # Seen: the whole command, never cut (issue 22).
        shown = listening.wait_for("Command:")
        assert shown == f"Command: {COMMAND}"
        listening.wait_for("Accept or reject:")
        # At once, as the question appears: an early key. And again, straight after.
        listening.type("a\n")
        listening.type("a\n")
        listening.wait_for("Not yet.")
        listening.wait_for("Not yet.")
        assert hook.poll() is None  # the agent has received nothing

        # Heard: the question once, as a summary naming the rm and the two keys.
        said = wait_heard(heard, lambda s: "Not yet." in s, "the cue")
        questions = [t for t in said if t.startswith("Confirmation needed.")]
        assert len(questions) == 1, said
        question = questions[0]
        assert "A long command, 446 characters." in question
        assert "Dangerous: rm -rf tilde." in question
        assert "High risk. This cannot be undone." in question
        assert "A then C, or R." in question  # issue 30: a few words
        assert "W reads the whole command." in question
        # Two early keys, one cue: the second costs nothing, not even two words.
        assert said.count("Not yet.") == 1, said

        # W reads it whole, literally.
        listening.type("w\n")
        whole = wait_heard(
            heard, lambda s: any(t.startswith("echo aaaa") for t in s), "the whole command"
        )
        [literal] = [t for t in whole if t.startswith("echo aaaa")]
        assert literal.startswith("echo " + "a" * 429 + " && rm -rf tilde")
        assert hook.poll() is None

        # The user presses `a` until the question has been said through (no re-reading
        # ever comes of it), then confirms with the second, different key.
        deadline = time.monotonic() + WAIT
        while True:
            listening.type("a\n")
            line = listening.wait_for("")
            while not line.startswith(("Not yet.", "Accept: ")):
                line = listening.wait_for("")
            if line.startswith("Accept: "):
                break
            assert time.monotonic() < deadline, "the question was never said through"
            time.sleep(PRESS_AGAIN)
        # The confirm step names the action briefly and its dangerous part, not all of it.
        assert line.startswith("Accept: Claude Code wants to run Bash: A long command")
        assert "rm -rf ~" in line and "aaaaaaaaaaaaaaaaaaaaaaaaa" not in line
        assert hook.poll() is None
        listening.type("c\n")
        assert hook_output(hook)["hookSpecificOutput"]["permissionDecision"] == "allow"
        final = spoken(heard)
        assert len([t for t in final if t.startswith("Confirmation needed.")]) == 1, final
    finally:
        listening.stop()


# -- the Textual UI under Pilot, on the live runtime ------------------------------------


async def _until(pilot, condition, what: str) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + WAIT
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        await pilot.pause(0.05)


def _textual_session(sock: Path, heard: Path, **settings: object):  # type: ignore[no-untyped-def]
    from announcer.engine.settings import UserSettings
    from announcer.runtime.session import LiveSession
    from announcer.speech.driver import SpeechDriver
    from announcer.speech.jsonl import JsonlBackend

    stream = heard.open("w", encoding="utf-8", buffering=1)
    session = LiveSession(
        [f"hooks:{sock}"],
        UserSettings(**settings),  # type: ignore[arg-type]
        driver=SpeechDriver(JsonlBackend(stream)),
    )
    return session, stream


async def test_textual_keys_on_a_long_disguised_command(sock: Path, tmp_path: Path) -> None:
    import asyncio

    from textual.widgets import Static

    from announcer.ui.tui.app import AnnouncerApp
    from announcer.ui.tui.modals import ConfirmScreen

    heard = tmp_path / "heard.jsonl"
    session, stream = _textual_session(sock, heard, pace_wpm=QUICK_PACE)
    app = AnnouncerApp(session)
    hook = None
    try:
        async with app.run_test() as pilot:
            runner = asyncio.ensure_future(session.run())
            await _until(pilot, lambda: sock.exists(), "the hook socket")
            payload = dict(
                PRE_TOOL_USE,
                tool_use_id="toolu_tui",
                tool_input={"command": COMMAND, "description": "Tidy up"},
            )
            hook = run_hook(payload, sock)
            await _until(
                pilot,
                lambda: (
                    isinstance(app.screen, ConfirmScreen) and bool(app.screen.query("#command"))
                ),
                "the dialog, composed",
            )
            screen = app.screen
            assert isinstance(screen, ConfirmScreen)
            # Seen: the whole command, never cut.
            shown = str(screen.query_one("#command", Static).content)
            assert shown == f"Command:\n{COMMAND}", (shown[:200], screen.prompt.event)
            # Two early keys: one two-word cue, nothing sent, nothing read again.
            await pilot.press("a")
            await pilot.press("a")
            await _until(pilot, lambda: "Not yet." in spoken(heard), "the cue")
            assert hook.poll() is None
            # The key line: one short line, the second key and W named, no origin or id.
            await _until(
                pilot,
                lambda: any(t.startswith("Accept A Enter") for t in spoken(heard)),
                "the key line",
            )
            [keys] = [t for t in spoken(heard) if t.startswith("Accept A Enter")]
            assert keys == "Accept A Enter, reject R. W reads the whole command."
            # W: the whole command, literally.
            await pilot.press("w")
            await _until(
                pilot,
                lambda: any(t.startswith("echo aaaa") for t in spoken(heard)),
                "the whole command",
            )
            # Once said through: a, then the confirm step (brief), then Enter.
            await _until(
                pilot,
                lambda: (at := app.key_guard.heard_at()) is not None and session.now() >= at,
                "the question to have been said through",
            )
            await pilot.press("a")
            await _until(
                pilot,
                lambda: "Enter." in spoken(heard),
                "the confirm step (short, issue 30 item 2)",
            )
            await pilot.press("f2")  # its long form: the dangerous parts, not the command
            await _until(
                pilot,
                lambda: any(t.startswith("Accept: ") for t in spoken(heard)),
                "the confirm step's long form",
            )
            [step] = [t for t in spoken(heard) if t.startswith("Accept: ")]
            assert "rm -rf" in step and "aaaaaaaaaaaaaaaaaaaa" not in step
            assert hook.poll() is None
            await pilot.press("enter")
            await _until(pilot, lambda: hook.poll() is not None, "the agent's answer")
            said = spoken(heard)
            assert said.count("Not yet.") == 1, said
            assert len([t for t in said if t.startswith("Confirmation needed.")]) == 1, said
            assert not any(t.startswith("Asked by") for t in said)  # detailed only
            session.stop()
            await asyncio.wait_for(runner, WAIT)
        assert hook_output(hook)["hookSpecificOutput"]["permissionDecision"] == "allow"
    finally:
        session.stop()
        stream.close()
        if hook is not None and hook.poll() is None:
            hook.kill()


async def test_textual_an_ordinary_command_is_one_key(sock: Path, tmp_path: Path) -> None:
    import asyncio

    from announcer.ui.tui.app import AnnouncerApp
    from announcer.ui.tui.modals import ConfirmScreen

    heard = tmp_path / "heard.jsonl"
    session, stream = _textual_session(sock, heard)
    app = AnnouncerApp(session)
    hook = None
    try:
        async with app.run_test() as pilot:
            runner = asyncio.ensure_future(session.run())
            await _until(pilot, lambda: sock.exists(), "the hook socket")
            payload = dict(
                PRE_TOOL_USE, tool_use_id="toolu_npm", tool_input={"command": "npm test"}
            )
            hook = run_hook(payload, sock)
            await _until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the dialog")
            await _until(
                pilot,
                lambda: (at := app.key_guard.armed_at()) is not None and session.now() >= at,
                "the keys to arm",
            )
            await pilot.press("a")  # medium risk: one key
            await _until(pilot, lambda: hook.poll() is not None, "the agent's answer")
            assert "A accepts, R rejects." in spoken(heard)
            session.stop()
            await asyncio.wait_for(runner, WAIT)
        assert hook_output(hook)["hookSpecificOutput"]["permissionDecision"] == "allow"
    finally:
        session.stop()
        stream.close()
        if hook is not None and hook.poll() is None:
            hook.kill()
