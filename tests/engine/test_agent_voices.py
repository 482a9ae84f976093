"""Several agents, several voices (issue 33, item 4): the sans-I/O choice of voices and names."""

from __future__ import annotations

import json

from announcer.engine.agent_voices import agent_voices, distinct_names
from announcer.engine.announcement import Announcement
from announcer.engine.speech_commands import Speak
from announcer.speech.backend import VoiceSettings
from announcer.speech.driver import SpeechDriver
from announcer.speech.jsonl import JsonlBackend

INSTALLED = ["en-us", "en-gb-x-rp", "en-scottish"]


def test_each_agent_gets_a_distinct_installed_voice_after_the_first_keeps_the_users():
    voices = agent_voices(["claude", "codex", "gemini"], {}, INSTALLED, own="en-us")
    assert voices == {"claude": None, "codex": "en-gb-x-rp", "gemini": "en-scottish"}
    assert len({v for v in voices.values() if v}) == 2


def test_a_voice_the_user_chose_is_kept_and_never_given_to_another_agent():
    voices = agent_voices(["claude", "codex"], {"Codex": "en-gb-x-rp"}, INSTALLED, own="en-us")
    assert voices == {"claude": None, "codex": "en-gb-x-rp"}
    voices = agent_voices(["a", "b", "c"], {"a": "en-us"}, INSTALLED, own="en-us")
    # a has the user's own voice, so b does not share it
    assert voices == {"a": "en-us", "b": "en-gb-x-rp", "c": "en-scottish"}


def test_too_few_voices_leave_the_rest_on_the_users_voice():
    assert agent_voices(["a", "b", "c"], {}, ["en-us"], own="en-us") == {
        "a": None,
        "b": None,
        "c": None,
    }


def test_the_name_said_is_cut_to_what_tells_the_agents_apart():
    assert distinct_names(["Claude Code", "Codex CLI"]) == {
        "Claude Code": "Claude",
        "Codex CLI": "Codex",
    }
    assert distinct_names(["claude-code main", "claude-code review"]) == {
        "claude-code main": "claude-code main",
        "claude-code review": "claude-code review",
    }
    assert distinct_names(["claude", "claude 2"]) == {"claude": "claude", "claude 2": "claude 2"}
    assert distinct_names(["Claude Code"]) == {"Claude Code": "Claude Code"}


def test_the_record_carries_the_agents_voice_and_our_own_words_keep_the_users(tmp_path):
    path = tmp_path / "speech.jsonl"
    with path.open("w", encoding="utf-8") as stream:
        driver = SpeechDriver(JsonlBackend(stream, clock=lambda: 0.0), VoiceSettings("en-us"))
        driver.producer_voices["beta"] = ("en-gb-x-rp", "en")
        driver.execute(
            [
                Speak(1, Announcement("Hello.", producer_id="beta", kind="agent.message")),
                Speak(2, Announcement("Sent to beta.", producer_id="beta", kind="system.ui")),
                Speak(3, Announcement("Hi.", producer_id="alpha", kind="agent.message")),
                # beta's words in Spanish: its English voice would misread them
                Speak(
                    4,
                    Announcement("Hola.", language="es", producer_id="beta", kind="agent.message"),
                ),
            ]
        )
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r.get("voice") for r in records] == ["en-gb-x-rp", "en-us", "en-us", "en-us"]
