"""Fixtures of the agent lab: one fake model server and the pinned CLIs per test session.

Without node/npm or the CLIs the lab skips on a developer's machine, but on CI
(``CI=true``) it fails: the lab is how we know the real agents are heard right.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.lab.clis import (
    Clis,
    LabUnavailable,
    claude_command,
    claude_env,
    codex_command,
    codex_env,
    ensure_clis,
    run,
)
from tests.lab.fake_model import FakeModelServer
from tests.lab.transcript import spoken

if TYPE_CHECKING:
    from tests.support.lab_agents import LabAgents


def on_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


@pytest.fixture(scope="session")
def fake_model() -> Iterator[FakeModelServer]:
    with FakeModelServer() as server:
        yield server


@pytest.fixture(scope="session")
def clis() -> Clis:
    try:
        return ensure_clis()
    except LabUnavailable as exc:
        if on_ci():
            pytest.fail(f"agent lab: {exc} (on CI the lab must run)", pytrace=False)
        pytest.skip(f"agent lab: {exc}")


@dataclass(frozen=True)
class LabRun:
    """One CLI run: its JSON Lines stdout, stderr, exit status and wall time."""

    cli: str
    scenario: str
    stdout: str
    stderr: str
    returncode: int
    seconds: float
    folder: Path


class Lab:
    """Runs each (CLI, scenario, options) once per test session and keeps the result."""

    def __init__(self, clis: Clis, server: FakeModelServer, root: Path) -> None:
        self.clis = clis
        self.server = server
        self.root = root
        self._runs: dict[tuple[str, str, tuple[tuple[str, str], ...]], LabRun] = {}

    def _folder(self, name: str) -> Path:
        folder = self.root / name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "notes.md").write_text("# Notes\n\nnothing yet\n")
        return folder

    def claude(self, scenario: str, **options: str) -> LabRun:
        key = ("claude", scenario, tuple(sorted(options.items())))
        if key not in self._runs:
            name = "-".join(["claude", scenario, *options.values()])
            folder = self._folder(name)
            env = claude_env(self.server.anthropic_url, self.root / f"home-{name}")
            command = claude_command(
                self.clis,
                f"lab:{scenario} please",
                permission_mode=options.get("permission_mode", "acceptEdits"),
                partial=options.get("partial") == "yes",
            )
            self._runs[key] = self._run("claude", scenario, command, env, folder)
        return self._runs[key]

    def codex(self, scenario: str) -> LabRun:
        key = ("codex", scenario, ())
        if key not in self._runs:
            name = f"codex-{scenario}"
            folder = self._folder(name)
            env = codex_env(self.server.openai_url, self.root / f"home-{name}")
            command = codex_command(self.clis, f"lab:{scenario} please")
            self._runs[key] = self._run("codex", scenario, command, env, folder)
        return self._runs[key]

    def claude_heard(self, scenario: str, verbosity: str = "normal", **options: str) -> list[str]:
        """What a listener hears of Claude Code's run of ``scenario`` (it must succeed)."""
        result = self.claude(scenario, **options)
        assert result.returncode == 0, result.stderr[-2000:]
        return spoken("claude-code", result.stdout, verbosity=verbosity)

    def codex_heard(self, scenario: str, verbosity: str = "normal") -> list[str]:
        """What a listener hears of Codex's run of ``scenario`` (it must succeed)."""
        result = self.codex(scenario)
        assert result.returncode == 0, result.stderr[-2000:]
        return spoken("codex", result.stdout, verbosity=verbosity)

    def _run(
        self, cli: str, scenario: str, command: list[str], env: dict[str, str], folder: Path
    ) -> LabRun:
        started = time.monotonic()
        try:
            done = run(command, env, folder, timeout=90)
        except subprocess.TimeoutExpired:
            pytest.fail(f"{cli} {scenario}: no end within 90 s")
        return LabRun(
            cli,
            scenario,
            done.stdout,
            done.stderr,
            done.returncode,
            time.monotonic() - started,
            folder,
        )


@pytest.fixture(scope="session")
def lab(clis: Clis, fake_model: FakeModelServer, tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return Lab(clis, fake_model, tmp_path_factory.mktemp("agent-lab"))


@pytest.fixture
def lab_agents(clis: Clis, fake_model: FakeModelServer, tmp_path: Path) -> LabAgents:
    """``with lab_agents.run("codex") as run``: an ask-and-answer run of ``announcer agent``
    with the lab's real agents against the fake model (tests/support/lab_agents.py).
    Imported here, not above: it imports a test module, which pytest must collect first."""
    from tests.support.lab_agents import LabAgents

    return LabAgents(clis, fake_model, tmp_path)
