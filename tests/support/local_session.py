"""A :class:`UiSession` kept in this process, speaking through one backend.

Whatever produces announcements and prompts (the runtime, an engine fed from
a file, a test) calls ``announce``, ``open_prompt``, ``void_prompt`` and
``set_status``; answers go out through ``send_reply``. UI speech is queued
here so one utterance never cuts another unless asked to.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable

from announcer.engine.announcement import Announcement, Urgency
from announcer.engine.prompts import PendingPrompt, UserAnswer
from announcer.engine.settings import UserSettings
from announcer.speech.backend import SpeechBackend, VoiceSettings
from announcer.ui.tui.session import AnswerOutcome, UiListener, UiStatus

ReplySender = Callable[[PendingPrompt, UserAnswer], AnswerOutcome]
SettingsSaver = Callable[[UserSettings], None]


def _no_reply_path(prompt: PendingPrompt, answer: UserAnswer) -> AnswerOutcome:
    return AnswerOutcome(False, "no connection to send the answer on")


class LocalSession:
    # Prompts reach the UI without having been spoken: the dialog says the whole question.
    announces_prompts = False

    def __init__(
        self,
        speech: SpeechBackend,
        settings: UserSettings | None = None,
        *,
        send_reply: ReplySender = _no_reply_path,
        save_settings: SettingsSaver | None = None,
        on_settings_changed: Callable[[UserSettings], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
        backlog: int = 500,
    ) -> None:
        self.speech = speech
        self._settings = settings or UserSettings()
        self._send_reply = send_reply
        self._save_settings = save_settings
        self._on_settings_changed = on_settings_changed
        self._clock = clock
        self._listeners: list[UiListener] = []
        # Announcements made before the UI subscribed are shown to it, not spoken again.
        self._backlog: deque[Announcement] = deque(maxlen=backlog)
        self._prompts: dict[str, PendingPrompt] = {}
        self._status = UiStatus()
        self._last: Announcement | None = None
        self._queue: deque[Announcement] = deque()
        self._lock = threading.Lock()
        self._speaking = False

    # -- UiSession ----------------------------------------------------------

    @property
    def settings(self) -> UserSettings:
        return self._settings

    @property
    def status(self) -> UiStatus:
        return self._status

    @property
    def pending(self) -> list[PendingPrompt]:
        return list(self._prompts.values())

    def subscribe(self, listener: UiListener) -> None:
        self._listeners.append(listener)
        for announcement in list(self._backlog):
            listener.announcement_made(announcement)
        for prompt in list(self._prompts.values()):
            listener.prompt_opened(prompt)

    def now(self) -> float:
        return self._clock()

    def answer(self, answer: UserAnswer) -> AnswerOutcome:
        prompt = self._prompts.get(answer.reply_token)
        if prompt is None:
            return AnswerOutcome(False, "this question is no longer open")
        outcome = self._send_reply(prompt, answer)
        # A sent reply consumes the single-use token (§6.2); a refused one is gone too.
        self._prompts.pop(answer.reply_token, None)
        self._publish_status()
        return outcome

    def speak(self, text: str, urgency: Urgency = Urgency.NORMAL, interrupt: bool = False) -> None:
        language = self._settings.languages[0] if self._settings.languages else "en"
        self.say(Announcement(text, language, urgency, interrupt, kind="system.ui"))

    def stop_speech(self) -> None:
        with self._lock:
            self._queue.clear()
        self.speech.stop()

    def repeat_last(self) -> None:
        if self._last is None:
            self.speak("Nothing has been announced yet.")
        else:
            self.say(self._last)

    def update_settings(self, settings: UserSettings) -> None:
        if self._save_settings is not None:
            self._save_settings(settings)
        self._settings = settings
        if self._on_settings_changed is not None:
            self._on_settings_changed(settings)

    # -- feeding ------------------------------------------------------------

    def announce(self, announcement: Announcement, *, speak: bool = True) -> None:
        """A producer announcement: shown in the transcript, and spoken unless already."""
        self._last = announcement
        self._backlog.append(announcement)
        for listener in self._listeners:
            listener.announcement_made(announcement)
        if speak:
            self.say(announcement)

    def open_prompt(self, prompt: PendingPrompt) -> None:
        if prompt.reply_token in self._prompts:
            return
        self._prompts[prompt.reply_token] = prompt
        for listener in self._listeners:
            listener.prompt_opened(prompt)
        self._publish_status()

    def void_prompt(self, reply_token: str, reason: str) -> None:
        if self._prompts.pop(reply_token, None) is None:
            return
        for listener in self._listeners:
            listener.prompt_voided(reply_token, reason)
        self._publish_status()

    def set_status(
        self,
        *,
        connection: str | None = None,
        producers: tuple[str, ...] | None = None,
        session_state: str | None = None,
    ) -> None:
        current = self._status
        self._status = UiStatus(
            connection=current.connection if connection is None else connection,
            producers=current.producers if producers is None else producers,
            session_state=current.session_state if session_state is None else session_state,
            pending_prompts=len(self._prompts),
        )
        if self._status != current:
            for listener in self._listeners:
                listener.status_changed(self._status)

    def _publish_status(self) -> None:
        self.set_status()

    # -- speech queue -------------------------------------------------------

    def say(self, announcement: Announcement) -> None:
        """Queue an utterance; critical interrupting ones cut what is being said."""
        with self._lock:
            if announcement.interrupt:
                self._queue.clear()
                self._queue.append(announcement)
                interrupting = self._speaking
            else:
                self._queue.append(announcement)
                interrupting = False
                if self._speaking:
                    return
        if interrupting:
            self.speech.stop()  # its on_done starts the next utterance
            return
        self._next()

    def _next(self) -> None:
        with self._lock:
            if self._speaking or not self._queue:
                return
            announcement = self._queue.popleft()
            self._speaking = True
        self.speech.speak(announcement, self._voice(announcement.language), self._done)

    def _done(self) -> None:
        with self._lock:
            self._speaking = False
        self._next()

    def _voice(self, language: str) -> VoiceSettings:
        settings = self._settings
        return VoiceSettings(
            voice=settings.voices.get(language),
            rate_wpm=settings.rate_wpm,
            pitch=settings.pitch,
            volume=settings.volume,
        )
