"""Messages that carry session callbacks onto the app's event loop.

``post_message`` is thread-safe in Textual, so a session may call the
listener from the runtime's thread or loop.
"""

from __future__ import annotations

from textual.message import Message

from announcer.engine.announcement import Announcement
from announcer.engine.prompts import PendingPrompt
from announcer.ui.tui.session import UiStatus


class AnnouncementArrived(Message):
    def __init__(self, announcement: Announcement) -> None:
        super().__init__()
        self.announcement = announcement


class PromptOpened(Message):
    def __init__(self, prompt: PendingPrompt) -> None:
        super().__init__()
        self.prompt = prompt


class PromptVoided(Message):
    def __init__(self, reply_token: str, reason: str) -> None:
        super().__init__()
        self.reply_token = reply_token
        self.reason = reason


class StatusChanged(Message):
    def __init__(self, status: UiStatus) -> None:
        super().__init__()
        self.status = status


class SpeechNotice(Message):
    """What the speech output says about itself (which one speaks, why one failed)."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


class AnnouncementSkipped(Message):
    """News the speech let go unheard to keep up: shown, not said."""

    def __init__(self, announcement: Announcement) -> None:
        super().__init__()
        self.announcement = announcement
