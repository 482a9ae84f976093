"""W is answered at once, even while its plan approval is being read (GUIDE: "a user's
own key gets an answer at once").

The agent is tests/acp_frontend/sdk_agent.py (``exitplan``: Claude's ExitPlanMode), a
real child process through ``AcpTransport``; the plain line interface reads its lines
from a real pipe; speech is the ``paced`` backend on the loop's clock at 250 words a
minute, written as the jsonl record, so each utterance takes its time and the record says
what was heard and when. The question takes well over ten seconds: W used to wait for it.
"""

from __future__ import annotations

import asyncio
import io
import os
import sys
from pathlib import Path

from announcer.engine.scheduler import estimated_seconds
from announcer.engine.settings import UserSettings
from announcer.runtime.session import LiveSession
from announcer.speech.driver import SpeechDriver
from announcer.speech.paced import LoopClock, PacedBackend
from announcer.transports.acp import AcpTransport
from tests.support.speech_record import records as record_lines
from tests.support.speech_record import speak_records, spoken_in
from tests.support.waiting import until

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 60.0
#: a brisk listener; slow enough that each question takes many seconds longer than the
#: pipe and the loop need to hand W over, even on a loaded machine
SETTINGS = UserSettings(pace_wpm=250)
#: what W says for sdk_agent's plan (tests/ui/test_agent_plan.py)
WHOLE_PLAN = "Fix the login bug. 1. Read auth.py. 2. Fix the token check. 3. Run the tests."


def _session(folder: Path, backend: PacedBackend) -> LiveSession:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    agent = AcpTransport(
        [sys.executable, "-m", "tests.acp_frontend.sdk_agent"],
        name="Scripted",
        cwd=str(folder),
        env=env,
    )
    return LiveSession([], SETTINGS, transports=[agent], driver=SpeechDriver(backend))


class PlainRun:
    """The plain interface on a real pipe, a live session and its speech record."""

    def __init__(self, folder: Path) -> None:
        from announcer.ui.plain import PlainUi

        self.speech = io.StringIO()
        self.out = io.StringIO()
        self.backend = PacedBackend(
            LoopClock(asyncio.get_running_loop()), rate_wpm=SETTINGS.pace_wpm, stream=self.speech
        )
        self.session = _session(folder, self.backend)
        read_end, self.write_end = os.pipe()
        self.typed = os.fdopen(read_end, encoding="utf-8")
        self.ui = PlainUi(out=self.out, inp=self.typed)
        self.ui.attach(self.session)
        self.runner = asyncio.ensure_future(self.session.run())

    def type_line(self, line: str) -> None:
        os.write(self.write_end, f"{line}\n".encode())

    async def close(self) -> None:
        self.session.stop()
        await asyncio.wait_for(self.runner, TIMEOUT)
        os.close(self.write_end)
        self.typed.close()

    def question_record(self, asks: str) -> dict[str, object] | None:
        return next(
            (r for r in speak_records(self.speech) if asks in str(r["text"]) and r["event_id"]),
            None,
        )

    async def w_over_the_question(self, scenario: str, asks: str) -> tuple[str, str]:
        """Ask for ``scenario``'s question (its speech has ``asks``), press W while it is
        read; check W cut it off at once and that W's reading is how the question counts
        as heard. The question's text and W's."""
        session = self.session
        await until(lambda: "Scripted Agent is ready." in spoken_in(self.speech), "the agent")
        self.type_line(scenario)
        await until(lambda: self.question_record(asks) is not None, "the question's speech")
        question = self.question_record(asks)
        assert question is not None
        question_text = str(question["text"])
        question_seconds = estimated_seconds(question_text, SETTINGS.pace_wpm)
        self.type_line("w")

        def w_index() -> int | None:
            lines = record_lines(self.speech)
            begun = lines.index(question)
            return next(
                (
                    begun + i
                    for i, r in enumerate(lines[begun:])
                    if r["action"] == "speak"
                    and r["event_id"] == question["event_id"]
                    and r["text"] != question_text
                ),
                None,
            )

        await until(lambda: w_index() is not None, "W's reading")
        lines = record_lines(self.speech)
        w_at = w_index()
        assert w_at is not None
        said_whole = lines[w_at]
        whole = str(said_whole["text"])
        # W began before the question would have ended: it cut the question off.
        assert float(str(said_whole["t"])) < float(str(question["t"])) + question_seconds
        cancelled = [r["text"] for r in lines[:w_at] if r["action"] == "cancel"]
        assert question_text in cancelled
        # Tied to its question, W's reading is how the question was heard: the guard
        # waits for W said through, not for the rest of a question never read again.
        heard = self.ui.guard.heard_at()
        prompts = session.pending_prompts()
        assert heard is not None and len(prompts) == 1
        question_began = session.engine.question_started_at(prompts[0])
        assert question_began is not None
        w_began = question_began + float(str(said_whole["t"])) - float(str(question["t"]))
        w_seconds = estimated_seconds(whole, SETTINGS.pace_wpm)
        assert heard >= w_began + w_seconds - 0.5  # W said through (less its start-up)
        assert heard < question_began + question_seconds  # not the question's cut rest
        return question_text, whole


async def test_w_cuts_the_plan_question_at_once_and_the_question_is_not_read_again(
    tmp_path: Path,
) -> None:
    run = PlainRun(tmp_path)
    try:
        question, whole = await run.w_over_the_question("exitplan", "W reads the whole plan.")
        assert whole == WHOLE_PLAN
        assert estimated_seconds(question, SETTINGS.pace_wpm) > 10.0  # W used to wait this
        backend = run.backend
        await until(
            lambda: (
                not backend.is_speaking()
                and any(u.ended for u in backend.utterances if u.announcement.text == WHOLE_PLAN)
            ),
            "W's reading said through, and nothing after it",
        )
    finally:
        await run.close()
    said = spoken_in(run.speech)
    assert said.count(WHOLE_PLAN) == 1
    assert said.count(question) == 1  # W said it: the question is not read again


async def test_a_high_risk_accept_waits_for_ws_reading_to_be_heard(tmp_path: Path) -> None:
    """``rm -rf build``: W reads the command at once; accept is refused ("Not yet.") until
    W's reading was said through, then asks for its second key."""
    run = PlainRun(tmp_path)
    out = run.out
    try:
        _question, whole = await run.w_over_the_question(
            "wait", "Scripted Agent wants to run: rm -rf build."
        )
        assert "build" in whole
        heard = run.ui.guard.heard_at()
        assert heard is not None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + TIMEOUT
        step = "Type c then Enter to confirm"
        while step not in out.getvalue():
            assert loop.time() < deadline, out.getvalue()[-2000:]
            before = out.getvalue().count("Not yet.")
            run.type_line("a")
            await until(
                lambda b=before: step in out.getvalue() or out.getvalue().count("Not yet.") > b,  # type: ignore[misc]
                "a verdict",
            )
            await asyncio.sleep(0.1)
        # Never before the question (W's reading of it) was heard through.
        assert run.session.now() >= heard
    finally:
        await run.close()
