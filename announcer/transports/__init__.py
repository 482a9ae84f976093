"""Transports: WebSocket, SSE+POST, Unix socket, stdio JSON-RPC, hooks and JSON Lines replay.

``open_transport(source, options)`` picks one from the SOURCE the user typed; the kinds
of SOURCE are one table, :data:`announcer.transports.schemes.SOURCE_SCHEMES` (``acp:``
sources are started by the CLI as agents, ``announcer.cli.acp_agents``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from announcer.transports.base import (
        HandshakeOutcome,
        InsecureTransportRefused,
        ReplyNotDelivered,
        SourceUnavailable,
        Transport,
        TransportError,
        TransportOptions,
        TransportRefused,
    )

# `announcer hook` imports `transports.hook_client` on every agent tool call: this
# package stays free of imports (ssl, logging) until a name from `base` is used.
_FROM_BASE = frozenset(
    (
        "HandshakeOutcome",
        "InsecureTransportRefused",
        "ReplyNotDelivered",
        "Transport",
        "TransportError",
        "TransportOptions",
        "TransportRefused",
        "SourceUnavailable",
    )
)


def __getattr__(name: str) -> Any:
    if name in _FROM_BASE:
        from announcer.transports import base

        value = getattr(base, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def open_transport(source: str, options: TransportOptions) -> Transport:
    from announcer.transports.base import TransportError

    if source.startswith(("ws://", "wss://")):
        from announcer.transports.websocket import WebSocketTransport

        return WebSocketTransport(source, options)
    if source.startswith(("http://", "https://")):
        from announcer.transports.sse import SseTransport

        return SseTransport(source, options)
    if source.startswith("unix:"):
        from announcer.transports.unix import UnixSocketTransport

        return UnixSocketTransport(source.removeprefix("unix:"), options)
    if source.startswith("stdio:"):
        from announcer.transports.stdio import StdioTransport

        return StdioTransport(source.removeprefix("stdio:"), options)
    if source == "hooks" or source.startswith("hooks:"):
        # coding-agent hooks (docs/hooks.md): `hooks` for the default socket, `hooks:/path`
        from pathlib import Path

        from announcer.transports.hook_bridge import HookBridgeTransport

        path = source.removeprefix("hooks").removeprefix(":")
        return HookBridgeTransport(Path(path) if path else None)
    if "://" in source:
        from announcer.transports.schemes import sources_named

        scheme = source.split("://", 1)[0]
        raise TransportError(f"unknown source scheme {scheme!r}: use {sources_named()}")
    from announcer.transports.replay import ReplayTransport

    return ReplayTransport(source, options)


__all__ = [
    "HandshakeOutcome",
    "InsecureTransportRefused",
    "ReplyNotDelivered",
    "SourceUnavailable",
    "Transport",
    "TransportError",
    "TransportOptions",
    "TransportRefused",
    "open_transport",
]
