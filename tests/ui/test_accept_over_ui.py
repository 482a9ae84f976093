"""Issue 22 item 2 in both UIs: once accept's time is over, only reject is shown and said.

A real producer on loopback (WebSocket) sends one event stamped an hour behind, then a
question 240 s under way of its 300: by the best estimate of the producer's clock accept
has 60 s left, while reject stays possible as long as the producer may still wait. The
session runs on a held clock, so "accept's time ends" happens when the test moves it on,
not when a loaded machine gets round to it. Checked where it matters: what the user sees
and hears (the jsonl speech record) and what the producer receives.
"""

from __future__ import annotations

import asyncio
import io
import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from announcer.engine.settings import UserSettings
from announcer.runtime.session import LiveSession
from announcer.speech.driver import SpeechDriver
from announcer.speech.jsonl import JsonlBackend
from announcer.transports import TransportOptions
from announcer.ui.plain import PlainUi
from announcer.ui.tui.app import AnnouncerApp
from announcer.ui.tui.modals import ConfirmScreen
from tests.support.clock import HeldClock
from tests.support.scripted import confirmation, event, scripted, source, started
from tests.support.speech_record import spoken_in
from tests.support.waiting import until, until_on_pilot

TIMEOUT = 60.0
SESSION = "sess_acceptover"
ACTION = "Transfer the deposit"
# past accept's 60 s, well before reject's deadline (about 300 s from arrival)
PAST_ACCEPT = 90.0
ACCEPT_OVER_SAID = "The time to accept is over, you can still reject"
TOO_LATE = "Too late to accept: the agent's time for this ran out. You can still reject."


class Live:
    """The scripted producer and a live session on a held clock, speech in a record."""

    def __init__(self, server: Any, core: Any) -> None:
        self.server = server
        self.core = core
        self.clock = HeldClock()
        self.records = io.StringIO()
        self.session = LiveSession(
            [source("ws", server)],
            UserSettings(pace_wpm=600),
            TransportOptions(),
            handshake_timeout=2.0,
            driver=SpeechDriver(JsonlBackend(self.records)),
            clock=self.clock,
        )
        self.question = confirmation(
            SESSION, timeout_seconds=300, ago=240.0, action=ACTION, risk_level="medium"
        )

    def heard(self) -> list[str]:
        return spoken_in(self.records.getvalue())

    def said(self, text: str) -> Callable[[], bool]:
        return lambda: any(text in said for said in self.heard())

    def connected(self) -> bool:
        return bool(self.core.subscriptions) and self.session.status.connection == "connected"

    def ask(self) -> None:
        """The late question, after an event stamped an hour behind (the clock held)."""
        self.clock.hold()
        self.core.push(
            started(SESSION),
            event("agent.state.changed", SESSION, ago=3600.0, from_state="idle", to_state="x"),
            self.question,
        )

    def wire(self) -> list[tuple[str, str]]:
        return [(reply["reply_token"], reply["decision"]) for reply in self.core.wire]


@asynccontextmanager
async def live() -> AsyncIterator[Live]:
    server, core = await scripted()
    run = Live(server, core)
    try:
        yield run
    finally:
        run.session.stop()
        await server.close()


async def test_the_dialog_drops_accept_when_its_time_is_over_and_reject_reaches_the_producer() -> (
    None
):
    async with live() as run:
        app = AnnouncerApp(run.session, save_settings=lambda _settings: None)

        def dialog() -> ConfirmScreen | None:
            screen = app.screen
            return screen if isinstance(screen, ConfirmScreen) else None

        async with app.run_test() as pilot:
            runner = asyncio.ensure_future(run.session.run())
            await until_on_pilot(pilot, run.connected, "the subscription")
            run.ask()
            await until_on_pilot(pilot, lambda: dialog() is not None, "the dialog")
            screen = dialog()
            assert screen is not None
            await until_on_pilot(pilot, lambda: bool(screen.query("#reject")), "its buttons")
            # accept's time is not over yet: both answers shown and said
            assert screen.query("#accept") and not screen.accept_over
            await until_on_pilot(pilot, run.said("A accepts, R rejects"), "the keys")
            assert "a" in screen.active_bindings

            run.clock.advance(PAST_ACCEPT)
            await until_on_pilot(pilot, lambda: screen.accept_over, "accept's time to end")
            await pilot.pause()
            assert not screen.query("#accept")  # the button is gone
            assert screen.query("#reject")
            assert "a" not in screen.active_bindings  # nor in the footer
            await until_on_pilot(pilot, run.said(ACCEPT_OVER_SAID), "the engine's notice")

            await pilot.press("a")  # refused at once, nothing sent
            await until_on_pilot(pilot, run.said(TOO_LATE), "the refusal")
            await pilot.press("y")
            await pilot.press("f2")  # said again: reject only
            only_reject = (
                "The time to accept is over, so only reject is offered. Press R to reject."
            )
            await until_on_pilot(pilot, run.said(only_reject), "say again, reject only")
            assert not any("A accepts" in text for text in run.heard()[-3:])
            assert run.wire() == []
            assert dialog() is screen  # still open, still answerable

            await pilot.press("r")
            await until_on_pilot(pilot, lambda: bool(run.wire()), "the reject at the producer")
            assert run.wire() == [(run.question["reply_token"], "reject")]
            run.session.stop()
            await asyncio.wait_for(runner, TIMEOUT)


async def test_the_plain_line_offers_reject_only_once_accept_is_over_and_reject_still_goes() -> (
    None
):
    async with live() as run:
        read_end, write_end = os.pipe()
        out = io.StringIO()
        with os.fdopen(read_end, encoding="utf-8") as typed, os.fdopen(write_end, "w") as keys:
            ui = PlainUi(out=out, inp=typed)
            ui.attach(run.session)
            runner = asyncio.ensure_future(run.session.run())
            await until(run.connected, "the subscription")
            run.ask()
            await until(lambda: f"Accept or reject: {ACTION}? [a/r]" in out.getvalue(), "a/r")

            run.clock.advance(PAST_ACCEPT)
            await until(run.said(ACCEPT_OVER_SAID), "the engine's notice")
            reject_only = f"Reject only, the time to accept is over: {ACTION}? [r]"
            await until(lambda: reject_only in out.getvalue(), "the reject-only line")

            keys.write("a\n")
            keys.flush()
            await until(run.said(TOO_LATE), "the spoken refusal")
            assert TOO_LATE in out.getvalue()
            # the line asked again after the refusal offers reject only
            assert out.getvalue().rstrip().splitlines()[-1].startswith(reject_only)
            assert f"{ACTION}? [a/r]" not in out.getvalue().split(reject_only, 1)[1]
            assert run.wire() == []

            keys.write("r\n")
            keys.flush()
            await until(lambda: bool(run.wire()), "the reject at the producer")
            assert run.wire() == [(run.question["reply_token"], "reject")]
            run.session.stop()
            await asyncio.wait_for(runner, TIMEOUT)
