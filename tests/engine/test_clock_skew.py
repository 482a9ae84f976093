"""Issue 22 item 2: a clock that cannot be poisoned (§6.4, §10.1.3).

One event stamped an hour ahead, or a producer clock that steps and comes back, must
not make a later on-time question "expired on arrival"; a question is expired on
arrival only when its own timestamp and timeout say so beyond any skew seen from its
producer, and while the producer may still wait a reject stays possible.
"""

from __future__ import annotations

from random import Random

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from announcer.engine.clock import MIN_ANSWER_SECONDS
from announcer.engine.prompts import UserAnswer
from announcer.engine.replies import Refusal, ReplyReady
from announcer.engine.speech_commands import Speak, SpeechCommand
from tests.engine.test_question_rules import Clocked
from tests.support.examples import examples


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


@settings(max_examples=examples(200), deadline=None)
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


# -- accept: never after the producer's deadline as far as we can tell ---------------------------


def test_a_late_question_after_an_event_stamped_an_hour_behind_takes_reject_not_accept() -> None:
    """The lenient skew (an hour) keeps reject; the confirmed clock (ours) closes accept."""
    c = Clocked()
    c.send("agent.session.started", 0, summary_normal="Hi.")
    c.send("agent.state.changed", 1, ago=3600.0, from_state="idle", to_state="thinking")
    c.now = 1.0
    c.ask("rpl_late", 2, ago=90.0, timeout_seconds=60)  # 90 s under way, 60 s to answer
    assert c.open_tokens() == ["rpl_late"], c.said
    assert any(text.startswith("The time to accept is over") for text in c.said), c.said
    c.now += 2.0
    refused = c.engine.answer(UserAnswer("rpl_late", decision="accept"), c.now)
    assert isinstance(refused, Refusal) and refused.code == "accept_too_late"
    sent = c.engine.answer(UserAnswer("rpl_late", decision="reject"), c.now)
    assert isinstance(sent, ReplyReady) and sent.message.decision == "reject"


def test_accept_closes_at_the_producers_deadline_and_is_said_once_reject_stays() -> None:
    c = Clocked()
    c.send("agent.session.started", 0, summary_normal="Hi.")
    c.send("agent.state.changed", 1, ago=3600.0, from_state="idle", to_state="thinking")
    c.ask("rpl_half", 2, ago=30.0, timeout_seconds=60)  # 30 s left by the producer's clock
    [prompt] = c.engine.pending_prompts()
    assert prompt.accept_deadline == pytest.approx(30.0, abs=0.01)
    assert prompt.deadline == pytest.approx(60.0, abs=0.01)  # it may still wait: reject
    assert not any(text.startswith("The time to accept is over") for text in c.said)
    c.now = 30.5  # the producer's deadline passed: said once, accept refused, reject sent
    c._heard(c.engine.tick(c.now))
    c._heard(c.engine.tick(c.now + 1.0))
    over = [text for text in c.said if text.startswith("The time to accept is over")]
    assert len(over) == 1, c.said
    refused = c.engine.answer(UserAnswer("rpl_half", decision="accept"), c.now)
    assert isinstance(refused, Refusal) and refused.code == "accept_too_late"
    # "Say again": the question is read with it again.
    before = accept_over_notices(c, [])
    assert accept_over_notices(c, c.engine.present("rpl_half", c.now)) == before + 1
    sent = c.engine.answer(UserAnswer("rpl_half", decision="reject"), c.now)
    assert isinstance(sent, ReplyReady) and sent.message.decision == "reject"


def accept_over_notices(c: Clocked, commands: list[SpeechCommand]) -> int:
    """How many "time to accept is over" notices wait to be said or are said now."""
    texts = [command.announcement.text for command in commands if isinstance(command, Speak)]
    texts += [a.text for a in c.engine.scheduler.queued_announcements()]
    return sum(text.startswith("The time to accept is over") for text in texts)


