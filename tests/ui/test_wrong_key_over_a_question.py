"""A wrong key pressed on and on while a high-risk question is read, in both interfaces.

The refusal is the answer to the user's key: it cuts the question off, which is said
again whole after it. Two defects showed here. Each press queued one more refusal (8 s
of presses, half a minute of "Type A to accept or R to reject" before the question came
back); and the guard took the question as heard once its reading's time had passed, so
once the user pressed A, a high-risk accept went to its confirm step for a question cut
off after a fraction of a second and never said again.

The scripted agent (``remove``: ``rm -rf build``, high risk) runs as a real child
process; the plain interface reads a real pipe, the Textual app runs under Pilot; speech
is the ``paced`` backend at 600 words a minute, written as the jsonl record.
"""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

from announcer.engine.scheduler import estimated_seconds
from tests.support.key_runs import (
    ALLOW_ONCE,
    CONFIRM_STEP,
    EVERY,
    PLAIN_ANSWERED,
    TIMEOUT,
    TUI_ANSWERED,
    Heard,
    PlainRun,
    choices,
    press_until,
    shown,
)
from tests.support.key_runs import LAB_PACE as PACE
from tests.support.key_runs import backend as make_backend
from tests.support.key_runs import session as make_session
from tests.support.speech_record import spoken_in
from tests.support.waiting import until, until_on_pilot

#: the agent with no settings to say: its question comes at once
NO_SETTINGS: tuple[str, ...] = ()
#: wrong keys pressed while the question is read: longer than its reading (about 5 s)
WRONG_PRESSES = 28
QUESTION_START = "Confirmation needed. Scripted Agent wants to run: rm -rf build."


def check(heard: Heard, refusal: str, pressing: float) -> None:
    """The question was said through before the confirm step, refusals did not pile up,
    and the accept was sent once."""
    lines = heard.lines()
    step = next(
        i
        for i, r in enumerate(lines)
        if r["action"] == "speak" and str(r["text"]).startswith(CONFIRM_STEP)
    )
    readings = [
        (i, r)
        for i, r in enumerate(lines[:step])
        if r["action"] == "speak" and str(r["text"]).startswith(QUESTION_START)
    ]
    assert readings, "\n".join(shown(lines))
    # The first reading was cut off by a refusal; the last one before the confirm step was
    # said through: no cancel of it, and the step began after its words were said.
    index, last = readings[-1]
    cut = [r for r in lines[index:step] if r["action"] == "cancel" and r["text"] == last["text"]]
    if cut:
        words = estimated_seconds(str(last["text"]), PACE) - 0.25
        assert float(cut[0]["t"]) - float(last["t"]) >= words - 0.1, "\n".join(shown(lines))
    said = spoken_in(lines)
    # One refusal at a time said, one waiting: never a backlog of one per press.
    refusals = said.count(refusal)
    # ``pressing``: how long the wrong key went on (longer on a loaded machine)
    assert 1 <= refusals <= pressing / estimated_seconds(refusal, PACE) + 3, said


async def test_plain_a_wrong_key_on_and_on_then_a_high_risk_accept(tmp_path: Path) -> None:
    run = PlainRun(tmp_path, PACE, NO_SETTINGS)
    heard = run.heard
    refusal = "Type A to accept or R to reject, then press Enter."
    try:
        await until(lambda: "Scripted Agent is ready." in spoken_in(run.speech), "the agent")
        run.type_line("remove")
        await until(
            lambda: any(t.startswith(QUESTION_START) for t in spoken_in(run.speech)),
            "the question read",
        )
        began = asyncio.get_running_loop().time()
        for _ in range(WRONG_PRESSES):  # bounded: 7 s of a wrong key
            run.type_line("x")
            await asyncio.sleep(EVERY)
        pressing = asyncio.get_running_loop().time() - began

        async def press() -> None:
            run.type_line("a")

        await press_until(press, run.printed("Type c then Enter to confirm"), asyncio.sleep)
        run.type_line("c")
        await until(lambda: bool(choices(tmp_path)), "the agent's answer")
        await until(lambda: PLAIN_ANSWERED in spoken_in(run.speech), "the answer heard")
    finally:
        await run.close()
    assert choices(tmp_path) == [ALLOW_ONCE]
    check(heard, refusal, pressing)


async def test_tui_a_wrong_key_on_and_on_then_a_high_risk_accept(tmp_path: Path) -> None:
    from announcer.ui.tui.app import AnnouncerApp

    speech = io.StringIO()
    heard = Heard(speech)
    session = make_session(tmp_path, make_backend(speech, PACE), PACE, NO_SETTINGS)
    app = AnnouncerApp(session, save_settings=lambda _settings: None)
    refusal = "x is not an answer here."
    async with app.run_test() as pilot:
        runner = asyncio.ensure_future(session.run())
        try:
            await until_on_pilot(
                pilot, lambda: "Scripted Agent is ready." in spoken_in(speech), "the agent"
            )
            await pilot.press(*"remove", "enter")
            await until_on_pilot(
                pilot,
                lambda: any(t.startswith(QUESTION_START) for t in spoken_in(speech)),
                "the question read",
            )
            began = asyncio.get_running_loop().time()
            for _ in range(WRONG_PRESSES):
                await pilot.press("x")
                await pilot.pause(EVERY)
            pressing = asyncio.get_running_loop().time() - began

            async def press() -> None:
                await pilot.press("a")

            await press_until(press, lambda: app.key_guard.confirming, pilot.pause)
            await pilot.press("enter")
            await until_on_pilot(pilot, lambda: bool(choices(tmp_path)), "the agent's answer")
            await until_on_pilot(
                pilot,
                lambda: any(t.startswith(TUI_ANSWERED) for t in spoken_in(speech)),
                "the answer heard",
            )
        finally:
            session.stop()
            await asyncio.wait_for(runner, TIMEOUT)
    assert choices(tmp_path) == [ALLOW_ONCE]
    said = spoken_in(heard.lines())
    full = next(t for t in said if t.startswith(refusal))
    check(heard, full, pressing)
