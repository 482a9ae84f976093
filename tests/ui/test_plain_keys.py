"""The plain line UI on the live runtime: the spoken question names the answers it takes.

A real producer on loopback asks one confirmation over a WebSocket; the engine's
speech goes to a jsonl record; the answer is typed on a real pipe, as a user
types at a terminal, and checked where it matters: at the producer.
"""

from __future__ import annotations

import asyncio
import dataclasses
import io
import os
from pathlib import Path
from typing import Any

from announcer.engine.announcement import Announcement
from announcer.engine.prompts import PendingPrompt, UserAnswer
from announcer.engine.settings import UserSettings
from announcer.producer.core import ProducerCore, ProducerOptions
from announcer.producer.scenario import load_scenario
from announcer.producer.server import ProducerServer
from announcer.runtime.contract import UiSession
from announcer.runtime.session import AnswerOutcome, LiveSession
from announcer.speech.driver import SpeechDriver
from announcer.speech.jsonl import JsonlBackend
from announcer.ui.plain import PlainUi
from tests.support.producers import ws_url
from tests.support.speech_record import spoken_in
from tests.support.waiting import until
from tests.ui.conftest import ManualClock, load_event, prompt_from_event

SCENARIO = Path(__file__).parent / "scenarios" / "tui_confirm.json"
TIMEOUT = 60.0


async def test_the_spoken_question_names_the_typed_answers_and_they_work() -> None:
    core = ProducerCore(load_scenario(str(SCENARIO)), ProducerOptions(speed=0.05))
    server = ProducerServer(core, "127.0.0.1", 0, paths="aaep")
    await server.start()
    records = io.StringIO()
    session = LiveSession(
        [ws_url(server)],
        # a quick listener (the top of the range): the question is heard through sooner;
        # the test is about the words it says and the keys, not the pace
        UserSettings(pace_wpm=600),
        driver=SpeechDriver(JsonlBackend(records)),
    )
    read_end, write_end = os.pipe()
    out = io.StringIO()
    with os.fdopen(read_end, encoding="utf-8") as typed, os.fdopen(write_end, "w") as keyboard:
        ui = PlainUi(out=out, inp=typed)

        def armed() -> bool:
            # an irreversible accept also waits until the question was said through
            at = ui.guard.heard_at()
            return at is not None and session.now() >= at

        try:
            ui.attach(session)
            runner = asyncio.ensure_future(session.run())
            line = "Accept or reject: Send the quarterly report to Alice? [a/r] (TUI test producer)"
            await until(lambda: line in out.getvalue(), "the question, named on its prompt line")
            [question] = [
                text
                for text in spoken_in(records.getvalue())
                if "Send the quarterly report" in text
            ]
            # issue 22 item 11: every key it needs, the second accept key included, in a
            # few words (issue 30 item 1)
            assert question.endswith("A then C, or R.")
            assert "Press" not in question  # no single-key help the line UI does not take
            assert core.replies == []
            await until(armed, "the question to have been heard")
            keyboard.write("a\n")
            keyboard.flush()
            step = "Accept: Send the quarterly report to Alice? Type c then Enter to confirm"
            await until(lambda: step in out.getvalue(), "the second step of an irreversible accept")
            assert core.replies == []
            keyboard.write("c\n")
            keyboard.flush()
            await until(lambda: bool(core.replies), "the reply at the producer")
            [reply] = core.replies
            assert reply.type == "confirmation.reply" and reply.decision == "accept"

            # the answer to the user's own key is heard, not only printed
            await until(
                lambda: "Sent." in spoken_in(records.getvalue()), "the spoken acknowledgement"
            )
            assert "Sent: accept." in out.getvalue()  # printed whole
            session.stop()
            await asyncio.wait_for(runner, TIMEOUT)
        finally:
            session.stop()
            await server.close()


class FakeLineSession(UiSession):
    """Just enough of a session for the plain UI: a manual clock and the answers it got."""

    def __init__(self) -> None:
        self.settings = UserSettings()
        self.clock = ManualClock()
        self.answers: list[UserAnswer] = []
        self.spoken: list[str] = []
        self.listener: Any = None

    def subscribe(self, listener: Any) -> None:
        self.listener = listener

    def now(self) -> float:
        return self.clock()

    def speak(self, text: str, urgency: object = None, interrupt: bool = False) -> None:
        self.spoken.append(text)

    async def answer_async(self, answer: UserAnswer) -> AnswerOutcome:
        self.answers.append(answer)
        return AnswerOutcome(True, "Sent.")

    def pending_prompts(self) -> list[PendingPrompt]:
        return []

    def update_settings(self, settings: UserSettings) -> None:
        self.settings = settings

    def repeat_last(self) -> None:
        return None

    def stop(self) -> None:
        return None

    status = None


