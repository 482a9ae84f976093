"""Diagnostics: what is wrong with a message, where, and which rule of the spec says so.

A diagnostic never quotes the offending value: producer text and reply tokens must
not leak into logs (Subscribers' Guide §11.2), so the pointer names the place and the
sentence names the rule.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Severity = Literal["error", "warning"]


MAX_NAME_CHARS = 64


def safe_name(name: str) -> str:
    """A producer-chosen name made safe to print: control characters escaped, length capped.

    Field names come from the producer too; a name holding a newline or a terminal
    escape must not forge log lines or drive the user's terminal.
    """
    shown = name if len(name) <= MAX_NAME_CHARS else name[:MAX_NAME_CHARS] + "…"
    if shown.isprintable():
        return shown
    return "".join(ch if ch.isprintable() else f"\\x{ord(ch):02x}" for ch in shown)


def pointer_to_field(pointer: str) -> str:
    """Turn a JSON pointer into the dotted name people read: ``/producer/agent_id``."""
    if not pointer:
        return "frame"
    parts: list[str] = []
    for raw in pointer.lstrip("/").split("/"):
        token = raw.replace("~1", "/").replace("~0", "~")
        if token.isdigit() and parts:
            parts[-1] = f"{parts[-1]}[{token}]"
        else:
            parts.append(token)
    return safe_name(".".join(parts))


def make_pointer(*parts: str | int) -> str:
    """RFC 6901 pointer from path parts."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One broken rule: ``code`` for machines, ``message`` (a plain sentence) for people.

    ``severity`` is ``"error"`` for a MUST that makes the message invalid, ``"warning"``
    for a SHOULD or a rule we cannot check with certainty; warnings never drop a message.
    """

    code: str
    pointer: str
    section: str
    message: str
    severity: Severity = "error"

    @property
    def field(self) -> str:
        return pointer_to_field(self.pointer)

    def __str__(self) -> str:
        return f"{self.field}: {self.message} ({self.section})"

    def as_dict(self) -> dict[str, str]:
        return {
            "code": self.code,
            "pointer": self.pointer,
            "section": self.section,
            "message": self.message,
            "severity": self.severity,
        }
