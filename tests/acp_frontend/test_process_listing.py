"""What an agent runs is listed from /proc after a tool call, but a burst of tool calls does
not make every update wait on that listing (issue 32, step 2: ACP over the wire was at 18 %
of the bare SDK, most of it reading /proc once per tool call)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from announcer.transports import acp_process
from announcer.transports.acp import AcpTransport
from announcer.transports.acp_process import (
    FAMILY_AFTER_TOOL_SECONDS,
    FAMILY_NOTE_SECONDS,
    FAMILY_SNAPSHOT_SECONDS,
)

ROOT = Path(__file__).resolve().parents[2]
AGENT = [sys.executable, "-m", "tests.acp_frontend.sdk_agent"]
CHUNKS = 4000  # and 200 tool calls, each started and completed
TIMEOUT = 120.0


async def test_a_burst_of_tool_calls_lists_the_agents_processes_a_few_times(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    listings: list[float] = []  # when each listing was taken
    real_snapshot = acp_process.snapshot

    def counted(pid: int) -> dict[int, int]:
        listings.append(time.monotonic())
        return real_snapshot(pid)

    monkeypatch.setattr(acp_process, "snapshot", counted)
    transport = AcpTransport(AGENT, cwd=str(tmp_path), env={**os.environ, "PYTHONPATH": str(ROOT)})
    await transport.connect()
    tools = 0
    try:
        frames = transport.frames()
        started = time.monotonic()
        transport.prompt(f"burst {CHUNKS}")
        async for event in frames:
            assert isinstance(event, dict)
            tools += event.get("type") == "aaep:agent.tool.invoked"
            if event.get("type") == "aaep:agent.state.changed" and (
                event.get("to_state") == "awaiting_input"
            ):
                break
            assert time.monotonic() - started < TIMEOUT, "the burst did not end"
        took = time.monotonic() - started
    finally:
        await transport.close()
    assert tools == CHUNKS // 20, tools  # every tool call was there
    # the listings during the burst: at most one per spacing after tool calls, one per
    # FAMILY_NOTE_SECONDS for other updates, and the periodic ones; bounded by the time
    # the burst took, not by its tool calls
    during = [at for at in listings if at >= started]
    per_second = 1 / FAMILY_NOTE_SECONDS + 1 / FAMILY_AFTER_TOOL_SECONDS
    bound = 3 + took * (per_second + 1 / FAMILY_SNAPSHOT_SECONDS)
    assert len(during) <= bound, (len(during), took)
