"""Each lab preset, started as its agent file says, asks before an edit and before a command.

The real agent (pinned in tests/lab/clis.py, the version its file pins) runs offline
against the fake model with the preset's command line and environment, and its session
gets the preset's config options. Then, per preset, in one agent process: an edit, a
command (``touch made.txt``) and a delete (``rm -rf build``), each rejected and allowed,
each in a session of its own. Every one must be asked once on the wire
(``session/request_permission``), and the files prove what the answer did. Without the
preset's settings, several of these agents would approve by themselves (Claude's Auto mode,
Codex's Auto review, opencode's allowed commands, Cline's auto-approve).
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from announcer.agents.catalogue import presets
from tests.lab.acp_client import BareAcpClient, apply_preset_asking
from tests.lab.clis import (
    Clis,
    acp_adapter,
    claude_env,
    codex_env,
    codex_sandbox_path,
    copilot_env,
    gemini_args,
    gemini_env,
    opencode_args,
    opencode_env,
    qwen_args,
    qwen_env,
)
from tests.lab.fake_model import EDIT_FILE, EDIT_TEXT, LONG_COMMAND_LOCK, FakeModelServer

EnvMaker = Callable[[Clis, FakeModelServer, Path], dict[str, str]]
#: arguments after the preset's own that point the agent at the fake model
ArgsMaker = Callable[[FakeModelServer], list[str]]


def _claude(clis: Clis, fake: FakeModelServer, home: Path) -> dict[str, str]:
    return claude_env(fake.anthropic_url, home)


def _codex(clis: Clis, fake: FakeModelServer, home: Path) -> dict[str, str]:
    env = codex_env(fake.openai_url, home)
    env["PATH"] = os.pathsep.join(p for p in (codex_sandbox_path(clis), env["PATH"]) if p)
    return env


def _qwen(clis: Clis, fake: FakeModelServer, home: Path) -> dict[str, str]:
    return qwen_env(fake, home)


def _opencode(clis: Clis, fake: FakeModelServer, home: Path) -> dict[str, str]:
    return opencode_env(fake, home)


def _gemini(clis: Clis, fake: FakeModelServer, home: Path) -> dict[str, str]:
    return gemini_env(fake, home)


def _copilot(clis: Clis, fake: FakeModelServer, home: Path) -> dict[str, str]:
    return copilot_env(fake, home)


def _no_args(fake: FakeModelServer) -> list[str]:
    return []


#: whether the agent ends its running command when the turn is cancelled (seen at the pinned
#: versions: codex-acp 2.6.0 lets a command that has run a second finish its work after the
#: turn has ended, so announcer must never say that it stopped)
ENDS_COMMAND_ON_CANCEL = {
    "claude": True,
    "codex": False,
    "qwen": True,
    "opencode": True,
    "gemini": True,
    "copilot": True,
}
#: the longest the lab's long command may take to end or to write late.txt (it works 3 s)
LONG_COMMAND_SECONDS = 60.0


def _appears(path: Path, within: float) -> bool:
    """Whether ``path`` exists, or comes to exist within ``within`` seconds."""
    deadline = time.monotonic() + within
    while not path.exists():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _still_running(lock: Path) -> bool:
    """Whether the lab's long command still holds its lock (it takes it before it marks
    started.txt and holds it until its process ends, tests/lab/fake_model.py)."""
    with lock.open("a") as probe:
        try:
            fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(probe, fcntl.LOCK_UN)
        return False


def _outlives_the_turn(folder: Path) -> bool:
    """Whether the long command, started in ``folder``, finishes its work (writes late.txt)
    after its turn was cancelled, or is ended first. Known as soon as it is: the command
    writes late.txt, or its process is gone and can write nothing more."""
    late = folder / "late.txt"
    deadline = time.monotonic() + LONG_COMMAND_SECONDS
    while not late.exists() and _still_running(folder / LONG_COMMAND_LOCK):
        assert time.monotonic() < deadline, "the long command neither ended nor wrote late.txt"
        time.sleep(0.05)
    return late.exists()


#: the presets the lab runs, and how each reaches the fake model
LAB_ENV: dict[str, tuple[EnvMaker, ArgsMaker]] = {
    "claude": (_claude, _no_args),
    "codex": (_codex, _no_args),
    "qwen": (_qwen, qwen_args),
    "opencode": (_opencode, opencode_args),
    "gemini": (_gemini, gemini_args),
    "copilot": (_copilot, _no_args),
}


def _folder(root: Path, name: str) -> Path:
    folder = root / name
    (folder / "build").mkdir(parents=True)
    (folder / "build" / "keep.txt").write_text("built\n")
    (folder / "notes.md").write_text("# Notes\n")
    return folder


@pytest.mark.parametrize("preset_id", sorted(LAB_ENV))
def test_the_preset_asks_before_an_edit_and_a_delete_and_the_answer_is_obeyed(
    preset_id: str, clis: Clis, fake_model: FakeModelServer, tmp_path: Path
) -> None:
    preset = presets()[preset_id]
    make_env, make_args = LAB_ENV[preset_id]
    env = make_env(clis, fake_model, tmp_path / "home")
    env.update(preset.start_env(env))  # asking and quiet mode, as announcer applies them
    program = str(acp_adapter(clis, preset.command[0]))
    client = BareAcpClient(
        [*preset.launch_command(program), *make_args(fake_model)],
        tmp_path,
        env,
        stderr_path=tmp_path / "agent.err",
    ).start()
    cases = [
        ("edit-reject", "lab:edit please", "reject_once"),
        ("edit-allow", "lab:edit please", "allow_once"),
        ("command-reject", "lab:command please", "reject_once"),
        ("command-allow", "lab:command please", "allow_once"),
        ("delete-reject", "lab:denied please", "reject_once"),
        ("delete-allow", "lab:denied please", "allow_once"),
    ]
    folders: dict[str, Path] = {}
    sessions: dict[str, str] = {}
    try:
        client.initialize()
        for name, prompt, kind in cases:
            folders[name] = _folder(tmp_path, name)
            session = client.new_session(folders[name])
            sessions[name] = session["sessionId"]
            apply_preset_asking(client, session, preset.ask.config, preset.ask.mode)
            client.answer_kind[session["sessionId"]] = kind
            client.prompt(session["sessionId"], prompt)
        # a cancel while an allowed command still works: the turn ends as cancelled
        folders["cancel"] = _folder(tmp_path, "cancel")
        session = client.new_session(folders["cancel"])
        sessions["cancel"] = session["sessionId"]
        apply_preset_asking(client, session, preset.ask.config, preset.ask.mode)
        client.answer_kind[session["sessionId"]] = "allow_once"
        result = client.prompt_in_background(session["sessionId"], "lab:long please")
        assert client.wait_until_asked(session["sessionId"], 60), f"{preset_id}: never asked"
        # the allowed command is well under way once it has marked it (after 1 s)
        assert _appears(folders["cancel"] / "started.txt", 60), f"{preset_id}: never started"
        client.cancel(session["sessionId"])
        assert result(60)["stopReason"] == "cancelled"
        outlived = _outlives_the_turn(folders["cancel"])
    finally:
        client.close()
    err = (tmp_path / "agent.err").read_text(errors="replace")[-2000:]
    # offline: nothing installed from npm at start (opencode finds the lab's prepared plugin
    # package in its config folder, tests/lab/clis.py)
    assert not (tmp_path / "home" / ".npm").exists(), f"{preset_id} installed from npm: {err}"
    for name, _, kind in cases:
        asked = client.asked_in(sessions[name])
        assert len(asked) == 1, f"{preset_id} {name}: asked {len(asked)} times; stderr: {err}"
        assert asked[0].chosen is not None, f"{preset_id} {name}: no {kind} option offered"
    assert not (folders["edit-reject"] / EDIT_FILE).exists()
    assert (folders["edit-allow"] / EDIT_FILE).read_text() == EDIT_TEXT
    assert not (folders["command-reject"] / "made.txt").exists()
    assert (folders["command-allow"] / "made.txt").exists()
    assert (folders["delete-reject"] / "build" / "keep.txt").exists()
    assert not (folders["delete-allow"] / "build").exists()
    assert outlived is not ENDS_COMMAND_ON_CANCEL[preset_id], (
        f"{preset_id}: its command {'outlived' if outlived else 'ended with'} the cancelled turn; "
        "update ENDS_COMMAND_ON_CANCEL and what announcer says after a cancel"
    )
