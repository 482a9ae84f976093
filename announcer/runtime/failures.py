"""Why a connection failed, in words a listener can act on, without errno text.

A transport raises with a typed cause (``transports/failure.py``: what failed, the
command, the status), set where it knew; read aloud, the operating system's own message
("[Errno 111] Connect call failed ('127.0.0.1', 8080)") is noise. Each known fault
becomes a short translated phrase; anything else keeps its text. The full sentence still
goes to the log.
"""

from __future__ import annotations

import gettext
import re

from announcer.i18n.translate import translator
from announcer.transports.failure import Cause, Fault

N_ = str  # marks msgids for extraction (babel.cfg keywords); translated in connection_failure

# Each fault's words; a placeholder is filled from the cause's field of the same name.
FAULT_WORDS: dict[Fault, str] = {
    Fault.CA_FILE: N_("the CA file {path}, given with --ca-file, cannot be used: {reason}"),
    Fault.OTHER_ORIGIN: N_("it pointed to another address, which was refused"),
    Fault.COMMAND_NOT_FOUND: N_("the command {command} was not found"),
    Fault.COMMAND_NOT_STARTED: N_("the command {command} could not be started"),
    Fault.PROCESS_EXITED: N_("its process ended with status {status}"),
    Fault.PROCESS_NOT_RUNNING: N_("its process is not running"),
    Fault.CLOSED_IN_HANDSHAKE: N_("it closed the connection during the handshake"),
    Fault.CLOSED: N_("it closed the connection"),
    Fault.STREAM_ENDED: N_("it ended the event stream"),
    Fault.STALLED: N_("it stalled and stopped answering"),
    Fault.NO_SUBPROTOCOL: N_("it does not offer AAEP over WebSocket"),
    Fault.SUBSCRIPTION_FORGOTTEN: N_("it no longer knows our subscription"),
    Fault.NO_EVENT_STREAM: N_("no AAEP event stream was found there"),
    Fault.OVERSIZE: N_("it sent a message far over the size limit"),
    Fault.TOKEN_REFUSED: N_("access was refused; check the token (--token-env or --token-file)"),
    Fault.TOKEN_UNREADABLE: N_("the token is missing or unreadable"),
    Fault.NO_ANSWER: N_("it did not answer in time"),
    Fault.NOTHING_LISTENING: N_("nothing is listening at that address"),
    Fault.HOST_NOT_FOUND: N_("the host name was not found"),
    Fault.CERTIFICATE: N_("its security certificate was not accepted"),
    Fault.UNREACHABLE: N_("the network cannot reach it"),
    Fault.ACCESS_REFUSED: N_("access was refused"),
    Fault.NOT_FOUND: N_("nothing was found at that address"),
    Fault.NO_SUCH_FILE: N_("that socket or file does not exist"),
    Fault.PERMISSION: N_("permission was denied"),
    Fault.HTTP_STATUS: N_("it answered with HTTP status {status}"),
}
# What an agent's host says on standard error when it cannot reach the agent's machine
# (ssh's "connect to host a: Connection refused"). These are another program's words,
# the only text read for a cause, and only when our own cause names none.
_HOST_WORDS: tuple[tuple[re.Pattern[str], Fault], ...] = (
    (re.compile(r"Connection refused", re.I), Fault.NOTHING_LISTENING),
    (
        re.compile(r"Name or service not known|Could not resolve hostname|nodename nor", re.I),
        Fault.HOST_NOT_FOUND,
    ),
    (re.compile(r"No route to host|Network is unreachable", re.I), Fault.UNREACHABLE),
    (re.compile(r"timed? ?out", re.I), Fault.NO_ANSWER),
    (re.compile(r"Permission denied", re.I), Fault.PERMISSION),
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


def connection_failure(cause: Cause, language: str) -> str:
    """A cause the listener understands ("nothing is listening at that address"), and the
    agent's own last words, whole, when it left any.

    When our own cause names nothing known, the words may (ssh's "Connection refused");
    they are said either way.
    """
    t = translator(language)
    if cause.fault is Fault.CLOSE_CODE:  # B.2.6: the transport's own words for a close code
        return t.gettext(cause.detail)
    said = " ".join(cause.said.split()).rstrip(" .")
    worded = _worded(cause, t)
    if worded is None:
        fault = next((fault for pattern, fault in _HOST_WORDS if pattern.search(said)), None)
        worded = t.gettext(FAULT_WORDS[fault]) if fault else _as_it_is(cause.detail, t)
    if not said:
        return worded
    return t.gettext("{cause}; it said: {words}").format(cause=worded, words=said)


def _worded(cause: Cause, t: gettext.NullTranslations) -> str | None:
    """The fault in the user's language, or None when it is not one we know."""
    msgid = FAULT_WORDS.get(cause.fault)
    if msgid is None:
        return None
    reason = t.gettext(cause.detail) if cause.detail in _CA_FILE_REASONS else cause.detail
    return t.gettext(msgid).format(
        path=cause.path, command=cause.command, status=cause.status, reason=reason
    )


def _as_it_is(detail: str, t: gettext.NullTranslations) -> str:
    """A reason we know nothing more about, as the library or agent gave it."""
    return " ".join(detail.split()).rstrip(" .:") or t.gettext("the connection failed")