def _confirmation(token: str, action: str, *, low_risk: bool) -> dict[str, Any]:
    event = load_event("agent.awaiting.confirmation.json")
    event.update(reply_token=token, event_id="evt_" + token[4:], action=action)
    if low_risk:
        event.update(risk_level="low", irreversible=False, reversibility="reversible")
    return event


async def test_plain_lines_at_awkward_moments_on_a_manual_clock() -> None:
    """Every prompt line names its action; a line right after a question replaced another
    answers nothing; accepting the irreversible takes a then c; r is one line."""
    session = FakeLineSession()
    out = io.StringIO()
    ui = PlainUi(out=out, inp=io.StringIO())
    ui.attach(session)  # type: ignore[arg-type]
    first = prompt_from_event(
        _confirmation("rpl_one1", "Send 5 dollars", low_risk=True), session.clock()
    )
    second = prompt_from_event(
        _confirmation("rpl_two2", "Drop the database", low_risk=False), session.clock()
    )
    ui.prompt_opened(first)
    ui.prompt_opened(second)
    assert "Accept or reject: Send 5 dollars? [a/r]" in out.getvalue()
    session.clock.now += 0.5
    ui._on_line("a")  # too soon: nothing of this question was said yet
    assert session.answers == []
    # issue 20: two words, heard; the question is not read again for it
    assert out.getvalue().count("Not yet.") == 1 and session.spoken == ["Not yet."]
    session.clock.now += 30
    ui._on_line("a")  # a voice works, and the question's speech never began: still not
    assert session.answers == [] and out.getvalue().count("Not yet.") == 2
    ui.announcement_made(  # the engine reads it (the runtime tells the UI as it starts)
        Announcement(
            "Confirmation needed. Send 5 dollars.",
            event_id=first.event_id,
            kind="agent.awaiting.confirmation",
        )
    )
    session.clock.now += 5
    ui.prompt_voided("rpl_one1", "cancelled")  # the second takes its place
    assert "Accept or reject: Drop the database? [a/r]" in out.getvalue()
    assert any(t.startswith("Now answering:") for t in session.spoken)
    session.clock.now += 0.3
    said = len(session.spoken)
    ui._on_line("a")  # meant for the first
    assert out.getvalue().count("Not yet.") == 3
    assert session.spoken[said:] == ["Not yet."]
    session.clock.now += 5  # the irreversible one has been said through
    ui._on_line("a")
    assert "Accept: Drop the database? Type c then Enter to confirm" in out.getvalue()
    ui._on_line("a")  # not the confirming line: back to the question
    assert "Not accepted. The question is still open." in out.getvalue()
    ui._on_line("a")
    ui._on_line("c")
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert [(a.reply_token, a.decision, a.event_id) for a in session.answers] == [
        ("rpl_two2", "accept", second.event_id)
    ]


@dataclasses.dataclass(frozen=True)
class MalformedPrompt(PendingPrompt):
    @property
    def malformed(self) -> bool:
        return True


async def test_plain_malformed_question_offers_reject_only() -> None:
    session = FakeLineSession()
    out = io.StringIO()
    ui = PlainUi(out=out, inp=io.StringIO())
    ui.attach(session)  # type: ignore[arg-type]
    prompt = prompt_from_event(_confirmation("rpl_bad1", "Pay 900 dollars", low_risk=True), 0)
    fields = {f.name: getattr(prompt, f.name) for f in dataclasses.fields(prompt)}
    ui.prompt_opened(MalformedPrompt(**fields))
    # The engine reads it out (the runtime tells the UI as the speech starts).
    ui.announcement_made(
        Announcement(
            "Malformed confirmation: Pay 900 dollars.",
            event_id=prompt.event_id,
            kind="agent.awaiting.confirmation",
        )
    )
    assert "Reject only, this request was malformed: Pay 900 dollars? [r]" in out.getvalue()
    session.clock.now += 5
    ui._on_line("a")
    assert session.answers == []
    assert "This request was malformed, so only reject is offered." in out.getvalue()
    ui._on_line("r")
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert [(a.decision) for a in session.answers] == ["reject"]


