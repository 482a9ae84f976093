"""The narrow interface between the Textual app and whatever feeds it.

Textual has no screen-reader layer, so the UI speaks every change itself
through ``UiSession.speak``; everything a producer says reaches it as an
:class:`Announcement`, and every question as a :class:`PendingPrompt`.
Implementations call the listener from any thread; the app marshals the
calls onto its own event loop.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from announcer.engine.announcement import Urgency
from announcer.engine.prompts import UserAnswer
from announcer.engine.settings import UserSettings
from announcer.runtime.session import AnswerOutcome, SessionListener, SessionStatus

# The runtime's types are the UI's: one definition of what a session reports.
UiStatus = SessionStatus
UiListener = SessionListener


@runtime_checkable
class UiSession(Protocol):
    """Everything the Textual app needs from the engine, runtime and speech."""

    @property
    def settings(self) -> UserSettings: ...

    @property
    def status(self) -> UiStatus: ...

    # Optional attribute ``announces_prompts`` (default True): the engine already
    # spoke each prompt, so a dialog only adds who asks and the keys.
    # Optional method ``set_answer_keys(AnswerKeys)``: which keys the engine's spoken
    # questions name (announcer.engine.answer_keys); the app sets "none".

    def subscribe(self, listener: UiListener) -> None:
        """Register the UI; pending prompts already open are re-sent to it."""

    def now(self) -> float:
        """The clock ``PendingPrompt.received_at`` was measured with."""

    def answer(self, answer: UserAnswer) -> AnswerOutcome:
        """Send the user's answer on the prompt's connection (§6)."""

    def speak(self, text: str, urgency: Urgency = Urgency.NORMAL, interrupt: bool = False) -> None:
        """Say a UI message (focus, key help, confirmations of the user's own actions)."""

    def stop_speech(self) -> None: ...

    def repeat_last(self) -> None:
        """Say the last producer announcement again."""

    def update_settings(self, settings: UserSettings) -> None:
        """Apply at once, persist, and renegotiate with connected producers (§5.6)."""
