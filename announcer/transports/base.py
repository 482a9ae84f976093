"""The uniform face every transport shows the runtime, and the security rules they share.

A transport carries whole AAEP messages as JSON text (Appendix B framing is
its business): ``connect``, ``handshake`` (send ``subscription.request`` and
return the producer's answer, or ``None`` for a Level 1 producer that never
answers, §9.3.3), ``frames`` (raw JSON text, one message each), ``send`` (a
reply, renegotiation or close; returns a response message when the transport
carries one back synchronously, as HTTP does) and ``close``.

:class:`Transport` is that face as a base class, complete like the UI's
``runtime.contract.UiSession``: what a transport may offer beyond the five methods
(ending on its own, mapping its own events, opening late, resuming) has a default here,
so the runtime reads it and never probes a transport with ``getattr``. An agent the
user can type to (ACP) also shows :class:`AgentLink`, through :meth:`Transport.agent`.
"""

from __future__ import annotations

import ipaddress
import logging
import os
import ssl
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import SplitResult, urljoin, urlsplit

from announcer.engine.subscription import HandshakeAnswer, read_answer

if TYPE_CHECKING:
    from announcer.transports.acp_process import LoginOffer

log = logging.getLogger("announcer.transports")

DEFAULT_MAX_FRAME_BYTES = 1024 * 1024  # §8.3: at least 64 KiB, SHOULD 1 MiB


class TransportError(RuntimeError):
    """The connection failed or broke; the message is a plain sentence for the user."""


class TransportRefused(TransportError):
    """A source that retrying cannot fix; the runtime gives up on it and says why."""


class InsecureTransportRefused(TransportRefused):
    """Plaintext to a host that is not loopback without ``--allow-insecure`` (§8.2.8)."""


class SourceUnavailable(TransportRefused):
    """Retrying cannot help (a command that cannot be started): the source is given up."""


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
        """Certificates are verified by default; ``--ca-file`` adds a private CA.

        A CA file that cannot be used is the user's to fix, so retrying cannot help:
        one sentence naming the flag and the file (issue 29 item 10), never a traceback.
        """
        try:
            return ssl.create_default_context(cafile=self.ca_file)
        except OSError as exc:  # ssl.SSLError is an OSError: a file that holds no PEM
            raise SourceUnavailable(ca_file_problem(self.ca_file or "", exc)) from None

    def drop_not_utf8(self) -> None:
        """One rule on every transport: a message that is not UTF-8 is dropped, counted,
        and the connection kept (docs/transports.md "Odd messages")."""
        self.count_drop(NOT_UTF8)

    def drop_oversize(self, limit: int | None = None) -> None:
        """One rule on every transport: a message over ``--max-frame-bytes`` (SSE: the
        §3.7 event limit plus framing) is dropped, counted, and the connection kept."""
        self.count_drop(oversize_reason(limit or self.max_frame_bytes))

    def count_drop(self, reason: str) -> None:
        self.dropped[reason] = self.dropped.get(reason, 0) + 1
        log.warning("dropped a frame: %s (%d so far)", reason, self.dropped[reason])


NOT_UTF8 = "message is not valid UTF-8"


def ca_file_problem(path: str, exc: OSError) -> str:
    """Why ``--ca-file PATH`` cannot be used, as one plain sentence."""
    if isinstance(exc, ssl.SSLError):
        reason = "it holds no PEM certificate"
    elif isinstance(exc, FileNotFoundError):
        reason = "there is no such file"
    elif isinstance(exc, PermissionError):
        reason = "it may not be read"
    elif isinstance(exc, IsADirectoryError):
        reason = "it is a folder"
    else:
        reason = exc.strerror or type(exc).__name__
    return f"cannot use the CA file given with --ca-file, {path}: {reason}"


def oversize_reason(limit: int) -> str:
    return f"message over {limit} bytes"