async def test_a_number_with_an_exponent_is_refused_in_the_line_ui() -> None:
    """Issue 14: `2.5e3` once booked "2500.0 nights"; only plain numbers are sent."""
    core = ProducerCore(
        load_scenario(str(Path(__file__).parent / "scenarios" / "tui_clarify.json")),
        ProducerOptions(speed=0.05),
    )
    server = ProducerServer(core, "127.0.0.1", 0, paths="aaep")
    await server.start()
    session = LiveSession(
        [ws_url(server)],
        UserSettings(answer_arming_seconds=0.0),  # not about arming: keys count at once
        driver=SpeechDriver(JsonlBackend(io.StringIO())),
    )
    read_end, write_end = os.pipe()
    out = io.StringIO()

    async def answer(waiting_for: str, line: str) -> None:
        await until(lambda: waiting_for in out.getvalue(), waiting_for)
        keyboard.write(line + "\n")
        keyboard.flush()

    with os.fdopen(read_end, encoding="utf-8") as typed, os.fdopen(write_end, "w") as keyboard:
        ui = PlainUi(out=out, inp=typed)
        try:
            ui.attach(session)
            runner = asyncio.ensure_future(session.run())
            await answer("Type your answer and press Enter:", "Ada")
            await answer("[y/n]", "y")
            await answer("Choose a number from 1 to", "2")
            await answer("Type a number:", "2.5e3")
            await until(lambda: "That is not a number." in out.getvalue(), "the refusal")
            assert len(core.replies) == 3
            keyboard.write("3\n")
            keyboard.flush()
            await until(lambda: len(core.replies) == 4, "the number at the producer")
            assert core.replies[-1].response == 3
            session.stop()
            await asyncio.wait_for(runner, TIMEOUT)
        finally:
            session.stop()
            await server.close()


async def test_a_producer_naming_rm_rf_low_risk_is_shown_dangerous_and_takes_two_lines() -> None:
    """issue 22: the risk follows the command, never the producer's own label alone."""
    session = FakeLineSession()
    out = io.StringIO()
    ui = PlainUi(out=out, inp=io.StringIO())
    ui.attach(session)  # type: ignore[arg-type]
    prompt = prompt_from_event(
        _confirmation("rpl_rm1", "Run rm -rf ~/photos", low_risk=True), session.clock()
    )
    ui.prompt_opened(prompt)
    assert "Dangerous: rm -rf ~/photos" in out.getvalue()
    ui.announcement_made(
        Announcement(
            "Confirmation needed. Run rm -rf ~/photos.",
            event_id=prompt.event_id,
            kind="agent.awaiting.confirmation",
        )
    )
    session.clock.now += 10
    ui._on_line("a")
    assert session.answers == []
    assert "Type c then Enter to confirm" in out.getvalue()
    ui._on_line("c")
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert [a.decision for a in session.answers] == ["accept"]


class WholeEchoSession(FakeLineSession):
    """The runtime's whole echo, as the live session words it."""

    def __init__(self) -> None:
        super().__init__()
        self.open: list[PendingPrompt] = []

    async def answer_async(self, answer: UserAnswer) -> AnswerOutcome:
        self.answers.append(answer)
        self.open = [p for p in self.open if p.reply_token != answer.reply_token]
        return AnswerOutcome(True, f"Sent: {answer.decision}.")

    def pending_prompts(self) -> list[PendingPrompt]:
        return list(self.open)


async def test_plain_echo_is_short_only_when_no_other_question_could_be_meant() -> None:
    """Issue 30 item 1: "Sent." as a screen reader says it; "Sent: accept." (printed
    always) is said while another question waits, as the Textual app names its answer."""
    session = WholeEchoSession()
    out = io.StringIO()
    ui = PlainUi(out=out, inp=io.StringIO())
    ui.attach(session)  # type: ignore[arg-type]
    now = session.clock()
    first = prompt_from_event(_confirmation("rpl_e1", "Send 5 dollars", low_risk=True), now)
    second = prompt_from_event(_confirmation("rpl_e2", "Send 6 dollars", low_risk=True), now)
    session.open = [first, second]
    for prompt in (first, second):
        ui.prompt_opened(prompt)
    for prompt in (first, second):
        ui.announcement_made(
            Announcement(
                f"Confirmation needed. {prompt.reply_token}.",
                event_id=prompt.event_id,
                kind="agent.awaiting.confirmation",
            )
        )
        session.clock.now += 5
        ui._on_line("a")
        for _ in range(3):
            await asyncio.sleep(0)
    assert [a.reply_token for a in session.answers] == ["rpl_e1", "rpl_e2"]
    echoes = [text for text in session.spoken if text.startswith("Sent")]
    assert echoes == ["Sent: accept.", "Sent."], session.spoken
    assert out.getvalue().count("Sent: accept.") == 2  # printed whole both times
