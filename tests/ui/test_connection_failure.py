"""A connection failure is shown, kept in History and spoken in words, without errno text."""

from __future__ import annotations

import asyncio
import io
import socket
from pathlib import Path

import pytest

from announcer.engine.settings import UserSettings
from announcer.runtime.failures import connection_failure
from announcer.runtime.session import LiveSession
from announcer.speech.driver import SpeechDriver
from announcer.speech.jsonl import JsonlBackend
from announcer.transports.base import SourceUnavailable, TransportError, TransportOptions
from announcer.transports.failure import Cause, Fault, os_cause, status_cause
from announcer.transports.sse import SseTransport
from announcer.transports.stdio import StdioTransport
from announcer.ui.tui.app import AnnouncerApp
from tests.support.producers import ws_url
from tests.support.speech_record import spoken_in

TIMEOUT = 30.0


def test_os_errors_become_causes_in_the_users_language() -> None:
    """The OS's error, however deep a library wrapped it, is the cause; its errno text
    is never said."""
    refused = ConnectionRefusedError(111, "Connect call failed ('127.0.0.1', 9)")
    assert connection_failure(os_cause(refused), "en") == "nothing is listening at that address"
    assert connection_failure(os_cause(_wrapped(refused)), "en") == (
        "nothing is listening at that address"
    )
    unknown_host = socket.gaierror(-2, "Name or service not known")
    assert connection_failure(os_cause(_wrapped(unknown_host)), "en") == (
        "the host name was not found"
    )
    assert connection_failure(os_cause(refused), "es") != "nothing is listening at that address"
    odd = connection_failure(os_cause(OSError(99, "odd thing happened")), "en")
    assert odd == "odd thing happened"


def _wrapped(exc: OSError) -> BaseException:
    """As anyio and httpx hand it on: several attempts grouped, each layer ``from`` the
    one below."""
    try:
        try:
            raise OSError("All connection attempts failed") from ExceptionGroup("all", [exc])
        except OSError as attempts:
            raise RuntimeError("cannot connect") from attempts
    except RuntimeError as outer:
        return outer


def test_an_agents_last_words_are_kept_and_never_read_for_a_cause() -> None:
    """The host's "not installed ... Install it there with" is the reason the user needs;
    "installed" holds "stalled", and that must not turn it into a stall."""
    closed = Cause(Fault.UNKNOWN, detail="the agent 'gemini' failed: Connection closed")
    words = (
        "Gemini CLI is not installed on build-box. Install it there with: "
        "npm install -g @google/gemini-cli@0.61.0"
    )
    assert connection_failure(closed.saying(words), "en") == (
        "the agent 'gemini' failed: Connection closed; it said: Gemini CLI is not installed "
        "on build-box. Install it there with: npm install -g @google/gemini-cli@0.61.0"
    )
    exited = Cause(Fault.PROCESS_EXITED, status=7).saying("No such file here.")
    assert connection_failure(exited, "en") == (
        "its process ended with status 7; it said: No such file here"
    )
    assert connection_failure(exited, "de") == (
        "sein Prozess endete mit Status 7; es sagte: No such file here"
    )
    assert connection_failure(Cause(Fault.STALLED), "en") == "it stalled and stopped answering"
    # when our own cause names none, the host's words may: both are said
    ssh = Cause(Fault.UNKNOWN, detail="the agent 'ssh' failed: Connection closed")
    assert connection_failure(ssh.saying("ssh: connect to host a: Connection refused"), "en") == (
        "nothing is listening at that address; it said: ssh: connect to host a: Connection refused"
    )


def test_the_transports_own_causes_are_said_in_the_users_language() -> None:
    """The causes our transports give (not only the OS's) are translated, their
    details (a status, a command) kept."""
    cases = {
        Cause(Fault.OTHER_ORIGIN): "it pointed to another address, which was refused",
        Cause(Fault.COMMAND_NOT_FOUND, command="/no/such"): "the command /no/such was not found",
        Cause(Fault.PROCESS_EXITED, status=127): "its process ended with status 127",
        status_cause(500): "it answered with HTTP status 500",
        Cause(Fault.STALLED): "it stalled and stopped answering",
        Cause(Fault.TOKEN_REFUSED, status=401): (
            "access was refused; check the token (--token-env or --token-file)"
        ),
        status_cause(403): "access was refused",
    }
    for cause, words in cases.items():
        assert connection_failure(cause, "en") == words
    spanish = connection_failure(Cause(Fault.PROCESS_EXITED, status=127), "es")
    assert spanish == "su proceso terminó con el estado 127"
    not_started = Cause(Fault.COMMAND_NOT_STARTED, command="x-agent")
    assert connection_failure(not_started, "de") == (
        "der Befehl x-agent konnte nicht gestartet werden"
    )


async def test_a_command_that_cannot_start_is_said_by_its_cause(tmp_path: Path) -> None:
    """The cause is set where the failure is raised: a command that is not there, and
    one that may not be run, each named as such."""
    missing = StdioTransport(str(tmp_path / "no-such-agent"), TransportOptions())
    with pytest.raises(SourceUnavailable) as raised:
        await missing.connect()
    assert connection_failure(raised.value.cause, "en") == (
        f"the command {tmp_path / 'no-such-agent'} was not found"
    )
    not_runnable = tmp_path / "agent"
    not_runnable.write_text("#!/bin/sh\n")  # not executable
    with pytest.raises(SourceUnavailable) as raised:
        await StdioTransport(str(not_runnable), TransportOptions()).connect()
    assert connection_failure(raised.value.cause, "en") == (
        f"the command {not_runnable} could not be started"
    )


async def test_a_refused_connection_is_on_screen_in_history_and_spoken_in_words() -> None:
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()  # nothing listens there now
    records = io.StringIO()
    session = LiveSession(
        [ws_url(port)],
        UserSettings(),
        driver=SpeechDriver(JsonlBackend(records)),
    )
    app = AnnouncerApp(session)
    async with app.run_test() as pilot:
        runner = asyncio.ensure_future(session.run())
        loop = asyncio.get_running_loop()
        deadline = loop.time() + TIMEOUT
        while not any("Cannot connect" in e for e in app.main_screen.transcript.entries):
            assert loop.time() < deadline, "no failure shown"
            await pilot.pause(0.05)
        [shown] = [e for e in app.main_screen.transcript.entries if "Cannot connect" in e]
        assert shown.endswith("nothing is listening at that address. Retrying.")
        assert "Errno" not in shown and "127.0.0.1', " not in shown
        assert any(entry.line == shown for entry in app.history)
        assert shown in spoken_in(records.getvalue())
        assert "not connected" in str(app.main_screen.status_widget.content)
        session.stop()
        await asyncio.wait_for(runner, TIMEOUT)


async def test_a_refused_sse_connection_is_said_by_the_os_error_beneath_httpx() -> None:
    """httpx wraps the refusal in httpcore's error, which wraps anyio's "All connection
    attempts failed", which was raised from the OS's ConnectionRefusedError: the cause is
    found beneath, never read from the sentence."""
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()  # nothing listens there now
    transport = SseTransport(f"http://127.0.0.1:{port}", TransportOptions())
    try:
        with pytest.raises(TransportError) as raised:
            await transport.connect()
            await transport.handshake({"type": "subscription.request"}, TIMEOUT)
    finally:
        await transport.close()
    assert connection_failure(raised.value.cause, "en") == "nothing is listening at that address"
