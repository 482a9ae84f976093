"""Every kind of SOURCE ``announcer listen`` takes, in one table.

``announcer listen --help`` prints it, :func:`announcer.transports.open_transport` names
it when a source is not understood, and docs/transports.md shows it row for row
(``tests/transports/test_source_schemes.py`` fails when they differ). The README, the
settings template and the other docs point here instead of listing the sources again.

This module imports nothing: ``listen --help`` reads it without loading a transport.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SourceScheme:
    """One kind of source: how it is written, and what announcer does with it.

    ``written`` and ``binding`` are Markdown as docs/transports.md shows them (code in
    backticks); :attr:`help_line` is the same row as plain text for a terminal.
    """

    written: tuple[str, ...]
    binding: str

    @property
    def markdown_row(self) -> str:
        """The row of docs/transports.md's table."""
        return "| " + ", ".join(f"`{form}`" for form in self.written) + f" | {self.binding} |"

    @property
    def help_line(self) -> str:
        """The row for ``listen --help``: no Markdown (a screen reader says each backtick)."""
        return ", ".join(self.written) + ": " + self.binding.replace("`", "")


SOURCE_SCHEMES: tuple[SourceScheme, ...] = (
    SourceScheme(
        ("ws://host:port/aaep/v1/ws", "wss://..."),
        "B.2 WebSocket, subprotocol `aaep.v1`, one JSON message per text frame",
    ),
    SourceScheme(
        ("http://host:port", "https://..."),
        "B.1 SSE for events, HTTP POST for the handshake, replies, renegotiation and close",
    ),
    SourceScheme(
        ("unix:/path/to/socket",),
        "B.4 Unix domain socket; `--unix-framing length` (default, 4-byte big-endian) or `ndjson`",
    ),
    SourceScheme(
        ("stdio:COMMAND",),
        "B.6 spawn COMMAND and speak JSON-RPC 2.0 over its stdin/stdout; its stderr passes through",
    ),
    SourceScheme(
        ("acp:NAME", "acp:COMMAND"),
        "an ACP agent started by announcer, as with `announcer agent` (docs/agents.md): a "
        "preset (`acp:claude`) or any command",
    ),
    SourceScheme(
        ("hooks", "hooks:/path/to/hook.sock"),
        "coding-agent hooks (Claude Code, Codex) on announcer's hook socket, the default "
        "one or the one named (docs/hooks.md)",
    ),
    SourceScheme(("FILE", "-"), "JSON Lines replay (no handshake, no replies)"),
)


def sources_help() -> str:
    """The table as ``listen --help`` prints it, one source a line."""
    return "\n".join(f"  {scheme.help_line}" for scheme in SOURCE_SCHEMES)


def sources_named() -> str:
    """The ways to write a source, in one line (a source not understood)."""
    return ", ".join(form for scheme in SOURCE_SCHEMES for form in scheme.written)
