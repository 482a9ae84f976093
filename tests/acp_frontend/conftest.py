"""The one way these tests start ``announcer agent`` on pipes, and end what they started."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.acp_frontend.test_agent_command import ROOT, TIMEOUT, AgentRun

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


@pytest.fixture
def asked(run: Callable[..., AgentRun]) -> Callable[..., AgentRun]:
    """``asked(message, question, *flags)``: an ``announcer agent`` run (``run``) that was
    sent ``message`` and then printed ``question``, the line the test goes on from."""

    def ask(message: str, question: str, *flags: str, **options: Any) -> AgentRun:
        agent = run(*flags, **options)
        agent.type(message)
        agent.wait_for(question)
        return agent

    return ask


@pytest.fixture
def finished(tmp_path: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """``finished(*words, env=...)``: ``announcer agent WORDS`` run to its end with no
    input (a settings file that does not exist, the test's ``env`` added): what it printed
    and its exit status."""

    def finish(*words: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "announcer", "agent", *words],
            cwd=ROOT,
            env={
                **os.environ,
                "PYTHONPATH": str(ROOT),
                "ANNOUNCER_CONFIG": str(tmp_path / "none.toml"),
                **(env or {}),
            },
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )

    return finish
