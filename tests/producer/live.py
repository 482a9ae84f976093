"""Helpers for tests that run the demo producer and a listener over real loopback sockets.

Servers run in-process (an asyncio server in the test's own loop) or as a
child process stopped by its process id. Waits are event-driven with generous
timeouts; nothing here measures time.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
import referencing

from announcer.engine.announcement import Announcement
from announcer.engine.prompts import PendingPrompt
from announcer.producer.core import ProducerCore, ProducerOptions
from announcer.producer.scenario import load_scenario
from announcer.producer.server import ProducerServer
from tests.shared_data import SHARED as SHARED_ROOT

SCENARIOS = Path(__file__).parent / "scenarios"
SCHEMAS = SHARED_ROOT / "aaep/schemas"
WORKTREE = Path(__file__).resolve().parents[2]
TIMEOUT = 60.0


def scenario_path(name: str) -> str:
    return str(SCENARIOS / f"{name}.json")


async def start_producer(
    scenario: str = "confirm",
    *,
    unix_path: str | None = None,
    unix_framing: str = "length",
    paths: str = "aaep",
    heartbeat: float = 15.0,
    **options: Any,
) -> ProducerServer:
    options.setdefault("speed", 0.05)
    core = ProducerCore(load_scenario(scenario_path(scenario)), ProducerOptions(**options))
    server = ProducerServer(
        core,
        "127.0.0.1",
        0,
        unix_path=unix_path,
        unix_framing=unix_framing,  # type: ignore[arg-type]
        paths=paths,
        heartbeat_seconds=heartbeat,  # type: ignore[arg-type]
    )
    await server.start()
    return server


@dataclass
class Recorder:
    """A user interface that only remembers what it was told."""

    announcements: list[Announcement] = field(default_factory=list)
    prompts: list[PendingPrompt] = field(default_factory=list)
    voided: list[tuple[str, str]] = field(default_factory=list)
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def announcement_made(self, announcement: Announcement) -> None:
        self.announcements.append(announcement)
        self.changed.set()

    def prompt_opened(self, prompt: PendingPrompt) -> None:
        self.prompts.append(prompt)
        self.changed.set()

    def prompt_voided(self, reply_token: str, reason: str) -> None:
        self.voided.append((reply_token, reason))
        self.changed.set()

    def status_changed(self, status: Any) -> None:
        self.changed.set()

    @property
    def texts(self) -> list[str]:
        return [a.text for a in self.announcements]

    def count(self, needle: str) -> int:
        return sum(needle in text for text in self.texts)

    async def wait_until(self, predicate: Any, timeout: float = TIMEOUT) -> None:
        async def loop() -> None:
            while not predicate():
                self.changed.clear()
                await self.changed.wait()

        try:
            await asyncio.wait_for(loop(), timeout)
        except TimeoutError:
            raise AssertionError(f"condition never held; heard: {self.texts}") from None

    async def wait_text(self, needle: str, timeout: float = TIMEOUT) -> None:
        await self.wait_until(lambda: self.count(needle) > 0, timeout)

    async def wait_prompt(self, index: int = 0, timeout: float = TIMEOUT) -> PendingPrompt:
        await self.wait_until(lambda: len(self.prompts) > index, timeout)
        return self.prompts[index]


async def wait_for(predicate: Any, timeout: float = TIMEOUT) -> None:
    """Poll a condition on state another task changes (producer side)."""

    async def loop() -> None:
        while not predicate():
            await asyncio.sleep(0.02)

    await asyncio.wait_for(loop(), timeout)


@contextlib.asynccontextmanager
async def running(session: Any):  # type: ignore[no-untyped-def]
    task = asyncio.ensure_future(session.run())
    try:
        yield task
    finally:
        session.stop()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(task, 30)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_producer_process(
    *args: str, port: int | None = None
) -> tuple[subprocess.Popen[str], int]:
    """``announcer demo-producer`` as a child process; returns it with its port."""
    port = port or free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "announcer", "demo-producer", "--port", str(port), *args],
        cwd=WORKTREE,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    line = proc.stderr.readline()
    match = re.search(r"127\.0\.0\.1:(\d+)", line)
    if not match:
        stop_process(proc)
        raise AssertionError(f"the demo producer did not start: {line!r}")
    return proc, int(match.group(1))


def stop_process(proc: subprocess.Popen[Any], sig: int = signal.SIGTERM) -> None:
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, sig)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=15)
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream is not None:
            with contextlib.suppress(Exception):
                stream.close()


def _registry() -> referencing.Registry[Any]:
    resources = []
    for path in SCHEMAS.rglob("*.schema.json"):
        schema = json.loads(path.read_text(encoding="utf-8"))
        resources.append((schema["$id"], referencing.Resource.from_contents(schema)))
    return referencing.Registry().with_resources(resources)


_REGISTRY = _registry()


def schema_for(message: dict[str, Any]) -> dict[str, Any]:
    kind = str(message["type"])
    if kind.startswith("aaep:"):
        path = SCHEMAS / "core" / f"{kind.removeprefix('aaep:')}.schema.json"
    else:
        path = SCHEMAS / "handshake" / f"{kind}.schema.json"
    return json.loads(path.read_text(encoding="utf-8"))


def validate(message: dict[str, Any]) -> None:
    """Check a message against the official AAEP JSON Schema for its type."""
    validator = jsonschema.Draft202012Validator(
        schema_for(message), registry=_REGISTRY, format_checker=jsonschema.FormatChecker()
    )
    validator.validate(message)
