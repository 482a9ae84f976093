"""A connection failure is shown, kept in History and spoken in words, without errno text."""

from __future__ import annotations

import asyncio
import io
import socket

from announcer.engine.settings import UserSettings
from announcer.runtime.failures import connection_failure
from announcer.runtime.session import LiveSession
from announcer.speech.driver import SpeechDriver
from announcer.speech.jsonl import JsonlBackend
from announcer.ui.tui.app import AnnouncerApp
from tests.support.producers import ws_url
from tests.support.speech_record import spoken_in

TIMEOUT = 30.0


def test_os_messages_become_causes_in_the_users_language() -> None:
    refused = "cannot connect to ws://h/x: [Errno 111] Connect call failed ('127.0.0.1', 9)"
    assert connection_failure(refused, "en") == "nothing is listening at that address"
    assert connection_failure("[Errno -2] Name or service not known", "en") == (
        "the host name was not found"
    )
    assert connection_failure(refused, "es") != "nothing is listening at that address"
    assert "Errno" not in connection_failure("[Errno 99] odd thing happened", "en")


def test_an_agents_last_words_are_kept_and_never_read_for_a_cause() -> None:
    """The host's "not installed ... Install it there with" is the reason the user needs;
    "installed" holds "stalled", and that must not turn it into a stall."""
    reason = (
        "the agent 'gemini' failed: Connection closed (it said: Gemini CLI is not installed "
        "on build-box. Install it there with: npm install -g @google/gemini-cli@0.61.0)"
    )
    assert connection_failure(reason, "en") == (
        "the agent 'gemini' failed: Connection closed; it said: Gemini CLI is not installed "
        "on build-box. Install it there with: npm install -g @google/gemini-cli@0.61.0"
    )
    exited = "the agent 'x' failed: process exited with status 7 (it said: No such file here.)"
    assert connection_failure(exited, "en") == (
        "its process ended with status 7; it said: No such file here"
    )
    assert connection_failure(exited, "de") == (
        "sein Prozess endete mit Status 7; es sagte: No such file here"
    )
    assert connection_failure("the connection stalled", "en") == "it stalled and stopped answering"
    # when our own reason names no cause, the words may: both are said
    refused = (
        "the agent 'ssh' failed: Connection closed "
        "(it said: ssh: connect to host a: Connection refused)"
    )
    assert connection_failure(refused, "en") == (
        "nothing is listening at that address; it said: ssh: connect to host a: Connection refused"
    )


def test_the_transports_own_reasons_are_said_in_the_users_language() -> None:
    """The reasons our transports give (not only the OS's) are translated, their
    details (a status, a command) kept."""
    cases = {
        "the producer redirected the connection to another origin; refused": (
            "it pointed to another address, which was refused"
        ),
        "cannot start the command /no/such: No such file or directory": (
            "the command /no/such was not found"
        ),
        "the producer process exited with status 127": "its process ended with status 127",
        "the event stream answered HTTP 500": "it answered with HTTP status 500",
        "the producer stalled: no answer to a ping for 20 seconds": (
            "it stalled and stopped answering"
        ),
        "the producer refused the subscription (HTTP 401): check the token (--token-env or "
        "--token-file)": "access was refused; check the token (--token-env or --token-file)",
        "the producer refused the WebSocket (HTTP 403)": "access was refused",
    }
    for reason, words in cases.items():
        assert connection_failure(reason, "en") == words
    spanish = connection_failure("the producer process exited with status 127", "es")
    assert spanish == "su proceso terminó con el estado 127"
    assert connection_failure("cannot start the command x-agent: Permission denied", "de") == (
        "der Befehl x-agent konnte nicht gestartet werden"
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
