"""Why a connection failed, in words a listener can act on, without errno text.

Transports raise with the operating system's own message ("[Errno 111] Connect call
failed ('127.0.0.1', 8080)"); read aloud, that is noise. Each known cause becomes a
short translated phrase; anything else keeps its text with errno numbers, Python
exception names and a repeated "cannot connect to URL:" taken out. The full text
still goes to the log.
"""

from __future__ import annotations

import re

from announcer.i18n.translate import translator

N_ = str  # marks msgids for extraction (babel.cfg keywords); translated in connection_failure

_CAUSES: tuple[tuple[re.Pattern[str], str], ...] = (
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
)
_NOISE = re.compile(r"\[Errno -?\d+\]\s*|\(\s*'[^']*',\s*\d+\s*\)|^cannot connect to \S+:\s*", re.I)


def connection_failure(reason: str, language: str) -> str:
    """A cause the listener understands ("nothing is listening at that address")."""
    t = translator(language)
    for pattern, msgid in _CAUSES:
        if pattern.search(reason):
            return t.gettext(msgid)
    cleaned = " ".join(_NOISE.sub("", reason).split()).rstrip(" .:")
    return cleaned or t.gettext("the connection failed")
