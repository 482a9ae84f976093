"""The demo producer behaves as a Level 3 producer, checked against the official schemas."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from websockets.asyncio.client import connect

from announcer.producer.core import ProducerCore, ProducerOptions, Subscription
from announcer.producer.scenario import (
    ScenarioError,
    available_scenarios,
    load_scenario,
    parse_scenario,
)
from tests.producer.live import TIMEOUT, scenario_path, start_producer, validate, wait_for
from tests.support.producers import ws_url

REQUEST: dict[str, Any] = {
    "type": "subscription.request",
    "aaep_version": "1.0.0",
    "subscriber_id": "test",
    "capabilities": {
        "supports_confirmation_reply": True,
        "supports_clarification_reply": True,
        "languages": ["fr-FR"],
    },
}


def test_bundled_scenarios_load() -> None:
    names = available_scenarios()
    assert "tour" in names
    for name in names:
        assert load_scenario(name).steps


def test_a_bad_scenario_names_the_step_and_rule() -> None:
    text = json.dumps(
        {
            "agent": {"agent_id": "x"},
            "steps": [{"emit": "agent.session.started"}, {"confirm": {"action": "Do it"}}],
        }
    )
    with pytest.raises(ScenarioError, match=r"steps\[1\]\.confirm: 'consequence' is required"):
        parse_scenario(text)
    with pytest.raises(ScenarioError, match="not found"):
        load_scenario("no-such-scenario")


def _answer_for(event: dict[str, Any], subscription_id: str) -> dict[str, Any]:
    base = {"reply_token": event["reply_token"], "subscription_id": subscription_id}
    base["timestamp"] = "2026-05-24T14:22:24.812Z"
    if event["type"] == "aaep:agent.awaiting.confirmation":
        return {"type": "confirmation.reply", "decision": "accept", **base}
    kind = event["accepted_response_kinds"][0]
    response: Any = {
        "freetext": "Zoé",
        "yes_no": True,
        "multiple_choice": event.get("choices", [{}])[0].get("value"),
        "numeric": 2,
    }[kind]
    return {"type": "clarification.reply", "response": response, **base}


async def test_the_tour_emits_schema_valid_events_and_honours_replies() -> None:
    server = await start_producer_tour()
    try:
        url = ws_url(server)
        async with connect(url, subprotocols=["aaep.v1"]) as ws:  # type: ignore[list-item]
            assert ws.subprotocol == "aaep.v1"
            await ws.send(json.dumps(REQUEST))
            accepted = json.loads(await ws.recv())
            validate(accepted)
            assert accepted["honored_capabilities"]["languages"] == ["fr-FR"]
            events: list[dict[str, Any]] = []

            async def read() -> None:
                while True:
                    event = json.loads(await ws.recv())
                    validate(event)
                    events.append(event)
                    withdrawn = "assurance" in str(event.get("action", ""))
                    if event["type"].startswith("aaep:agent.awaiting.") and not withdrawn:
                        reply = _answer_for(event, accepted["subscription_id"])
                        validate(reply)
                        await ws.send(json.dumps(reply))
                    if event["type"] == "aaep:agent.session.errored":
                        return

            await asyncio.wait_for(read(), TIMEOUT)
    finally:
        await server.close()
    types = {e["type"].removeprefix("aaep:") for e in events}
    assert {
        "agent.awaiting.confirmation",
        "agent.awaiting.clarification",
        "agent.handoff.requested",
        "agent.session.errored",
    } <= types
    assert all(e["localization_hints"]["primary_language"] == "fr" for e in events)
    errored = events[-1]
    assert errored["remediation_hint"]
    kinds = {r.type for r in server.core.replies}
    assert kinds == {"confirmation.reply", "clarification.reply"}
    assert len(server.core.replies) == 5  # the insurance question was withdrawn (§6.8)
    assert any("assurance" in str(e.get("summary_normal", "")) for e in events)


async def start_producer_tour() -> Any:
    from announcer.producer.server import ProducerServer

    core = ProducerCore(load_scenario("tour"), ProducerOptions(speed=0.02))
    server = ProducerServer(core, "127.0.0.1", 0)
    await server.start()
    return server


def test_honoured_capabilities_are_never_wider_than_asked() -> None:
    core = ProducerCore(load_scenario("tour"))
    request = json.loads(json.dumps(REQUEST))
    request["capabilities"].update(
        {
            "max_events_per_second": 100,
            "languages": ["de-DE", "fr-CA"],
            "preferred_verbosity": "terse",
        }
    )

    async def subscribe() -> dict[str, Any]:
        answer, sub = core.subscribe(request)
        assert sub is not None
        await core.stop()
        return answer

    answer = asyncio.run(subscribe())
    validate(answer)
    honoured = answer["honored_capabilities"]
    assert honoured["max_events_per_second"] == 20  # §5.4.4 at most what was asked
    assert honoured["languages"] == ["fr-CA"]
    assert honoured["preferred_verbosity"] == "terse"
    assert "20 events per second" in answer["negotiation_notes"]


@pytest.mark.parametrize(
    ("change", "options", "code"),
    [
        ({"aaep_version": "2.0.0"}, {}, "version_unsupported"),
        ({}, {"auth_token": "t0ken"}, "authentication_required"),
        (
            {"capabilities": {"accept_signed_manifests_only": True}},
            {},
            "manifest_signature_required",
        ),
        ({}, {"reject_first": 1, "retry_after_seconds": 3}, "rate_limit"),
    ],
)
def test_rejections_follow_the_schema(
    change: dict[str, Any], options: dict[str, Any], code: str
) -> None:
    core = ProducerCore(load_scenario("tour"), ProducerOptions(**options))
    answer, sub = core.subscribe({**REQUEST, **change})
    assert sub is None
    validate(answer)
    assert answer["reason_code"] == code
    if code == "rate_limit":
        assert answer["retry_after_seconds"] == 3


async def test_critical_events_are_never_held_by_the_rate_limit() -> None:
    sub = Subscription("sub_x", {"max_events_per_second": 1}, handshaken=True)
    for index in range(5):
        sub.offer({"event_id": f"evt_{index}", "urgency": "normal"})
    sub.offer({"event_id": "evt_critical", "urgency": "critical"})
    # §5.5.4: the critical event is delivered at once, after the held ones (order kept).
    assert [m["event_id"] for _i, m in sub.log][-1] == "evt_critical"
    assert len(sub.log) == 6
    sub.close()


async def test_closing_the_subscription_applies_the_default_decision() -> None:
    server = await start_producer("confirm")
    try:
        url = ws_url(server)
        async with connect(url, subprotocols=["aaep.v1"]) as ws:  # type: ignore[list-item]
            await ws.send(json.dumps(REQUEST))
            accepted = json.loads(await ws.recv())
            while True:
                event = json.loads(await asyncio.wait_for(ws.recv(), TIMEOUT))
                if event["type"] == "aaep:agent.awaiting.confirmation":
                    break
            close = {"type": "subscription.close", "subscription_id": accepted["subscription_id"]}
            await ws.send(json.dumps(close))
        await asyncio.wait_for(server.core.finished.wait(), TIMEOUT)
        assert server.core.replies == []
        assert server.core.closed_by_subscriber == 1
        assert server.core.status()["state"] == "thinking"  # §5.8.2 default reject applied
    finally:
        await server.close()


async def test_replies_are_single_use_and_checked() -> None:
    server = await start_producer("clarify")
    core = server.core
    try:
        url = ws_url(server)
        async with connect(url, subprotocols=["aaep.v1"]) as ws:  # type: ignore[list-item]
            await ws.send(json.dumps(REQUEST))
            accepted = json.loads(await ws.recv())
            while True:
                event = json.loads(await asyncio.wait_for(ws.recv(), TIMEOUT))
                if event["type"] == "aaep:agent.awaiting.clarification":
                    break
            wrong_type = {**_answer_for(event, accepted["subscription_id"]), "response": 5}
            await ws.send(json.dumps(wrong_type))  # freetext question, numeric answer: ignored
            good = _answer_for(event, accepted["subscription_id"])
            await ws.send(json.dumps(good))
            await ws.send(json.dumps({**good, "response": "second"}))  # §6.3.5 ignored
            await wait_for(lambda: len(core.replies) >= 1)
            next_event = json.loads(await asyncio.wait_for(ws.recv(), TIMEOUT))
            assert next_event["type"] == "aaep:agent.state.changed"
    finally:
        await server.close()
    assert [r.response for r in core.replies] == ["Zoé"]
    assert scenario_path("clarify").endswith("clarify.json")


async def test_closing_the_server_with_connections_open_prints_no_stray_error() -> None:
    """The demo's server closes while a subscriber and a half-sent request are connected
    (the Textual demo quit at once): Python 3.11 printed each cancelled connection as
    "Exception in callback ... CancelledError" on the user's terminal."""
    loop = asyncio.get_running_loop()
    errors: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _loop, context: errors.append(context))
    try:
        server = await start_producer("confirm")
        async with connect(ws_url(server), subprotocols=["aaep.v1"]) as ws:  # type: ignore[list-item]
            await ws.send(json.dumps(REQUEST))
            json.loads(await asyncio.wait_for(ws.recv(), TIMEOUT))  # accepted: the pump runs
            reader, writer = await asyncio.open_connection(server.host, server.port)
            writer.write(b"GET /aaep/v1/events HTTP/1.1\r\n")  # the head never ends
            await writer.drain()
            await wait_for(lambda: len(server._connections) == 2)
            await server.close()
            assert await asyncio.wait_for(reader.read(), TIMEOUT) == b""  # closed by us
            writer.close()
        for _ in range(3):  # the streams' done callbacks run on the next turns
            await asyncio.sleep(0)
        assert errors == []
    finally:
        loop.set_exception_handler(None)
