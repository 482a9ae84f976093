"""Keys pressed twice in a breath around a question, in both interfaces.

- W (plain) or F2 (Textual) twice quickly while a high-risk question is read: the first
  answers at once, cutting the question; the second follows it, and no more; the question
  is not read again, and once that reading was heard the accept takes its two keys.
- A pressed on until the first of two questions is answered, then once more just as the
  second question replaces it: that key never answers the second question (it gets "Not
  yet."), and no early key's "Not yet." is heard after the key that answered the first.

The scripted agent (``remove``: ``rm -rf build``; ``ask 2``: two questions in a row) is a
real child process; the plain interface reads a real pipe, the Textual app runs under
Pilot; speech is the ``paced`` backend at 600 words a minute, as the jsonl record.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from announcer.engine.answer_guard import KeyGuard
from announcer.ui.tui.app import AnnouncerApp
from tests.support.clock import HeldClock
from tests.support.key_runs import (
    CONFIRM_STEP,
    CUE,
    EVERY,
    PLAIN_ANSWERED,
    TIMEOUT,
    TRIES,
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

NO_SETTINGS: tuple[str, ...] = ()
QUESTION = "Confirmation needed. Scripted Agent wants to run: rm -rf build."
FIRST = "Confirmation needed. Scripted Agent wants to run: touch f0."
SECOND = "Confirmation needed. Scripted Agent wants to run: touch f1."


def _answers(folder: Path) -> list[str]:
    """What the agent received for ``ask N``, one option a question, in order."""
    path = folder / "answers.txt"
    return [line.split()[1] for line in path.read_text().splitlines()] if path.exists() else []


def check_read_twice(said: list[str], whole: Callable[[str], bool]) -> None:
    """The question read once (cut by the first key), the key's reading at most twice, the
    confirm step after it, and nothing said again after the answer."""
    assert [t for t in said if t.startswith(QUESTION)] != [], said
    assert len([t for t in said if t.startswith(QUESTION)]) == 1, said
    readings = [t for t in said if whole(t)]
    assert 1 <= len(readings) <= 2, said
    step = next(i for i, t in enumerate(said) if t.startswith(CONFIRM_STEP))
    assert CUE not in said[step:], said[step:]


async def test_plain_w_twice_quickly_over_a_high_risk_question(tmp_path: Path) -> None:
    run = PlainRun(tmp_path, PACE, NO_SETTINGS)
    try:
        await until(lambda: "Scripted Agent is ready." in spoken_in(run.speech), "the agent")
        run.type_line("remove")
        await until(lambda: any(t.startswith(QUESTION) for t in spoken_in(run.speech)), "it")
        run.type_line("w")
        run.type_line("w")

        async def press() -> None:
            run.type_line("a")

        await press_until(press, run.printed("Type c then Enter to confirm"), asyncio.sleep)
        run.type_line("c")
        await until(lambda: PLAIN_ANSWERED in spoken_in(run.speech), "the answer heard")
    finally:
        await run.close()
    assert choices(tmp_path) == ["once"]
    said = spoken_in(run.speech)
    check_read_twice(said, lambda t: t.startswith("rm -rf build"))
    # The key's reading was said through once before the accept's confirm step.
    lines = run.heard.lines()
    first = next(i for i, r in enumerate(lines) if str(r["text"]).startswith("rm -rf build"))
    assert not any(
        r["action"] == "cancel" and r["text"] == lines[first]["text"]
        for r in lines[first + 1 : first + 2]
    ), "\n".join(shown(lines))


async def test_tui_f2_twice_quickly_over_a_high_risk_question(tmp_path: Path) -> None:
    speech = io.StringIO()
    session = make_session(tmp_path, make_backend(speech, PACE), PACE, NO_SETTINGS)
    app = AnnouncerApp(session, save_settings=lambda _settings: None)
    async with app.run_test() as pilot:
        runner = asyncio.ensure_future(session.run())
        try:
            await until_on_pilot(
                pilot, lambda: "Scripted Agent is ready." in spoken_in(speech), "the agent"
            )
            await pilot.press(*"remove", "enter")
            await until_on_pilot(
                pilot, lambda: any(t.startswith(QUESTION) for t in spoken_in(speech)), "it"
            )
            await pilot.press("f2", "f2")

            async def press() -> None:
                await pilot.press("a")

            await press_until(press, lambda: app.key_guard.confirming, pilot.pause)
            await pilot.press("enter")
            await until_on_pilot(
                pilot,
                lambda: any(t.startswith(TUI_ANSWERED) for t in spoken_in(speech)),
                "the answer heard",
            )
        finally:
            session.stop()
            await asyncio.wait_for(runner, TIMEOUT)
    assert choices(tmp_path) == ["once"]
    said = spoken_in(speech)
    # F2 says the question again (its own words): the first reading of the question is
    # the agent's, the others F2's, each at most twice in all.
    spoken_question = [t for t in said if t.startswith(QUESTION)]
    assert 1 <= len(spoken_question) <= 3, said
    step = next(i for i, t in enumerate(said) if t.startswith(CONFIRM_STEP))
    assert CUE not in said[step:], said[step:]


async def answer_then_hold(
    press: Callable[[], Awaitable[Any]],
    guard: KeyGuard,
    clock: HeldClock,
    answered: Callable[[], bool],
    pause: Callable[[float], Awaitable[Any]],
) -> None:
    """Press on until the first question takes the key; the key that answers it is pressed
    with the session's clock held, so the next question, shown at that moment, cannot arm
    however slowly this machine hands the next key over (tests/support/clock.py)."""
    for _ in range(TRIES):
        armed = guard.armed_at()
        if armed is not None and clock() >= armed:
            clock.hold()
            await press()
            for _ in range(TRIES):
                if answered():
                    return
                await pause(EVERY)
            raise AssertionError("the armed key answered nothing")
        await press()
        await pause(EVERY)
    raise AssertionError(f"pressed {TRIES} times and never got through")


def check_second_not_answered(heard: Heard, answers: list[str]) -> None:
    """The key pressed as the second question came answered nothing: the agent got the
    first answer only until the test answered the second, and no stale cue was heard."""
    assert answers == ["once", "no"], answers
    said = spoken_in(heard.lines())
    # Between the key that answered the first question and its "sent", no "Not yet.".
    answered = [i for i, t in enumerate(said) if t.startswith(("Sent: ", "Sent.", "Accepted: "))]
    assert answered, said
    cut = max(i for i, t in enumerate(said[: answered[0]]) if t.startswith(FIRST))
    assert CUE not in said[cut + 1 : answered[0]], said


async def test_plain_a_key_pressed_as_a_second_question_replaces_the_first(
    tmp_path: Path,
) -> None:
    clock = HeldClock()
    run = PlainRun(tmp_path, PACE, NO_SETTINGS, clock)
    try:
        await until(lambda: "Scripted Agent is ready." in spoken_in(run.speech), "the agent")
        run.type_line("ask 2")
        await until(lambda: any(t.startswith(FIRST) for t in spoken_in(run.speech)), "the first")

        async def press() -> None:
            run.type_line("a")

        await answer_then_hold(
            press, run.ui.guard, clock, lambda: bool(_answers(tmp_path)), asyncio.sleep
        )
        await until(run.printed("touch f1?"), "the second question shown")
        cues_before = run.out.getvalue().count("Not yet.")
        run.type_line("a")  # in the same breath as the second question
        await until(lambda: run.out.getvalue().count("Not yet.") > cues_before, "its verdict")
        assert _answers(tmp_path) == ["once"]  # the second was not answered by it
        clock.release()
        await until(lambda: any(t.startswith(SECOND) for t in spoken_in(run.speech)), "read")

        async def reject() -> None:
            run.type_line("r")

        await press_until(reject, lambda: len(_answers(tmp_path)) == 2, asyncio.sleep)
    finally:
        await run.close()
    check_second_not_answered(run.heard, _answers(tmp_path))


async def test_tui_a_key_pressed_as_a_second_question_replaces_the_first(tmp_path: Path) -> None:
    speech = io.StringIO()
    heard = Heard(speech)
    clock = HeldClock()
    session = make_session(tmp_path, make_backend(speech, PACE), PACE, NO_SETTINGS, clock)
    app = AnnouncerApp(session, save_settings=lambda _settings: None)
    async with app.run_test() as pilot:
        runner = asyncio.ensure_future(session.run())
        try:
            await until_on_pilot(
                pilot, lambda: "Scripted Agent is ready." in spoken_in(speech), "the agent"
            )
            await pilot.press(*"ask 2", "enter")
            await until_on_pilot(
                pilot, lambda: any(t.startswith(FIRST) for t in spoken_in(speech)), "the first"
            )

            async def press() -> None:
                await pilot.press("a")

            await answer_then_hold(
                press, app.key_guard, clock, lambda: bool(_answers(tmp_path)), pilot.pause
            )

            def second_shown() -> bool:
                view = getattr(app.screen, "view", None)
                return view is not None and "touch f1" in str(getattr(view, "action", ""))

            await until_on_pilot(pilot, second_shown, "the second question's dialog")
            await pilot.press("a")  # in the same breath as the second question
            await pilot.pause(0.5)
            # Not answered by it (were it, the reject below would find two answers there).
            assert _answers(tmp_path) == ["once"]
            clock.release()

            async def reject() -> None:
                await pilot.press("r")

            await press_until(reject, lambda: len(_answers(tmp_path)) == 2, pilot.pause)
        finally:
            session.stop()
            await asyncio.wait_for(runner, TIMEOUT)
    check_second_not_answered(heard, _answers(tmp_path))
