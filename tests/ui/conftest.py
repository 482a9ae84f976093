"""Fixtures for the Textual UI tests: a recording speech backend and real AAEP prompts."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from announcer.engine.announcement import Announcement
from announcer.engine.prompts import PendingPrompt, UserAnswer
from announcer.engine.settings import UserSettings
from announcer.protocol.decode import decode_frame
from announcer.speech.backend import BackendCapabilities, VoiceSettings
from announcer.ui.tui.session import AnswerOutcome
from tests.shared_data import SHARED as SHARED_ROOT
from tests.support.local_session import LocalSession

FIXTURES = SHARED_ROOT / "aaep/fixtures/valid"
SCHEMA_DIR = SHARED_ROOT / "aaep/schemas/core"


class RecordingBackend:
    """Records what it was asked to say and finishes each utterance at once."""

    name = "recording"
    capabilities = BackendCapabilities(can_interrupt=True)

    def __init__(self) -> None:
        self.spoken: list[Announcement] = []
        self.stops = 0

    def start(self) -> None:
        pass

    def speak(
        self, announcement: Announcement, voice: VoiceSettings, on_done: Callable[[], None]
    ) -> None:
        self.spoken.append(announcement)
        on_done()

    def stop(self) -> None:
        self.stops += 1

    def is_speaking(self) -> bool:
        return False

    def close(self) -> None:
        pass

    @property
    def texts(self) -> list[str]:
        return [a.text for a in self.spoken]

    def said(self, fragment: str) -> bool:
        return any(fragment in text for text in self.texts)


class ManualClock:
    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now


def load_event(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def schema_example(event_type: str, index: int) -> dict[str, Any]:
    schema = json.loads((SCHEMA_DIR / f"{event_type}.schema.json").read_text(encoding="utf-8"))
    return dict(schema["examples"][index])


def validated(event: dict[str, Any]) -> object:
    """The event as the engine gets it: decoded and validated by announcer.protocol."""
    result = decode_frame(json.dumps(event))
    assert result.ok and result.event is not None, [d.message for d in result.errors]
    return result.event


def prompt_from_event(
    event: dict[str, Any], received_at: float, source_id: str = "src-1"
) -> PendingPrompt:
    kind = "confirmation" if event["type"].endswith("confirmation") else "clarification"
    producer = event["producer"]
    return PendingPrompt(
        kind=kind,
        reply_token=event["reply_token"],
        session_id=event["session_id"],
        event_id=event["event_id"],
        source_id=source_id,
        producer_id=producer["agent_id"],
        producer_name=producer.get("agent_name"),
        received_at=received_at,
        timeout_seconds=float(event["timeout_seconds"]),
        event=validated(event),
    )


class Harness:
    """A LocalSession with a recording backend whose replies are collected.

    Its clock stands still, so by default the answer keys' arming wait is off
    (``answer_arming_seconds=0``) for the tests about other things; the tests of the
    key timing rules (test_key_timing.py) pass ``arming=1.0``, the product default,
    and move the clock.
    """

    def __init__(self, arming: float = 0.0) -> None:
        self.backend = RecordingBackend()
        self.clock = ManualClock()
        self.replies: list[tuple[PendingPrompt, UserAnswer]] = []
        self.saved: list[Any] = []
        self.session = LocalSession(
            self.backend,
            UserSettings(answer_arming_seconds=arming),
            send_reply=self._reply,
            save_settings=self.saved.append,
            clock=self.clock,
        )

    def _reply(self, prompt: PendingPrompt, answer: UserAnswer) -> AnswerOutcome:
        self.replies.append((prompt, answer))
        return AnswerOutcome(True)

    def open(self, event: dict[str, Any]) -> PendingPrompt:
        prompt = prompt_from_event(event, self.clock.now)
        self.session.open_prompt(prompt)
        return prompt


@pytest.fixture
def harness() -> Harness:
    return Harness()