@settings(max_examples=examples(300), deadline=None)
@given(
    skew=SKEWS,
    steady=st.lists(st.floats(min_value=0.0, max_value=0.5), min_size=2, max_size=12),
    outlier=st.one_of(st.none(), SKEWS),
    where=st.integers(min_value=0, max_value=12),
    jitter=st.floats(min_value=0.0, max_value=1.5),
    timeout=st.integers(min_value=5, max_value=600),
    gap=st.floats(min_value=0.0, max_value=30.0),
)
def test_an_on_time_question_keeps_accept_whatever_one_outlier_came_before(
    skew: float,
    steady: list[float],
    outlier: float | None,
    where: int,
    jitter: float,
    timeout: int,
    gap: float,
) -> None:
    """A steady producer clock (any skew, small delays) and one event stamped anywhere.

    The outlier is a real one: far from the producer's clock and from ours (an event
    that agrees with our own clock is a witness, believed).
    """
    offsets = [skew + delay for delay in steady]
    if outlier is not None:
        assume(abs(outlier - skew) > 3.0 and abs(outlier) > 3.0)
        offsets.insert(where % (len(offsets) + 1), outlier)
    c = Clocked()
    c.send("agent.session.started", 0, ago=offsets[0], summary_normal="Hi.")
    for seq, offset in enumerate(offsets[1:], start=1):
        c.now += gap
        c.send("agent.state.changed", seq, ago=offset, from_state="thinking", to_state="thinking")
    c.now += gap
    c.ask("rpl_sure", len(offsets), ago=skew + jitter, timeout_seconds=timeout)
    assert c.open_tokens() == ["rpl_sure"], c.said
    assert not any(text.startswith("The time to accept is over") for text in c.said)
    c.now += 2.0
    outcome = c.engine.answer(UserAnswer("rpl_sure", decision="accept"), c.now)
    assert isinstance(outcome, ReplyReady) and outcome.message.decision == "accept", outcome


@settings(max_examples=examples(300), deadline=None)
@given(
    skew=SKEWS,
    steady=st.lists(st.floats(min_value=0.0, max_value=0.5), min_size=2, max_size=8),
    behind=st.lists(st.floats(min_value=0.0, max_value=7200.0), max_size=10),
    ahead=st.lists(SKEWS, max_size=3),
    seed=st.randoms(use_true_random=False),
    delay=st.floats(min_value=0.0, max_value=1200.0),
    timeout=st.integers(min_value=5, max_value=600),
    gap=st.floats(min_value=0.0, max_value=30.0),
)
def test_a_late_question_is_never_accepted_after_the_producers_deadline(
    skew: float,
    steady: list[float],
    behind: list[float],
    ahead: list[float],
    seed: Random,
    delay: float,
    timeout: int,
    gap: float,
) -> None:
    """Events stamped behind (stale, delayed, redelivered) and ahead, in any order.

    The producer's deadline, on our clock, is ``timeout - delay`` after the question
    arrived: accept closes by then; reject stays while the producer may still wait.
    """
    # The producer's clock is known as well as its least delayed event tells it: one of
    # the steady events came without delay.
    offsets = [skew, *(skew + d for d in steady)] + [skew + b for b in behind] + list(ahead)
    seed.shuffle(offsets)
    c = Clocked()
    for seq, offset in enumerate(offsets):
        c.now += gap
        c.send("agent.state.changed", seq, ago=offset, from_state="thinking", to_state="thinking")
    c.now += gap
    arrival = c.now
    c.ask("rpl_late", len(offsets), ago=skew + delay, timeout_seconds=timeout)
    producer_deadline = arrival + timeout - delay
    if delay < timeout:
        [prompt] = c.engine.pending_prompts()  # never expired while the producer waits
        assert prompt.deadline >= producer_deadline - 0.002
        assert prompt.accept_deadline <= producer_deadline + 0.002
        c.now = max(arrival, producer_deadline + 0.002)
        if c.now < prompt.deadline:
            late = c.engine.answer(UserAnswer("rpl_late", decision="accept"), c.now)
            assert isinstance(late, Refusal), late
    else:
        for prompt in c.engine.pending_prompts():
            assert not prompt.accepts(arrival + 0.002)  # (timestamps are to the millisecond)
