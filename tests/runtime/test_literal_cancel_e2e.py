"""Issue 29 item 8 end to end: §6.8's literal cancel over a real loopback transport.

The scripted producer (tests/support/scripted.py) sends exactly the frames a
test pushes and keeps every reply it receives; the jsonl speech record is what the user
hears. A return to ``thinking`` from ``calling_tool`` while a question waits cancels it
(§6.8): the user hears one short notice, and no reply for it ever reaches the producer.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from announcer.engine.prompts import UserAnswer
from tests.producer.live import wait_for
from tests.support.scripted import KINDS, OpenScriptedLive, confirmation, started, state
from tests.support.speech_record import spoken_in

WITHDRAWN = ("No answer needed any more", "Withdrawn before you could answer")


def withdrawals(record: Path) -> list[str]:
    return [t for t in spoken_in(record) if t.startswith(WITHDRAWN)]


@pytest.mark.parametrize("kind", KINDS)
async def test_a_literal_cancel_withdraws_the_question_and_nothing_is_sent(
    kind: str, scripted_live: OpenScriptedLive
) -> None:
    sid = "sess_literal"
    question = confirmation(
        sid, 2, action="Delete the old backups", default_decision="accept", timeout_seconds=300
    )
    async with scripted_live(kind, record=True) as live:
        live.core.push(started(sid, 0), state(sid, 1, "thinking", "calling_tool"), question)
        await live.recorder.wait_prompt()
        await live.hears("Delete the old backups")
        live.core.push(state(sid, 3, "calling_tool", "thinking"))
        await wait_for(lambda: bool(withdrawals(live.record)))
        outcome = await live.session.answer_async(
            UserAnswer(question["reply_token"], decision="accept", event_id=question["event_id"])
        )
        assert not outcome.sent, outcome.message
    assert live.core.wire == []
    assert len(withdrawals(live.record)) == 1, live.spoken()
    assert "Delete the old backups" in withdrawals(live.record)[0]
    said = " ".join(live.spoken())
    assert "goes ahead" not in said and "Sent" not in said


@pytest.mark.parametrize("kind", KINDS)
async def test_with_two_questions_the_cancel_of_the_second_sends_nothing_for_it(
    kind: str, scripted_live: OpenScriptedLive
) -> None:
    sid = "sess_twoliteral"
    first = confirmation(sid, 2, action="Copy the report")
    second = confirmation(sid, 3, action="Email the report to everyone")
    async with scripted_live(kind, record=True) as live:
        live.core.push(started(sid, 0), state(sid, 1, "thinking", "awaiting_input"), first)
        await live.hears("Copy the report")
        answered = await live.session.answer_async(
            UserAnswer(first["reply_token"], decision="accept", event_id=first["event_id"])
        )
        assert answered.sent, answered.message
        await wait_for(lambda: live.core.wire)
        live.core.push(second)
        await live.hears("Email the report to everyone")
        # the first one's resolution (§6.7.2), then §6.8's cancel of the second
        live.core.push(state(sid, 4, "awaiting_input", "calling_tool"))
        live.core.push(state(sid, 5, "calling_tool", "thinking"))
        await wait_for(lambda: bool(withdrawals(live.record)))
        outcome = await live.session.answer_async(
            UserAnswer(second["reply_token"], decision="accept", event_id=second["event_id"])
        )
        assert not outcome.sent, outcome.message
    assert [(m["reply_token"], m["decision"]) for m in live.core.wire] == [
        (first["reply_token"], "accept")
    ]
    assert len(withdrawals(live.record)) == 1, live.spoken()
    assert "Email the report" in withdrawals(live.record)[0]
