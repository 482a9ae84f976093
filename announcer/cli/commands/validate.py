"""``announcer validate FILE...``: check AAEP messages the way the subscriber would.

Each FILE is one JSON document (pretty-printed or not) or JSON Lines; ``-`` reads
standard input. One line per message: ``ok`` or ``invalid`` with every reason. The
messages of one file are also checked as a stream (duplicate completions, events after
the end of a session...). Exit status 0 only when every message is valid.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from announcer.protocol import (
    LOGGER_NAME,
    DecodeResult,
    Diagnostic,
    DiagnosticsLog,
    StreamChecker,
    decode_frame,
)
from announcer.protocol.diagnostics import safe_name

# Reading more than this from one file is refused rather than exhausting memory.
MAX_FILE_BYTES = 256 * 1024 * 1024
logger = logging.getLogger(LOGGER_NAME)


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "validate",
        help="check AAEP events, handshake and reply messages",
        description="Check AAEP messages in JSON or JSON Lines files ('-' for standard input).",
    )
    parser.add_argument("files", nargs="+", metavar="FILE", help="a JSON or JSON Lines file, or -")
    parser.add_argument("--json", action="store_true", help="print one JSON object per message")
    parser.set_defaults(func=run)


def _frames(data: bytes) -> Iterator[tuple[int, bytes]]:
    """(line number, frame): the whole file if it is one JSON document, else each line."""
    lines = data.splitlines()
    non_blank = [(number, line) for number, line in enumerate(lines, 1) if line.strip()]
    if len(non_blank) > 1:
        first = non_blank[0][1]
        try:
            json.loads(first)
        except (ValueError, RecursionError):
            first = b""
        if first:
            yield from non_blank
            return
    if non_blank:
        yield non_blank[0][0], data


def _read(name: str, stdin: TextIO) -> bytes:
    if name == "-":
        return stdin.buffer.read(MAX_FILE_BYTES + 1)
    with Path(name).open("rb") as handle:
        return handle.read(MAX_FILE_BYTES + 1)


def _describe(result: DecodeResult) -> str:
    kind = "event" if result.kind == "event" else result.kind
    parts: list[str] = [kind] if result.ok else []
    if result.type:
        parts.append(safe_name(result.type))  # producer text: never raw to the terminal
    raw = result.raw or {}
    event_id = raw.get("event_id")
    if isinstance(event_id, str) and result.ok:
        parts.append(event_id)
    return " ".join(parts)


def _readable_errors(errors: list[Diagnostic]) -> list[str]:
    """Group "is required" reasons into one sentence: shorter to hear on a screen reader."""
    missing = [d for d in errors if d.code.endswith(".missing") and d.pointer.count("/") == 1]
    if len(missing) < 2:
        return [str(d) for d in errors]
    names = [d.field for d in missing]
    sections = sorted({d.section for d in missing})
    grouped = f"missing required fields {', '.join(names)} ({', '.join(sections)})"
    return [grouped] + [str(d) for d in errors if d not in missing]


def _line(
    name: str, number: int, result: DecodeResult, diagnostics: list[Diagnostic], as_json: bool
) -> str:
    valid = result.ok and not any(d.severity == "error" for d in diagnostics)
    if as_json:
        return json.dumps(
            {
                "file": name,
                "line": number,
                "status": "ok" if valid else "invalid",
                "kind": result.kind if valid else "invalid",
                "type": result.type,
                "diagnostics": [d.as_dict() for d in diagnostics],
            },
            ensure_ascii=False,
        )
    head = f"{name}:{number}: {'ok' if valid else 'invalid'}"
    what = _describe(result)
    errors = _readable_errors([d for d in diagnostics if d.severity == "error"])
    warnings = [f"warning: {d}" for d in diagnostics if d.severity == "warning"]
    text = head + (f" {what}" if what else "")
    reasons = errors + warnings
    return text + (": " + "; ".join(reasons) if reasons else "")


# §3.11.3 lists an unknown type in the aaep: namespace as a defect: ``listen`` still
# announces it generically from its summary (§9.3.2(5)), but it is not valid AAEP.
_INVALID_FOR_VALIDATE = frozenset({"type.unknown_core"})


def _as_validation(diagnostic: Diagnostic) -> Diagnostic:
    if diagnostic.code in _INVALID_FOR_VALIDATE and diagnostic.severity != "error":
        return dataclasses.replace(
            diagnostic,
            section="§3.11.3",
            message="is in the aaep: namespace but is not one of the twelve core event types",
            severity="error",
        )
    return diagnostic


def run(args: argparse.Namespace) -> int:
    log = DiagnosticsLog()
    all_valid = True
    seen_any = False
    out = sys.stdout
    for name in args.files:
        try:
            data = _read(name, sys.stdin)
        except OSError as exc:
            print(f"{name}: cannot read: {exc.strerror or exc}", file=sys.stderr)
            all_valid = False
            continue
        if len(data) > MAX_FILE_BYTES:
            print(f"{name}: larger than {MAX_FILE_BYTES} bytes; not read", file=sys.stderr)
            all_valid = False
            continue
        checker = StreamChecker()
        frames = 0
        for number, frame in _frames(data):
            frames += 1
            result = decode_frame(frame)
            diagnostics = [_as_validation(d) for d in result.diagnostics]
            event = result.event
            if event is not None:
                diagnostics.extend(checker.feed(event))
            record = log.record(
                result, source=f"{name}:{number}", extra=diagnostics[len(result.diagnostics) :]
            )
            if record is not None:
                logger.info(record.log_line())
            if not result.ok or any(d.severity == "error" for d in diagnostics):
                all_valid = False
            print(_line(name, number, result, diagnostics, args.json), file=out)
        if frames == 0:
            print(f"{name}: holds no messages", file=sys.stderr)
            all_valid = False
        seen_any = seen_any or frames > 0
    return 0 if all_valid and seen_any else 1
