"""Issue 20: the agent's piled-up words are said faster, within the user's maximum, by
every backend that controls its rate."""

from __future__ import annotations

from announcer.engine.announcement import Announcement
from announcer.engine.scheduler import estimated_seconds
from announcer.speech.backend import VoiceSettings, paced_voice
from announcer.speech.paced import PacedBackend, SimulatedClock

TEXT = "A sentence of the agent's answer that has exactly twelve words in it."


def test_a_voice_with_a_rate_is_sped_up_and_one_without_keeps_the_engines() -> None:
    faster = Announcement(TEXT, kind="agent.output.streaming", rate_factor=1.5)
    assert paced_voice(VoiceSettings(rate_wpm=200), faster).rate_wpm == 300
    assert paced_voice(VoiceSettings(rate_wpm=500), faster).rate_wpm == 600  # the ceiling
    assert paced_voice(VoiceSettings(), faster).rate_wpm is None
    same = Announcement(TEXT, kind="agent.output.streaming")
    assert paced_voice(VoiceSettings(rate_wpm=200), same) == VoiceSettings(rate_wpm=200)


def test_the_paced_backend_takes_less_time_for_a_faster_utterance() -> None:
    clock = SimulatedClock()
    backend = PacedBackend(clock, rate_wpm=180)
    backend.start()
    ended: list[float] = []
    backend.speak(
        Announcement(TEXT, kind="agent.output.streaming", rate_factor=1.5),
        VoiceSettings(),
        lambda: ended.append(clock.now()),
    )
    while not ended:
        deadline = clock.next_deadline()
        assert deadline is not None
        clock.advance_to(deadline)
    assert ended[0] == estimated_seconds(TEXT, 270)
    assert ended[0] < estimated_seconds(TEXT, 180)
