"""Each command imports only what it uses: an agent runs ``announcer hook`` on every tool call.

Run in a fresh interpreter (a subprocess), as an agent or a user would, and read
``sys.modules`` at exit. benchmarks/startup.py measures the time this saves.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import pkgutil
import subprocess
import sys
import threading
from importlib import resources
from pathlib import Path

import pytest

from announcer.cli import commands
from announcer.cli.main import COMMANDS, build_parser, chosen_command
from tests.support.waiting import TIMEOUT, wait_until

ROOT = Path(__file__).resolve().parents[2]

HEAVY = ("textual", "announcer.engine", "announcer.ui", "announcer.runtime", "announcer.speech")

REPORT = """
import atexit, json, sys
def report():
    with open(sys.argv[1], "w") as out:
        json.dump(sorted(sys.modules), out)
atexit.register(report)
from announcer.cli.main import main
sys.exit(main(sys.argv[2:]))
"""


def modules_after(tmp_path: Path, *args: str, stdin: bytes = b"") -> tuple[set[str], str]:
    report = tmp_path / "modules.json"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env["ANNOUNCER_HOOK_SOCKET"] = str(tmp_path / "none" / "hook.sock")  # nobody listens
    done = subprocess.run(
        [sys.executable, "-c", REPORT, str(report), *args],
        input=stdin,
        capture_output=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    return set(json.loads(report.read_text())), done.stdout.decode()


def loaded(modules: set[str], prefix: str) -> list[str]:
    return sorted(m for m in modules if m == prefix or m.startswith(prefix + "."))


@pytest.mark.parametrize("agent", ["claude-code", "codex"])
def test_hook_imports_only_the_standard_library_and_its_client(tmp_path: Path, agent: str):
    payload = {"hook_event_name": "PostToolUse", "session_id": "s", "tool_name": "Bash"}
    modules, out = modules_after(tmp_path, "hook", agent, stdin=json.dumps(payload).encode())
    assert out == ""  # announce-only: nothing to print
    ours = loaded(modules, "announcer")
    assert set(ours) <= {
        "announcer",
        # the agent files, read with tomllib alone (not the pydantic catalogue)
        "announcer.agents",
        "announcer.agents.files",
        "announcer.cli",
        "announcer.cli.main",
        "announcer.cli.commands",
        "announcer.cli.commands.hook",
        "announcer.config",
        "announcer.config.flags",
        "announcer.transports",
        "announcer.transports.hook_client",
    }, ours
    for heavy in (*HEAVY, "asyncio", "pydantic", "yaml", "babel", "announcer.formats"):
        assert not loaded(modules, heavy), heavy


def test_blocking_hook_without_announcer_is_lean_too_and_asks(tmp_path: Path):
    payload = {"hook_event_name": "PreToolUse", "session_id": "s", "tool_name": "Bash"}
    modules, out = modules_after(
        tmp_path, "hook", "claude-code", stdin=json.dumps(payload).encode()
    )
    assert json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "ask"
    for heavy in (*HEAVY, "asyncio", "pydantic"):
        assert not loaded(modules, heavy), heavy


def test_help_names_every_command_without_importing_them(tmp_path: Path):
    modules, out = modules_after(tmp_path, "--help")
    for name in COMMANDS:
        assert name in out
    assert not loaded(modules, "announcer.cli.commands.listen")
    for heavy in (*HEAVY, "pydantic", "asyncio"):
        assert not loaded(modules, heavy), heavy


def test_validate_imports_the_protocol_but_not_the_engine_or_textual(tmp_path: Path):
    events = tmp_path / "events.jsonl"
    session = resources.files("announcer.data").joinpath("banking_session.jsonl").read_text()
    events.write_text("".join(session.splitlines(keepends=True)[:5]))
    modules, _ = modules_after(tmp_path, "validate", str(events))
    assert loaded(modules, "announcer.protocol")
    for heavy in HEAVY:
        assert not loaded(modules, heavy), heavy


def test_the_command_table_matches_the_command_modules():
    """One registry: every module with register() is listed, with the help it registers."""
    with_register = set()
    for info in pkgutil.iter_modules(commands.__path__):
        module = importlib.import_module(f"{commands.__name__}.{info.name}")
        if callable(getattr(module, "register", None)):
            with_register.add(module.__name__)
    assert {module for module, _help in COMMANDS.values()} == with_register
    parser = build_parser()  # everything registered, as before lazy registration
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    registered = {action.dest: action.help for action in sub._choices_actions}
    assert registered == {name: help_text for name, (_module, help_text) in COMMANDS.items()}


def test_the_command_is_found_after_top_level_options():
    assert chosen_command(["--version"]) is None
    assert chosen_command(["hook", "claude-code"]) == "hook"
    assert chosen_command(["-h"]) is None
    assert chosen_command(["nonsense"]) is None
    # flags after the command are the command's own, fully registered
    args = build_parser(["hook", "codex", "--timeout", "5"]).parse_args(
        ["hook", "codex", "--timeout", "5"]
    )
    assert (args.agent, args.timeout) == ("codex", 5.0)


def test_help_before_a_command_still_lists_every_command():
    parser = build_parser(["--help", "hook"])
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert set(sub.choices) == set(COMMANDS)
    assert set(build_parser(["hook", "claude-code"])._subparsers._group_actions[0].choices) == {
        "hook"
    }


PLAIN_UI_UNUSED = ("textual", "rich", "announcer.ui.tui")


@pytest.mark.parametrize("ui", ["plain", "none"])
def test_listen_without_the_full_screen_ui_never_imports_textual(tmp_path: Path, ui: str):
    """Only ``--ui tui`` uses Textual: finding it for ``--ui``'s choices must not import it."""
    events = tmp_path / "events.jsonl"
    session = resources.files("announcer.data").joinpath("banking_session.jsonl").read_text()
    events.write_text("".join(session.splitlines(keepends=True)[:8]))
    modules, out = modules_after(
        tmp_path, "listen", "--ui", ui, "--speech", "none", "--exit-when-done", str(events)
    )
    assert loaded(modules, "announcer.runtime.session")  # a real session ran
    if ui == "plain":
        assert loaded(modules, "announcer.ui.plain")
        assert out.strip()  # the plain UI printed the announcements
    for unused in PLAIN_UI_UNUSED:
        assert not loaded(modules, unused), unused


