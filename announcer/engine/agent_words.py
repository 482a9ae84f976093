"""The agents' streamed words (§4.3.3): the most frequent event, said sentence by sentence."""

from __future__ import annotations

from typing import Final

from announcer.engine.announcement import Announcement, Urgency
from announcer.engine.folding import UrgentFolding
from announcer.engine.literals import Literals
from announcer.engine.outputs import OutputStreams, Released
from announcer.engine.policy import Policy
from announcer.engine.speech_commands import SpeechCommand
from announcer.engine.text_hygiene import clean_for_speech
from announcer.engine.tracker import SessionTracker
from announcer.engine.turn_news import TurnNews
from announcer.protocol.events import (
    AaepEvent,
    OutputStreaming,
    SessionCancelled,
    SessionCompleted,
    SessionErrored,
)

_TERMINAL: Final = (SessionCompleted, SessionErrored, SessionCancelled)
_URGENCY_OF: Final = {urgency.value: urgency for urgency in Urgency}


class AgentWords:
    """Feeds streamed chunks to the coalescers (``outputs``) and queues each sentence
    released; owns the settings shortcuts that let a chunk skip the policy's checks.

    Handed the policy, the tracker (whose words a released sentence is), the output
    streams and literals (the engine's, read by the UIs), the folding (where the words
    are queued) and the turn's news (the words are part of the turn's digest).
    """

    def __init__(
        self,
        policy: Policy,
        tracker: SessionTracker,
        outputs: OutputStreams,
        literals: Literals,
        folding: UrgentFolding,
        news: TurnNews,
    ) -> None:
        self.policy = policy
        self.tracker = tracker
        self.outputs = outputs
        self.literals = literals
        self.folding = folding
        self.news = news
        self._hold_outputs = False
        self._plain_output = False
        self._user_language = "en"
        self.refresh()

    def refresh(self) -> None:
        """Settings that let a chunk skip the policy's checks (mutes, filters, load)."""
        settings = self.policy.settings
        self._user_language = self.policy.language  # producer text with no language
        self._hold_outputs = settings.cognitive_load == "low"
        self._plain_output = (
            not settings.muted_producers
            and not self._hold_outputs
            and self.policy.passes_filters(OutputStreaming.SHORT_TYPE)
        )

    def feed(self, event: OutputStreaming, source_id: str, now: float) -> list[SpeechCommand]:
        """The most frequent event: a chunk of streamed output (§4.3.3)."""
        urgency = _URGENCY_OF[event.urgency]
        if not self._plain_output:
            reason = self.policy.admits(event, urgency, source_id, now)
            if reason is not None:
                self.policy.suppressed[reason] += 1
                return []
        released = self.outputs.feed(
            event,
            source_id,
            event.language or event.primary_language or self._user_language,
            now,
            hold_until_complete=self._hold_outputs,
        )
        if not released:
            return []
        commands: list[SpeechCommand] = []
        for item in released:
            commands += self._say(item, source_id, now, urgency, event)
        return commands

    def poll(self, now: float) -> list[SpeechCommand]:
        """Sentences released by a pause (time passed)."""
        commands: list[SpeechCommand] = []
        for released in self.outputs.poll(now):
            commands += self._say(released, None, now)
        return commands

    def before(self, event: AaepEvent, source_id: str, now: float) -> list[SpeechCommand]:
        """What the agent said before ``event`` comes first: a finished sentence held for
        a pause (issue 20), and all it was still saying when its session ends."""
        commands: list[SpeechCommand] = []
        if self.outputs:
            for released in self.outputs.release_finished(source_id, event.session_id):
                commands += self._say(released, source_id, now)
        if isinstance(event, _TERMINAL):
            for released in self.outputs.close_session(source_id, event.session_id):
                commands += self._say(released, source_id, now)
        return commands

    def _say(
        self,
        released: Released,
        source_id: str | None,
        now: float,
        urgency: Urgency = Urgency.NORMAL,
        event: OutputStreaming | None = None,
    ) -> list[SpeechCommand]:
        self.literals.note(released.text)  # its code and addresses, whole, on a command
        text = clean_for_speech(released.text, released.language)
        if not text:
            return []
        self.news.words((source_id or released.source_id or "", released.session_id), text)
        announcement = Announcement(
            text=text,
            language=released.language,
            urgency=urgency,
            interrupt=urgency is Urgency.CRITICAL,
            event_id=released.event_id,
            session_id=released.session_id,
            producer_id=event.producer.agent_id
            if event is not None
            else self._producer_of(released, source_id),
            kind="agent.output.streaming",
        )
        hints = event.localization_hints if event is not None else None
        if hints is not None and hints.text_direction:
            announcement.direction = hints.text_direction  # §11.4
        return self.folding.submit(announcement, source_id, now)

    def _producer_of(self, released: Released, source_id: str | None) -> str | None:
        """Whose words a sentence released by a pause or a session's end are."""
        source = source_id or released.source_id
        session = self.tracker.session(source, released.session_id) if source else None
        return session.producer_id if session is not None else None
