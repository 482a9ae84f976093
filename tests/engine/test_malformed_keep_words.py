"""Issue 22 item 5: malformed questions and errors keep their words (§10.1.3, §4.4)."""

from __future__ import annotations

from announcer.engine.announcement import Urgency
from announcer.engine.prompts import UserAnswer
from announcer.engine.replies import Refusal, ReplyReady
from tests.engine.test_question_rules import Clocked


def critical_texts(c: Clocked) -> list[str]:
    return [
        e.announcement.text
        for e in c.engine.transcript()
        if e.announcement.urgency is Urgency.CRITICAL
    ]


def test_a_malformed_confirmation_says_consequence_risk_deadline_and_default() -> None:
    c = Clocked()
    c.send("agent.session.started", 0, summary_normal="Hi.")
    c.ask(
        "rpl_bad1",
        1,
        action="Send 900 dollars to Bob.",
        consequence="The money leaves your account.",
        risk_level="high",
        irreversible=True,
        default_decision="maybe",  # invalid
        timeout_seconds=60,
    )
    [prompt] = c.engine.pending_prompts()
    assert prompt.malformed
    assert prompt.event.risk_level == "high" and prompt.event.irreversible is True
    said = " ".join(critical_texts(c))
    for words in (
        "Send 900 dollars to Bob.",
        "The money leaves your account.",
        "High risk.",
        "This cannot be undone.",
        "If you do not answer within 1 minute, it will be rejected.",
        "only reject is offered",
    ):
        assert words in said, (words, said)
    c.now = 2.0
    refused = c.engine.answer(UserAnswer("rpl_bad1", decision="accept"), c.now)
    assert isinstance(refused, Refusal)
    assert isinstance(c.engine.answer(UserAnswer("rpl_bad1", decision="reject"), c.now), ReplyReady)


def test_errored_without_urgency_is_said_critical_with_its_words_every_time() -> None:
    c = Clocked()
    c.send("agent.session.started", 0, summary_normal="Hi.")
    for seq, second in ((1, 0.0), (2, 3.0)):
        c.now = second
        c.send(
            "agent.session.errored",
            seq,
            session=f"sess_e{seq}",
            error_category="permanent",
            summary_normal=f"Error number {seq}: the bank refused.",
            error_message="HTTP 500",  # not in the schema: the frame fails validation
            urgency=None,
        )
    said = critical_texts(c)
    assert any("Error number 1: the bank refused." in text for text in said)
    assert any("Error number 2: the bank refused." in text for text in said)
    assert not any("could not be read" in text for text in said)


def test_a_defective_handoff_and_clarification_keep_their_words() -> None:
    c = Clocked()
    c.send("agent.session.started", 0, summary_normal="Hi.")
    c.send(
        "agent.handoff.requested",
        1,
        urgency="critical",
        reason="A person must approve the loan.",
        target_kind="robot",  # invalid
    )
    c.send(
        "agent.awaiting.clarification",
        2,
        urgency="critical",
        question="Which account should pay?",
        reply_token="bad token",
        timeout_seconds=60,
        choices=[{"value": "a", "label": "Savings"}, {"value": "b", "label": "Checking"}],
    )
    said = " ".join(critical_texts(c))
    assert "A person must approve the loan." in said
    assert "Which account should pay? Savings; Checking" in said
    assert "Unreadable questions" not in said


def test_a_malformed_questions_sentences_are_never_run_together() -> None:
    """Issue 29, item 15: a consequence without its full stop ran into ours ("...for
    good High risk."); an action without one ran into its consequence."""
    c = Clocked()
    c.send("agent.session.started", 0, summary_normal="Hi.")
    c.ask(
        "rpl_bad2",
        1,
        action="Delete the backups",
        consequence="They are gone for good",
        risk_level="high",
        irreversible=True,
        default_decision="maybe",  # invalid
        timeout_seconds=60,
    )
    said = " ".join(critical_texts(c))
    assert "They are gone for good. High risk." in said, said
    assert "Delete the backups. They are gone for good." in said, said
    assert "good High" not in said
