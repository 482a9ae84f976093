"""Issue 22 item 2: a clock that cannot be poisoned (§6.4, §10.1.3).

One event stamped an hour ahead, or a producer clock that steps and comes back, must
not make a later on-time question "expired on arrival"; a question is expired on
arrival only when its own timestamp and timeout say so beyond any skew seen from its
producer, and while the producer may still wait a reject stays possible.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from announcer.engine.clock_skew import MIN_ANSWER_SECONDS
from announcer.engine.prompts import UserAnswer
from announcer.engine.replies import ReplyReady
from tests.engine.test_question_rules import Clocked


def answerable(c: Clocked, token: str, timeout: float) -> None:
    """Open, with a sane time left, and a reject sent once the keys would have armed."""
    assert c.open_tokens() == [token], c.said
    [prompt] = c.engine.pending_prompts()
    assert prompt.seconds_left(c.now) >= min(timeout, MIN_ANSWER_SECONDS) - 0.01
    assert not any("after its time ran out" in text for text in c.said)
    c.now += 2.0
    outcome = c.engine.answer(UserAnswer(token, decision="reject"), c.now)
    assert isinstance(outcome, ReplyReady), outcome


def test_one_event_stamped_an_hour_ahead_does_not_expire_the_next_question() -> None:
    c = Clocked()
    c.send("agent.session.started", 0, summary_normal="Hi.")
    c.send("agent.state.changed", 1, ago=-3600.0, from_state="idle", to_state="thinking")
    c.now = 1.0
    c.ask("rpl_ahead", 2, timeout_seconds=30)
    answerable(c, "rpl_ahead", 30)


def test_a_clock_that_steps_ninety_seconds_and_back_does_not_expire_a_question() -> None:
    c = Clocked()
    c.send("agent.session.started", 0, summary_normal="Hi.")
    for seq in range(1, 5):  # the producer's clock jumps 90 s ahead for a while
        c.now += 1.0
        c.send("agent.state.changed", seq, ago=-90.0, from_state="thinking", to_state="thinking")
    c.now += 1.0
    c.ask("rpl_step", 5, timeout_seconds=60)  # and is put right again
    answerable(c, "rpl_step", 60)


def test_a_question_the_clock_says_is_long_gone_is_still_expired_on_arrival() -> None:
    """Beyond any skew seen: 10 minutes late for a 60 s question on a steady clock."""
    c = Clocked()
    c.send("agent.session.started", 0, summary_normal="Hi.")
    c.send("agent.state.changed", 1, ago=-3600.0, from_state="idle", to_state="thinking")
    c.ask("rpl_gone", 2, ago=600.0, timeout_seconds=60)
    assert c.open_tokens() == []
    assert any("came after its time ran out" in text for text in c.said)


def test_a_late_question_keeps_time_for_a_reject_while_the_producer_may_wait() -> None:
    c = Clocked()
    c.send("agent.session.started", 0, summary_normal="Hi.")
    c.ask("rpl_tight", 1, ago=58.0, timeout_seconds=60)
    answerable(c, "rpl_tight", 60)


# Offsets a producer's timestamps may have from ours: steady skews, steps and outliers.
SKEWS = st.one_of(
    st.floats(min_value=-7200, max_value=7200, allow_nan=False),
    st.sampled_from([0.0, -90.0, 90.0, -3600.0, 3600.0, 300.0]),
)


@settings(max_examples=200, deadline=None)
@given(
    skews=st.lists(SKEWS, min_size=0, max_size=30),
    pick=st.integers(min_value=0, max_value=1000),
    jitter=st.floats(min_value=0.0, max_value=1.5),
    timeout=st.integers(min_value=5, max_value=600),
    gaps=st.floats(min_value=0.0, max_value=30.0),
)
def test_any_skewed_or_stepped_timestamps_leave_an_on_time_question_answerable(
    skews: list[float], pick: int, jitter: float, timeout: int, gaps: float
) -> None:
    """The question is stamped by a clock the producer was seen to have (or ours)."""
    c = Clocked()
    c.send("agent.session.started", 0, summary_normal="Hi.")
    for seq, skew in enumerate(skews, start=1):
        c.now += gaps
        c.send("agent.state.changed", seq, ago=skew, from_state="thinking", to_state="thinking")
    seen = [0.0, *skews]
    c.now += gaps
    c.ask(
        "rpl_ontime", len(skews) + 1, ago=seen[pick % len(seen)] + jitter, timeout_seconds=timeout
    )
    answerable(c, "rpl_ontime", timeout)
