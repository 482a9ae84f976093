"""Issue 29 item 7: a hook process killed while it waits (end to end).

The real programs: ``announcer listen hooks:SOCK --ui plain`` over pipes with the jsonl
speech record, and a real ``announcer hook claude-code`` process (as Claude Code runs it),
killed with SIGKILL while its question is open. Its connection closing withdraws the
question in words; no key can then allow it, and "Allowed", "Running" or "Sent" are never
said for an answer nothing received. At the transport: an answer given after the hook
died is refused, never reported as sent.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from announcer.transports import TransportError
from announcer.transports.hook_bridge import HookBridgeTransport
from tests.formats.test_hook_bridge import (
    PRE_TOOL_USE,
    WAIT,
    Served,
    hooks_socket_ready,
    run_hook,
)
from tests.formats.test_hook_bridge import sock as sock
from tests.support.speech_record import spoken_in
from tests.support.waiting import wait_until

GONE = "Claude Code stopped waiting; nothing was sent."


def test_a_killed_hooks_question_is_withdrawn_in_words_and_no_key_allows_it(
    sock: Path, tmp_path: Path
) -> None:
    heard = tmp_path / "heard.jsonl"
    listening = Served(
        sock, "listen", f"hooks:{sock}", "--ui", "plain", "--speech", f"jsonl:{heard}"
    )
    try:
        hooks_socket_ready(sock)
        payload = dict(PRE_TOOL_USE, tool_use_id="toolu_killed")
        hook = run_hook(payload, sock)
        listening.wait_for("Accept or reject:")
        os.kill(hook.pid, signal.SIGKILL)  # the agent's hook dies while it waits
        hook.wait(WAIT)
        # one withdrawal notice, the hook's end as its reason (issue 30 item 1), short
        # (issue 30 item 4: the one question open needs no naming), at its question's
        # urgency ("!": the user heard the question and may be answering it)
        assert GONE in listening.wait_for("! Withdrawn:")
        wait_until(lambda: any(GONE in t for t in spoken_in(heard)), "the withdrawal heard")
        listening.answer("a\n")
        listening.wait_for("No question is waiting.")
        listening.type("c\n")  # a second key, as a two-key accept would take
        # a later hook is announced: everything typed before it has been read
        note = {"hook_event_name": "Notification", "session_id": "s-after", "message": "Later"}
        assert run_hook(note, sock).wait(WAIT) == 0
        listening.wait_for("Claude Code: Later")
    finally:
        listening.stop()
    printed = " ".join(listening.seen)
    said = " ".join(spoken_in(heard))
    for words in ("Allowed", "Running Bash", "Sent:", "Sending:"):
        assert words not in printed and words not in said, (words, printed, said)
    assert sum(GONE in t for t in spoken_in(heard)) == 1, said


@pytest.fixture
async def transport(sock: Path) -> AsyncIterator[HookBridgeTransport]:
    bridge = HookBridgeTransport(sock)
    await bridge.connect()
    yield bridge
    await bridge.close()


async def _event(frames: AsyncIterator[str | dict[str, Any]], want: str) -> dict:
    async for event in frames:
        assert isinstance(event, dict)
        if want in json.dumps(event):
            return event
    raise AssertionError(f"the frames ended before {want!r}")


async def test_an_answer_after_the_hook_died_is_not_sent(transport: HookBridgeTransport) -> None:
    """The key comes after the hook was killed (before the withdrawal was heard): the
    transport refuses it, so the runtime says "Nothing was sent", never "Sent"."""
    frames = transport.frames()
    hook = await asyncio.to_thread(
        run_hook, dict(PRE_TOOL_USE, tool_use_id="toolu_late"), transport.server.path
    )
    try:
        question = await asyncio.wait_for(_event(frames, "awaiting.confirmation"), WAIT)
        os.kill(hook.pid, signal.SIGKILL)
        await asyncio.to_thread(hook.wait, WAIT)
        withdrawn = await asyncio.wait_for(_event(frames, "stopped waiting"), WAIT)
    finally:
        if hook.poll() is None:
            hook.kill()
    assert withdrawn["from_state"] == "awaiting_input"
    assert withdrawn["correlation_id"] == question["event_id"]
    reply = {"type": "confirmation.reply", "reply_token": question["reply_token"]}
    with pytest.raises(TransportError):
        await transport.send({**reply, "decision": "accept"})
    # nothing more was said of it: no "Allowed.", no "Running Bash"
    transport._frames.put_nowait(None)
    rest = [frame async for frame in frames]
    assert not any("Allowed" in json.dumps(e) or "Running" in json.dumps(e) for e in rest)


def test_hook_serve_withdraws_a_killed_hooks_question(sock: Path) -> None:
    """``announcer hook serve`` (its own line interface): the same withdrawal, and the keys
    typed after it allow nothing."""
    served = Served(sock)
    try:
        served.wait_for("Listening for Claude Code and Codex hooks")
        hook = run_hook(dict(PRE_TOOL_USE, tool_use_id="toolu_serve_killed"), sock)
        served.wait_for("Press y")
        os.kill(hook.pid, signal.SIGKILL)
        hook.wait(WAIT)
        served.wait_for(GONE)
        served.answer("y\n", "c\n")
        note = {"hook_event_name": "Notification", "session_id": "s-after", "message": "Later"}
        assert run_hook(note, sock).wait(WAIT) == 0
        served.wait_for("Claude Code: Later")
    finally:
        served.stop()
    assert not any(line.startswith(("Allowed", "Running")) for line in served.seen), served.seen
