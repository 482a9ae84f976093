"""When a live session is over (runtime.ending), on an injected clock with a real engine.

The session asks only when nothing is being said and no frame waits; these tests give the
decision the same facts the session does.
"""

from __future__ import annotations

from announcer.engine.pipeline import Engine
from announcer.engine.settings import UserSettings
from announcer.engine.speech_commands import Speak, SpeechCommand
from announcer.runtime.ending import DONE_GRACE_SECONDS, DRAIN_SECONDS, SessionEnd
from tests.engine.aaep import confirmation, frame, started


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def said_through(engine: Engine, commands: list[SpeechCommand], clock: Clock) -> None:
    """Every utterance the engine starts ends at once (a voice that says it instantly)."""
    while commands:
        speaks = [c for c in commands if isinstance(c, Speak)]
        commands = []
        for speak in speaks:
            commands += engine.on_speech_done(speak.utterance_id, clock.now)


def test_once_every_source_finished_queued_speech_is_said_first_within_a_deadline() -> None:
    clock = Clock()
    ending = SessionEnd(Engine(UserSettings()), clock)
    assert ending.over(all_finished=True, speech_pending=False, exit_when_done=False)
    ending = SessionEnd(Engine(UserSettings()), clock)
    assert not ending.over(all_finished=True, speech_pending=True, exit_when_done=False)
    clock.now = DRAIN_SECONDS - 0.5  # a backend that never reports an end...
    assert not ending.over(all_finished=True, speech_pending=True, exit_when_done=False)
    clock.now = DRAIN_SECONDS + 0.5  # ...cannot keep the session for ever
    assert ending.over(all_finished=True, speech_pending=True, exit_when_done=False)


def test_exit_when_done_waits_for_events_an_end_and_a_quiet_moment() -> None:
    clock = Clock()
    engine = Engine(UserSettings())
    ending = SessionEnd(engine, clock)
    facts = {"all_finished": False, "speech_pending": False, "exit_when_done": True}
    clock.now = 10.0
    assert not ending.over(**facts)  # nothing heard yet: a producer may still be starting
    said_through(engine, engine.receive(started(), "src", clock.now), clock)
    ending.frame_read()
    clock.now += DONE_GRACE_SECONDS + 1
    assert not ending.over(**facts)  # its session is still open
    said_through(
        engine,
        engine.receive(frame("agent.session.completed", summary_normal="Done."), "src", clock.now),
        clock,
    )
    ending.frame_read()
    clock.now += DONE_GRACE_SECONDS - 0.5
    assert not ending.over(**facts)  # a frame came a moment ago
    clock.now += 1.0
    assert ending.over(**facts)
    assert not ending.over(**{**facts, "exit_when_done": False})  # listen goes on


def test_an_open_question_keeps_the_session_whatever_the_quiet() -> None:
    clock = Clock()
    engine = Engine(UserSettings())
    ending = SessionEnd(engine, clock)
    said_through(engine, engine.receive(confirmation(), "src", clock.now), clock)
    ending.frame_read()
    clock.now += 60.0
    assert engine.pending_prompts()
    assert not ending.over(all_finished=False, speech_pending=False, exit_when_done=True)


def test_the_demo_is_told_it_is_over_once() -> None:
    ending = SessionEnd(Engine(UserSettings()), Clock())
    assert ending.tell_over_once()
    assert not ending.tell_over_once()
