"""The hook bridge as a runtime transport: payloads in, AAEP frames out, replies decide."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from announcer.protocol.identifiers import parse_timestamp
from announcer.transports import TransportError
from announcer.transports.hook_bridge import HookBridgeTransport, ask_announcer
from tests.engine.test_engine import listen
from tests.formats.aaep_schemas import assert_valid

PAYLOAD = {
    "hook_event_name": "PreToolUse",
    "session_id": "abc123",
    "cwd": "/home/me/shop",
    "tool_name": "Write",
    "tool_use_id": "toolu_01",
    "tool_input": {"file_path": "/home/me/shop/.env", "content": "SECRET=1"},
}


@pytest.fixture
async def transport(tmp_path: Path):
    path = Path(f"/tmp/annt-{os.getpid()}-{abs(hash(tmp_path)) % 10**8}") / "hook.sock"
    bridge = HookBridgeTransport(path)
    await bridge.connect()
    yield bridge
    await bridge.close()
    if path.parent.exists():
        for child in path.parent.iterdir():  # the lock file stays beside the socket
            child.unlink()
        path.parent.rmdir()


async def next_event(frames, kind: str) -> dict:
    async for event in frames:
        assert isinstance(event, dict)  # the bridge hands on the event it built, not text
        if event["type"] == f"aaep:agent.{kind}":
            return event
    raise AssertionError("the frames ended")


async def test_accept_reply_allows_and_reject_denies(transport: HookBridgeTransport):
    frames = transport.frames()
    for decision, expected in (("accept", "allow"), ("reject", "deny")):
        payload = dict(PAYLOAD, tool_use_id=f"toolu_{decision}")
        hook = asyncio.create_task(
            asyncio.to_thread(
                ask_announcer, payload, blocking=True, timeout=60, path=transport.server.path
            )
        )
        confirmation = await asyncio.wait_for(next_event(frames, "awaiting.confirmation"), 60)
        assert_valid([confirmation])
        assert (
            confirmation["summary_normal"] == "Claude Code wants to use Write: .env in shop. Allow?"
        )
        assert confirmation["default_decision"] == "reject"
        assert "SECRET" not in json.dumps(confirmation)  # file contents are never spoken
        with pytest.raises(TransportError):  # no hook waits for it: never "Sent"
            await transport.send(
                {"type": "confirmation.reply", "reply_token": "rpl_unknown", "decision": "accept"}
            )
        await transport.send(
            {
                "type": "confirmation.reply",
                "reply_token": confirmation["reply_token"],
                "decision": decision,
            }
        )
        answer = await asyncio.wait_for(hook, 60)
        assert answer is not None and answer.decision == expected


async def test_no_reply_in_time_answers_ask_and_the_engine_says_so_once(
    transport: HookBridgeTransport,
):
    """The question's own timer (never later than the bridge's) closes it in the engine,
    which says the time ran out; the bridge adds no second sentence about it."""
    frames = transport.frames()
    hook = asyncio.create_task(
        asyncio.to_thread(
            ask_announcer, PAYLOAD, blocking=True, timeout=4, path=transport.server.path
        )
    )
    events = [await asyncio.wait_for(next_event(frames, "awaiting.confirmation"), 60)]
    confirmation = events[0]
    answer = await asyncio.wait_for(hook, 60)
    assert answer is not None and answer.decision == "ask"
    assert confirmation["timeout_seconds"] <= 2  # the bridge waited 4 - 2 seconds
    while not transport._frames.empty():  # everything the bridge sent after the question
        frame = transport._frames.get_nowait()
        assert frame is not None
        events.append(frame)
    asked_at = parse_timestamp(confirmation["timestamp"])
    assert asked_at is not None
    now = asked_at.timestamp()
    listener = listen()  # an instant backend: every utterance ends at once
    listener.feed(*(json.dumps(event) for event in events), now=now, source="hooks")
    before = len(listener.said)
    listener.run(listener.engine.tick(now + 10), now + 10)
    spoken = listener.said[before:]
    assert [line for line in spoken if "ime is up" in line or "No answer" in line] == [
        "Time is up; the agent will ask you itself: Claude Code wants to use Write: .env in shop."
    ], spoken
    # a late reply changes nothing (the token is spent), and is not reported as sent
    with pytest.raises(TransportError):
        await transport.send(
            {
                "type": "confirmation.reply",
                "reply_token": confirmation["reply_token"],
                "decision": "accept",
            }
        )


async def test_non_blocking_hooks_become_frames(transport: HookBridgeTransport):
    frames = transport.frames()
    payload = {"hook_event_name": "Notification", "session_id": "abc123", "message": "Build done"}
    await asyncio.to_thread(
        ask_announcer, payload, blocking=False, timeout=5, path=transport.server.path
    )
    event = await asyncio.wait_for(next_event(frames, "progress.updated"), 60)
    assert event["summary_normal"] == "Claude Code: Build done"


async def test_closing_answers_ask_to_waiting_hooks(transport: HookBridgeTransport):
    frames = transport.frames()
    hook = asyncio.create_task(
        asyncio.to_thread(
            ask_announcer, PAYLOAD, blocking=True, timeout=60, path=transport.server.path
        )
    )
    await asyncio.wait_for(next_event(frames, "awaiting.confirmation"), 60)
    await transport.close()
    answer = await asyncio.wait_for(hook, 60)
    assert answer is not None and answer.decision == "ask"


async def test_a_huge_write_still_reaches_the_user(transport: HookBridgeTransport):
    """A Write of a 5 MB file: the content never travels whole, the question still comes,
    and says that part of it was cut."""
    frames = transport.frames()
    payload = dict(
        PAYLOAD,
        tool_use_id="toolu_big",
        tool_input={"file_path": "/r/big.txt", "content": "x" * 5_000_000},
    )
    hook = asyncio.create_task(
        asyncio.to_thread(
            ask_announcer, payload, blocking=True, timeout=60, path=transport.server.path
        )
    )
    confirmation = await asyncio.wait_for(next_event(frames, "awaiting.confirmation"), 60)
    # cut to travel, and said so: what was not seen whole takes two keys (issue 29)
    assert confirmation["summary_normal"] == (
        "Claude Code wants to use Write: big.txt in r. "
        "Part of it was cut before announcer saw it. Allow?"
    )
    assert confirmation["risk_level"] == "high"
    await transport.send(
        {
            "type": "confirmation.reply",
            "reply_token": confirmation["reply_token"],
            "decision": "reject",
        }
    )
    answer = await asyncio.wait_for(hook, 60)
    assert answer is not None and answer.decision == "deny"
