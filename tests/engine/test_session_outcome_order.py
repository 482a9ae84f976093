"""Issue 30 item 5: a session's outcome is heard in order.

"Trip planned. Session complete." was heard 22-26 s late, after the next session's news.
A session's outcome may wait for urgent news, never for ordinary news of a later
session, and never by more than the sentence being said. Played on an injected clock.
"""

from __future__ import annotations

from announcer.engine.announcement import Announcement, Urgency
from announcer.engine.scheduler import SpeechScheduler

from .test_scheduler_classes import Voice, status, words

DONE = "Trip planned. Session complete."


def critical(text: str, session: str, kind: str) -> Announcement:
    return Announcement(
        text,
        urgency=Urgency.CRITICAL,
        interrupt=True,
        session_id=session,
        kind=kind,
        event_id=f"c:{text}",
    )


def heard(voice: Voice, text: str) -> tuple[int, float]:
    index = voice.texts().index(text)
    return index, voice.heard[index].started


def test_the_outcome_comes_before_a_later_sessions_start_even_with_its_error() -> None:
    """The demo's end: the weather session's start no longer goes before the trip's end
    as the lead-up of its error."""
    voice = Voice(SpeechScheduler())
    voice.submit(status("Booked. Reference LYO 4821.", "agent.tool.completed", "trip"), 0.0)
    voice.submit(critical("Handing off to a person.", "trip", "agent.handoff.requested"), 0.5)
    voice.submit(status(DONE, "agent.session.completed", "trip"), 1.0)
    voice.submit(status("New session: checking the weather.", "agent.session.started", "wx"), 1.8)
    voice.submit(status("Looking up the weather.", "agent.tool.invoked", "wx"), 2.3)
    voice.submit(critical("Error. No weather.", "wx", "agent.session.errored"), 2.9)
    voice.play_out()
    done_index, _ = heard(voice, DONE)
    start_index, _ = heard(voice, "New session: checking the weather.")
    assert done_index < start_index, voice.texts()


def test_the_outcome_waits_only_for_the_sentence_being_said() -> None:
    """Another agent's answer was already waiting: the outcome still goes next."""
    voice = Voice(SpeechScheduler())
    voice.submit(words("The first sentence of the other agent's long answer.", "other"), 0.0)
    for n in range(3):
        voice.submit(words(f"Sentence {n} of that answer, waiting its turn.", "other"), 0.1)
    voice.submit(status(DONE, "agent.session.completed", "trip"), 0.5)
    voice.play_out()
    first_end = voice.heard[0].ended
    index, started = heard(voice, DONE)
    assert index == 1 and started == first_end, voice.texts()


def test_the_outcome_keeps_its_own_sessions_words_before_it() -> None:
    voice = Voice(SpeechScheduler())
    voice.submit(words("Another agent is talking for a while now.", "other"), 0.0)
    voice.submit(words("Another sentence of the other agent.", "other"), 0.1)
    voice.submit(words("The trip is all set.", "trip"), 0.2)
    voice.submit(status(DONE, "agent.session.completed", "trip"), 0.3)
    voice.play_out()
    assert voice.texts()[:3] == [
        "Another agent is talking for a while now.",
        "The trip is all set.",
        DONE,
    ]
