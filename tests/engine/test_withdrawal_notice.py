"""Issue 30 item 1: a withdrawn question is said once, with the agent's reason when it
gave one (§6.8: its state change away from ``awaiting_input`` carries a summary).

The demo's insurance question was announced twice ("Question withdrawn: …" by the
Textual app, then "No answer needed any more: …" by the engine) and the agent's own
words, "Never mind the insurance question: the fare already includes it.", were never
heard. The engine owns the notice; the UIs say nothing of their own
(tests/ui/test_withdrawal_heard_once.py).
"""

from __future__ import annotations

from announcer.engine.settings import UserSettings
from tests.engine.aaep import confirmation, frame, started
from tests.engine.test_engine import SUB, listen

REASON = "Never mind the insurance question: the fare already includes it."
ACTION = "Add travel insurance for 12 euros"


def withdrawal(**kw: object) -> str:
    return frame("agent.state.changed", from_state="awaiting_input", to_state="thinking", **kw)


def test_a_heard_question_withdrawn_with_a_reason_is_one_notice_with_the_reason() -> None:
    listener = listen()
    listener.feed(SUB, started(), confirmation("rpl_ins1", action=ACTION, risk_level="low"))
    assert any(ACTION in text for text in listener.said)  # the question was heard
    said = listener.feed(withdrawal(summary_normal=REASON), now=5.0)
    # short (issue 30 item 4): the only question open was the one just heard
    assert said == [f"Withdrawn: {REASON}"]
    assert listener.engine.pending_prompts() == []


def test_with_another_question_open_the_withdrawn_one_is_named() -> None:
    listener = listen()
    listener.feed(
        SUB,
        started(),
        started(session="sess_other"),
        confirmation("rpl_ins4", action=ACTION, risk_level="low"),
        confirmation(
            "rpl_seat4", action="Reserve seat 12A", risk_level="low", session="sess_other"
        ),
    )
    assert any(ACTION in text for text in listener.said)  # the question was heard
    said = listener.feed(withdrawal(summary_normal=REASON), now=5.0)
    # another question is open: which one was withdrawn is said
    assert f"No answer needed any more: {ACTION}. {REASON}" in said, said
    assert [p.reply_token for p in listener.engine.pending_prompts()] == ["rpl_seat4"]


def test_at_detailed_verbosity_the_withdrawn_question_is_named() -> None:
    listener = listen(UserSettings(verbosity="detailed"))
    listener.feed(SUB, started(), confirmation("rpl_ins5", action=ACTION, risk_level="low"))
    said = listener.feed(withdrawal(summary_normal=REASON), now=5.0)
    assert said == [f"No answer needed any more: {ACTION}. {REASON}"]


def test_an_unheard_question_withdrawn_with_a_reason_says_the_agents_reason() -> None:
    listener = listen()
    listener.feed(
        SUB,
        started(),
        frame(
            "agent.output.streaming",
            chunk="A long " * 40,
            position=0,
            complete=False,
            coalesce_hint="sentence",
        ),
    )
    listener.feed(confirmation("rpl_ins2", action=ACTION, urgency="normal", risk_level="low"))
    said = listener.feed(withdrawal(summary_normal=REASON), now=0.5)
    notices = [text for text in listener.said if "answer" in text and ACTION in text]
    assert notices == [f"Withdrawn before you could answer: {ACTION}. {REASON}"], said
    assert sum(REASON in text for text in listener.said) == 1
    assert not any("went on without your answer" in text for text in listener.said)


def test_without_a_reason_the_notice_is_as_before_and_said_once() -> None:
    listener = listen()
    listener.feed(SUB, started(), confirmation("rpl_ins3", action=ACTION, risk_level="low"))
    said = listener.feed(withdrawal(), now=5.0)
    assert sum("No answer needed any more" in text for text in said) == 1
    assert said[0] == f"No answer needed any more: {ACTION}"
