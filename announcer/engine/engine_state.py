"""The state every part of the engine shares, and the records it keeps (transcript, replies)."""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Final, NamedTuple

from announcer.engine.announcement import Announcement
from announcer.engine.outputs import OutputStreams
from announcer.engine.policy import Policy
from announcer.engine.replies import ReplyBook, ReplyReady
from announcer.engine.scheduler import SpeechScheduler
from announcer.engine.settings import UserSettings
from announcer.engine.speech_commands import SpeechCommand
from announcer.engine.tracker import SessionTracker
from announcer.engine.tracker_records import TrackerNote
from announcer.protocol.decode import DecodeResult
from announcer.protocol.diagnostics import Diagnostic
from announcer.protocol.events import AwaitingClarification, AwaitingConfirmation
from announcer.protocol.log import DiagnosticsLog

_PROMPTS: Final = (AwaitingConfirmation, AwaitingClarification)
_TRACKER_SECTIONS: Final = {
    "duplicate_event": "§8.2.4",
    "late_event": "§3.4.1",
    "sequence_gap": "§8.2.3",
    "second_session_started": "§4.1.1",
    "event_after_end": "§4.5.1",
    "state_mismatch": "§4.2.1",
    "tool_not_invoked": "§4.5.2",
    "chunk_after_complete": "§4.5.4",
    "extension.untrusted": "§3.4.3",
}


class TranscriptEntry(NamedTuple):
    """One announcement the engine decided on, and when (spoken or not)."""

    at: float
    announcement: Announcement
    source_id: str | None


@dataclass(frozen=True, slots=True)
class OutgoingReply:
    """A reply message to send on connection ``source_id`` (JSON via ``to_wire()``)."""

    source_id: str
    reply: ReplyReady

    def to_wire(self) -> dict[str, object]:
        return self.reply.to_wire()


class EngineState:
    """What every part of :class:`~announcer.engine.pipeline.Engine` reads and keeps.

    Declared here so each part (a mixin in its own module) is type-checked against
    the same state; :meth:`Engine.__init__ <announcer.engine.pipeline.Engine>` sets it.
    """

    settings: UserSettings
    diagnostics: DiagnosticsLog
    tracker: SessionTracker
    policy: Policy
    outputs: OutputStreams
    book: ReplyBook
    scheduler: SpeechScheduler
    wall_clock: Callable[[], datetime]
    # Questions: the one presented, reminders, counts of those waiting or set aside.
    _presented: str | None
    presented_at: float | None
    _present_due_at: float | None
    _reminded_at: float | None
    _waiting_notice_id: str | None
    _count_notice_at: dict[str, float]
    _count_due: dict[str, tuple[Announcement, str]]
    _notice_serial: int
    set_aside: int
    _set_aside_notice_id: str | None
    _told_open: set[str]
    _accept_over_told: set[str]
    _after_answer: list[SpeechCommand]
    # Connections.
    _closed_sources: set[str]
    _mapped_sources: set[str]
    _subscriptions: dict[str, str]
    _outgoing: deque[OutgoingReply]
    # Counters and settings shortcuts.
    frames: int
    events: int
    invalid_frames: int
    ignored: Counter[str]
    _hold_outputs: bool
    _plain_output: bool
    _user_language: str

    def _log_note(self, note: TrackerNote, source_id: str | None, now: float) -> None:
        section = _TRACKER_SECTIONS.get(note.code, "§3")
        envelope = {"session_id": note.session_id, "event_id": note.event_id}
        if note.code == "duplicate_event":
            self.diagnostics.record_drop(
                note.code,
                note.message,
                section=section,
                envelope=envelope,
                source=source_id,
                now=now,
            )
            return
        diagnostic = Diagnostic(note.code, "", section, note.message, "warning")
        self.diagnostics.record(
            DecodeResult(kind="event", message=None, diagnostics=[], raw=envelope),
            source=source_id,
            now=now,
            extra=[diagnostic],
        )
