"""Issue 12 item 1 in the Textual UI on the live runtime: a real producer over WS and SSE.

R1 ("Send 5 dollars to Alice", low risk) is withdrawn by the producer and R2 ("Delete
the production database", irreversible) opens in its place. A key pressed just after
(meant for R1) must not answer R2; once R2 was heard, accepting it takes `a` then Enter.
Checked where it matters: what the producer received and what the user heard (the
jsonl speech record).
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import Callable

import pytest

from announcer.engine.settings import UserSettings
from announcer.producer.core import ProducerCore, ProducerOptions
from announcer.producer.scenario import load_scenario
from announcer.producer.server import ProducerServer
from announcer.runtime.session import LiveSession
from announcer.speech.driver import SpeechDriver
from announcer.speech.jsonl import JsonlBackend
from announcer.ui.tui.app import AnnouncerApp
from announcer.ui.tui.modals import ConfirmScreen
from tests.producer.live import scenario_path
from tests.support.clock import HeldClock
from tests.support.producers import producer_url
from tests.support.speech_record import spoken_in
from tests.support.waiting import until_on_pilot as until

TIMEOUT = 60.0
# The product's own arming interval. A key "just after" a question appears is early
# however slowly a loaded machine delivers it: the session's clock is held still from
# before that question appears until the key was refused (tests/support/clock.py).
ARMING = 1.0
# issue 20: an early key gets a two-word cue; the question is never read again for it
REPLACED = "Not yet."
# The user's pace: a high-risk accept waits until the question was said through.
PACE = 600


@pytest.mark.parametrize("transport", ["ws", "sse"])
async def test_a_key_for_the_withdrawn_question_never_accepts_its_replacement(
    transport: str,
) -> None:
    core = ProducerCore(load_scenario(scenario_path("replaced")), ProducerOptions(speed=0.1))
    server = ProducerServer(core, "127.0.0.1", 0, paths="aaep")
    await server.start()
    source = producer_url(transport, server)
    records = io.StringIO()
    clock = HeldClock()
    session = LiveSession(
        [source],
        UserSettings(answer_arming_seconds=ARMING, pace_wpm=PACE),
        driver=SpeechDriver(JsonlBackend(records)),
        clock=clock,
    )
    app = AnnouncerApp(session)

    def heard() -> list[str]:
        return spoken_in(records.getvalue())

    def showing(action: str) -> Callable[[], bool]:
        def check() -> bool:
            screen = app.screen
            return isinstance(screen, ConfirmScreen) and screen.view.action.startswith(action)

        return check

    def armed() -> bool:
        at = app.key_guard.armed_at()
        return at is not None and session.now() >= at

    def said_through() -> bool:
        at = app.key_guard.heard_at()
        return at is not None and session.now() >= at

    try:
        async with app.run_test() as pilot:
            runner = asyncio.ensure_future(session.run())
            await until(pilot, showing("Send 5 dollars"), "R1's dialog")
            clock.hold()  # R2 comes while the clock stands: the key below is "just after"
            await until(pilot, showing("Delete the production database"), "R2 in R1's place")
            r2 = app.screen
            assert isinstance(r2, ConfirmScreen)
            await pilot.press("a", "enter")  # meant for R1
            await until(pilot, lambda: any(t.startswith(REPLACED) for t in heard()), "refusal")
            assert core.replies == []  # the producer received nothing
            clock.release()
            await until(pilot, armed, "R2's keys to arm")
            await until(pilot, said_through, "R2 to have been said through")
            # R2 was read once: the early key did not bring it again
            assert len([t for t in heard() if "Delete the production database" in t]) == 1
            await pilot.press("a")
            await until(
                pilot,
                lambda: "Enter." in heard(),
                "the confirm step",
            )
            assert core.replies == []
            await pilot.press("enter")
            await until(pilot, lambda: bool(core.replies), "the reply at the producer")
            [reply] = core.replies
            assert reply.decision == "accept"
            assert reply.reply_token == r2.prompt.reply_token
            await until(
                pilot,
                lambda: "Sent." in heard(),
                "the outcome, spoken",
            )
            session.stop()
            await asyncio.wait_for(runner, TIMEOUT)
    finally:
        session.stop()
        await server.close()


class PushedCore(ProducerCore):
    """The project's producer, told by the test what to send and when.

    Two questions can be open at once (the scenario producer asks one at a time);
    every reply is kept as it arrived.
    """

    def __init__(self) -> None:
        super().__init__(load_scenario(scenario_path("confirm")), ProducerOptions(speed=0.05))
        self.wire: list[dict[str, object]] = []

    def _start_scenario(self) -> None:
        return None

    def _reply(self, sub: object, message: dict[str, object]) -> bool:
        self.wire.append(dict(message))
        return True

    def ask(self, token: str, action: str, consequence: str, *, low_risk: bool) -> None:
        risk = (
            {"risk_level": "low", "irreversible": False, "reversibility": "reversible"}
            if low_risk
            else {"risk_level": "high", "irreversible": True}
        )
        self.emit(
            "agent.awaiting.confirmation",
            {
                "action": action,
                "consequence": consequence,
                "summary_normal": action,
                "reply_token": token,
                "timeout_seconds": 300,
                "default_decision": "reject",
                **risk,
            },
        )


CONSEQUENCE = "Every customer record is erased"


async def _two_questions(core: PushedCore, pilot_or_none: object = None) -> None:
    await _until(lambda: bool(core.subscriptions), "the subscription")
    core.emit("agent.session.started", {"summary_normal": "Session started."})
    core.ask("rpl_first01", "Send 5 dollars to Alice", "Alice gets 5 dollars.", low_risk=True)
    core.ask("rpl_second02", "Delete the production database", CONSEQUENCE + ".", low_risk=False)


async def _until(condition: Callable[[], bool], what: str) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + TIMEOUT
    while not condition():
        if loop.time() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        await asyncio.sleep(0.05)


@pytest.mark.parametrize("transport", ["ws", "sse"])
async def test_the_waiting_question_is_read_once_when_its_turn_comes_then_armed(
    transport: str,
) -> None:
    """Two questions at once: after the first is answered the second is read whole,
    once, with its keys once; a key right after does nothing; then a, Enter accepts it."""
    core = PushedCore()
    server = ProducerServer(core, "127.0.0.1", 0, paths="aaep")
    await server.start()
    source = producer_url(transport, server)
    records = io.StringIO()
    clock = HeldClock()
    session = LiveSession(
        [source],
        UserSettings(answer_arming_seconds=ARMING, pace_wpm=PACE),
        driver=SpeechDriver(JsonlBackend(records)),
        clock=clock,
    )
    app = AnnouncerApp(session)

    def heard() -> list[str]:
        return spoken_in(records.getvalue())

    def showing(token: str) -> Callable[[], bool]:
        def check() -> bool:
            screen = app.screen
            return isinstance(screen, ConfirmScreen) and screen.prompt.reply_token == token

        return check

    def armed() -> bool:
        at = app.key_guard.armed_at()
        return at is not None and session.now() >= at

    try:
        async with app.run_test() as pilot:
            runner = asyncio.ensure_future(session.run())
            await _two_questions(core)
            await until(pilot, showing("rpl_first01"), "the first question")
            await until(pilot, armed, "its keys to arm")
            before = len(heard())
            clock.hold()  # the second comes while the clock stands: the "a" is "at once"
            await pilot.press("r")
            await until(pilot, showing("rpl_second02"), "the second question")
            await pilot.press("a")  # at once: meant for the first
            await until(pilot, lambda: any(t.startswith(REPLACED) for t in heard()), "refusal")
            assert [w.get("decision") for w in core.wire] == ["reject"]
            clock.release()
            await until(pilot, armed, "the second question's keys to arm")
            heard_through = app.key_guard.heard_at()
            await until(
                pilot,
                lambda: heard_through is not None and session.now() >= heard_through,
                "the second question to have been said through",
            )
            since = heard()[before:]
            # Read whole once when its turn came, with its keys once in one short line;
            # never read again for the early key (issue 20).
            assert len([t for t in since if CONSEQUENCE in t]) == 1, since
            keys = [t for t in since if "Accept A Enter, reject R." in t]
            assert len(keys) == 1, since
            await pilot.press("a", "enter")
            await until(pilot, lambda: len(core.wire) == 2, "the second reply")
            assert [(w["reply_token"], w["decision"]) for w in core.wire] == [
                ("rpl_first01", "reject"),
                ("rpl_second02", "accept"),
            ]
            session.stop()
            await asyncio.wait_for(runner, TIMEOUT)
    finally:
        session.stop()
        await server.close()
