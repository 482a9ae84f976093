"""Issue 22 item 5: the dialog of a malformed confirmation shows the risk it declared."""

from __future__ import annotations

from announcer.ui.tui.prompt_view import ConfirmationView
from tests.engine.test_question_rules import Clocked


def test_a_malformed_high_risk_confirmation_is_not_shown_as_risk_not_stated() -> None:
    c = Clocked()
    c.send("agent.session.started", 0, summary_normal="Hi.")
    c.ask(
        "rpl_dialog1",
        1,
        action="Wire 900 dollars.",
        risk_level="high",
        irreversible=True,
        default_decision="sometimes",  # invalid: the question is malformed
    )
    [prompt] = c.engine.pending_prompts()
    assert prompt.malformed
    view = ConfirmationView.of(prompt)
    assert view.risk_phrase() == "Risk high"
    assert view.reversibility_phrase() == "Cannot be undone"
