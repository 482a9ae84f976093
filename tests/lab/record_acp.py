"""Record a real ACP adapter's session, both ways, as a fixture the sans-I/O tests replay.

``python -m tests.lab.record_acp NAME [OUT]`` runs one recipe of :data:`RECIPES`: the
pinned agent (tests/lab/clis.py) started as its preset starts it, offline against the
lab's fake model, driven by :class:`~tests.lab.acp_client.BareAcpClient`, which answers
each permission request with the recipe's option. Every JSON-RPC message, the agent's and
the client's, is written in order as one JSON line ``{"from": "agent"|"client",
"message": ...}`` to ``tests/acp_frontend/recordings/NAME.jsonl`` (or OUT). The scratch
folder and home are written as ``/home/ada/project`` and ``/home/ada``, so a recording is
the same wherever it was made and says paths the way a user's session would.

:mod:`tests.acp_frontend.recorded` replays a recording through the ACP mapping and the
engine: what the listener hears from what a real adapter really sent.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

from announcer.agents.catalogue import presets
from tests.lab.acp_client import BareAcpClient, apply_preset_asking
from tests.lab.clis import (
    Clis,
    acp_adapter,
    claude_env,
    codex_env,
    codex_sandbox_path,
    ensure_clis,
    gemini_args,
    gemini_env,
    opencode_args,
    opencode_env,
    qwen_args,
    qwen_env,
)
from tests.lab.fake_model import BUILD_SCRIPT, PATCH_FILES, TEN_TOOLS_FILES, FakeModelServer

#: where a recording's scratch folder and home are said to be
PROJECT = "/home/ada/project"
HOME = "/home/ada"
RECORDINGS = Path(__file__).resolve().parents[1] / "acp_frontend" / "recordings"

Env = Callable[[Clis, FakeModelServer, Path], dict[str, str]]


def _claude(clis: Clis, fake: FakeModelServer, home: Path) -> dict[str, str]:
    return claude_env(fake.anthropic_url, home)


def _codex(clis: Clis, fake: FakeModelServer, home: Path) -> dict[str, str]:
    env = codex_env(fake.openai_url, home)
    env["PATH"] = os.pathsep.join(p for p in (codex_sandbox_path(clis), env["PATH"]) if p)
    return env


AGENTS: dict[str, tuple[Env, Callable[[FakeModelServer], list[str]]]] = {
    "claude": (_claude, lambda fake: []),
    "codex": (_codex, lambda fake: []),
    "qwen": (lambda clis, fake, home: qwen_env(fake, home), qwen_args),
    "opencode": (lambda clis, fake, home: opencode_env(fake, home), opencode_args),
    "gemini": (lambda clis, fake, home: gemini_env(fake, home), gemini_args),
}


@dataclass(frozen=True)
class Recipe:
    """One recorded session: which agent, how it is set, what is typed, how it is answered."""

    agent: str
    prompts: tuple[str, ...]
    #: the option kind (or option id) each permission request is answered with
    answer: str = "allow_once"
    #: a mode set after the preset's own settings (``plan``), or None
    mode: str | None = None
    #: files put in the folder first (name -> text)
    files: dict[str, str] = field(default_factory=dict)
    #: the preset's own asking settings applied (False: the agent's own defaults)
    asking: bool = True
    #: extra arguments after the preset's command line
    args: tuple[str, ...] = ()
    #: record the agent's suggested next prompt (issue 33, item 5). claude-agent-acp 0.101
    #: sends it only to JetBrains AIR, so this recipe alone declares ``_meta.jetbrains.air``
    #: (announcer never does: docs/agents.md) and waits for it after the turn
    suggestions: bool = False


RECIPES: dict[str, Recipe] = {
    "claude-build-fail": Recipe("claude", ("lab:build-fail please",),
                                files={"build.sh": BUILD_SCRIPT}),
    "codex-build-fail": Recipe("codex", ("lab:build-fail please",),
                               files={"build.sh": BUILD_SCRIPT}),
    "claude-plan-always": Recipe("claude", ("lab:plan-exit please",), answer="allow_always",
                                 mode="plan"),
    "claude-quick-plan": Recipe("claude", ("lab:quick-plan please",)),
    "claude-suggestion": Recipe("claude", ("lab:one-tool please",), suggestions=True),
    # issue 33: a whole turn's digest, and the silence while its tests run
    "claude-ten-tools": Recipe("claude", ("lab:ten-tools please",), files=TEN_TOOLS_FILES),
    "codex-patch-delete": Recipe("codex", ("lab:patch-delete please",), files=PATCH_FILES),
    # codex-acp's own Auto review: its reviewer (the model) decides an escalation
    "codex-review-denied": Recipe("codex", ("lab:denied please",), asking=False,
                                  files={"build/keep.txt": "built\n"}),
    # qwen's own auto mode: its classifier (the model) decides, not the user
    "qwen-auto-command": Recipe("qwen", ("lab:command please",), asking=False,
                                args=("--approval-mode", "auto")),
    # Gemini CLI's ACP mode asks before a command; the user accepts it once
    "gemini-command": Recipe("gemini", ("lab:command please",)),
}  # fmt: skip


def record(name: str, clis: Clis, fake: FakeModelServer, scratch: Path) -> list[dict[str, Any]]:
    """Run recipe ``name`` once; its wire, paths not yet rewritten."""
    recipe = RECIPES[name]
    preset = presets()[recipe.agent]
    make_env, make_args = AGENTS[recipe.agent]
    home, folder = scratch / "home", scratch / "project"
    folder.mkdir(parents=True)
    for file, text in recipe.files.items():
        (folder / file).parent.mkdir(parents=True, exist_ok=True)
        (folder / file).write_text(text)
    env = make_env(clis, fake, home)
    if recipe.asking:
        env.update(preset.ask.env)
    if recipe.suggestions:
        env["CLAUDE_CODE_ENABLE_PROMPT_SUGGESTION"] = "true"  # offline: no feature flags
    program = str(acp_adapter(clis, preset.command[0]))
    command = preset.launch_command(program) if recipe.asking else [program, *preset.command[1:]]
    client = BareAcpClient(
        [*command, *make_args(fake), *recipe.args],
        folder,
        env,
        stderr_path=scratch / "agent.err",
    ).start()
    try:
        client.initialize(AIR_CLIENT if recipe.suggestions else None)
        session = client.new_session(folder)
        if recipe.asking:
            apply_preset_asking(client, session, preset.ask.config, preset.ask.mode)
        if recipe.mode is not None:
            client.set_mode(session["sessionId"], recipe.mode)
        client.answer_kind[session["sessionId"]] = recipe.answer
        for prompt in recipe.prompts:
            client.prompt(session["sessionId"], prompt)
        if recipe.suggestions:  # predicted after the turn's end
            _wait_for(lambda: any(_suggests(u) for u in list(client.updates)), SUGGESTION_WAIT)
    finally:
        client.close()
    return list(client.wire)


#: the capabilities' ``_meta`` of a JetBrains AIR client (claude-agent-acp's isAirClient)
AIR_CLIENT: dict[str, Any] = {"jetbrains": {"air": {}}}
#: the longest the recorder waits for a suggested prompt after the turn
SUGGESTION_WAIT = 60.0


def _suggests(update: dict[str, Any]) -> bool:
    meta = (update.get("update") or update).get("_meta")
    return isinstance(meta, dict) and "promptSuggestions" in meta


def _wait_for(done: Callable[[], bool], seconds: float) -> None:
    """Until ``done()``, checked every 0.1 s for at most ``seconds`` (then recorded as is)."""
    deadline = time.monotonic() + seconds
    while not done() and time.monotonic() < deadline:
        time.sleep(0.1)


def trimmed(entry: dict[str, Any]) -> dict[str, Any]:
    """A message with what the mapping never reads cut short, so a fixture stays small:
    a few slash commands (Claude lists dozens of skills), no skill details (qwen sends
    half a megabyte of them)."""
    params = entry["message"].get("params")
    update = params.get("update") if isinstance(params, dict) else None
    if isinstance(update, dict) and isinstance(update.get("availableCommands"), list):
        update["availableCommands"] = update["availableCommands"][:3]
        meta = update.get("_meta")
        if isinstance(meta, dict) and len(json.dumps(meta)) > 2000:
            update["_meta"] = {key: "(left out)" for key in meta}
    return entry


def portable(wire: list[dict[str, Any]], scratch: Path) -> list[str]:
    """The wire as JSON lines, the scratch folder and home written as a user's would be."""
    lines = []
    for entry in wire:
        line = json.dumps(trimmed(entry), ensure_ascii=False)
        for real, said in ((scratch / "project", PROJECT), (scratch / "home", HOME)):
            line = line.replace(str(real), said)
        lines.append(line)
    return lines


def main(argv: list[str]) -> int:
    name = argv[0]
    out = Path(argv[1]) if len(argv) > 1 else RECORDINGS / f"{name}.jsonl"
    clis = ensure_clis(install=False)
    with FakeModelServer() as fake, TemporaryDirectory(prefix="acp-record-") as tmp:
        scratch = Path(tmp).resolve()
        wire = record(name, clis, fake, scratch)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text("\n".join(portable(wire, scratch)) + "\n")
    print(f"{out}: {len(wire)} messages")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
