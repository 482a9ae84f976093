"""Issue 30 item 1 in the Textual app: a withdrawn question is heard once, with the
agent's reason, and the dialog closes (the engine's notice; the app adds none).

Real AAEP frames through the real engine, the jsonl record is what the user heard.
The plain UI never added a notice of its own: its run is in
tests/ui/test_plain_text_once.py.
"""

from __future__ import annotations

from announcer.ui.tui.app import AnnouncerApp
from announcer.ui.tui.modals import ConfirmScreen
from tests.engine.aaep import confirmation, frame, started
from tests.ui.test_with_engine import EngineHarness

REASON = "Never mind the insurance question: the fare already includes it."
ACTION = "Add travel insurance for 12 euros"


async def test_a_withdrawn_question_is_heard_once_with_the_agents_reason() -> None:
    h = EngineHarness()
    h.subscribe("local")
    app = AnnouncerApp(h.session)
    async with app.run_test() as pilot:
        h.session.receive(started(), "local")
        h.session.receive(
            confirmation("rpl_ins9", action=ACTION, risk_level="low", reversibility="reversible"),
            "local",
        )
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        h.clock.now += 5
        h.session.receive(
            frame(
                "agent.state.changed",
                from_state="awaiting_input",
                to_state="thinking",
                summary_normal=REASON,
                at=5.0,
            ),
            "local",
        )
        await pilot.pause()
        await pilot.pause()
        assert app.screen is app.main_screen
        heard = h.spoken()
        about_it = [text for text in heard if "withdrawn" in text.lower() or "any more" in text]
        # short (issue 30 item 4): the one question open needs no naming
        assert about_it == [f"Withdrawn: {REASON}"], heard
        assert sum(REASON in text for text in heard) == 1
        on_screen = [
            line
            for line in app.main_screen.transcript.entries
            if "withdrawn" in line.lower() or "any more" in line
        ]
        assert len(on_screen) == 1, app.main_screen.transcript.entries
