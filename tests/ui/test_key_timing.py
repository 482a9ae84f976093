"""Keys pressed at awkward moments in the Textual UI (issues 12 and 14), with Pilot.

The session's clock is a ManualClock, so "0.3 s after the question changed" is exact
and the tests do not depend on the machine's speed. Arming is the product default.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from textual.widgets import Static

from announcer.engine.prompts import PendingPrompt
from announcer.engine.settings import UserSettings
from announcer.ui.tui.app import AnnouncerApp
from announcer.ui.tui.modals import ClarifyScreen, ConfirmScreen
from tests.ui.conftest import Harness, load_event, prompt_from_event, schema_example

FIXTURE = "agent.awaiting.confirmation.json"
HIGH_RISK_TOKEN = "rpl_4f8a2e7d9c1b6a3f"
# issue 20: an early key gets two words, never a sentence that delays the question
NOT_YET = "Not yet."
# A high-risk question is accepted only once it was said through (its words at 180 wpm).
HEARD = 30


def low_risk(token: str = "rpl_lowrisk01", event_id: str = "evt_low1") -> dict[str, Any]:
    event = load_event(FIXTURE)
    event.update(
        reply_token=token,
        event_id=event_id,
        risk_level="low",
        irreversible=False,
        reversibility="reversible",
        action="Send 5 dollars to Alice.",
        consequence="Alice gets 5 dollars.",
        timeout_seconds=60,
    )
    return event


def high_risk() -> dict[str, Any]:
    event = load_event(FIXTURE)
    event["action"] = "Delete the production database."
    return event


def decisions(harness: Harness) -> list[tuple[str, str | None]]:
    return [(p.reply_token, a.decision) for p, a in harness.replies]


@pytest.fixture
def armed_harness() -> Harness:
    return Harness(arming=1.0)


async def test_a_key_right_after_the_question_is_replaced_does_not_answer_the_new_one(
    armed_harness: Harness,
) -> None:
    """Issue 12 item 1: R1 is withdrawn, R2 opens, `a` meant for R1 arrives 0.3 s later."""
    h = armed_harness
    app = AnnouncerApp(h.session)
    async with app.run_test() as pilot:
        h.open(low_risk())
        h.open(high_risk())
        await pilot.pause()
        h.clock.now += 5  # R1 has been heard
        h.session.void_prompt("rpl_lowrisk01", "the session was cancelled")
        await pilot.pause()
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        assert app.screen.prompt.reply_token == HIGH_RISK_TOKEN
        h.clock.now += 0.3
        await pilot.press("a")
        await pilot.press("enter")
        await pilot.pause()
        assert h.replies == []  # nothing reached the producer
        assert h.backend.said(NOT_YET)
        # The cue is all: the new question is not read again for the early key.
        assert len([t for t in h.backend.texts if "Delete the production database" in t]) == 1
        # Once it was heard, the user can still reject it with one key.
        h.clock.now += 1.5
        await pilot.press("r")
        await pilot.pause()
        assert decisions(h) == [(HIGH_RISK_TOKEN, "reject")]


@pytest.mark.parametrize("delay", [0.0, 0.3, 0.9])
async def test_keys_within_the_arming_interval_are_refused_with_a_reason(
    armed_harness: Harness, delay: float
) -> None:
    h = armed_harness
    app = AnnouncerApp(h.session)
    async with app.run_test() as pilot:
        h.open(low_risk())
        await pilot.pause()
        h.clock.now += delay
        await pilot.press("a")
        await pilot.pause()
        assert h.replies == []
        assert h.backend.texts[-1] == NOT_YET
        h.clock.now += 1.2
        await pilot.press("a")  # low risk and reversible: one key
        await pilot.pause()
        assert decisions(h) == [("rpl_lowrisk01", "accept")]


@pytest.mark.parametrize("key", ["a", "r", "escape", "enter", "y"])
async def test_a_key_pressed_as_the_dialog_opens_neither_crashes_nor_answers(
    armed_harness: Harness, key: str
) -> None:
    """Issue 14: NoScreen when a key arrived while the confirmation opened (exit status 0)."""
    h = armed_harness
    app = AnnouncerApp(h.session)
    async with app.run_test() as pilot:
        h.open(high_risk())
        await pilot.press(key)  # no pause: the dialog is still being mounted
        await pilot.pause()
        await pilot.pause()
        assert app.is_running
        assert h.replies == []
        assert isinstance(app.screen, ConfirmScreen)  # the question is still there
    assert app.return_code in (None, 0)
    assert app._exception is None


@pytest.mark.parametrize("key", ["r", "escape"])
async def test_with_arming_off_a_key_as_the_dialog_opens_answers_without_a_crash(
    key: str,
) -> None:
    h = Harness(arming=0.0)
    app = AnnouncerApp(h.session)
    async with app.run_test() as pilot:
        h.open(high_risk())
        await pilot.press(key)
        await pilot.pause()
        await pilot.pause()
        assert app.is_running
        assert decisions(h) == [(HIGH_RISK_TOKEN, "reject")]
        assert app.screen is app.main_screen
    assert app._exception is None


async def test_accepting_the_irreversible_takes_a_then_enter(armed_harness: Harness) -> None:
    h = armed_harness
    app = AnnouncerApp(h.session)
    async with app.run_test() as pilot:
        h.open(high_risk())
        await pilot.pause()
        h.clock.now += HEARD
        screen = app.screen
        assert isinstance(screen, ConfirmScreen)
        assert screen.focused is screen.query_one("#reject")  # the safe choice has focus
        await pilot.press("a")
        await pilot.pause()
        assert h.replies == []
        step = (
            "Accept: Delete the production database? Press Enter to confirm, or Escape to go back."
        )
        assert h.backend.texts[-1] == "Enter."  # issue 30 item 2: heard short
        shown = screen.query_one("#step", Static)
        assert shown.display and str(shown.content) == step  # on screen too
        await pilot.press("a", "y")  # the same kind of key again is not the second key
        await pilot.pause()
        assert h.replies == []
        await pilot.press("escape")  # back, not reject
        await pilot.pause()
        assert h.replies == []
        assert h.backend.texts[-1] == "Not accepted. The question is still open."
        assert not shown.display
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("enter")  # focus is on Reject, and no accept is pending
        await pilot.pause()
        assert decisions(h) == [(HIGH_RISK_TOKEN, "reject")]


async def test_a_then_enter_accepts_and_enter_twice_on_accept_does_not(
    armed_harness: Harness,
) -> None:
    h = armed_harness
    app = AnnouncerApp(h.session)
    async with app.run_test() as pilot:
        h.open(high_risk())
        await pilot.pause()
        h.clock.now += HEARD
        await pilot.press("tab")  # onto Accept
        await pilot.press("enter", "enter")  # a double press, at one instant
        await pilot.pause()
        assert h.replies == []
        await pilot.press("a", "enter")
        await pilot.pause()
        assert decisions(h) == [(HIGH_RISK_TOKEN, "accept")]
        assert h.backend.texts[-1] == "Sent."  # issue 30 item 2


async def test_two_keys_for_everything_when_the_user_asks(armed_harness: Harness) -> None:
    h = armed_harness
    h.session.update_settings(UserSettings(answer_arming_seconds=1.0, two_key_accept="always"))
    app = AnnouncerApp(h.session)
    async with app.run_test() as pilot:
        h.open(low_risk())
        await pilot.pause()
        h.clock.now += 2
        assert h.backend.said("A then Enter accepts, R rejects; F2 repeats.")
        await pilot.press("a")
        await pilot.pause()
        assert h.replies == []
        await pilot.press("enter")
        await pilot.pause()
        assert decisions(h) == [("rpl_lowrisk01", "accept")]


async def test_reopening_a_question_from_the_pending_list_keeps_answering_working() -> None:
    """Issue 14: answer, Escape on the next question, p, Enter, type, Enter: the next opens."""
    h = Harness(arming=0.0)
    app = AnnouncerApp(h.session)
    freetext = schema_example("agent.awaiting.clarification", 0)
    freetext.update(
        accepted_response_kinds=["freetext"], reply_token="rpl_text1", event_id="evt_t1"
    )
    freetext.pop("choices", None)
    async with app.run_test() as pilot:
        h.open(low_risk())
        h.open(freetext)
        h.open(low_risk("rpl_low2", "evt_low2"))
        await pilot.pause()
        await pilot.press("a")  # answers the first
        await pilot.pause()
        await pilot.pause()
        assert isinstance(app.screen, ClarifyScreen)
        await pilot.press("escape")  # the clarification waits for later
        await pilot.pause()
        await pilot.pause()
        third = app.screen
        assert isinstance(third, ConfirmScreen) and third.prompt.reply_token == "rpl_low2"
        await pilot.press("r")
        await pilot.pause()
        await pilot.pause()
        assert app.screen is app.main_screen
        await pilot.press("p")
        await pilot.pause()
        await pilot.press("enter")  # opens the clarification from the list
        await pilot.pause()
        await pilot.pause()
        assert isinstance(app.screen, ClarifyScreen)
        await pilot.press(*"Ada", "enter")
        await pilot.pause()
        await pilot.pause()
        assert app.screen is app.main_screen
        assert app.active_token is None
        # A later question still opens and takes its keys.
        h.open(low_risk("rpl_low3", "evt_low3"))
        await pilot.pause()
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        await pilot.pause()
        assert [a.response or a.decision for _, a in h.replies] == [
            "accept",
            "reject",
            "Ada",
            "accept",
        ]


async def test_a_key_for_a_question_withdrawn_while_its_dialog_closes_sends_nothing(
    armed_harness: Harness,
) -> None:
    h = armed_harness
    app = AnnouncerApp(h.session)
    async with app.run_test() as pilot:
        h.open(low_risk())
        await pilot.pause()
        h.clock.now += 2
        h.session.void_prompt("rpl_lowrisk01", "the agent cancelled it")
        await pilot.press("a")  # arrives as the dialog closes
        await pilot.pause()
        await pilot.pause()
        assert h.replies == []
        assert app.screen is app.main_screen


@dataclasses.dataclass(frozen=True)
class MalformedPrompt(PendingPrompt):
    """A question the engine opened although it broke a rule (§10.1.3): reject only."""

    @property
    def malformed(self) -> bool:
        return True


async def test_a_malformed_question_offers_reject_only() -> None:
    h = Harness(arming=0.0)
    app = AnnouncerApp(h.session)
    async with app.run_test() as pilot:
        event = low_risk()
        prompt = prompt_from_event(event, h.clock.now)
        fields = {f.name: getattr(prompt, f.name) for f in dataclasses.fields(prompt)}
        h.session.open_prompt(MalformedPrompt(**fields))
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ConfirmScreen)
        assert not screen.query("#accept")  # no Accept button at all
        assert screen.focused is screen.query_one("#reject")
        assert h.backend.said(
            "This request was malformed, so only reject is offered. Press R to reject."
        )
        await pilot.press("a")
        await pilot.pause()
        assert h.replies == []
        assert h.backend.texts[-1] == "This request was malformed, so only reject is offered."
        await pilot.press("r")
        await pilot.pause()
        assert decisions(h) == [("rpl_lowrisk01", "reject")]


async def test_a_medium_risk_question_is_one_key_once_heard(armed_harness: Harness) -> None:
    """issue 20: an ordinary ACP edit or command permission, medium risk, is `a`."""
    h = armed_harness
    event = low_risk()
    event.update(risk_level="medium")
    event.pop("reversibility")
    app = AnnouncerApp(h.session)
    async with app.run_test() as pilot:
        h.open(event)
        await pilot.pause()
        assert h.backend.texts[-1].endswith("A accepts, R rejects; F2 repeats.")
        h.clock.now += 1.2
        await pilot.press("a")
        await pilot.pause()
        assert decisions(h) == [("rpl_lowrisk01", "accept")]


async def test_a_producer_that_calls_rm_rf_low_risk_still_takes_two_keys(
    armed_harness: Harness,
) -> None:
    """issue 22: risk follows the command, never the producer's own declaration alone."""
    h = armed_harness
    event = low_risk()
    event["action"] = "Run rm -rf ~/photos to free space."
    app = AnnouncerApp(h.session)
    async with app.run_test() as pilot:
        h.open(event)
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ConfirmScreen)
        shown = str(screen.query_one("#dangerous", Static).content)
        assert shown.startswith("Dangerous: rm -rf ~/photos")
        assert "Risk high." in h.backend.texts[-1]
        h.clock.now += 1.2
        await pilot.press("a")  # heard its first words, not all of it: not yet
        await pilot.pause()
        assert h.backend.texts[-1] == NOT_YET and not app.key_guard.confirming
        h.clock.now += HEARD
        await pilot.press("a")
        await pilot.pause()
        assert h.replies == [] and app.key_guard.confirming  # the first of two keys
        await pilot.press("enter")
        await pilot.pause()
        assert decisions(h) == [("rpl_lowrisk01", "accept")]


async def test_w_reads_what_will_run_whole_and_detailed_names_who_asks() -> None:
    h = Harness(arming=0.0)
    h.session.update_settings(UserSettings(answer_arming_seconds=0.0, verbosity="detailed"))
    app = AnnouncerApp(h.session)
    async with app.run_test() as pilot:
        h.open(low_risk())
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ConfirmScreen)
        # the key line after the engine's question: who asks only at detailed verbosity
        assert screen.spoken_intro() == (
            "Asked by banking-assistant. A accepts, R rejects; F2 repeats."
        )
        h.session.update_settings(UserSettings(answer_arming_seconds=0.0))
        assert screen.spoken_intro() == "A accepts, R rejects."  # F2 on screen (issue 30)
        await pilot.press("w")
        await pilot.pause()
        assert h.backend.texts[-1] == "Send 5 dollars to Alice."
