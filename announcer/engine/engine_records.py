"""The records the engine keeps (transcript, replies to send) and how it logs a tracker note."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, NamedTuple

from announcer.engine.announcement import Announcement
from announcer.engine.replies import ReplyReady
from announcer.engine.tracker_records import TrackerNote
from announcer.protocol.decode import DecodeResult
from announcer.protocol.diagnostics import Diagnostic
from announcer.protocol.events import AwaitingClarification, AwaitingConfirmation
from announcer.protocol.log import DiagnosticsLog

PROMPT_EVENTS: Final = (AwaitingConfirmation, AwaitingClarification)
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


def log_note(
    diagnostics: DiagnosticsLog, note: TrackerNote, source_id: str | None, now: float
) -> None:
    """Log what the tracker noticed about an event, under its spec section."""
    section = _TRACKER_SECTIONS.get(note.code, "§3")
    envelope = {"session_id": note.session_id, "event_id": note.event_id}
    if note.code == "duplicate_event":
        diagnostics.record_drop(
            note.code,
            note.message,
            section=section,
            envelope=envelope,
            source=source_id,
            now=now,
        )
        return
    diagnostic = Diagnostic(note.code, "", section, note.message, "warning")
    diagnostics.record(
        DecodeResult(kind="event", message=None, diagnostics=[], raw=envelope),
        source=source_id,
        now=now,
        extra=[diagnostic],
    )
