"""Why a connection failed, in words a listener can act on, without errno text.

Transports raise with the operating system's own message ("[Errno 111] Connect call
failed ('127.0.0.1', 8080)"); read aloud, that is noise. Each known cause becomes a
short translated phrase; anything else keeps its text with errno numbers, Python
exception names and a repeated "cannot connect to URL:" taken out. The full text
still goes to the log.
"""

from __future__ import annotations

import gettext
import re

from announcer.engine.subscription import WEBSOCKET_CLOSE_REASONS
from announcer.i18n.translate import translator

N_ = str  # marks msgids for extraction (babel.cfg keywords); translated in connection_failure

# The transports' own reasons come first: they are more exact than the OS message they
# may quote ("cannot start the command x: No such file or directory" is about a command,
# not a socket). A named group fills the placeholder of the same name.
_CAUSES: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        # before "No such file" and "SSL": the file is the user's --ca-file, not a socket
        re.compile(r"CA file given with --ca-file, (?P<path>.+): (?P<reason>[^:]+)$", re.I),
        N_("the CA file {path}, given with --ca-file, cannot be used: {reason}"),
    ),
    (re.compile(r"another origin", re.I), N_("it pointed to another address, which was refused")),
    (
        re.compile(
            r"cannot start the (?:command|agent) '?(?P<command>[^':]+)'?: No such file", re.I
        ),
        N_("the command {command} was not found"),
    ),
    (
        re.compile(r"cannot start the (?:command|agent) '?(?P<command>[^':]+)'?", re.I),
        N_("the command {command} could not be started"),
    ),
    (
        re.compile(r"process exited with status (?P<status>-?\d+)", re.I),
        N_("its process ended with status {status}"),
    ),
    (
        re.compile(r"process is not running|process stopped reading", re.I),
        N_("its process is not running"),
    ),
    (
        re.compile(r"closed the connection during the handshake", re.I),
        N_("it closed the connection during the handshake"),
    ),
    (
        re.compile(r"closed the connection|closed mid-message|connection is closed", re.I),
        N_("it closed the connection"),
    ),
    (
        # the HTTP library's own words for a stream cut short (issue 29, item 15): "peer
        # closed connection without sending complete message body (incomplete chunked
        # read)", "Server disconnected without sending a response."
        re.compile(
            r"peer closed connection|incomplete chunked read|complete message body"
            r"|server disconnected|RemoteProtocolError",
            re.I,
        ),
        N_("it closed the connection"),
    ),
    (re.compile(r"ended the event stream", re.I), N_("it ended the event stream")),
    (re.compile(r"went silent", re.I), N_("it went silent, with no events and no heartbeat")),
    (re.compile(r"\bstalled\b", re.I), N_("it stalled and stopped answering")),
    (
        re.compile(r"did not agree to the aaep\.v1 subprotocol", re.I),
        N_("it does not offer AAEP over WebSocket"),
    ),
    (
        re.compile(r"no longer knows our subscription", re.I),
        N_("it no longer knows our subscription"),
    ),
    (
        re.compile(r"no AAEP event stream|not text/event-stream", re.I),
        N_("no AAEP event stream was found there"),
    ),
    (re.compile(r"message far over", re.I), N_("it sent a message far over the size limit")),
    (
        re.compile(r"\b40[13]\b.*check the token", re.I),
        N_("access was refused; check the token (--token-env or --token-file)"),
    ),
    (re.compile(r"token (?:variable|file)", re.I), N_("the token is missing or unreadable")),
    (re.compile(r"did not answer within", re.I), N_("it did not answer in time")),
    (
        re.compile(r"Connection refused|Errno 111|Errno 61|Errno 10061|Connect call failed", re.I),
        N_("nothing is listening at that address"),
    ),
    (
        re.compile(
            r"Name or service not known|getaddrinfo|nodename nor servname|Errno -[235]", re.I
        ),
        N_("the host name was not found"),
    ),
    (re.compile(r"timed? ?out", re.I), N_("it did not answer in time")),
    (re.compile(r"certificate|SSL|TLS", re.I), N_("its security certificate was not accepted")),
    (re.compile(r"unreachable|Errno 101|Errno 113", re.I), N_("the network cannot reach it")),
    (re.compile(r"\b40[13]\b"), N_("access was refused")),
    (re.compile(r"\b404\b"), N_("nothing was found at that address")),
    (
        re.compile(r"No such file or directory|Errno 2\b", re.I),
        N_("that socket or file does not exist"),
    ),
    (re.compile(r"Permission denied|Errno 13\b", re.I), N_("permission was denied")),
    (
        re.compile(r"HTTP (?P<status>[1-5]\d\d)\b"),
        N_("it answered with HTTP status {status}"),
    ),
)
# Why a --ca-file cannot be used (transports/base.py ca_file_problem), translated when said.
_CA_FILE_REASONS = frozenset(
    (
        N_("there is no such file"),
        N_("it holds no PEM certificate"),
        N_("it may not be read"),
        N_("it is a folder"),
    )
)
_CLOSE_WORDS = frozenset(WEBSOCKET_CLOSE_REASONS.values())
# What an agent's process (or the host that was to start it) said last on standard error,
# put after the reason by the ACP transport. It is the agent's own explanation ("Gemini CLI
# is not installed on build-box. Install it there with: npm install ..."), so it is always
# kept, and never read for a cause: "installed" is no stall.
_LAST_WORDS = re.compile(r"\s*\(it said: (?P<words>.*)\)\s*$", re.S)
_NOISE = re.compile(r"\[Errno -?\d+\]\s*|\(\s*'[^']*',\s*\d+\s*\)|^cannot connect to \S+:\s*", re.I)


def connection_failure(reason: str, language: str) -> str:
    """A cause the listener understands ("nothing is listening at that address"), and the
    agent's own last words, whole, when it left any.

    The cause is read from our own reason first; only when that names none is it read from
    the last words (ssh's "Connection refused"); the words are said either way.
    """
    t = translator(language)
    if reason in _CLOSE_WORDS:  # B.2.6: the transport's own words for a close code
        return t.gettext(reason)
    said = _LAST_WORDS.search(reason)
    if said is None:
        return _cause(reason, t) or _cleaned(reason, t)
    head = reason[: said.start()]
    words = " ".join(said["words"].split()).rstrip(" .")
    cause = _cause(head, t) or _cause(words, t) or _cleaned(head, t)
    if not words:
        return cause
    return t.gettext("{cause}; it said: {words}").format(cause=cause, words=words)


def _cause(reason: str, t: gettext.NullTranslations) -> str:
    """The first known cause ``reason`` names, in the user's language, or ""."""
    for pattern, msgid in _CAUSES:
        found = pattern.search(reason)
        if found:
            fields = {
                name: t.gettext(value) if value in _CA_FILE_REASONS else value
                for name, value in found.groupdict().items()
            }
            return t.gettext(msgid).format(**fields)
    return ""


def _cleaned(reason: str, t: gettext.NullTranslations) -> str:
    """An unknown reason as it is, without errno numbers and repeated addresses."""
    cleaned = " ".join(_NOISE.sub("", reason).split()).rstrip(" .:")
    return cleaned or t.gettext("the connection failed")
