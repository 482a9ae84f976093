"""Agent CLI JSON Lines streams -> Universal Agent API events -> AAEP.

- Claude Code ``claude -p --output-format stream-json [--include-partial-messages]``
- Codex ``codex exec --json`` (current ``item.*`` form and the older 0.61/0.77 shapes)
- Gemini CLI ``gemini --output-format stream-json``
- OpenCode ``opencode run --format json``

Each line is classified into the stable kinds (TextOutput, ToolCall, ToolResult,
Status, Error); tool events carry the metadata-only tools facet. What we speak
comes from the agent's own message text and from our sentences about tool
activity, never from a raw backend line.

One module per stream (``claude_code``, ``codex``, ``gemini``, ``opencode``), what they
share in ``common``; :data:`CLI_STREAMS` is the one registry of them
(tests/formats/test_cli_stream_registry.py checks each name has its module, and each
module is registered).
"""

from __future__ import annotations

from typing import Final

from announcer.formats.cli_streams.claude_code import ClaudeCodeStreamAdapter
from announcer.formats.cli_streams.codex import CodexExecAdapter
from announcer.formats.cli_streams.common import _CliStreamAdapter
from announcer.formats.cli_streams.gemini import GeminiStreamAdapter
from announcer.formats.cli_streams.opencode import OpenCodeRunAdapter

#: Every agent CLI stream, by its ``--format`` name (its adapter's ``name``).
CLI_STREAMS: Final[dict[str, type[_CliStreamAdapter]]] = {
    adapter.name: adapter
    for adapter in (
        ClaudeCodeStreamAdapter,
        CodexExecAdapter,
        GeminiStreamAdapter,
        OpenCodeRunAdapter,
    )
}

__all__ = [
    "CLI_STREAMS",
    "ClaudeCodeStreamAdapter",
    "CodexExecAdapter",
    "GeminiStreamAdapter",
    "OpenCodeRunAdapter",
]
