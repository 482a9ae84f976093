"""Each transport against the demo producer over real loopback sockets and pipes."""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import os
import shlex
import struct
import sys
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.server import serve

from announcer.engine.settings import UserSettings
from announcer.runtime.capabilities import subscription_request
from announcer.transports import (
    InsecureTransportRefused,
    TransportError,
    TransportOptions,
    open_transport,
)
from announcer.transports.sse import SseTransport
from tests.producer.live import TIMEOUT, WORKTREE, scenario_path, start_producer, validate
from tests.shared_data import SHARED as SHARED_ROOT
from tests.support.processes import alive
from tests.support.producers import http_url, producer_url, ws_url


def _request(can_reply: bool = False) -> dict[str, Any]:
    return subscription_request(UserSettings(), can_reply=can_reply)


async def _read_until_completed(transport: Any) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []

    async def read() -> None:
        async for raw in transport.frames():
            event = json.loads(raw)
            events.append(event)
            if event.get("type") == "aaep:agent.session.completed":
                return

    await asyncio.wait_for(read(), TIMEOUT)
    return events


@pytest.mark.parametrize("kind", ["ws", "sse", "unix-length", "unix-ndjson"])
async def test_each_transport_carries_a_whole_session(kind: str, tmp_path: Path) -> None:
    framing = "ndjson" if kind == "unix-ndjson" else "length"
    sock = str(tmp_path / "p.sock")
    server = await start_producer("confirm", unix_path=sock, unix_framing=framing)
    source = {
        "ws": ws_url(server),
        "sse": http_url(server),
        "unix-length": f"unix:{sock}",
        "unix-ndjson": f"unix:{sock}",
    }[kind]
    transport = open_transport(source, TransportOptions(unix_framing=framing))
    try:
        await transport.connect()
        request = _request()
        validate(request)
        outcome = await transport.handshake(request, TIMEOUT)
        assert outcome.response is not None
        assert outcome.response["type"] == "subscription.accepted"
        events = await _read_until_completed(transport)
    finally:
        await transport.close()
        await server.close()
    for event in events:
        validate(event)
    # Without reply support the producer never sends the prompt and applies its default (§5.3.1.4).
    assert all(e["type"] != "aaep:agent.awaiting.confirmation" for e in events)
    assert any(e.get("summary_normal") == "No answer in time; nothing was done." for e in events)


async def test_stdio_json_rpc_with_a_child_producer() -> None:
    command = (
        f"{sys.executable} -m announcer demo-producer --stdio --speed 0.05 "
        f"--scenario {scenario_path('confirm')}"
    )
    transport = open_transport(f"stdio:{command}", TransportOptions())

    old = os.getcwd()
    os.chdir(WORKTREE)
    try:
        await transport.connect()
    finally:
        os.chdir(old)
    try:
        outcome = await transport.handshake(_request(), TIMEOUT)
        assert outcome.response is not None
        assert outcome.response["type"] == "subscription.accepted"
        events = await _read_until_completed(transport)
        assert events[0]["type"] == "aaep:agent.session.started"
    finally:
        proc = transport._proc  # type: ignore[attr-defined]
        await transport.close()
    assert proc is not None and proc.returncode is not None  # the child is gone


async def test_a_stdio_producer_that_exits_is_said_even_while_its_child_holds_stdout(
    tmp_path: Path,
) -> None:
    """The producer starts a command that inherits its standard output, writes one event and
    exits: its stdout stays open, yet the exit is seen and said, and the command is ended."""
    event = json.dumps({"jsonrpc": "2.0", "method": "aaep.event", "params": {"type": "x"}})
    script = f"sleep 600 & echo $! > {tmp_path / 'child.pid'}; echo '{event}'; exit 3"
    transport = open_transport(f"stdio:sh -c {shlex.quote(script)}", TransportOptions())
    await transport.connect()
    try:
        frames = transport.frames()
        first = await asyncio.wait_for(frames.__anext__(), TIMEOUT)
        assert json.loads(first) == {"type": "x"}  # what it wrote before it went is kept
        with pytest.raises(TransportError, match="the producer process exited with status 3"):
            await asyncio.wait_for(frames.__anext__(), TIMEOUT)
        child = int((tmp_path / "child.pid").read_text())
        assert alive(child)  # the stdout it holds is why the end of the stream never came
    finally:
        await transport.close()
    assert not alive(child), "the command the producer started outlived it"


