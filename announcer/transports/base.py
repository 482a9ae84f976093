"""The uniform face every transport shows the runtime, and the security rules they share.

A transport carries whole AAEP messages as JSON text (Appendix B framing is
its business): ``connect``, ``handshake`` (send ``subscription.request`` and
return the producer's answer, or ``None`` for a Level 1 producer that never
answers, §9.3.3), ``frames`` (raw JSON text, one message each), ``send`` (a
reply, renegotiation or close; returns a response message when the transport
carries one back synchronously, as HTTP does) and ``close``.
"""

from __future__ import annotations

import ipaddress
import logging
import os
import ssl
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

log = logging.getLogger("announcer.transports")

DEFAULT_MAX_FRAME_BYTES = 1024 * 1024  # §8.3: at least 64 KiB, SHOULD 1 MiB


class TransportError(RuntimeError):
    """The connection failed or broke; the message is a plain sentence for the user."""


class TransportRefused(TransportError):
    """A source that retrying cannot fix; the runtime gives up on it and says why."""


class InsecureTransportRefused(TransportRefused):
    """Plaintext to a host that is not loopback without ``--allow-insecure`` (§8.2.8)."""


class ReplyNotDelivered(TransportError):
    """The producer did not take a reply (HTTP error status, closed connection)."""


@dataclass(slots=True)
class TransportOptions:
    """What the user said about how to connect; shared by every transport."""

    allow_insecure: bool = False
    ca_file: str | None = None
    token_env: str | None = None
    token_file: str | None = None
    max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES
    stall_seconds: float = 45.0
    connect_timeout: float = 10.0
    unix_framing: str = "length"
    events_path: str | None = None
    replies_path: str | None = None
    subscribe_path: str | None = None
    dropped: dict[str, int] = field(default_factory=dict)

    def bearer_token(self) -> str | None:
        """The token from the environment or a file; never logged, never shown."""
        if self.token_env:
            value = os.environ.get(self.token_env, "").strip()
            if not value:
                raise TransportError(f"the token variable ${self.token_env} is empty or unset")
            return value
        if self.token_file:
            try:
                value = Path(self.token_file).read_text(encoding="utf-8").strip()
            except OSError as exc:
                raise TransportError(f"cannot read the token file: {exc.strerror}") from None
            if not value:
                raise TransportError("the token file is empty")
            return value
        return None

    def auth_headers(self) -> dict[str, str]:
        token = self.bearer_token()
        return {"Authorization": f"Bearer {token}"} if token else {}

    def ssl_context(self) -> ssl.SSLContext:
        """Certificates are verified by default; ``--ca-file`` adds a private CA."""
        return ssl.create_default_context(cafile=self.ca_file)

    def count_drop(self, reason: str) -> None:
        self.dropped[reason] = self.dropped.get(reason, 0) + 1
        log.warning("dropped a frame: %s (%d so far)", reason, self.dropped[reason])


@dataclass(frozen=True, slots=True)
class HandshakeOutcome:
    """The producer's answer, or ``None`` when it never answered (Level 1/2)."""

    response: dict[str, Any] | None
    early_frames: list[str] = field(default_factory=list)
    resumed: bool = False


class Transport(Protocol):
    source_id: str
    description: str

    async def connect(self) -> None: ...

    async def handshake(self, request: dict[str, Any], timeout: float) -> HandshakeOutcome: ...

    def frames(self) -> AsyncIterator[str]: ...

    async def send(self, message: dict[str, Any]) -> dict[str, Any] | None: ...

    async def close(self, reason: str = "subscriber_shutdown") -> None: ...


def is_loopback_host(host: str | None) -> bool:
    if not host:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_plaintext_allowed(url: str, options: TransportOptions) -> None:
    """§8.2.8: traffic crossing a network must be encrypted."""
    parts = urlsplit(url)
    if parts.scheme in ("ws", "http") and not is_loopback_host(parts.hostname):
        if not options.allow_insecure:
            raise InsecureTransportRefused(
                f"refusing unencrypted {parts.scheme}:// to {parts.hostname}: use "
                f"{parts.scheme}s:// or pass --allow-insecure if you accept the risk"
            )
        log.warning("unencrypted connection to %s allowed by --allow-insecure", parts.hostname)


def message_type(raw: str) -> str | None:
    """Cheap peek at a frame's ``type`` for transport routing (full decoding is elsewhere)."""
    import json

    try:
        data = json.loads(raw)
    except ValueError:
        return None
    if isinstance(data, dict):
        value = data.get("type")
        return value if isinstance(value, str) else None
    return None
