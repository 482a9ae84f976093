"""Issue 22 item 1: what must be said is never folded into a count (§4.1.3, §9.3.2(7)).

Only repeated urgent news of one kind from one producer is folded into "N more urgent
messages from X"; a question, a handoff, an errored, cancelled or completed session is
always said, and what is folded keeps its words in the transcript and in History.
Checked on an injected clock with hypothesis, and end to end over loopback WebSocket.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from announcer.engine.announcement import Announcement
from announcer.engine.folding import FOLDED_KIND
from announcer.engine.pipeline import Engine
from announcer.engine.settings import UserSettings
from announcer.engine.speech_commands import Speak
from tests.producer.live import running
from tests.reliability.flood_producer import LoopbackProducer, event
from tests.reliability.test_flood import critical_flood, hear, heard, listening
from tests.support.examples import examples

NEVER_FOLDED = ("agent.awaiting.", "agent.handoff.", "agent.session.")


def in_session(frame: str, session: str) -> str:
    data = json.loads(frame)
    data["session_id"] = session
    data["event_id"] = f"evt_{session[5:]}x{data['sequence_number']}"
    return json.dumps(data)


def errored(sequence: int, words: str) -> str:
    return event(
        sequence,
        "agent.session.errored",
        "critical",
        error_category="permanent",
        summary_normal=words,
    )


def handoff(sequence: int, words: str) -> str:
    return event(
        sequence,
        "agent.handoff.requested",
        "critical",
        reason=words,
        target_kind="human",
        summary_normal=words,
    )


def cancelled(sequence: int, words: str) -> str:
    return event(
        sequence,
        "agent.session.cancelled",
        "critical",
        cancelled_by="producer",
        summary_normal=words,
    )


def tool(sequence: int) -> str:
    return event(
        sequence,
        "agent.tool.invoked",
        "critical",
        tool="shell",
        summary_normal=f"Tool {sequence} runs.",
        risk_level="high",
    )


ACTIONS = st.lists(
    st.sampled_from(["alert", "tool", "errored", "handoff", "cancelled", "question"]),
    min_size=1,
    max_size=60,
)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(actions=ACTIONS, burst=st.integers(min_value=0, max_value=12))
def test_no_errored_handoff_or_question_is_ever_folded(actions: list[str], burst: int) -> None:
    engine = Engine(UserSettings(pace_wpm=600))
    skipped: list[Announcement] = []
    engine.scheduler.on_skip = skipped.append
    said: list[str] = []

    def run(commands: list[Any]) -> None:
        said.extend(c.announcement.text for c in commands if isinstance(c, Speak))

    run(engine.receive(event(0, "agent.session.started", summary_normal="Go."), "a", 0.0))
    sequence = 1
    must_say: list[str] = []
    questions: list[str] = []
    for frame in critical_flood(burst, start=sequence):
        run(engine.receive(frame, "a", 0.0))
    sequence += burst
    for index, action in enumerate(actions):
        if action == "alert":
            run(engine.receive(critical_flood(1, start=sequence)[0], "a", 0.0))
            sequence += 1
        elif action == "tool":
            run(engine.receive(tool(sequence), "a", 0.0))
            sequence += 1
        elif action == "question":
            token = f"rpl_q{index}"
            frame = json.loads(
                event(
                    sequence,
                    "agent.awaiting.confirmation",
                    "critical",
                    action=f"Question {index}.",
                    consequence="Something happens.",
                    reply_token=token,
                    timeout_seconds=300,
                    default_decision="reject",
                )
            )
            run(engine.receive(json.dumps(frame), "a", 0.0))
            questions.append(token)
            sequence += 1
        else:
            # its own session: an errored, cancelled or handoff one of many
            session = f"sess_x{index}"
            words = f"{action.capitalize()} number {index}."
            run(
                engine.receive(
                    in_session(
                        event(0, "agent.session.started", summary_normal="Starts."), session
                    ),
                    "a",
                    0.0,
                )
            )
            maker = {"errored": errored, "handoff": handoff, "cancelled": cancelled}[action]
            run(engine.receive(in_session(maker(1, words), session), "a", 0.0))
            must_say.append(words)
    # Nothing of a kind that must be said was folded, nor sent to History as skipped.
    assert not any(a.kind.startswith(NEVER_FOLDED) for a in skipped)
    # Every question is open (one is presented, the others wait their turn, counted).
    assert {p.reply_token for p in engine.pending_prompts()} == set(questions)
    # What was folded is in the transcript with its words, in History too.
    transcript = [entry.announcement for entry in engine.transcript()]
    for announcement in skipped:
        assert announcement in transcript
    # Drain the speech: every errored, cancelled and handoff is heard, with its words.
    for step in range(1, 400):
        speaking = engine.scheduler.speaking_id
        if speaking is None:
            break
        run(engine.on_speech_done(speaking, float(step)))
    for words in must_say:
        assert any(words in text for text in said), (words, said)


def test_folding_counts_only_news_of_one_kind() -> None:
    """Three waiting alerts fold the fourth alert, never a tool call of another kind."""
    engine = Engine(UserSettings(pace_wpm=600))
    skipped: list[Announcement] = []
    engine.scheduler.on_skip = skipped.append
    engine.receive(event(0, "agent.session.started", summary_normal="Go."), "a", 0.0)
    for frame in critical_flood(10):
        engine.receive(frame, "a", 0.0)
    engine.receive(tool(11), "a", 0.0)
    # Alert 1 cut "Go." off at once (issue 30 item 4); Alerts 2-4 wait.
    assert engine.status().folded == 6
    assert [a.text for a in skipped] == [
        f"Alert {n}: the disk is nearly full." for n in range(5, 11)
    ]
    queued = [a.text for a in engine.scheduler.queued_announcements()]
    assert any(text.startswith("Tool 11 runs.") for text in queued)
    assert any(a.kind == FOLDED_KIND for a in engine.scheduler.queued_announcements())


async def test_errored_and_handoff_after_a_critical_flood_are_heard_over_websocket(
    tmp_path: Path,
) -> None:
    """The audit's case: a flood of urgent alerts, then a valid errored and a handoff."""

    async def script(producer: LoopbackProducer, websocket: Any) -> None:
        await producer.send(websocket, event(0, "agent.session.started", summary_normal="Go."))
        for frame in critical_flood(300):
            await producer.send(websocket, frame)
        await producer.send(websocket, handoff(301, "A person must take over the payment."))
        await producer.send(
            websocket, in_session(event(0, "agent.session.started", summary_normal="B."), "sess_b")
        )
        await producer.send(
            websocket, in_session(errored(1, "The bank transfer failed."), "sess_b")
        )
        await producer.stop_flooding.wait()

    record = tmp_path / "speech.jsonl"
    async with LoopbackProducer(script) as producer:
        session, _recorder = listening(producer.url, record)
        async with running(session):
            await hear(record, "A person must take over the payment.", timeout=120)
            await hear(record, "The bank transfer failed.", timeout=120)
            folded = [t for t in heard(record) if "more urgent message" in t]
    # the flood itself was folded into counts (the user is not read 300 alerts)
    assert folded
    assert len([t for t in heard(record) if t.startswith("Alert ")]) < 300
    assert session.engine.status().folded > 0