def same_origin(url: str, origin: str) -> str | None:
    """``url`` (absolute or relative, as a producer wrote it) as a path on ``origin``,
    or None when it points anywhere else.

    Credentials go only where the user pointed (§10): a ``Location`` header, a
    manifest endpoint or any other producer-supplied URL on another scheme, host or
    port is never followed, so the token and the replies cannot be sent elsewhere.
    """
    try:
        target = urlsplit(urljoin(origin + "/", url))
        base = urlsplit(origin)
        same = (
            target.scheme == base.scheme
            and (target.hostname or "") == (base.hostname or "")
            and _port(target) == _port(base)
            and not target.username
            and not target.password
        )
    except ValueError:
        return None
    if not same:
        return None
    # one leading slash: "//host/x" would read as another host to an HTTP client
    path = "/" + target.path.lstrip("/")
    return f"{path}?{target.query}" if target.query else path


def _port(parts: SplitResult) -> int | None:
    default = {"http": 80, "https": 443, "ws": 80, "wss": 443}.get(parts.scheme)
    return parts.port or default


def is_handshake_answer(kind: str | None) -> bool:
    return kind in ("subscription.accepted", "subscription.rejected")


def decode_handshake_answer(raw: str) -> dict[str, Any] | None:
    """A ``subscription.*`` message read by the same decoder as events (§3.8, §3.9);
    None for anything else.

    Duplicate keys, deep nesting, non-standard numbers: the frame is not read at all
    (None). A message the models find wrong in some field is still returned, so a bad
    ``agent_name`` does not cost the user the subscription; the runtime only uses
    fields of the right type.
    """
    from announcer.protocol import decode_frame

    result = decode_frame(raw)
    if result.raw is None:
        log.warning(
            "unreadable handshake message: %s",
            "; ".join(d.message for d in result.diagnostics) or "not JSON",
        )
        return None
    if not (result.type or "").startswith("subscription."):
        return None
    if not result.ok:
        log.warning(
            "the producer's %s breaks the spec: %s",
            result.type,
            "; ".join(f"{d.pointer or 'frame'} {d.message}" for d in result.errors),
        )
    return result.raw


@dataclass(frozen=True, slots=True)
class HandshakeOutcome:
    """The producer's answer, or ``None`` when it never answered (Level 1/2)."""

    response: dict[str, Any] | None
    early_frames: list[str] = field(default_factory=list)
    resumed: bool = False

    @property
    def answer(self) -> HandshakeAnswer | None:
        """The answer, typed by the core (None: the producer never answered)."""
        return None if self.response is None else read_answer(self.response)


#: what :meth:`Transport.send` returns for an answer it took but has not sent yet: the
#: agent's follow-up question comes first (which of its "always" answers, issue 31 item 2).
#: Compared by identity; never a producer's message.
ANSWER_HELD: dict[str, Any] = {"x-announcer": "answer held for a follow-up question"}