def test_a_stdio_close_cut_short_leaves_no_pipe_for_after_the_loop(tmp_path: Path) -> None:
    """The runtime bounds its goodbyes: a close cancelled while the producer (which ignores
    its closed stdin) is still being ended must not leave its pipes to the garbage collector,
    whose finaliser would say "Event loop is closed" once the loop is gone."""
    started = tmp_path / "started"
    script = f"trap '' TERM; touch {started}; sleep 600"
    unraisable: list[str] = []
    previous = sys.unraisablehook
    sys.unraisablehook = lambda report: unraisable.append(repr(report.exc_value))

    async def cut_short() -> None:
        transport = open_transport(f"stdio:sh -c {shlex.quote(script)}", TransportOptions())
        await transport.connect()
        while not started.exists():  # the producer runs (and ignores SIGTERM)
            await asyncio.sleep(0.01)
        try:
            await asyncio.wait_for(transport.close(), 0.2)  # cut short mid-goodbye
        except TimeoutError:
            return
        raise AssertionError("the close was not cut short")

    try:
        asyncio.run(cut_short())
        gc.collect()  # the loop is closed: an unclosed pipe's finaliser would run now
    finally:
        sys.unraisablehook = previous
    assert unraisable == []


async def test_sse_paths_come_from_the_manifest() -> None:
    server = await start_producer("confirm")
    transport = SseTransport(http_url(server), TransportOptions())
    try:
        await transport.connect()
        assert transport.paths == {
            "subscribe": "/aaep/v1/subscriptions",
            "events": "/aaep/v1/events",
            "replies": "/aaep/v1/replies",
        }
    finally:
        await transport.close()
        await server.close()


async def test_sse_falls_back_to_the_reference_producer_paths() -> None:
    """Like Ramseyxlil/aaep python-minimal: GET /events, POST /messages, no handshake."""
    server = await start_producer("confirm", paths="reference", handshake=False)
    transport = SseTransport(http_url(server), TransportOptions())
    try:
        await transport.connect()
        outcome = await transport.handshake(_request(can_reply=True), TIMEOUT)
        assert outcome.response is None  # Level 1/2: no handshake, defaults apply
        assert transport.paths is not None and transport.paths["events"] == "/events"
        frames = transport.frames()  # kept open: closing the stream would void the prompt
        while True:
            prompt = json.loads(await asyncio.wait_for(frames.__anext__(), TIMEOUT))
            if prompt["type"] == "aaep:agent.awaiting.confirmation":
                break
        reply = {
            "type": "confirmation.reply",
            "reply_token": prompt["reply_token"],
            "decision": "reject",
            "timestamp": "2026-05-24T14:22:24.812Z",
        }
        assert await transport.send(reply) is None
        assert [r.reply_token for r in server.core.replies] == [prompt["reply_token"]]
    finally:
        await transport.close()
        await server.close()


@pytest.mark.parametrize("url", ["ws://example.com/aaep/v1/ws", "http://192.0.2.7:8080"])
def test_plaintext_off_loopback_is_refused(url: str) -> None:
    with pytest.raises(InsecureTransportRefused, match="--allow-insecure"):
        open_transport(url, TransportOptions())
    open_transport(url, TransportOptions(allow_insecure=True))  # the user's explicit choice


def test_unknown_scheme_is_a_clear_error() -> None:
    with pytest.raises(TransportError, match="unknown source scheme 'ftp'"):
        open_transport("ftp://example.com/x", TransportOptions())


