"""Issue 22 items 6 and 11: typed numbers are what was typed, mixed kinds take either form,
and every refusal in the plain line UI is spoken as well as printed."""

from __future__ import annotations

import asyncio
import io
from typing import Any

from announcer.engine.announcement import Announcement
from announcer.ui.plain import PlainUi
from tests.ui.conftest import prompt_from_event
from tests.ui.test_plain_keys import FakeLineSession

RETIREMENT: dict[str, Any] = {
    # §4.4.2's own example: multiple choice plus numeric
    "@context": "https://aaep-protocol.org/context/v1",
    "type": "aaep:agent.awaiting.clarification",
    "event_id": "evt_a3c9f2e7b1d8a4c6",
    "session_id": "sess_2c91a7b4d23f1e88",
    "timestamp": "2026-05-24T14:22:12.890Z",
    "producer": {"agent_id": "retirement-planner", "agent_version": "1.4.2"},
    "urgency": "critical",
    "question": "Which retirement age should I plan for?",
    "reply_token": "rpl_2c8e4a9f7b1d3a6e",
    "timeout_seconds": 300,
    "accepted_response_kinds": ["multiple_choice", "numeric"],
    "choices": [
        {"value": "60", "label": "Age 60"},
        {"value": "65", "label": "Age 65 (standard)"},
        {"value": "67", "label": "Age 67 (full Social Security)"},
        {"value": "70", "label": "Age 70 (maximum benefits)"},
    ],
    "default_response": "65",
    "summary_normal": "Which retirement age should I plan for?",
}


def open_and_hear(ui: PlainUi, session: FakeLineSession, event: dict[str, Any]) -> None:
    """The question opens and the engine starts reading it (its keys arm from then)."""
    ui.prompt_opened(prompt_from_event(event, 0))
    ui.announcement_made(
        Announcement(
            event["question"], event_id=event["event_id"], kind="agent.awaiting.clarification"
        )
    )
    session.clock.now += 5


async def answered(ui: PlainUi, session: FakeLineSession, line: str) -> Any:
    before = len(session.answers)
    ui._on_line(line)
    for _ in range(5):
        await asyncio.sleep(0)
    return session.answers[-1].response if len(session.answers) > before else None


async def test_the_specs_choice_or_number_example_takes_62_a_choice_and_a_value() -> None:
    session = FakeLineSession()
    out = io.StringIO()
    ui = PlainUi(out=out, inp=io.StringIO())
    ui.attach(session)  # type: ignore[arg-type]
    for token, line, expected in (
        ("rpl_mixa1", "62", 62),  # any other number (the plain UI refused it)
        ("rpl_mixb2", "2", "65"),  # the second choice
        ("rpl_mixc3", "67", "67"),  # a choice's own value
    ):
        event = dict(RETIREMENT, reply_token=token, event_id="evt_" + token[4:])
        open_and_hear(ui, session, event)
        assert await answered(ui, session, line) == expected
    assert "Choose a number from 1 to 4, or type any other number:" in out.getvalue()


async def test_an_exponent_is_refused_whole_and_the_refusal_is_spoken() -> None:
    session = FakeLineSession()
    out = io.StringIO()
    ui = PlainUi(out=out, inp=io.StringIO())
    ui.attach(session)  # type: ignore[arg-type]
    event = dict(
        RETIREMENT,
        accepted_response_kinds=["numeric"],
        choices=None,
        reply_token="rpl_num1",
        event_id="evt_num1",
    )
    del event["choices"]
    open_and_hear(ui, session, event)
    assert await answered(ui, session, "2.5e3") is None
    refusal = "That is not a number. Please type a number, like 3 or 2.5."
    assert refusal in out.getvalue() and refusal in session.spoken
    assert await answered(ui, session, "2500") == 2500
