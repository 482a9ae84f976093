"""The Textual UI's engine session at the pace of a real voice (issue 14 c, d).

``EngineSession`` is what the dialogs speak through; here its backend is the
``paced`` one on a simulated clock, so each utterance takes its real time.
"""

from __future__ import annotations

from announcer.engine.pipeline import Engine
from announcer.engine.prompts import UserAnswer
from announcer.speech.paced import PacedBackend, SimulatedClock
from tests.engine.aaep import confirmation, frame
from tests.support.engine_session import EngineSession
from tests.support.speech_record import heard


def make_session() -> tuple[EngineSession, PacedBackend, SimulatedClock]:
    clock = SimulatedClock()
    backend = PacedBackend(clock)
    engine = Engine()
    engine.set_subscription("local", "sub_local")
    session = EngineSession(engine, backend, clock=clock.now, send_reply=lambda p, w: _sent())
    return session, backend, clock


def _sent():  # type: ignore[no-untyped-def]
    from announcer.ui.tui.session import AnswerOutcome

    return AnswerOutcome(True, "Sent.")


def let_time_pass(session: EngineSession, clock: SimulatedClock, until: float) -> None:
    while clock.now() < until:
        clock.advance_to(min(until, clock.now() + 0.1))
        session._drain()  # what the voice finished meanwhile (the event loop's job)


def test_the_dialogs_keys_are_never_said_after_the_question_is_answered() -> None:
    session, backend, clock = make_session()
    session.receive(confirmation("rpl_ui1"))
    prompt = session.engine.pending_prompts()[0]
    session.say_after_question(prompt, "Asked by Test. Press A to accept, or R to reject.")
    let_time_pass(session, clock, 2.0)  # the question is still being read
    assert session.engine.question_started_at(prompt) == 0.0
    outcome = session.answer(UserAnswer("rpl_ui1", decision="reject"))
    assert outcome.sent
    session.speak("Sent: reject.")
    let_time_pass(session, clock, 60.0)
    assert backend.utterances[0].stopped  # the question was cut off by the answer
    later = heard(backend, since=2.0)
    assert later == ["Sent: reject."]


def test_the_answer_to_a_key_is_said_at_once_over_queued_news() -> None:
    session, backend, clock = make_session()
    for index in range(6):
        session.receive(
            frame(
                "agent.tool.completed",
                tool="t",
                status="success",
                summary_normal=f"Result {index} is in.",
            )
        )
    let_time_pass(session, clock, 0.5)
    session.speak("9 is not a choice; there are 3.")
    assert backend.utterances[-1].announcement.text == "9 is not a choice; there are 3."
    assert backend.utterances[-1].started == clock.now()
