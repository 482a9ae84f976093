"""What failed, as a fact a transport sets where it raises (issue 32, step 2).

A transport knows why it gave up at the moment it does: the command it could not start,
the status a process ended with, the HTTP status a producer answered. It records that
here, and ``runtime/failures.py`` words the fact for the listener. No one reads the
English sentence of a :class:`~announcer.transports.base.TransportError` for a cause
afterwards; that sentence is for the log.
"""

from __future__ import annotations

import errno
import socket
import ssl
from dataclasses import dataclass, replace
from enum import Enum


class Fault(Enum):
    """Each kind of failure the listener is told about in its own words."""

    CA_FILE = "ca_file"  # path, detail: why (one of base.CA_FILE_REASONS)
    OTHER_ORIGIN = "other_origin"  # a redirect or stream on another origin was refused
    COMMAND_NOT_FOUND = "command_not_found"  # command
    COMMAND_NOT_STARTED = "command_not_started"  # command
    PROCESS_EXITED = "process_exited"  # status
    PROCESS_NOT_RUNNING = "process_not_running"
    CLOSED_IN_HANDSHAKE = "closed_in_handshake"
    CLOSED = "closed"
    STREAM_ENDED = "stream_ended"
    STALLED = "stalled"
    NO_SUBPROTOCOL = "no_subprotocol"
    SUBSCRIPTION_FORGOTTEN = "subscription_forgotten"
    NO_EVENT_STREAM = "no_event_stream"
    OVERSIZE = "oversize"
    TOKEN_REFUSED = "token_refused"  # status 401/403 to a request that carried our token
    TOKEN_UNREADABLE = "token_unreadable"
    NO_ANSWER = "no_answer"  # a timeout
    NOTHING_LISTENING = "nothing_listening"
    HOST_NOT_FOUND = "host_not_found"
    CERTIFICATE = "certificate"
    UNREACHABLE = "unreachable"
    ACCESS_REFUSED = "access_refused"  # status 401/403
    NOT_FOUND = "not_found"  # status 404
    NO_SUCH_FILE = "no_such_file"  # a socket or file path
    PERMISSION = "permission"
    HTTP_STATUS = "http_status"  # status
    CLOSE_CODE = "close_code"  # detail: the B.2.6 words for a WebSocket close code
    UNKNOWN = "unknown"  # detail: the text as it is (a library's or the agent's)


@dataclass(frozen=True, slots=True)
class Cause:
    """One failure: what failed, and the command, status or path it concerns.

    ``said`` is what the agent's process (or the host that was to start it) wrote last
    on standard error: its own explanation, always said, never read for our cause.
    """

    fault: Fault
    command: str = ""
    status: int | None = None
    path: str = ""
    detail: str = ""
    said: str = ""

    def saying(self, words: str) -> Cause:
        """The same cause with the agent's last words."""
        return replace(self, said=words)


def status_cause(status: int) -> Cause:
    """An HTTP status a producer answered with."""
    if status in (401, 403):
        return Cause(Fault.ACCESS_REFUSED, status=status)
    if status == 404:
        return Cause(Fault.NOT_FOUND, status=status)
    return Cause(Fault.HTTP_STATUS, status=status)


_REFUSED = frozenset({errno.ECONNREFUSED, 61, 10061})  # Linux, macOS, Windows numbers
_UNREACHABLE = frozenset({errno.ENETUNREACH, errno.EHOSTUNREACH, 10051, 10065})
_MAX_CHAIN = 8  # a library wraps an OS error a few times at most


def os_cause(exc: BaseException, about: str = "") -> Cause:
    """The cause an exception from the OS or a network library stands for.

    Libraries wrap the operating system's error (httpx in httpcore in anyio, which may
    group several attempts), so the chain of causes is followed to the first error that
    says what happened; one that says nothing known keeps its own text, without errno,
    after ``about`` ("the Unix socket broke") when given.
    """
    seen: BaseException | None = exc
    words = ""
    for _ in range(_MAX_CHAIN):
        if seen is None:
            break
        known = _known(seen)
        if known is not None:
            return known
        if not words and isinstance(seen, OSError) and seen.strerror:
            words = seen.strerror  # the OS's own words, without "[Errno n]"
        seen = _beneath(seen)
    words = words or _words(exc)
    return Cause(Fault.UNKNOWN, detail=f"{about}: {words}" if about else words)


def _beneath(exc: BaseException) -> BaseException | None:
    """The error a library's own error stands for: the first of a group of attempts
    (anyio), the one it was raised ``from``, the one it wraps as its argument (httpcore's
    ``ConnectError(OSError(...))``), or the one it was raised while handling, unless it
    said that one is beside the point (``from None``)."""
    if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        return exc.exceptions[0]
    if exc.__cause__ is not None:
        return exc.__cause__
    wrapped = next((arg for arg in exc.args if isinstance(arg, BaseException)), None)
    if wrapped is not None:
        return wrapped
    return None if exc.__suppress_context__ else exc.__context__


def _known(exc: BaseException) -> Cause | None:
    if isinstance(exc, ssl.SSLError | ssl.CertificateError):
        return Cause(Fault.CERTIFICATE)
    if isinstance(exc, socket.gaierror):
        return Cause(Fault.HOST_NOT_FOUND)
    if isinstance(exc, TimeoutError):
        return Cause(Fault.NO_ANSWER)
    if isinstance(exc, ConnectionRefusedError):
        return Cause(Fault.NOTHING_LISTENING)
    if isinstance(exc, FileNotFoundError):
        return Cause(Fault.NO_SUCH_FILE)
    if isinstance(exc, PermissionError):
        return Cause(Fault.PERMISSION)
    if isinstance(exc, OSError) and exc.errno is not None:
        if exc.errno in _REFUSED:
            return Cause(Fault.NOTHING_LISTENING)
        if exc.errno in _UNREACHABLE:
            return Cause(Fault.UNREACHABLE)
    return None


def _words(exc: BaseException) -> str:
    """An exception's own message, first line only (an HTTP error's later lines may
    carry headers, and with them the token), without the ``[Errno n]`` prefix."""
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    text = str(exc).split("\n")[0].strip()
    return text or type(exc).__name__
