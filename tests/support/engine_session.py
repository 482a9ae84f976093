"""A :class:`UiSession` around the real sans-I/O :class:`Engine`, in this process.

Frames go into ``Engine.receive`` through the one
:class:`~announcer.runtime.engine_host.EngineHost`, which carries out the speech
commands it returns with a :class:`SpeechDriver`; prompts the engine opens or closes reach the UI
as ``prompt_opened`` / ``prompt_voided``; answers become the engine's protocol
replies, handed to ``send_reply`` (the connection, or a test). The UI's own
words go through the engine's scheduler too, so they queue and interrupt by
the same urgency rules as everything else.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from typing import Any

from announcer.engine.announcement import Announcement, Urgency
from announcer.engine.answer_keys import AnswerKeys
from announcer.engine.pipeline import Engine, TranscriptEntry
from announcer.engine.prompts import PendingPrompt, UserAnswer
from announcer.engine.replies import ReplyReady
from announcer.engine.settings import UserSettings
from announcer.runtime.engine_host import EngineHost
from announcer.speech.backend import SpeechBackend
from announcer.speech.driver import SpeechDriver
from announcer.ui.tui.session import AnswerOutcome
from tests.support.local_session import LocalSession, SettingsSaver

WireSender = Callable[[PendingPrompt, dict[str, object]], AnswerOutcome]
Frame = bytes | str | Mapping[str, Any]


def _nowhere(prompt: PendingPrompt, reply: dict[str, object]) -> AnswerOutcome:
    return AnswerOutcome(False, "there is no connection to send the answer on")


class EngineSession(LocalSession):
    # The engine's policy speaks every prompt (critical); the dialog adds who asks and the keys.
    announces_prompts = True
    # The engine closes a question whose time is up, in its own words (as LiveSession).
    voids_at_deadline = True
    # The engine says why a question closed, once (as LiveSession).
    announces_withdrawals = True

    def set_answer_keys(self, answer_keys: AnswerKeys) -> None:
        """The keys the engine's questions name (the app passes none: its dialogs say them)."""
        self.engine.set_answer_keys(answer_keys)

    def __init__(
        self,
        engine: Engine,
        speech: SpeechBackend,
        *,
        send_reply: WireSender = _nowhere,
        save_settings: SettingsSaver | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(speech, engine.settings, save_settings=save_settings, clock=clock)
        self.engine = engine
        self._send_wire = send_reply
        self.host = EngineHost(engine, SpeechDriver(speech), self.now)
        self._seen_entry: TranscriptEntry | None = None
        self.sent: list[dict[str, object]] = []

    def diagnostics_report(self) -> list[str]:
        """What the engine dropped and why (the app's diagnostics screen)."""
        from announcer.runtime.diagnostics import diagnostics_report
        from announcer.ui.tui.text import _

        status = self.engine.status()
        return diagnostics_report(
            counts=self.engine.diagnostics.counts(),
            recent=self.engine.diagnostics.recent(),
            speech_drops=status.speech_drops,
            suppressed=status.suppressed,
            transport_drops={},
            log_file=None,
            _t=_,
        )

    # -- inputs -------------------------------------------------------------------------

    @property
    def driver(self) -> SpeechDriver | None:
        return self.host.driver

    def receive(self, frame: Frame, source_id: str = "local") -> None:
        """One frame from a producer: announce, speak, open or close prompts."""
        self.host.receive(frame, source_id)
        self._after()

    def source_closed(self, source_id: str) -> None:
        self.host.source_closed(source_id)
        self._after()

    def tick(self) -> None:
        self.host.tick()
        self._after()

    # -- UiSession ------------------------------------------------------------------------

    def subscribe(self, listener: Any) -> None:
        super().subscribe(listener)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.host.stop_ticking()
            return
        # a timer at the engine's next moment (its clock may not be the loop's)
        self.host.keep_ticking(loop, max_delay=60.0, on_due=self.tick)

    def speak(self, text: str, urgency: Urgency = Urgency.NORMAL, interrupt: bool = False) -> None:
        language = self.settings.languages[0] if self.settings.languages else "en"
        announcement = Announcement(text, language, urgency, interrupt, kind="system.ui")
        self.host.say(announcement)

    def say(self, announcement: Announcement) -> None:
        self.host.say(announcement)

    def say_after_question(self, prompt: PendingPrompt, text: str) -> None:
        """Our sentence about a question, kept with it: never said once it has ended."""
        language = self.settings.languages[0] if self.settings.languages else "en"
        urgency = getattr(prompt.event, "urgency", "critical")
        self.say(
            Announcement(
                text,
                language,
                Urgency.CRITICAL if urgency == "critical" else Urgency.NORMAL,
                event_id=prompt.event_id,
                session_id=prompt.session_id,
                producer_id=prompt.producer_id,
                kind="system.ui",
                continues=True,
            )
        )

    def stop_speech(self) -> None:
        self.host.silence()

    def repeat_last(self) -> None:
        """The last message again, every part of one split by language."""
        parts: list[Announcement] = []
        for entry in reversed(self.engine.transcript()):
            if entry.announcement.kind.startswith("system.ui"):
                continue
            parts.insert(0, entry.announcement)
            if not entry.announcement.continues:
                break
        if not parts:
            self.speak("Nothing has been announced yet.")
        for part in parts:
            self.say(part)

    def literals(self, kind: str) -> list[str]:
        return self.engine.literals.latest(kind)

    def say_digest(self) -> None:
        self.host.digest()

    def answer(self, answer: UserAnswer) -> AnswerOutcome:
        outcome = self.host.answer(answer)
        self._prompts.pop(answer.reply_token, None)
        if not isinstance(outcome, ReplyReady):
            self._sync_prompts()
            return AnswerOutcome(False, outcome.message)
        wire = outcome.to_wire()
        self.sent.append(wire)
        result = self._send_wire(outcome.prompt, wire)
        self._publish_status()
        return result

    def update_settings(self, settings: UserSettings) -> None:
        self.engine.update_settings(settings)
        super().update_settings(settings)

    # -- plumbing -------------------------------------------------------------------------

    def _after(self) -> None:
        self._show_new_entries()
        self._sync_prompts()

    def _drain(self) -> None:
        """What the voice finished meanwhile (the event loop's job; tests call it too)."""
        self.host.drain()

    def _show_new_entries(self) -> None:
        """Everything the engine decided to announce goes to the transcript, in order."""
        entries = self.engine.transcript()
        start = 0
        if self._seen_entry is not None:
            for index in range(len(entries) - 1, -1, -1):
                if entries[index] is self._seen_entry:
                    start = index + 1
                    break
        for entry in entries[start:]:
            if entry.announcement.kind != "system.ui":
                self.announce(entry.announcement, speak=False)
        if entries:
            self._seen_entry = entries[-1]

    def _sync_prompts(self) -> None:
        pending = {p.reply_token: p for p in self.engine.pending_prompts()}
        for token in [t for t in self._prompts if t not in pending]:
            self.void_prompt(token, self._void_reason(self._prompts[token]))
        for token, prompt in pending.items():
            if token not in self._prompts:
                self.open_prompt(prompt)

    def _void_reason(self, prompt: PendingPrompt) -> str:
        """The engine's notice about this prompt, every part of it (one per language)."""
        parts: list[str] = []
        for entry in reversed(self.engine.transcript()):
            announcement = entry.announcement
            if (
                announcement.kind.startswith("system.prompt")
                and announcement.event_id == prompt.event_id
            ):
                parts.insert(0, announcement.text)
                if not announcement.continues:
                    return " ".join(parts)
            elif parts:
                break
        return " ".join(parts) or "it is no longer open"
