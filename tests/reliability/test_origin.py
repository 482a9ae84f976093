"""Credentials go only where the user pointed (issue 13.4).

The producer the user named (A) tries to send the listener, with its bearer token,
to another origin (B) through its manifest endpoints and the ``Location`` header of
its subscription answer. B must receive nothing at all; A gets the stream and the
reply, each with the token.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from announcer.engine.prompts import UserAnswer
from announcer.transports import TransportOptions
from announcer.transports.base import same_origin
from tests.producer.live import Recorder
from tests.reliability.hostile import (
    ACCEPTED,
    BOUND,
    HttpProducer,
    Request,
    listener,
    open_event_stream,
    respond,
    respond_json,
    running,
    sse,
)
from tests.support.producers import ws_url

TOKEN = "s3cret-token-for-a-only"

CONFIRMATION = {
    "@context": "https://aaep-protocol.org/context/v1",
    "type": "aaep:agent.awaiting.confirmation",
    "aaep_version": "0.1.0",
    "event_id": "evt_origin0001",
    "session_id": "sess_origin",
    "timestamp": "2026-01-01T00:00:00Z",
    "producer": {"agent_id": "hostile", "agent_name": "Hostile"},
    "urgency": "critical",
    "action": "Delete the build folder.",
    "consequence": "The files are gone.",
    "reply_token": "rpl_origin0001",
    "timeout_seconds": 300,
    "default_decision": "reject",
    "summary_normal": "Confirmation required. Delete the build folder.",
}


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("/aaep/v1/events?subscription_id=sub_1", "/aaep/v1/events?subscription_id=sub_1"),
        ("events", "/events"),
        ("https://127.0.0.1:8443//evil.example/x", "/evil.example/x"),  # stays a path
        ("https://127.0.0.1:8443/x", "/x"),
        ("https://127.0.0.1:8443/x?a=1", "/x?a=1"),
        ("http://127.0.0.1:8443/x", None),  # TLS downgrade
        ("https://127.0.0.1:9999/x", None),  # another port
        ("https://[::1]:8443/x", None),  # another host, even on loopback
        ("//evil.example/x", None),  # scheme-relative
        ("https://user:pw@127.0.0.1:8443/x", None),  # credentials in the URL
        ("https://127.0.0.1:99999/x", None),  # not a URL at all
    ],
)
def test_only_same_origin_urls_are_followed(url: str, expected: str | None) -> None:
    assert same_origin(url, "https://127.0.0.1:8443") == expected


def test_default_ports_are_the_same_origin() -> None:
    assert same_origin("https://example.org:443/e", "https://example.org") == "/e"
    assert same_origin("http://example.org/e", "https://example.org") is None


async def _elsewhere() -> HttpProducer:
    async def anything(request: Request, writer: asyncio.StreamWriter) -> None:
        await respond(writer, "200 OK", b"{}", {"Content-Type": "application/json"})

    return await HttpProducer(anything).start()


async def _named(elsewhere: HttpProducer, via: str) -> HttpProducer:
    """The producer the user named; it points ``via`` ("manifest" or "location") at B."""

    async def handle(request: Request, writer: asyncio.StreamWriter) -> None:
        if request.path == "/.well-known/aaep-manifest.json":
            if via != "manifest":
                await respond(writer, "404 Not Found")
                return
            endpoints = {
                "subscriptions": f"{elsewhere.origin}/aaep/v1/subscriptions",
                "events": f"{elsewhere.origin}/aaep/v1/events",
                "replies": f"{elsewhere.origin}/aaep/v1/replies",
            }
            await respond_json(writer, {"endpoints": endpoints})
        elif request.method == "POST" and request.path == "/aaep/v1/subscriptions":
            headers = {}
            if via == "location":
                headers["Location"] = f"{elsewhere.origin}/aaep/v1/events?subscription_id=sub_x"
            await respond_json(writer, ACCEPTED, headers=headers)
        elif request.method == "GET" and request.path.startswith("/aaep/v1/events"):
            await open_event_stream(writer)
            writer.write(sse(json.dumps(CONFIRMATION), "1"))
            await writer.drain()
            await asyncio.sleep(BOUND)
        elif request.method == "POST" and request.path == "/aaep/v1/replies":
            await respond(writer, "204 No Content")
        else:
            await respond(writer, "404 Not Found")

    return await HttpProducer(handle).start()


@pytest.mark.parametrize("via", ["manifest", "location"])
async def test_the_stream_and_the_reply_never_go_to_another_origin(
    via: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANNOUNCER_TEST_TOKEN", TOKEN)
    elsewhere = await _elsewhere()
    named = await _named(elsewhere, via)
    options = TransportOptions(token_env="ANNOUNCER_TEST_TOKEN")
    session, heard = listener([named.origin], options)
    recorder = Recorder()
    session.subscribe(recorder)
    try:
        async with running(session):
            prompt = await recorder.wait_prompt()
            outcome = await session.answer_async(UserAnswer(prompt.reply_token, decision="reject"))
            assert outcome.sent, outcome.message
    finally:
        await named.close()
        await elsewhere.close()
    assert elsewhere.requests == []  # not a byte, not the token
    seen = {(r.method, r.path.split("?")[0]) for r in named.requests}
    assert ("GET", "/aaep/v1/events") in seen
    assert ("POST", "/aaep/v1/replies") in seen
    for request in named.requests:
        if request.path != "/.well-known/aaep-manifest.json":
            assert request.headers.get("authorization") == f"Bearer {TOKEN}"
    posted = [json.loads(r.body) for r in named.requests if r.path == "/aaep/v1/replies"]
    [reply] = [m for m in posted if m["type"] == "confirmation.reply"]
    assert reply["reply_token"] == "rpl_origin0001"
    assert [m["type"] for m in posted if m is not reply] == ["subscription.close"]
    assert heard.count("Confirmation") >= 1
    transport = session.states[0].transport
    assert getattr(transport, "refused_urls", 0) >= 1
    # said once, in words, not only counted in the diagnostics
    assert heard.count("pointed announcer at another address") == 1


async def test_a_websocket_redirect_to_another_origin_is_not_followed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from websockets.asyncio.server import serve

    monkeypatch.setenv("ANNOUNCER_TEST_TOKEN", TOKEN)
    elsewhere = await _elsewhere()
    redirects = 0

    def redirect(connection: Any, request: Any) -> Any:
        nonlocal redirects
        redirects += 1
        response = connection.respond(302, "")
        response.headers["Location"] = ws_url(elsewhere)
        return response

    async def never(ws: Any) -> None:
        raise AssertionError("no WebSocket should open here")

    server = await serve(never, "127.0.0.1", 0, process_request=redirect)
    port = server.sockets[0].getsockname()[1]
    options = TransportOptions(token_env="ANNOUNCER_TEST_TOKEN")
    session, heard = listener([ws_url(port)], options)
    try:
        async with running(session):
            await heard.hears("pointed to another address, which was refused")
            await asyncio.sleep(2.0)
    finally:
        server.close()
        await elsewhere.close()
    assert elsewhere.requests == []
    assert 1 <= redirects <= 5  # retried with backoff, not in a loop
    assert heard.count("Cannot connect") == 1