class Transport(ABC):
    """One source's connection, as the runtime (``runtime/sources.py``) drives it.

    Every transport gives the five methods; the rest are optional, each with the default
    meaning "this transport does not do that". A transport overrides what it offers
    (a class attribute or one set in ``__init__``). docs/architecture.md, "Where changes
    go", says what a new transport needs.
    """

    # ---- what every transport gives ---------------------------------------------------

    #: the source's id in the engine (one per source: events, replies, diagnostics)
    source_id: str
    #: how the user hears the source named until its producer names itself
    description: str

    @abstractmethod
    async def connect(self) -> None:
        """Open the connection (or start the process); :class:`TransportError` when not."""

    @abstractmethod
    async def handshake(self, request: dict[str, Any], timeout: float) -> HandshakeOutcome:
        """Send ``subscription.request`` (ch. 5); the producer's answer, or none (§9.3.3)."""

    @abstractmethod
    def frames(self) -> AsyncIterator[str]:
        """Each message received, as JSON text; ends when the source does."""

    @abstractmethod
    async def send(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """A reply, renegotiation or close; a response when the transport carries one back
        at once (HTTP), :data:`ANSWER_HELD` for an answer held for a follow-up question."""

    @abstractmethod
    async def close(self, reason: str = "subscriber_shutdown") -> None:
        """Close the connection (end the process); safe to call twice."""

    # ---- optional, with their defaults ------------------------------------------------

    #: the source ends on its own (a recording, an agent process): when its frames end it
    #: is finished, and when it fails it is given up, never reconnected (one process is one
    #: conversation); otherwise an end of frames is a lost connection, retried (§8.7)
    finite: bool = False
    #: its frames are announcer's own mapping of another protocol (ACP, hooks), so its
    #: events are trusted with ``x-announcer`` hints (§7, issue 22 item 3)
    maps_events: bool = False
    #: the stream is open only when the producer answers after the handshake (SSE: the
    #: handshake is a POST); the runtime then sets :attr:`on_open`, and the transport
    #: calls it at that moment. Otherwise the source counts as open after the handshake.
    signals_open: bool = False
    #: set by the runtime when :attr:`signals_open`: called once the stream is open
    on_open: Callable[[], None] | None = None
    #: how many addresses the producer pointed announcer at on another origin, refused
    #: (§10: the user hears each new refusal)
    refused_urls: int = 0
    #: the source stopped on its own, unexpectedly (an agent process crashed): the run's
    #: exit status is then 1
    died: bool = False

    async def resume(self) -> bool:
        """After a lost connection, take up the same subscription again instead of a new
        handshake (SSE's ``Last-Event-ID``); False when this transport cannot (the
        default) or the producer refused."""
        return False

    def agent(self) -> AgentLink | None:
        """This source as an agent the user can type to, or None (an AAEP producer)."""
        return None


class AgentLink(Protocol):
    """An agent the user types to, beside its :class:`Transport` face (ACP: ``announcer
    agent``, ``listen acp:NAME``). ``runtime/agents.py`` and the UIs use only this."""

    #: the source's id (the same as its transport's)
    source_id: str
    #: its name as said and shown; the agent's own title when it gave one
    description: str
    #: the short name the user gave it (typed after ``@``), or None
    label: str | None
    #: the interface's way to run a terminal login for it, set by the session (or None)
    offer_login: LoginOffer | None

    @property
    def producer_id(self) -> str:
        """The producer id its events carry (who speaks: §9 speaker names and voices)."""

    @property
    def busy(self) -> bool:
        """A turn is under way."""

    @property
    def stopped(self) -> bool:
        """It has ended: it takes no more messages."""

    @property
    def ready(self) -> bool:
        """A message goes out at once (not still starting)."""

    def prompt(self, text: str) -> bool:
        """Send the user's message; False when it cannot be taken now."""

    async def cancel_turn(self) -> bool:
        """Stop the turn under way; False when none was."""

    async def change_setting(self, kind: str, wanted: str) -> str:
        """``:mode`` / ``:model``: the sentence said (a listing or a refusal), or ""."""

    async def sessions(self, choice: str = "") -> str:
        """``:sessions [N]``: list or resume its sessions; the sentence said."""

    def setting_rows(self) -> list[tuple[str, str, str, bool]]:
        """Its mode and config choices: (setting, value, label, current)."""

    def commands(self) -> list[tuple[str, str]]:
        """Its slash commands, as it last listed them."""

    def suggestions(self) -> list[str]:
        """The prompts it last suggested sending next."""

    def aaep_session_id(self) -> str | None:
        """The session's id in the events the engine reads, once it has one."""


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
    """A frame's ``type`` for transport routing, read by the protocol decoder, so a
    duplicate ``type`` key or a frame nested too deeply has no type at all."""
    from announcer.protocol import decode_frame

    result = decode_frame(raw)
    return result.type if result.raw is not None else None


def release_process_pipes(process: Any) -> None:
    """Close a child's asyncio pipes while their loop still runs.

    ``asyncio.subprocess.Process`` has no public close: its transport stays open until
    it is garbage collected, and if that happens after the loop closed, its finaliser
    raises "Event loop is closed" as an unraisable exception. Closing it here frees the
    pipes at a known time instead. Called last, after the child's family was ended, and
    also when that ending was cut short (a bounded goodbye cancels it): a child still not
    reaped is killed by the close, as it would have been.
    """
    if process is None:
        return
    transport = getattr(process, "_transport", None)
    if transport is not None and not transport.is_closing():
        transport.close()
