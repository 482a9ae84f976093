"""The app driven by the real engine: real AAEP frames in, real speech records out.

Frames from the shared fixtures (a captured run of the public minimal
producer, the official confirmation fixture and schema examples) go through
``Engine.receive``; the jsonl speech backend records what would be said; the
answer becomes the engine's protocol reply, checked byte for byte.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from textual.binding import Binding

from announcer.engine.pipeline import Engine
from announcer.engine.prompts import PendingPrompt
from announcer.engine.settings import UserSettings
from announcer.speech.jsonl import JsonlBackend
from announcer.ui.tui.app import AnnouncerApp
from announcer.ui.tui.modals import ClarifyScreen, ConfirmScreen
from announcer.ui.tui.session import AnswerOutcome
from tests.support.engine_session import EngineSession
from tests.support.speech_record import spoken_in
from tests.ui.conftest import FIXTURES, ManualClock, load_event, schema_example

CAPTURED = FIXTURES.parent / "captured-minimal-producer-confirmation-run.jsonl"


class EngineHarness:
    def __init__(self) -> None:
        self.records = io.StringIO()
        self.clock = ManualClock()
        self.wire: list[tuple[str, dict[str, object]]] = []
        self.session = EngineSession(
            # The clock stands still: the keys' arming wait is off here (see conftest.Harness).
            Engine(UserSettings(answer_arming_seconds=0)),
            JsonlBackend(self.records, clock=self.clock),
            send_reply=self._send,
            clock=self.clock,
        )

    def subscribe(self, source_id: str) -> None:
        """As after a real handshake: replies on this connection carry its subscription."""
        self.session.engine.set_subscription(source_id, "sub_TuiTest0001")

    def _send(self, prompt: PendingPrompt, reply: dict[str, object]) -> AnswerOutcome:
        self.wire.append((prompt.source_id, reply))
        return AnswerOutcome(True)

    def spoken(self) -> list[str]:
        return spoken_in(self.records.getvalue())

    def said(self, fragment: str) -> bool:
        return any(fragment in text for text in self.spoken())


def captured_lines() -> list[str]:
    return CAPTURED.read_text(encoding="utf-8").splitlines()


async def test_captured_run_confirmation_accepted_with_a_then_enter() -> None:
    h = EngineHarness()
    app = AnnouncerApp(h.session)
    lines = captured_lines()
    token = json.loads(lines[4])["reply_token"]
    h.subscribe("ws://producer")
    async with app.run_test() as pilot:
        for line in lines[:5]:  # up to and including the confirmation
            h.session.receive(line, "ws://producer")
            h.clock.now += 0.5
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ConfirmScreen)
        assert screen.prompt.reply_token == token
        assert "Confirmation requested by AAEP Minimal Producer (aaep-minimal-producer)" in str(
            screen.query_one("#producer").content
        )
        # The engine announced the question once; the dialog added its keys in one short
        # line (issue 20: who asks only at detailed verbosity; it is on screen).
        assert h.spoken()[-1] == "Accept A Enter, reject R."  # F2 on screen (issue 30)
        assert sum("Call send_email" in text for text in h.spoken()) == 1
        await pilot.press("f2")  # the question again, as short as its first reading
        assert h.spoken()[-1].startswith("Call send_email")
        transcript = app.main_screen.transcript.entries
        assert any("Send an email to alice@example.com" in line for line in transcript)
        await pilot.press("a")
        await pilot.pause()
        assert h.wire == []  # not low risk and reversible: a second key confirms
        await pilot.press("enter")
        await pilot.pause()
        [(source, reply)] = h.wire
        assert source == "ws://producer"
        assert reply["type"] == "confirmation.reply"
        assert reply["reply_token"] == token
        assert reply["decision"] == "accept"
        assert reply["subscription_id"] == "sub_TuiTest0001"
        assert h.said("Sent.")
        for line in lines[5:]:
            h.session.receive(line, "ws://producer")
            h.clock.now += 0.5
        await pilot.pause()
        assert app.screen is app.main_screen
        assert app.prompts == {}


async def test_cancelled_session_closes_the_dialog_with_the_engines_reason() -> None:
    h = EngineHarness()
    app = AnnouncerApp(h.session)
    confirmation = load_event("agent.awaiting.confirmation.json")
    cancelled = schema_example("agent.session.cancelled", 0)
    cancelled.update(
        session_id=confirmation["session_id"],
        producer=confirmation["producer"],
        timestamp="2026-06-30T14:22:30.000Z",
        sequence_number=12,
    )
    async with app.run_test() as pilot:
        h.session.receive(json.dumps(confirmation))
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        h.clock.now += 2
        h.session.receive(json.dumps(cancelled))
        await pilot.pause()
        await pilot.pause()
        assert app.screen is app.main_screen
        assert app.prompts == {}
        # The engine's one notice (issue 30 item 1), not a second one from the app.
        withdrawn = [
            t
            for t in app.main_screen.transcript.entries
            if t.startswith(("No answer needed any more", "Withdrawn", "Question withdrawn"))
        ]
        assert len(withdrawn) == 1 and "Transfer $500.00" in withdrawn[0], withdrawn
        assert not withdrawn[0].startswith("Question withdrawn")
        await pilot.press("a")
        await pilot.pause()
        assert h.wire == []  # nothing can be accepted after the session ended


async def test_clarification_choice_becomes_the_engines_reply() -> None:
    h = EngineHarness()
    h.subscribe("local")
    app = AnnouncerApp(h.session)
    async with app.run_test() as pilot:
        h.session.receive(json.dumps(schema_example("agent.awaiting.clarification", 1)))
        await pilot.pause()
        assert isinstance(app.screen, ClarifyScreen)
        await pilot.press("4")
        await pilot.pause()
        assert h.spoken()[-1] == "4. Age 70 (maximum benefits), 4 of 4"
        await pilot.press("enter")
        await pilot.pause()
        [(_, reply)] = h.wire
        assert reply["type"] == "clarification.reply"
        assert reply["reply_token"] == "rpl_2c8e4a9f7b1d3a6e"
        assert reply["response"] == "70"


async def test_global_keys_go_through_the_engine_scheduler() -> None:
    h = EngineHarness()
    app = AnnouncerApp(h.session)
    lines = captured_lines()
    async with app.run_test() as pilot:
        h.session.receive(lines[0])
        await pilot.pause()
        first = h.spoken()[-1]
        await pilot.press("l")
        assert h.spoken()[-1] == first  # repeat the producer's last announcement
        await pilot.press("v")
        assert h.session.engine.settings.verbosity == "detailed"
        assert h.spoken()[-1] == "Verbosity detailed."
        await pilot.press("s")
        assert '"cancel"' in h.records.getvalue() or h.session.engine.scheduler.speaking is None


def test_captured_fixture_is_present() -> None:
    assert Path(CAPTURED).exists()


async def test_an_answer_the_engine_refuses_is_reported_and_the_question_stays() -> None:
    h = EngineHarness()  # no handshake happened: the engine cannot address a reply
    app = AnnouncerApp(h.session)
    async with app.run_test() as pilot:
        h.session.receive(json.dumps(load_event("agent.awaiting.confirmation.json")))
        await pilot.pause()
        await pilot.press("a", "enter")
        await pilot.pause()
        await pilot.pause()
        assert h.wire == []
        assert h.said("Your answer was not sent.")
        assert isinstance(app.screen, ConfirmScreen)  # still pending, asked again
        assert list(app.prompts) == ["rpl_4f8a2e7d9c1b6a3f"]


def _keys_named(texts: list[str]) -> list[tuple[str, str]]:
    return [
        (match.group(1), match.group(2))
        for text in texts
        for pattern in (
            r"\b(\w)(?: then Enter)? accepts, (\w) rejects",
            r"Accept (\w) Enter, reject (\w)",
        )
        for match in re.finditer(pattern, text)
    ]


@pytest.mark.parametrize(("keys", "decision"), [(("a", "enter"), "accept"), (("r",), "reject")])
async def test_one_confirmation_is_read_once_with_the_keys_that_work(
    keys: tuple[str, ...], decision: str
) -> None:
    """The official confirmation fixture: the question once, one set of keys, and they work."""
    h = EngineHarness()
    h.subscribe("local")
    app = AnnouncerApp(h.session)
    event = load_event("agent.awaiting.confirmation.json")
    async with app.run_test() as pilot:
        h.session.receive(json.dumps(event))
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        spoken = h.spoken()
        action = event["action"].rstrip(".")
        assert sum(action in text for text in spoken) == 1  # the engine read it; once
        assert not any("Press Y" in text or "Y to accept" in text for text in spoken)
        assert _keys_named(spoken) == [("A", "R")]  # one set of keys, said once
        # The keys named are bound by the dialog.
        bound = {
            binding.action.split("(")[0]: set(binding.key.split(","))
            for binding in app.screen.BINDINGS
            if isinstance(binding, Binding)
        }
        assert "a" in bound["accept"] and "r" in bound["reject"] and "enter" in bound["enter"]
        await pilot.press("f2")  # F2 still reads the whole question, keys included
        assert action in h.spoken()[-1] and "Accept A Enter, reject R." in h.spoken()[-1]
        await pilot.press(*keys)
        await pilot.pause()
        [(_, reply)] = h.wire
        assert reply["decision"] == decision
        assert reply["reply_token"] == event["reply_token"]


async def test_a_question_opened_after_another_is_read_whole_when_its_turn_comes() -> None:
    """The engine read the second question while the first dialog was open: read it again."""
    h = EngineHarness()
    h.subscribe("local")
    app = AnnouncerApp(h.session)
    confirmation = load_event("agent.awaiting.confirmation.json")
    question = schema_example("agent.awaiting.clarification", 1)
    async with app.run_test() as pilot:
        h.session.receive(json.dumps(confirmation))
        h.session.receive(json.dumps(question))
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("r")
        await pilot.pause()
        await pilot.pause()
        assert isinstance(app.screen, ClarifyScreen)
        spoken = h.spoken()
        assert spoken[-1].startswith("Question from")
        assert question["question"] in spoken[-1]
