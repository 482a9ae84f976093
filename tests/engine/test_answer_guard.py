"""The keyboard safety rules on an injected clock: bound keys, arming, two keys to accept."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from announcer.engine.answer_guard import (
    ALWAYS_WITHDRAWN,
    CONFIRM_ALLOW_ALWAYS,
    CONFIRM_REJECT_ALWAYS_TYPED,
    NOT_YET,
    KeyGuard,
    accept_needs_two_keys,
    confirm_step_text,
    is_high_risk,
)
from tests.support.examples import examples


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
    early = guard.press("rpl_r2", "reject", 200.3)
    # issue 20: an early key gets two words, never a sentence that delays the question
    assert early.code == "arming" and early.message == NOT_YET == "Not yet."
    # A second passed but nothing of R2 was spoken yet (the withdrawal notice is playing).
    assert guard.press("rpl_r2", "reject", 201.5).code == "arming"
    guard.speech_started("rpl_r2", 202.0)
    # Two words at 180 wpm take 0.67 s.
    assert guard.press("rpl_r2", "reject", 202.5).code == "arming"
    assert guard.press("rpl_r2", "reject", 202.7).kind == "send"


def test_a_question_whose_speech_never_starts_never_arms_while_a_voice_works() -> None:
    """issue 20: the former 8 s fallback let an rm -rf be accepted unheard."""
    guard = KeyGuard(arming_seconds=1.0)
    guard.present("rpl_x", 0.0)
    for at in (1.0, 8.0, 60.0, 3600.0):
        assert guard.press("rpl_x", "accept", at).code == "arming"
    assert guard.armed_at() == float("inf")


def test_with_no_voice_the_question_on_screen_arms_after_the_interval() -> None:
    guard = KeyGuard(arming_seconds=1.0)
    guard.voice_working = False
    guard.present("rpl_x", 0.0)
    assert guard.press("rpl_x", "reject", 0.5).code == "arming"
    assert guard.press("rpl_x", "accept", 1.0, must_be_heard=True, two_keys=True).kind == (
        "confirm_step"
    )


def test_early_keys_get_one_cue_in_a_moment_and_never_a_re_reading() -> None:
    guard = KeyGuard(arming_seconds=1.0)
    guard.present("rpl_x", 0.0)
    said = [guard.press("rpl_x", "accept", at, key="a").message for at in (0.1, 0.4, 0.9, 1.5)]
    assert said == ["Not yet.", "", "", ""]  # pressed again and again: one cue
    assert guard.press("rpl_x", "accept", 2.2, key="a").message == "Not yet."


def test_a_high_risk_accept_waits_until_the_question_was_said_through() -> None:
    guard = KeyGuard(arming_seconds=1.0, pace_wpm=180)
    guard.present("rpl_x", 0.0)
    words = "Confirmation needed. Claude wants to run Bash: rm -rf ~. High risk."
    guard.speech_started("rpl_x", 0.5, words)  # 12 words at 180 wpm: 4 s, ends at 4.5
    assert guard.press("rpl_x", "reject", 1.5, key="r").kind == "send"
    guard.present("rpl_x", 0.0)
    early = guard.press("rpl_x", "accept", 2.0, two_keys=True, key="a", must_be_heard=True)
    assert early.code == "not_heard" and early.message == "Not yet."
    assert not guard.confirming
    heard = guard.press("rpl_x", "accept", 4.6, two_keys=True, key="a", must_be_heard=True)
    assert heard.kind == "confirm_step"


def test_a_medium_risk_accept_is_one_key_once_armed() -> None:
    guard = armed_guard()
    medium = {"risk_level": "medium", "irreversible": False}
    verdict = guard.press("rpl_a", "accept", 2.0, two_keys=accept_needs_two_keys(medium))
    assert verdict.kind == "send" and verdict.intent == "accept"


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
    assert not accept_needs_two_keys({**low, "reversibility": "reversible_with_effort"})
    assert accept_needs_two_keys({**low, "risk_level": "high"})
    assert not accept_needs_two_keys({**low, "risk_level": "medium"})  # issue 20: one key
    assert accept_needs_two_keys({**low, "risk_level": "medium"}, "always")
    assert accept_needs_two_keys({})  # nothing stated: the careful reading


def test_risk_follows_the_command_not_the_agents_own_words() -> None:
    """issue 22: a question declared low risk whose command deletes takes two keys."""
    disguised = {
        "risk_level": "low",
        "irreversible": False,
        "extensions": {"x-announcer": {"command": "r\u200bm -rf ~/"}},
    }
    assert is_high_risk(disguised) and accept_needs_two_keys(disguised)
    plain = {**disguised, "extensions": {"x-announcer": {"command": "ls -la"}}}
    assert not is_high_risk(plain) and not accept_needs_two_keys(plain)
    # a harmless command field never hides a dangerous action
    masked = {**plain, "action": "Run rm -rf ~ now"}
    assert is_high_risk(masked) and accept_needs_two_keys(masked)


steps = st.lists(
    st.tuples(
        st.sampled_from(["present", "speech", "hide", "press", "voice"]),
        st.sampled_from(["rpl_1", "rpl_2"]),
        st.sampled_from(["accept", "reject", "answer", "confirm", "back", "accept_always"]),
        st.floats(min_value=0.0, max_value=3.0),
        st.booleans(),
        st.booleans(),
    ),
    max_size=40,
)


@settings(max_examples=examples(300), deadline=None)
@given(steps)
def test_nothing_is_sent_for_a_question_not_shown_or_not_armed(sequence: list) -> None:
    """Invariants over any order of questions, speech, voice and keys at any timing:
    nothing is sent for a question not shown, before it armed, or (high risk) before it
    was heard; with a voice working, nothing is sent before the question's speech began."""
    guard = KeyGuard(arming_seconds=1.0, pace_wpm=300)
    now = 0.0
    spoken: set[str] = set()
    for action, token, intent, delay, two_keys, risky in sequence:
        now += delay
        if action == "present":
            if guard.shown != token:
                spoken.discard(token)
            guard.present(token, now)
        elif action == "speech":
            if guard.shown == token:
                spoken.add(token)
            guard.speech_started(token, now, "a question of some words " * int(delay * 3))
        elif action == "voice":
            guard.voice_working = two_keys
        elif action == "hide":
            guard.hide(token)
        else:
            shown, armed, confirming = guard.shown, guard.armed_at(), guard.confirming
            heard, voice = guard.heard_at(), guard.voice_working
            verdict = guard.press(
                token,
                intent,  # type: ignore[arg-type]
                now,
                two_keys=two_keys,
                key=intent,
                must_be_heard=risky,
            )
            if verdict.sends:
                assert shown == token
                if intent == "confirm":
                    assert confirming  # only the second key of an accept
                else:
                    assert armed is not None and now >= armed
                    assert not voice or token in spoken
                    assert not (intent == "accept" and two_keys)
            if verdict.kind == "confirm_step" and risky and intent.startswith("accept"):
                assert heard is not None and now >= heard


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


def test_hearing_the_question_again_never_delays_a_key() -> None:
    """F2 or W after the question was said through: the accept still works at once."""
    guard = KeyGuard(arming_seconds=1.0, pace_wpm=180)
    guard.present("t", 0.0)
    guard.speech_started("t", 0.0, "six words of a short question")
    assert guard.heard_at() is not None and guard.heard_at() <= 3.0
    guard.speech_started("t", 5.0, "the whole command read again " * 40)  # W, at 5 s
    assert guard.heard_at() <= 3.0
    verdict = guard.press("t", "accept", 6.0, two_keys=True, key="a", must_be_heard=True)
    assert verdict.kind == "confirm_step"
