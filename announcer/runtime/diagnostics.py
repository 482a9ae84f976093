"""Diagnostics the user can read without ``-v``: what was dropped, why, and the log file.

Every frame that is dropped anywhere (the decoder's validation, the session's
limits, the engine's folding of urgent floods, the speech queue's skipping, the
transports' bounds) is counted by reason. :func:`diagnostics_report` turns those
counts and the newest records into plain lines for the plain UI's ``:diagnostics``
command and the Textual UI's diagnostics screen. :class:`DiagnosticsFile` appends
each record to ``diagnostics.log`` in the user's state directory (platformdirs):
envelope fields and reason sentences only, never payload text or reply tokens
(Subscribers' Guide §11.2), rate-limited and size-capped so a flood cannot fill a disk.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from announcer.protocol.log import DiagnosticRecord

APP_NAME = "announcer"
FILE_NAME = "diagnostics.log"
MAX_FILE_BYTES = 1_000_000  # then the file moves to diagnostics.log.1 (one kept)
LINES_PER_SECOND = 20.0
BURST_LINES = 200
RECENT_LINES = 20


def default_log_path() -> Path:
    """``diagnostics.log`` in the user's state directory (``$XDG_STATE_HOME/announcer``)."""
    import platformdirs

    return platformdirs.user_state_path(APP_NAME, appauthor=False) / FILE_NAME


class DiagnosticsFile:
    """Appends diagnostics records to a file: bounded in rate and in size, never raising.

    Beyond ``LINES_PER_SECOND`` (with a burst of ``BURST_LINES``) records are only
    counted, and the next line written says how many were left out; every one of them
    is still counted in the diagnostics. A file that cannot be written is given up on,
    and :attr:`error` says why (the diagnostics report shows it).
    """

    def __init__(
        self,
        path: Path,
        *,
        clock: Callable[[], float] = time.monotonic,
        lines_per_second: float = LINES_PER_SECOND,
        burst: int = BURST_LINES,
        max_bytes: int = MAX_FILE_BYTES,
    ) -> None:
        self.path = path
        self.error: str | None = None
        self.written = 0
        self.left_out = 0
        self._clock = clock
        self._rate = lines_per_second
        self._burst = float(burst)
        self._tokens = float(burst)
        self._last = clock()
        self._max_bytes = max_bytes
        self._unreported = 0

    def __call__(self, record: DiagnosticRecord) -> None:
        self.write(record)

    def write(self, record: DiagnosticRecord) -> None:
        if self.error is not None:
            return
        now = self._clock()
        self._tokens = min(self._burst, self._tokens + (now - self._last) * self._rate)
        self._last = now
        if self._tokens < 1.0:
            self.left_out += 1
            self._unreported += 1
            return
        self._tokens -= 1.0
        stamp = datetime.now(UTC).isoformat(timespec="milliseconds")
        lines = []
        if self._unreported:
            lines.append(
                f"{stamp} {self._unreported} more records were left out of this file "
                "(too many at once); all are counted in the diagnostics"
            )
            self._unreported = 0
        lines.append(f"{stamp} [{' '.join(record.reasons)}] {record.log_line()}")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if self.path.exists() and self.path.stat().st_size > self._max_bytes:
                self.path.replace(self.path.with_name(self.path.name + ".1"))
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write("\n".join(lines) + "\n")
            self.written += 1
        except OSError as exc:
            self.error = f"{exc.strerror or exc}"


class _Translate(Protocol):
    def __call__(self, message: str) -> str: ...


def diagnostics_report(
    *,
    counts: Mapping[str, int],
    recent: list[DiagnosticRecord],
    speech_drops: Mapping[str, int],
    suppressed: Mapping[str, int],
    transport_drops: Mapping[str, int],
    log_file: DiagnosticsFile | None,
    _t: _Translate,
) -> list[str]:
    """Plain lines, most useful first: totals by reason, then the newest records.

    Reason codes and their sentences come from the rules (English, like the spec);
    the headings are translated.
    """
    lines: list[str] = []
    if not (counts or speech_drops or suppressed or transport_drops):
        lines.append(_t("Diagnostics: nothing has been dropped."))
    if counts:
        lines.append(_t("Frames dropped, folded or warned about, by reason:"))
        lines += [f"  {reason}: {count}" for reason, count in counts.items()]
    if transport_drops:
        lines.append(_t("Frames the connection dropped, by reason:"))
        lines += [f"  {reason}: {count}" for reason, count in transport_drops.items()]
    if speech_drops:
        lines.append(_t("Speech skipped, by reason:"))
        lines += [f"  {reason}: {count}" for reason, count in speech_drops.items()]
    if suppressed:
        lines.append(_t("Not announced because of your settings, by reason:"))
        lines += [f"  {reason}: {count}" for reason, count in suppressed.items()]
    if recent:
        lines.append(_t("Most recent, newest last:"))
        lines += [f"  {record.log_line()}" for record in recent[-RECENT_LINES:]]
    if log_file is not None:
        if log_file.error is None:
            lines.append(_t("Log file: {path}").format(path=log_file.path))
        else:
            lines.append(
                _t("The log file {path} cannot be written: {error}").format(
                    path=log_file.path, error=log_file.error
                )
            )
    return lines


def attach_log_file(diagnostics: Any, path: Path | None = None) -> DiagnosticsFile:
    """Write every new record of ``diagnostics`` (a DiagnosticsLog) to the file."""
    log_file = DiagnosticsFile(path or default_log_path())
    with contextlib.suppress(AttributeError):
        diagnostics.listeners.append(log_file)
    return log_file
