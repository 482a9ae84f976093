"""The agent lab's ask-and-answer runs: ``announcer agent`` with the real agent CLIs
(pinned in tests/lab/clis.py) against the lab's fake model, read line by line.

The ``lab_agents`` fixture (tests/lab/conftest.py) gives a test one :class:`LabAgents`::

    with lab_agents.run("codex", build=True) as run:   # started by name, and ready
        run.type("lab:denied please")
        run.wait_for("Accept or reject")
        run.answer("r")
        run.wait_for("finished the turn.")
    heard = run.heard()

Each run has the environment its agents need to reach the fake model (their settings in a
scratch HOME, the adapters and Codex's sandbox on PATH), announcer at the fastest pace a
user can set, and it is waited on until every agent said it is ready. Leaving the block
quits announcer, which must end with status 0; then ``run.heard()`` is the whole record.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.acp_frontend.test_agent_command import AgentRun
from tests.lab.clis import (
    Clis,
    acp_adapter,
    claude_env,
    codex_env,
    codex_sandbox_path,
    copilot_env,
    gemini_env,
    opencode_env,
    qwen_env,
)
from tests.lab.fake_model import FakeModelServer

#: announcer's flags in every lab run: the fastest pace a user can set (``pace_wpm``, 600).
#: A risky accept waits until its question was said through at the user's pace (issue 20,
#: engine/answer_guard.py); at the default 180 that is 20 s and more of "Not yet." for a
#: long question. These tests are about what the agent asks and does, not about that wait
#: (tests/engine and tests/ui prove the rule; tests/lab/test_pace_lab.py hears at 600 too).
LISTENER = ("--pace", "600")

#: how each preset started by name reaches the fake model (environment and settings only)
LAB_AGENT_ENV: dict[str, Callable[[FakeModelServer, Path], dict[str, str]]] = {
    "qwen": qwen_env,
    "opencode": opencode_env,
    "gemini": gemini_env,
    "copilot": copilot_env,
}
#: the ACP adapters a run may start as its command (``announcer agent -- ADAPTER``)
ADAPTERS = {"claude": "claude-agent-acp", "codex": "codex-acp"}


def asking_claude_home(home: Path) -> None:
    """Claude's own setting for the preset's mode (``default``: it asks), in the scratch HOME.

    The preset sets it as a config option once the session is open; until announcer's
    ACP client applies config options, the lab's Claude gets it from its settings file
    (tests/lab/test_presets_lab.py proves the config option itself).
    """
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"permissions": {"defaultMode": "default"}}))


class LabAgents:
    """Starts ``announcer agent`` runs of the lab's agents for one test (its ``tmp``)."""

    def __init__(self, clis: Clis, fake_model: FakeModelServer, tmp: Path) -> None:
        self.clis = clis
        self.fake_model = fake_model
        self.tmp = tmp
        self.home = tmp / "home"

    def adapter(self, agent: str) -> Path:
        """The ACP adapter ``announcer agent claude`` or ``codex`` starts."""
        return acp_adapter(self.clis, ADAPTERS[agent])

    def env(self, *agents: str, claude_asks: bool = True) -> dict[str, str]:
        """The test's environment, and what ``agents`` (``claude``, ``codex`` or a preset of
        LAB_AGENT_ENV) need to reach the fake model: settings, and programs on PATH.
        ``claude_asks``: Claude's settings file sets the mode that asks (asking_claude_home);
        without it Claude keeps its own default."""
        env = dict(os.environ)
        path: list[str] = []
        for agent in agents:
            if agent == "claude":
                env.update(claude_env(self.fake_model.anthropic_url, self.home))
                if claude_asks:
                    asking_claude_home(self.home)
                path.append(str(self.adapter("claude").parent))
            elif agent == "codex":
                env.update(codex_env(self.fake_model.openai_url, self.home))
                path += [str(self.adapter("codex").parent), codex_sandbox_path(self.clis)]
            else:
                env.update(LAB_AGENT_ENV[agent](self.fake_model, self.home))
                path.append(str(acp_adapter(self.clis, "qwen").parent))
        env["PATH"] = os.pathsep.join(p for p in (*path, env["PATH"]) if p)
        return env

    @contextmanager
    def run(
        self,
        *names: str,
        command: str | None = None,
        build: bool = False,
        env: dict[str, str] | None = None,
        extra: tuple[str, ...] = (),
    ) -> Iterator[AgentRun]:
        """``announcer agent NAMES`` (presets by name), or ``command``'s adapter started as
        the agent's command (``claude`` or ``codex``); ``build``: a ``build`` folder with a
        file in the agent's working folder, for it to delete or keep; ``env``: instead of
        ``self.env(...)``. Yields once every agent said it is ready; quits on leaving."""
        agents = names or ((command,) if command else ())
        assert agents, "name the agents, or the adapter to start as a command"
        run = AgentRun(
            self.tmp,
            *LISTENER,
            *extra,
            env=self.env(*agents) if env is None else env,
            names=list(names) or None,
            agent=[str(self.adapter(command))] if command and not names else None,
        )
        if build:
            (run.folder / "build").mkdir()
            (run.folder / "build" / "keep.txt").write_text("built\n")
        try:
            for _agent in agents:
                run.wait_for("is ready.")
            yield run
        finally:
            assert run.quit() == 0
