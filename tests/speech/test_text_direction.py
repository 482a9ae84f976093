"""Issue 22 item 8: §11.4 text_direction reaches braille and the Textual transcript."""

from __future__ import annotations

import json

from announcer.engine.announcement import Announcement, directed
from announcer.engine.pipeline import Engine
from announcer.engine.settings import UserSettings
from announcer.engine.speech_commands import Speak
from announcer.speech.backend import VoiceSettings
from announcer.speech.screenreader import ScreenReaderBackend
from tests.speech.test_screenreader import Done, FakeNvda

ARABIC = "تم نقل الملف."


def started(direction: str) -> str:
    return json.dumps(
        {
            "@context": "https://aaep-protocol.org/context/v1",
            "type": "aaep:agent.session.started",
            "event_id": "evt_rtl1",
            "session_id": "sess_rtl1",
            "timestamp": "2026-01-01T00:00:00Z",
            "producer": {"agent_id": "mover"},
            "localization_hints": {"primary_language": "ar", "text_direction": direction},
            "summary_normal": ARABIC,
        }
    )


def test_the_declared_direction_is_carried_on_the_producers_words() -> None:
    engine = Engine(UserSettings(languages=["ar"]))
    said = [
        c.announcement for c in engine.receive(started("rtl"), "s", 0.0) if isinstance(c, Speak)
    ]
    said += engine.scheduler.queued_announcements()
    [words] = [a for a in said if a.text == ARABIC]
    assert words.direction == "rtl"


def test_braille_gets_the_text_isolated_in_its_direction_and_speech_the_plain_text() -> None:
    nvda = FakeNvda()
    backend = ScreenReaderBackend([nvda])
    backend.start()
    backend.speak(Announcement(ARABIC, language="ar", direction="rtl"), VoiceSettings(), Done())
    assert nvda.spoken == [(ARABIC, False)]  # speech is linear (§11.4.1)
    assert nvda.brailled == ["\u2067" + ARABIC + "\u2069"]


def test_directed_isolates_each_declared_direction_and_leaves_the_rest() -> None:
    assert directed("abc", "ltr") == "\u2066abc\u2069"
    assert directed("abc", "auto") == "\u2068abc\u2069"
    assert directed("abc", None) == "abc"
