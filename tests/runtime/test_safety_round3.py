"""Issue 22 end to end: the producer's side over real loopback sockets.

Our scripted producer (the ``scripted_live`` fixture, tests/support/scripted.py) sends
exactly the frames a test gives it and keeps every reply it receives; the live session's
speech goes to the ``jsonl`` record, which is what the user hears.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from announcer.engine.prompts import UserAnswer
from announcer.engine.settings import UserSettings
from tests.producer.live import wait_for
from tests.support.scripted import KINDS, OpenScriptedLive, confirmation, event, started

# -- item 2: a clock that cannot be poisoned -------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
async def test_an_event_stamped_an_hour_ahead_leaves_the_next_question_answerable(
    kind: str, scripted_live: OpenScriptedLive
) -> None:
    sid = "sess_skew"
    question = confirmation(sid, timeout_seconds=30, action="Pay the invoice")
    async with scripted_live(kind, record=True) as live:
        live.core.push(
            started(sid),
            event("agent.state.changed", sid, ago=-3600.0, from_state="idle", to_state="thinking"),
            question,
        )
        prompt = await live.recorder.wait_prompt()
        await live.hears("Pay the invoice")
        outcome = await live.session.answer_async(UserAnswer(prompt.reply_token, decision="reject"))
        assert outcome.sent, outcome.message
        await wait_for(lambda: live.core.wire)
    assert [(m["reply_token"], m["decision"]) for m in live.core.wire] == [
        (question["reply_token"], "reject")
    ]
    assert not any("time ran out" in text for text in live.spoken())


@pytest.mark.parametrize("kind", KINDS)
async def test_after_an_event_stamped_far_behind_a_late_question_takes_reject_but_not_accept(
    kind: str, scripted_live: OpenScriptedLive
) -> None:
    """One event stamped an hour in the past, then a question 90 s under way of its 60.

    The hour keeps the question from being expired on arrival (the producer's clock
    might be that slow, so it may still wait: reject is sent); by the clock its other
    events confirm, its deadline passed 30 s ago: an accept could race the producer's
    default, so nothing is sent for it and the user hears why.
    """
    sid = "sess_late"
    question = confirmation(
        sid, timeout_seconds=60, ago=90.0, action="Transfer the deposit", risk_level="medium"
    )
    async with scripted_live(kind, record=True) as live:
        live.core.push(
            started(sid),
            event("agent.state.changed", sid, ago=3600.0, from_state="idle", to_state="thinking"),
            question,
        )
        prompt = await live.recorder.wait_prompt()
        await live.hears("The time to accept is over")
        accepted = await live.session.answer_async(
            UserAnswer(prompt.reply_token, decision="accept", event_id=prompt.event_id)
        )
        assert not accepted.sent
        assert accepted.message.startswith("Too late to accept"), accepted.message
        rejected = await live.session.answer_async(
            UserAnswer(prompt.reply_token, decision="reject", event_id=prompt.event_id)
        )
        assert rejected.sent, rejected.message
        await wait_for(lambda: live.core.wire)
    # What the producer received: the reject only, never an accept.
    assert [(m["reply_token"], m["decision"]) for m in live.core.wire] == [
        (question["reply_token"], "reject")
    ]
    assert not any("came after its time ran out" in text for text in live.spoken())


# -- item 3: x-announcer is ours, never an AAEP producer's -----------------------------------


@pytest.mark.parametrize("kind", KINDS)
async def test_an_aaep_producer_cannot_use_announcers_own_extension(
    kind: str, scripted_live: OpenScriptedLive
) -> None:
    """A 30 s default-accept question claiming "no time limit" and "allow from now on"."""
    sid = "sess_ext"
    question = confirmation(
        sid,
        timeout_seconds=30,
        default_decision="accept",
        action="Wire the savings to a new account",
        extensions={"x-announcer": {"no_timeout": True, "always": ["accept"]}},
    )
    question["@context"] = [question["@context"], "urn:announcer:x-announcer:v1"]
    async with scripted_live(kind, record=True) as live:
        live.core.push(started(sid), question)
        prompt = await live.recorder.wait_prompt()
        await live.hears("Wire the savings")
    assert prompt.event.extensions is None
    said = " ".join(live.spoken())
    assert "no time limit" not in said
    assert "from now on" not in said.lower()
    assert "30 seconds" in said
    codes = {d.reasons for d in live.session.engine.diagnostics.recent()}
    assert ("extension.untrusted",) in codes


# -- item 4: voiding only on evidence --------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
async def test_a_change_naming_no_question_voids_neither_of_two(
    kind: str, scripted_live: OpenScriptedLive
) -> None:
    sid = "sess_two"
    first = confirmation(sid, 2, action="Pay the rent")
    second = confirmation(sid, 3, action="Pay the phone bill")
    async with scripted_live(kind, record=True) as live:
        live.core.push(
            started(sid, 0),
            event("agent.state.changed", sid, 1, from_state="thinking", to_state="awaiting_input"),
            first,
            second,
            event("agent.state.changed", sid, 4, from_state="awaiting_input", to_state="thinking"),
        )
        await live.hears("The agent went on working; your question is still open.")
        await live.recorder.wait_until(lambda: len(live.recorder.prompts) >= 1)
        outcome = await live.session.answer_async(
            UserAnswer(first["reply_token"], decision="reject")
        )
        assert outcome.sent, outcome.message
        await wait_for(lambda: live.core.wire)
    assert [(m["reply_token"], m["decision"]) for m in live.core.wire] == [
        (first["reply_token"], "reject")
    ]
    assert not any("No answer needed any more" in text for text in live.spoken())


@pytest.mark.parametrize("kind", KINDS)
async def test_a_question_resolved_elsewhere_is_said_once_and_a_key_sends_nothing(
    kind: str, scripted_live: OpenScriptedLive
) -> None:
    sid = "sess_else"
    question = confirmation(sid, 1, action="Transfer 500 dollars")
    async with scripted_live(kind, record=True) as live:
        live.core.push(started(sid, 0), question)
        await live.hears("Transfer 500 dollars")
        live.core.push(
            event(
                "agent.state.changed",
                sid,
                2,
                from_state="awaiting_input",
                to_state="calling_tool",
                correlation_id=question["event_id"],
                summary_normal="User accepted the transfer; proceeding.",
            )
        )
        await live.hears("Answered elsewhere")
        outcome = await live.session.answer_async(
            UserAnswer(question["reply_token"], decision="accept")
        )
    assert not outcome.sent
    assert "answered elsewhere" in outcome.message
    assert live.core.wire == []
    assert sum("Answered elsewhere" in text for text in live.spoken()) == 1


# -- item 5 (and 11): malformed questions and errors keep their words ------------------------


@pytest.mark.parametrize("kind", KINDS)
async def test_a_malformed_confirmation_and_an_invalid_error_are_said_with_their_words(
    kind: str, scripted_live: OpenScriptedLive
) -> None:
    sid = "sess_bad"
    bad = confirmation(
        sid,
        1,
        action="Close the savings account",
        consequence="The balance moves to checking.",
        risk_level="high",
        irreversible=True,
        default_decision="accept-ish",
        timeout_seconds=120,
    )
    # as the reference producers send it: error_message is not in the schema
    errored = event(
        "agent.session.errored",
        "sess_other",
        1,
        urgency="critical",
        error_category="transient",
        summary_normal="Error: ConnectionError",
        error_message="the bank's server went away",
    )
    async with scripted_live(kind, record=True) as live:
        live.core.push(started(sid, 0), bad, started("sess_other", 0), errored)
        prompt = await live.recorder.wait_prompt()
        await live.hears("only reject is offered")
        await live.hears("Error: ConnectionError")
        assert prompt.malformed
        outcome = await live.session.answer_async(UserAnswer(prompt.reply_token, decision="reject"))
        assert outcome.sent, outcome.message
        await wait_for(lambda: live.core.wire)
    assert [(m["reply_token"], m["decision"]) for m in live.core.wire] == [
        (bad["reply_token"], "reject")
    ]
    said = " ".join(live.spoken())
    for words in (
        "Close the savings account",
        "The balance moves to checking.",
        "High risk.",
        "This cannot be undone.",
        "it will be rejected",
        "the bank's server went away",
    ):
        assert words in said, (words, said)
    lines = [json.loads(line) for line in live.record.read_text(encoding="utf-8").splitlines()]
    error_lines = [e for e in lines if "Error: ConnectionError" in e.get("text", "")]
    assert error_lines and all(e.get("urgency", "critical") == "critical" for e in error_lines)


# -- item 7: the first language of the chain that the event offers --------------------------


@pytest.mark.parametrize("kind", KINDS)
async def test_a_spanish_variant_is_spoken_in_spanish_to_a_french_then_spanish_listener(
    kind: str, scripted_live: OpenScriptedLive
) -> None:
    settings = UserSettings(pace_wpm=600, languages=["fr", "es"])
    sid = "sess_lang"
    news = event(
        "agent.session.started",
        sid,
        0,
        summary_normal="Starting the monthly report.",
        summary_normal_es="Empezando el informe mensual.",
    )
    async with scripted_live(kind, record=True, settings=settings) as live:
        live.core.push(news)
        await live.hears("Empezando el informe mensual.")
    lines = [json.loads(line) for line in live.record.read_text(encoding="utf-8").splitlines()]
    [said] = [e for e in lines if e.get("text") == "Empezando el informe mensual."]
    assert said["language"].startswith("es")
    assert not any("Starting the monthly report" in e.get("text", "") for e in lines)


# -- item 8: coalesce_hint none is not cut at our sentence ends (§4.3.3) -------------------


@pytest.mark.parametrize("kind", KINDS)
async def test_none_chunks_wait_for_the_producers_boundary(
    kind: str, scripted_live: OpenScriptedLive
) -> None:
    sid = "sess_none"

    def chunk(seq: int, text: str, position: int, hint: str, complete: bool = False) -> Any:
        return event(
            "agent.output.streaming",
            sid,
            seq,
            chunk=text,
            position=position,
            complete=complete,
            coalesce_hint=hint,
            output_id="out_n1",
        )

    async with scripted_live(kind, record=True) as live:
        live.core.push(
            started(sid, 0),
            chunk(1, "Dr. Smith paid 3. ", 0, "none"),
            chunk(2, "Then the bank closed.", 18, "none"),
            event(
                "agent.state.changed",
                sid,
                3,
                from_state="thinking",
                to_state="thinking",
                summary_normal="Marker one.",
            ),
        )
        await live.hears("Marker one.")
        assert not any("Smith" in text for text in live.spoken())
        live.core.push(chunk(4, " Done", 39, "completion", complete=True))
        await live.hears("Done")
    said = " ".join(t for t in live.spoken() if "Smith" in t or "bank" in t or "Done" in t)
    assert "Dr. Smith paid 3. Then the bank closed." in said


# -- item 8: every spoken interpolation is sanitised ----------------------------------------


@pytest.mark.parametrize("kind", KINDS)
async def test_a_producer_name_with_escape_codes_never_reaches_speech(
    kind: str, scripted_live: OpenScriptedLive
) -> None:
    evil = {"agent_id": "evil", "agent_name": "Evil\x1b[31m\u202eAgent\x07"}
    sid = "sess_evil"
    frames = [
        started(sid, 0),
        confirmation(sid, 2, action="First thing"),
        confirmation(sid, 3, action="Second thing"),  # "... The latest is from <name>."
    ]
    for frame in frames:
        frame["producer"] = evil
    async with scripted_live(kind, record=True) as live:
        live.core.push(*frames)
        await live.hears("The latest is from")
    raw = live.record.read_text(encoding="utf-8")
    assert "\x1b" not in raw and "\\u001b" not in raw
    assert "\u202e" not in raw and "\\u202e" not in raw
    assert "\x07" not in raw and "\\u0007" not in raw
    assert any("EvilAgent" in t or "Evil Agent" in t for t in live.spoken())


# -- item 8: a producer over its agreed rate is logged (§10 T4) ------------------------------


@pytest.mark.parametrize("kind", KINDS)
async def test_a_producer_over_its_agreed_rate_is_logged(
    kind: str, scripted_live: OpenScriptedLive
) -> None:
    settings = UserSettings(pace_wpm=600, max_events_per_second=2)
    sid = "sess_rate"
    burst = [
        event("agent.tool.invoked", sid, n, tool="read_file", summary_normal=f"Reading {n}.")
        for n in range(1, 41)
    ]
    async with scripted_live(kind, record=True, settings=settings) as live:
        [sub] = list(live.core.subscriptions.values())
        assert sub.capabilities["max_events_per_second"] == 2
        live.core.push(started(sid, 0), *burst)
        await wait_for(
            lambda: any(
                "rate.exceeded" in r.reasons for r in live.session.engine.diagnostics.recent()
            )
        )
    [logged] = [r for r in live.session.engine.diagnostics.recent() if "rate.exceeded" in r.reasons]
    assert "max_events_per_second" in " ".join(logged.details)
    report = "\n".join(live.session.diagnostics_report())
    assert "rate.exceeded" in report or "faster than" in report
