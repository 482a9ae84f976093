"""The keyboard safety rules on an injected clock: bound keys, arming, two keys to accept."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from announcer.engine.answer_guard import (
    ALWAYS_WITHDRAWN,
    CONFIRM_ALLOW_ALWAYS,
    CONFIRM_REJECT_ALWAYS_TYPED,
    SPEECH_WAIT_LIMIT,
    KeyGuard,
    accept_needs_two_keys,
    confirm_step_text,
)


def armed_guard(token: str = "rpl_a", at: float = 0.0) -> KeyGuard:
    guard = KeyGuard(arming_seconds=1.0, pace_wpm=180)
    guard.present(token, at)
    guard.speech_started(token, at)
    return guard


def test_a_key_for_another_question_is_refused() -> None:
    guard = armed_guard("rpl_r2")
    verdict = guard.press("rpl_r1", "accept", 10.0)
    assert verdict.kind == "refused" and verdict.code == "not_shown"
    assert guard.press(None, "reject", 10.0).code == "not_shown"


def test_keys_wait_for_the_interval_and_the_first_spoken_words() -> None:
    guard = KeyGuard(arming_seconds=1.0, pace_wpm=180)
    guard.present("rpl_r1", 100.0)
    guard.hide("rpl_r1")
    guard.present("rpl_r2", 200.0)  # R2 replaced R1
    assert guard.press("rpl_r2", "reject", 200.3).code == "arming"
    assert "question changed" in guard.press("rpl_r2", "reject", 200.3).message
    # A second passed but nothing of R2 was spoken yet (the withdrawal notice is playing).
    assert guard.press("rpl_r2", "reject", 201.5).code == "arming"
    guard.speech_started("rpl_r2", 202.0)
    # Two words at 180 wpm take 0.67 s.
    assert guard.press("rpl_r2", "reject", 202.5).code == "arming"
    assert guard.press("rpl_r2", "reject", 202.7).kind == "send"


def test_a_question_whose_speech_never_starts_still_arms_after_the_limit() -> None:
    guard = KeyGuard(arming_seconds=1.0)
    guard.present("rpl_x", 0.0)
    assert guard.press("rpl_x", "reject", SPEECH_WAIT_LIMIT - 0.1).code == "arming"
    assert guard.press("rpl_x", "reject", SPEECH_WAIT_LIMIT).kind == "send"


def test_zero_arming_turns_the_wait_off() -> None:
    guard = KeyGuard(arming_seconds=0.0)
    guard.present("rpl_x", 5.0)
    assert guard.press("rpl_x", "reject", 5.0).kind == "send"


def test_accepting_a_risky_question_takes_a_second_different_key() -> None:
    guard = armed_guard()
    step = guard.press("rpl_a", "accept", 5.0, two_keys=True, key="a")
    assert step.kind == "confirm_step" and guard.confirming
    # The same key again is not the second key.
    assert guard.press("rpl_a", "accept", 5.1, two_keys=True, key="a").code == "confirm_pending"
    assert guard.press("rpl_a", "confirm", 5.2, key="enter").kind == "send"
    assert not guard.confirming


def test_escape_goes_back_and_reject_stays_one_key() -> None:
    guard = armed_guard()
    guard.press("rpl_a", "accept", 5.0, two_keys=True, key="a")
    back = guard.press("rpl_a", "back", 5.5, key="escape")
    assert back.kind == "back" and not guard.confirming
    assert guard.press("rpl_a", "confirm", 5.6, key="enter").code == "nothing_to_confirm"
    guard.press("rpl_a", "accept", 6.0, two_keys=True, key="a")
    assert guard.press("rpl_a", "reject", 6.1, key="r").kind == "send"


def test_enter_twice_on_the_accept_button_is_not_two_decisions() -> None:
    guard = armed_guard()
    guard.press("rpl_a", "accept", 5.0, two_keys=True, key="enter")
    assert guard.press("rpl_a", "confirm", 5.1, key="enter").code == "confirm_pending"
    assert guard.press("rpl_a", "confirm", 5.8, key="enter").kind == "send"


def test_the_confirm_step_belongs_to_its_question() -> None:
    guard = armed_guard("rpl_r1")
    guard.press("rpl_r1", "accept", 5.0, two_keys=True, key="a")
    guard.hide("rpl_r1")
    guard.present("rpl_r2", 5.1)
    assert guard.press("rpl_r2", "confirm", 5.2, key="enter").code == "nothing_to_confirm"
    assert guard.press("rpl_r1", "confirm", 5.2, key="enter").code == "not_shown"


def test_the_always_rule_cannot_be_loosened_by_the_caller() -> None:
    guard = KeyGuard(arming_seconds=0.0, two_key_rule="always")
    guard.present("rpl_a", 0.0)
    assert guard.press("rpl_a", "accept", 1.0, two_keys=False).kind == "confirm_step"


def test_which_confirmations_take_two_keys() -> None:
    low = {"risk_level": "low", "irreversible": False, "reversibility": "reversible"}
    assert not accept_needs_two_keys(low)
    assert accept_needs_two_keys(low, "always")
    assert accept_needs_two_keys({**low, "irreversible": True})
    assert accept_needs_two_keys({**low, "reversibility": "irreversible"})
    assert accept_needs_two_keys({**low, "reversibility": "reversible_with_effort"})
    assert accept_needs_two_keys({**low, "risk_level": "high"})
    assert accept_needs_two_keys({**low, "risk_level": "medium"})
    assert accept_needs_two_keys({})  # nothing stated: the careful reading


steps = st.lists(
    st.tuples(
        st.sampled_from(["present", "speech", "hide", "press"]),
        st.sampled_from(["rpl_1", "rpl_2"]),
        st.sampled_from(["accept", "reject", "answer", "confirm", "back"]),
        st.floats(min_value=0.0, max_value=3.0),
        st.booleans(),
    ),
    max_size=40,
)


@settings(max_examples=300, deadline=None)
@given(steps)
def test_nothing_is_sent_for_a_question_not_shown_or_not_armed(sequence: list) -> None:
    """Invariants over any order of questions, speech and keys at any timing."""
    guard = KeyGuard(arming_seconds=1.0, pace_wpm=300)
    now = 0.0
    for action, token, intent, delay, two_keys in sequence:
        now += delay
        if action == "present":
            guard.present(token, now)
        elif action == "speech":
            guard.speech_started(token, now)
        elif action == "hide":
            guard.hide(token)
        else:
            shown, armed, confirming = guard.shown, guard.armed_at(), guard.confirming
            verdict = guard.press(token, intent, now, two_keys=two_keys, key=intent)  # type: ignore[arg-type]
            if verdict.sends:
                assert shown == token
                if intent == "confirm":
                    assert confirming  # only the second key of an accept
                else:
                    assert armed is not None and now >= armed
                    assert not (intent == "accept" and two_keys)


# -- "always" answers (ACP allow always / reject always) ------------------------------------


def test_an_always_answer_takes_a_second_key_even_for_a_low_risk_question() -> None:
    for intent in ("accept_always", "reject_always"):
        guard = KeyGuard(arming_seconds=0)
        guard.present("t", 0.0)
        step = guard.press("t", intent, 1.0, two_keys=False, key="A")
        assert (step.kind, step.intent) == ("confirm_step", intent)
        assert guard.confirming_intent == intent
        # the same key again at once is not the second key
        assert guard.press("t", "confirm", 1.1, key="A").kind == "refused"
        sent = guard.press("t", "confirm", 1.2, key="enter")
        assert (sent.kind, sent.intent) == ("send", intent)
        assert not guard.confirming


def test_going_back_from_always_sends_nothing_and_a_plain_reject_stays_one_key() -> None:
    guard = KeyGuard(arming_seconds=0)
    guard.present("t", 0.0)
    guard.press("t", "reject_always", 1.0, key="R")
    back = guard.press("t", "back", 1.5, key="escape")
    assert back.kind == "back" and back.message == ALWAYS_WITHDRAWN
    assert guard.press("t", "confirm", 2.0, key="enter").kind == "refused"  # nothing to confirm
    once = guard.press("t", "reject", 2.5, key="r")
    assert (once.kind, once.intent) == ("send", "reject")


def test_an_always_key_during_arming_is_refused_and_asks_nothing() -> None:
    guard = KeyGuard(arming_seconds=1.0)
    guard.present("t", 0.0)
    guard.speech_started("t", 0.0)
    verdict = guard.press("t", "accept_always", 0.3, key="A")
    assert verdict.kind == "refused" and verdict.code == "arming"
    assert not guard.confirming
    assert confirm_step_text("accept_always") == CONFIRM_ALLOW_ALWAYS
    assert confirm_step_text("reject_always", typed=True) == CONFIRM_REJECT_ALWAYS_TYPED
