"""What the screens and dialogs may ask of the app, so they need not import it.

``app.py`` builds the screens (``screens.py``) and dialogs (``modals.py``); they
reach back only through :class:`AnnouncerHost`, which keeps the imports one way
(app -> screens, modals -> host), as the import-linter contract in pyproject.toml checks.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Protocol

from announcer.engine.announcement import Urgency
from announcer.engine.answer_guard import KeyGuard
from announcer.engine.prompts import PendingPrompt, UserAnswer
from announcer.engine.settings import UserSettings
from announcer.ui.tui.session import UiSession


@dataclass(slots=True)
class HistoryEntry:
    """One line of what happened: an announcement, or a prompt and its outcome."""

    text: str
    kind: str = "announcement"
    reply_token: str | None = None
    outcome: str | None = None

    @property
    def line(self) -> str:
        return f"{self.text} — {self.outcome}" if self.outcome else self.text


@dataclass(slots=True)
class PromptState:
    prompt: PendingPrompt
    spoken_marks: set[float] = field(default_factory=set)
    deferred: bool = False


class AnnouncerHost(Protocol):
    """The part of ``AnnouncerApp`` its screens use."""

    session: UiSession
    key_guard: KeyGuard
    history: deque[HistoryEntry]
    prompts: dict[str, PromptState]
    active_token: str | None
    # when the last question dialog closed (session clock): a key pressed twice
    # (Escape to reject, Escape again) must not also act on the screen below
    dialog_closed_at: float

    @property
    def settings(self) -> UserSettings: ...

    def say(
        self, text: str, urgency: Urgency = Urgency.NORMAL, interrupt: bool = False
    ) -> None: ...

    def say_cue(self, text: str) -> None: ...

    def say_about(
        self,
        prompt: PendingPrompt,
        text: str,
        urgency: Urgency = Urgency.CRITICAL,
        interrupt: bool = False,
    ) -> None: ...

    def open_prompt(self, reply_token: str, *, just_announced: bool = False) -> None: ...

    def write_transcript(self, line: str) -> None: ...

    def no_voice(self) -> bool: ...

    def speech_start_of(self, event_id: str) -> float | None: ...

    def prompt_dialog_closed(self, reply_token: str) -> None: ...

    def defer_prompt(self, reply_token: str) -> None: ...

    def submit_answer(self, prompt: PendingPrompt, answer: UserAnswer, described: str) -> None: ...

    def apply_settings(self, settings: UserSettings, spoken: str | None = None) -> None: ...
