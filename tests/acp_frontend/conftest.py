"""The one way these tests start ``announcer agent`` on pipes, and end what they started."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.acp_frontend.test_agent_command import AgentRun

READY = "Scripted Agent is ready."


@pytest.fixture
def run(tmp_path: Path) -> Iterator[Callable[..., AgentRun]]:
    """``run(*flags, **AgentRun options)``: an ``announcer agent`` run, once it printed
    ``ready`` (the scripted agent's "is ready" by default); killed after the test if alive."""
    started: list[AgentRun] = []

    def start(*extra: str, ready: str = READY, **options: Any) -> AgentRun:
        agent = AgentRun(tmp_path, *extra, **options)
        started.append(agent)
        agent.wait_for(ready)
        return agent

    yield start
    for agent in started:
        if agent.proc.poll() is None:
            agent.proc.kill()
            agent.proc.wait(timeout=10)
