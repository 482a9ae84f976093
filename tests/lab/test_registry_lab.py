"""Two of the lab's real agents started through ACP registry entries (issue 33, item 1).

The registry is a snapshot the test writes, in the registry's format: Claude's adapter as
its npx entry (``@agentclientprotocol/claude-agent-acp``), opencode as a binary entry. Both
programs are already on PATH (the lab's node_modules/.bin), so neither npx nor a download
runs: offline against the fake model. Neither has a preset under these ids, so each starts
in its own mode and the user hears that it may act without asking.
"""

from __future__ import annotations

import json
import os
import platform
from pathlib import Path

from announcer.formats.acp_registry import platform_key
from tests.acp_frontend.test_agent_command import AgentRun
from tests.lab.clis import PINNED, Clis, acp_adapter, claude_env, opencode_env
from tests.lab.fake_model import FakeModelServer
from tests.support.lab_agents import LISTENER, asking_claude_home


def _registry(folder: Path) -> Path:
    here = platform_key(platform.system(), platform.machine())
    agents = [
        {
            "id": "claude-code-acp",
            "name": "Claude Agent",
            "version": PINNED["@agentclientprotocol/claude-agent-acp"],
            "description": "ACP wrapper for Anthropic's Claude",
            "distribution": {
                "npx": {
                    "package": "@agentclientprotocol/claude-agent-acp@"
                    + PINNED["@agentclientprotocol/claude-agent-acp"]
                }
            },
        },
        {
            "id": "opencode-bin",
            "name": "OpenCode Bin",
            "version": PINNED["opencode-ai"],
            "description": "The open source coding agent",
            "distribution": {
                "binary": {
                    here: {
                        "archive": "https://example.invalid/opencode.tar.gz",
                        "cmd": "./opencode",
                        "args": ["acp", "--pure"],
                        "env": {"OPENCODE_PERMISSION": '{"edit":"ask","bash":"ask"}'},
                    }
                }
            },
        },
    ]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "registry.json"
    path.write_text(json.dumps({"version": "1.0.0", "agents": agents, "extensions": []}))
    return path


def _env(base: dict[str, str], clis: Clis) -> dict[str, str]:
    # the lab's programs first; no npx anywhere, so a fetch from npm cannot happen
    return {**base, "PATH": os.pathsep.join([str(acp_adapter(clis, "x").parent), base["PATH"]])}


def test_claude_through_its_registry_entry_says_no_preset_and_a_reject_is_obeyed(
    tmp_path: Path, clis: Clis, fake_model: FakeModelServer
) -> None:
    env = _env({**os.environ, **claude_env(fake_model.anthropic_url, tmp_path / "home")}, clis)
    asking_claude_home(tmp_path / "home")
    registry = _registry(tmp_path / "registry")
    run = AgentRun(tmp_path, *LISTENER, "--registry", str(registry), env=env,
                   names=["claude-code-acp"])  # fmt: skip
    (run.folder / "build").mkdir()
    (run.folder / "build" / "keep.txt").write_text("built\n")
    try:
        said = run.wait_for("No preset for Claude Agent: it may act without asking.")
        assert ":mode changes it." in said
        run.type("lab:denied please")
        run.wait_for("Accept or reject")
        run.answer("r")
        run.wait_for("finished the turn.")
        assert (run.folder / "build" / "keep.txt").exists()
    finally:
        assert run.quit() == 0
    heard = run.heard()
    assert sum(t.startswith("Confirmation needed.") for t in heard) == 1
    assert "You rejected: rm -rf build." in heard


def test_opencode_through_a_binary_entry_on_path_with_the_registry_environment(
    tmp_path: Path, clis: Clis, fake_model: FakeModelServer
) -> None:
    env = _env({**os.environ, **opencode_env(fake_model, tmp_path / "home")}, clis)
    registry = _registry(tmp_path / "registry")
    run = AgentRun(tmp_path, *LISTENER, "--registry", str(registry), env=env,
                   names=["opencode-bin"])  # fmt: skip
    (run.folder / "build").mkdir()
    (run.folder / "build" / "keep.txt").write_text("built\n")
    try:
        run.wait_for("No preset for OpenCode Bin: it may act without asking.")
        run.type("lab:denied please")
        question = run.wait_for("Confirmation needed.")  # the registry's env made it ask
        assert "rm -rf build" in question
        run.wait_for("Accept or reject")
        run.answer("r")
        run.wait_for("finished the turn.")
        assert (run.folder / "build" / "keep.txt").exists()
    finally:
        assert run.quit() == 0
