"""A plan approval, by steps in the question and whole on a key (issue 21, item 5).

The agent is tests/acp_frontend/sdk_agent.py (``exitplan``: Claude's ExitPlanMode, the
plan and its four options), a real child process through ``AcpTransport``. Speech is
the ``paced`` backend on the loop's clock, so each utterance takes its time at the
user's rate and the jsonl record says what was heard. In the Textual app under Pilot and
in the plain line interface: the whole plan is shown, the question names the key that
reads it, W (a key, not an answer) says it whole, and a reject reaches the agent.
"""

from __future__ import annotations

import asyncio
import io
import os
import sys
from pathlib import Path

from announcer.engine.settings import UserSettings
from announcer.runtime.session import LiveSession
from announcer.speech.driver import SpeechDriver
from announcer.speech.paced import LoopClock, PacedBackend
from announcer.transports.acp import AcpTransport
from tests.support.speech_record import spoken_in
from tests.support.waiting import until, until_on_pilot

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 60.0
#: the plan sdk_agent's ``exitplan`` sends, as the dialog shows it and as W says it
SHOWN_PLAN = "## Fix the login bug\n1. Read `auth.py`\n2. Fix the token check\n3. Run the tests"
WHOLE_PLAN = "Fix the login bug. 1. Read auth.py. 2. Fix the token check. 3. Run the tests."
#: a quick listener (the top of the setting's range): the question, long with its plan, is
#: said through sooner; these tests are about what is shown and said, not the pace
SETTINGS = UserSettings(pace_wpm=600)


def _session(folder: Path, records: io.StringIO) -> LiveSession:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    agent = AcpTransport(
        [sys.executable, "-m", "tests.acp_frontend.sdk_agent"],
        name="Scripted",
        cwd=str(folder),
        env=env,
    )
    backend = PacedBackend(
        LoopClock(asyncio.get_running_loop()), rate_wpm=SETTINGS.pace_wpm, stream=records
    )
    return LiveSession([], SETTINGS, transports=[agent], driver=SpeechDriver(backend))


def _choices(folder: Path) -> list[str]:
    path = folder / "choices.txt"
    return path.read_text().split() if path.exists() else []


async def test_the_textual_dialog_shows_the_whole_plan_and_w_says_it(tmp_path: Path) -> None:
    from textual.widgets import Static

    from announcer.ui.tui.app import AnnouncerApp
    from announcer.ui.tui.modals import ConfirmScreen

    records = io.StringIO()
    session = _session(tmp_path, records)
    app = AnnouncerApp(session, save_settings=lambda _settings: None)

    def said(text: str) -> bool:
        return any(text in t for t in spoken_in(records))

    async with app.run_test() as pilot:
        runner = asyncio.ensure_future(session.run())
        try:
            await until_on_pilot(pilot, lambda: said("Scripted Agent is ready."), "the agent")
            await pilot.press(*"exitplan", "enter")
            await until_on_pilot(
                pilot,
                lambda: isinstance(app.screen, ConfirmScreen) and bool(app.screen.query("#plan")),
                "the dialog, composed",
            )
            screen = app.screen
            assert isinstance(screen, ConfirmScreen)
            assert str(screen.query_one("#plan", Static).content) == f"Plan:\n{SHOWN_PLAN}"
            # the question reads the plan by steps, and its keys end with the one for it all
            await until_on_pilot(pilot, lambda: said("W reads the whole plan."), "the keys")
            question = " ".join(spoken_in(records))
            assert "The plan has 3 steps: 1. Read auth.py." in question
            await pilot.press("w")
            await until_on_pilot(pilot, lambda: WHOLE_PLAN in spoken_in(records), "the plan")
            assert _choices(tmp_path) == []  # W answers nothing
            await until_on_pilot(
                pilot,
                lambda: (at := app.key_guard.armed_at()) is not None and session.now() >= at,
                "the keys to arm",
            )
            await pilot.press("r")  # reject once: one key
            await until_on_pilot(pilot, lambda: _choices(tmp_path) == ["plan"], "the answer")
        finally:
            session.stop()
            await asyncio.wait_for(runner, TIMEOUT)
    assert spoken_in(records).count(WHOLE_PLAN) == 1


async def test_the_plain_interface_prints_the_whole_plan_and_w_says_it(tmp_path: Path) -> None:
    from announcer.ui.plain import PlainUi

    records = io.StringIO()
    out = io.StringIO()
    session = _session(tmp_path, records)
    read_end, write_end = os.pipe()
    typed = os.fdopen(read_end, encoding="utf-8")
    ui = PlainUi(out=out, inp=typed)
    ui.attach(session)
    runner = asyncio.ensure_future(session.run())

    def type_line(line: str) -> None:
        os.write(write_end, f"{line}\n".encode())

    def printed(text: str) -> bool:
        return text in out.getvalue()

    try:
        await until(lambda: "Scripted Agent is ready." in spoken_in(records), "the agent")
        type_line("exitplan")
        await until(lambda: printed("Accept or reject: Scripted Agent wants to run"), "the ask")
        shown = out.getvalue()
        assert "Plan:\n" + "".join(f"  | {line}\n" for line in SHOWN_PLAN.split("\n")) in shown
        keys = "W reads the whole plan."
        await until(lambda: any(keys in t for t in spoken_in(records)), "the question's keys")
        type_line("w")
        await until(lambda: WHOLE_PLAN in spoken_in(records), "the whole plan")
        assert _choices(tmp_path) == []  # W answers nothing
        # reject once, as soon as the keys are armed ("Not yet." until then)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + TIMEOUT
        while not printed("Sent: reject."):
            assert loop.time() < deadline, out.getvalue()[-2000:]
            type_line("r")
            await until(lambda: printed("Sent: reject.") or printed("Not yet."), "a verdict")
            await asyncio.sleep(0.2)
        await until(lambda: _choices(tmp_path) == ["plan"], "the agent's answer")
    finally:
        session.stop()
        await asyncio.wait_for(runner, TIMEOUT)
        os.close(write_end)
        typed.close()
    assert spoken_in(records).count(WHOLE_PLAN) == 1