def test_agent_help_lists_the_full_screen_ui_without_importing_it(tmp_path: Path):
    modules, out = modules_after(tmp_path, "agent", "--help")
    assert "tui" in out and "plain" in out
    for unused in PLAIN_UI_UNUSED:
        assert not loaded(modules, unused), unused


def test_an_agent_session_in_the_plain_ui_never_imports_textual(tmp_path: Path):
    """``announcer agent --ui plain`` with a real ACP agent, quit once the agent is ready."""
    report = tmp_path / "modules.json"
    work = tmp_path / "work"
    work.mkdir()
    env = dict(os.environ, PYTHONPATH=str(ROOT), ANNOUNCER_CONFIG=str(tmp_path / "none.toml"))
    words = ["agent", "--ui", "plain", "--speech", "none", "--cwd", str(work)]
    agent = [sys.executable, "-m", "tests.acp_frontend.sdk_agent"]
    proc = subprocess.Popen(
        [sys.executable, "-c", REPORT, str(report), *words, "--", *agent],
        cwd=ROOT,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    printed: list[str] = []
    assert proc.stdout is not None and proc.stdin is not None
    reader = threading.Thread(target=lambda: printed.extend(proc.stdout or ()), daemon=True)
    reader.start()
    try:
        wait_until(lambda: any("Scripted Agent is ready." in line for line in printed), "ready")
        proc.stdin.write(":quit\n")
        proc.stdin.flush()
        assert proc.wait(timeout=TIMEOUT) == 0, proc.stderr.read() if proc.stderr else ""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=TIMEOUT)
    modules = set(json.loads(report.read_text()))
    assert loaded(modules, "announcer.ui.plain") and loaded(modules, "acp")
    for unused in (*PLAIN_UI_UNUSED, "yaml"):  # PyYAML reads hook mappings only
        assert not loaded(modules, unused), unused
