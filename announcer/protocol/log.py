"""A bounded, inspectable record of every dropped or invalid frame (§3.7 "MUST log").

Only envelope fields are kept (type, event_id, session_id, producer.agent_id) and the
reason codes: never payload text and never reply tokens (Subscribers' Guide §11.2).
Envelope values are shortened and stripped of control characters, because a malformed
frame can put anything in them. Adapters forward :meth:`DiagnosticRecord.log_line` to
the ``announcer.diagnostics`` logger; this module itself does no I/O.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from announcer.protocol.decode import DecodeResult
from announcer.protocol.diagnostics import Diagnostic

LOGGER_NAME = "announcer.diagnostics"
MAX_FIELD_CHARS = 80


def _clean(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    if len(value) <= MAX_FIELD_CHARS and value.isprintable():
        return value  # the usual case, without a walk per character (floods record many)
    printable = "".join(ch if ch.isprintable() else "?" for ch in value[:MAX_FIELD_CHARS])
    return printable + ("…" if len(value) > MAX_FIELD_CHARS else "")


@dataclass(frozen=True, slots=True)
class DiagnosticRecord:
    """One dropped frame or one frame with warnings, stripped to envelope fields."""

    action: str  # "dropped" or "warned"
    reasons: tuple[str, ...]
    details: tuple[str, ...]
    type: str | None
    event_id: str | None
    session_id: str | None
    agent_id: str | None
    source: str | None
    at: float | None

    def log_line(self) -> str:
        where = f" from {self.source}" if self.source else ""
        envelope = " ".join(
            f"{name}={value}"
            for name, value in (
                ("type", self.type),
                ("event_id", self.event_id),
                ("session_id", self.session_id),
                ("agent_id", self.agent_id),
            )
            if value is not None
        )
        return f"{self.action}{where}: {envelope or 'no envelope'}; " + "; ".join(self.details)

    def as_dict(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "reasons": list(self.reasons),
            "details": list(self.details),
            "type": self.type,
            "event_id": self.event_id,
            "session_id": self.session_id,
            "agent_id": self.agent_id,
            "source": self.source,
            "at": self.at,
        }


def _envelope(raw: Mapping[str, Any] | None) -> tuple[str | None, ...]:
    if raw is None:
        return (None, None, None, None)
    producer = raw.get("producer")
    agent = producer.get("agent_id") if isinstance(producer, Mapping) else None
    return (
        _clean(raw.get("type")),
        _clean(raw.get("event_id")),
        _clean(raw.get("session_id")),
        _clean(agent),
    )


class DiagnosticsLog:
    """Keeps the last ``capacity`` records and counts every reason since the start."""

    def __init__(self, capacity: int = 500) -> None:
        self._records: deque[DiagnosticRecord] = deque(maxlen=capacity)
        # Called with each new record (an adapter writes them to the diagnostics file).
        self.listeners: list[Callable[[DiagnosticRecord], None]] = []
        self._counts: Counter[str] = Counter()
        self.dropped = 0
        self.warned = 0

    def record(
        self,
        result: DecodeResult,
        *,
        source: str | None = None,
        now: float | None = None,
        extra: Iterable[Diagnostic] = (),
    ) -> DiagnosticRecord | None:
        """Note a decoded frame if it was dropped or warned about; returns the record."""
        diagnostics = [*result.diagnostics, *extra]
        if result.ok and not diagnostics:
            return None
        dropped = not result.ok or any(d.severity == "error" for d in diagnostics)
        return self._add(
            "dropped" if dropped else "warned",
            diagnostics,
            _envelope(result.raw),
            source,
            now,
        )

    def record_drop(
        self,
        reason: str,
        message: str,
        *,
        section: str = "",
        envelope: Mapping[str, Any] | None = None,
        source: str | None = None,
        now: float | None = None,
    ) -> DiagnosticRecord:
        """A frame dropped for a reason outside validation (rate limit, queue full...)."""
        diagnostic = Diagnostic(reason, "", section or "-", message)
        return self._add("dropped", [diagnostic], _envelope(envelope), source, now)

    def count_drop(self, reason: str) -> None:
        """One more drop for a reason already on record, without a record of its own.

        For floods: the first of a run is recorded with its envelope, the rest counted.
        """
        self.dropped += 1
        self._counts[reason] += 1

    def _add(
        self,
        action: str,
        diagnostics: list[Diagnostic],
        envelope: tuple[str | None, ...],
        source: str | None,
        now: float | None,
    ) -> DiagnosticRecord:
        record = DiagnosticRecord(
            action=action,
            reasons=tuple(d.code for d in diagnostics),
            details=tuple(str(d) for d in diagnostics),
            type=envelope[0],
            event_id=envelope[1],
            session_id=envelope[2],
            agent_id=envelope[3],
            source=source,
            at=now,
        )
        self._records.append(record)
        if action == "dropped":
            self.dropped += 1
        else:
            self.warned += 1
        self._counts.update(record.reasons)
        for listener in self.listeners:
            listener(record)
        return record

    def counts(self) -> dict[str, int]:
        """How often each reason code occurred, most frequent first."""
        return dict(self._counts.most_common())

    def recent(self, limit: int | None = None) -> list[DiagnosticRecord]:
        """The newest records, oldest first."""
        records = list(self._records)
        return records if limit is None else records[-limit:]

    def __len__(self) -> int:
        return len(self._records)

    def clear(self) -> None:
        self._records.clear()
        self._counts.clear()
        self.dropped = 0
        self.warned = 0
