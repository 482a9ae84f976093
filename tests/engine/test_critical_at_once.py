"""Issue 30 item 4 (§2.2.9): critical news is heard within half a second of arriving.

It cuts off whatever lower-urgency speech is being said (the agent's words, a normal
question, its own session's news) at the end of the word in progress; the sentence it
cut off is said again whole after it, and the agent's words are never dropped. Played on
an injected clock: each utterance lasts its estimated time at the user's rate.
"""

from __future__ import annotations

from announcer.engine.announcement import Announcement, Urgency
from announcer.engine.scheduler import SpeechScheduler, estimated_seconds
from announcer.engine.settings import UserSettings

from .test_scheduler_classes import QUESTION, Voice, question, status, words

LONG = "The first sentence of the answer takes quite a while to say out loud."
WITHIN = 0.5


def error(text: str, session: str) -> Announcement:
    return Announcement(
        text,
        urgency=Urgency.CRITICAL,
        interrupt=True,
        session_id=session,
        kind="agent.session.errored",
        event_id=f"e:{text}",
    )


def started_at(voice: Voice, text: str) -> float:
    return next(h.started for h in voice.heard if h.announcement.text == text)


def on_a_word_boundary(voice: Voice, cut_text: str, cut_at: float, pace_wpm: int) -> bool:
    """Whether ``cut_at`` ends a word of ``cut_text`` (said from its start, evenly)."""
    begun = started_at(voice, cut_text)
    per_word = (estimated_seconds(cut_text, pace_wpm) - 0.25) / len(cut_text.split())
    words_said = (cut_at - begun) / per_word
    return abs(words_said - round(words_said)) < 1e-6


def test_a_critical_question_cuts_the_agents_sentence_at_a_word_boundary() -> None:
    voice = Voice(SpeechScheduler())
    voice.submit(words(LONG, "s2"), 0.0)
    voice.submit(words("The second sentence waits behind it.", "s2"), 0.1)
    voice.submit(question("Allow git push?"), 1.1)
    voice.play_out()
    asked = started_at(voice, "Allow git push?")
    assert 1.1 <= asked <= 1.1 + WITHIN
    assert voice.cancels == ["barge-in"]
    assert on_a_word_boundary(voice, LONG, asked, 180)
    # The cut sentence is said again whole after the question; nothing is dropped.
    assert voice.texts() == [
        LONG,
        "Allow git push?",
        LONG,
        "The second sentence waits behind it.",
    ]
    assert voice.scheduler.drops == {}


def test_a_critical_error_cuts_its_own_sessions_words_and_they_are_said_again() -> None:
    voice = Voice(SpeechScheduler())
    voice.submit(words(LONG, "s1"), 0.0)
    voice.submit(error("Error. The disk is full.", "s1"), 2.0)
    voice.play_out()
    assert 2.0 <= started_at(voice, "Error. The disk is full.") <= 2.0 + WITHIN
    assert voice.texts() == [LONG, "Error. The disk is full.", LONG]


def test_a_critical_error_cuts_a_normal_question_which_is_asked_again_after() -> None:
    for after_interrupt in ("resume", "drop"):
        voice = Voice(SpeechScheduler(UserSettings(after_interrupt=after_interrupt)))
        asked = Announcement(
            "Which of the three hotels do you prefer for the two nights?",
            session_id="s1",
            kind=QUESTION,
            event_id="q1",
        )
        voice.submit(asked, 0.0)
        voice.submit(status("Editing app.py.", session="s3"), 0.2)
        voice.submit(error("Error. The weather service did not answer.", "s2"), 1.0)
        voice.play_out()
        assert 1.0 <= started_at(voice, "Error. The weather service did not answer.") <= 1.5
        # The question is never dropped, whatever ``after_interrupt`` says.
        assert voice.texts()[:3] == [
            asked.text,
            "Error. The weather service did not answer.",
            asked.text,
        ], after_interrupt


def test_a_critical_error_cuts_its_own_sessions_status_line_at_once() -> None:
    voice = Voice(SpeechScheduler())
    voice.submit(status("Looking up the weather in Lyon and in Paris.", session="s2"), 0.0)
    voice.submit(error("Error. The weather service did not answer.", "s2"), 0.3)
    voice.play_out()
    assert started_at(voice, "Error. The weather service did not answer.") <= 0.8
    # Its own session's tool start is moot after its error: not said again, counted.
    assert voice.texts() == [
        "Looking up the weather in Lyon and in Paris.",
        "Error. The weather service did not answer.",
        "1 more: 1 tool call.",
    ]


def test_critical_news_still_waits_for_other_critical_speech_and_a_keys_answer() -> None:
    voice = Voice(SpeechScheduler())
    voice.submit(question("Allow the transfer of 900 euros to Bob?"), 0.0)
    voice.submit(error("Error. No weather.", "s2"), 0.5)
    voice.play_out()
    assert voice.cancels == []
    assert voice.texts() == ["Allow the transfer of 900 euros to Bob?", "Error. No weather."]