@pytest.mark.parametrize("kind", ["ws", "sse"])
async def test_bearer_token_from_env_or_file_is_sent_and_never_logged(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    secret = "s3cret-Token-value"
    server = await start_producer("confirm", auth_token=secret)
    source = producer_url(kind, server)
    token_file = tmp_path / "token"
    token_file.write_text(secret + "\n", encoding="utf-8")
    monkeypatch.setenv("ANNOUNCER_TEST_TOKEN", secret)
    answers = []
    try:
        for options in (
            TransportOptions(),
            TransportOptions(token_env="ANNOUNCER_TEST_TOKEN"),
            TransportOptions(token_file=str(token_file)),
        ):
            transport = open_transport(source, options)
            await transport.connect()
            outcome = await transport.handshake(_request(), TIMEOUT)
            assert outcome.response is not None
            answers.append(outcome.response.get("reason_code") or outcome.response["type"])
            await transport.close()
    finally:
        await server.close()
    assert answers == ["authentication_required", "subscription.accepted", "subscription.accepted"]
    assert secret not in caplog.text


def test_a_missing_token_variable_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANNOUNCER_NO_SUCH_TOKEN", raising=False)
    with pytest.raises(TransportError, match=r"\$ANNOUNCER_NO_SUCH_TOKEN is empty or unset"):
        TransportOptions(token_env="ANNOUNCER_NO_SUCH_TOKEN").auth_headers()


@pytest.mark.parametrize("framing", ["length", "ndjson"])
async def test_oversize_unix_messages_are_dropped_and_counted(framing: str, tmp_path: Path) -> None:
    limit = 1000
    big = json.dumps({"type": "aaep:agent.state.changed", "pad": "x" * (limit * 3)}).encode()
    small = json.dumps({"type": "aaep:agent.state.changed", "event_id": "evt_small"}).encode()

    def frame(data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + data if framing == "length" else data + b"\n"

    async def producer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(frame(big) + frame(small))
        await writer.drain()
        await reader.read()  # hold the connection until the subscriber leaves
        writer.close()

    path = str(tmp_path / "big.sock")
    server = await asyncio.start_unix_server(producer, path)
    options = TransportOptions(max_frame_bytes=limit, unix_framing=framing)
    transport = open_transport(f"unix:{path}", options)
    try:
        await transport.connect()
        first = await asyncio.wait_for(transport.frames().__anext__(), TIMEOUT)
    finally:
        await transport.close()
        server.close()
        await server.wait_closed()
    assert json.loads(first)["event_id"] == "evt_small"
    assert sum(options.dropped.values()) == 1


async def test_oversize_and_binary_websocket_frames_are_dropped() -> None:
    limit = 1000

    async def handler(ws: Any) -> None:
        await ws.send("y" * (limit * 2))
        await ws.send(b"\x00binary")
        await ws.send(json.dumps({"type": "aaep:agent.state.changed", "event_id": "evt_ok"}))
        await ws.wait_closed()

    async with serve(handler, "127.0.0.1", 0, subprotocols=["aaep.v1"]) as ws_server:  # type: ignore[list-item]
        port = ws_server.sockets[0].getsockname()[1]
        options = TransportOptions(max_frame_bytes=limit)
        transport = open_transport(ws_url(port, "/"), options)
        try:
            await transport.connect()
            first = await asyncio.wait_for(transport.frames().__anext__(), TIMEOUT)
        finally:
            await transport.close()
    assert json.loads(first)["event_id"] == "evt_ok"
    assert sum(options.dropped.values()) == 2


async def test_websocket_without_the_subprotocol_is_refused() -> None:
    async def handler(ws: Any) -> None:
        await ws.wait_closed()

    async with serve(handler, "127.0.0.1", 0) as ws_server:
        port = ws_server.sockets[0].getsockname()[1]
        transport = open_transport(ws_url(port, "/"), TransportOptions())
        with pytest.raises(TransportError, match=r"aaep\.v1"):
            await transport.connect()


async def test_replay_reads_a_recorded_file() -> None:
    path = str(SHARED_ROOT / "aaep/fixtures/captured-minimal-producer-run.jsonl")
    transport = open_transport(path, TransportOptions())
    await transport.connect()
    outcome = await transport.handshake(_request(), 1)
    assert outcome.response is None
    frames = [raw async for raw in transport.frames()]
    lines = [line for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(frames) == len(lines)
    with pytest.raises(TransportError, match="cannot take replies"):
        await transport.send({"type": "confirmation.reply"})


@pytest.fixture
def certificate(tmp_path: Path) -> tuple[str, str]:
    """A throwaway self-signed certificate for 127.0.0.1, made with the openssl tool."""
    import shutil
    import subprocess

    if shutil.which("openssl") is None:
        pytest.skip("the openssl tool is not installed")
    cert, key = str(tmp_path / "cert.pem"), str(tmp_path / "key.pem")
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            key,
            "-out",
            cert,
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
    )
    return cert, key


@pytest.mark.parametrize("scheme", ["wss", "https"])
async def test_tls_is_verified_and_a_private_ca_can_be_trusted(
    scheme: str, certificate: tuple[str, str]
) -> None:
    import ssl

    from announcer.producer.core import ProducerCore, ProducerOptions
    from announcer.producer.scenario import load_scenario
    from announcer.producer.server import ProducerServer

    cert, key = certificate
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    core = ProducerCore(load_scenario(scenario_path("confirm")), ProducerOptions(speed=0.05))
    server = ProducerServer(core, "127.0.0.1", 0, ssl_context=context)
    await server.start()
    path = "/aaep/v1/ws" if scheme == "wss" else ""
    url = f"{scheme}://127.0.0.1:{server.port}{path}"
    try:
        untrusted = open_transport(url, TransportOptions(connect_timeout=TIMEOUT))
        with pytest.raises(TransportError):  # verified by default: a self-signed cert fails
            await untrusted.connect()
            await untrusted.handshake(_request(), TIMEOUT)
        await untrusted.close()
        trusted = open_transport(url, TransportOptions(ca_file=cert))
        await trusted.connect()
        outcome = await trusted.handshake(_request(), TIMEOUT)
        assert outcome.response is not None
        assert outcome.response["type"] == "subscription.accepted"
        await trusted.close()
    finally:
        await server.close()
