"""announcer's hooks with the real Claude Code and Codex CLIs, against the fake model (tests/lab).

`announcer hook serve` listens; the real CLI runs `announcer hook claude-code|codex` as
its hooks. What the person reads (serve's lines) and what the CLI did are both checked.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.lab import clis as lab_clis
from tests.lab.fake_model import FakeModelServer
from tests.support.processes import alive, command_line

ROOT = Path(__file__).resolve().parents[2]
WAIT = 90.0
#: a key refused with "Not yet." (typed before the question armed) is typed again after
#: this long, at most RETRIES times (60 s in all: a bound, never a measure)
RETRY_AFTER = 0.25
RETRIES = 240


class Serve:
    """`announcer hook serve` on a socket; answers each question with the next key given."""

    def __init__(self, sock: Path, keys: list[str]) -> None:
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "announcer", "hook", "serve", "--socket", str(sock)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=ROOT,
        )
        self.keys = list(keys)
        self.typed: list[str] = []
        self.lines: list[str] = []
        self.ready: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        assert self.ready.get(timeout=WAIT).startswith("Listening for")

    def _pump(self) -> None:
        assert self.proc.stdout is not None and self.proc.stdin is not None
        for raw in self.proc.stdout:
            line = raw.rstrip("\n")
            self.lines.append(line)
            if line.startswith("Listening for"):
                self.ready.put(line)
            if line.startswith("Press y") and self.keys:
                self._type(self.keys.pop(0))
            elif line.startswith("Not yet.") and self.typed and len(self.typed) < RETRIES:
                # A key typed before the question armed (answer_arming_seconds, 1 s) is
                # refused and costs nothing (issues 12 and 20): typed again a moment later.
                time.sleep(RETRY_AFTER)
                self._type(self.typed[-1])
            elif line.startswith("Allow? Type c") and self.keys:
                self._type(self.keys.pop(0))  # the second, confirming key

    def _type(self, key: str) -> None:
        assert self.proc.stdin is not None
        self.typed.append(key)
        self.proc.stdin.write(key + "\n")
        self.proc.stdin.flush()

    def stop(self) -> list[str]:
        self.proc.kill()  # only the process this test started
        self.proc.wait(timeout=WAIT)
        return self.lines


@pytest.fixture
def sock() -> Iterator[Path]:
    folder = Path(f"/tmp/ann-lab-hooks-{os.getpid()}-{threading.get_ident() % 10**6}")
    yield folder / "hook.sock"
    if folder.exists():
        for child in folder.iterdir():
            child.unlink()
        folder.rmdir()


def our_hook(agent: str, sock: Path, *args: str) -> str:
    return " ".join(
        [sys.executable, "-m", "announcer", "hook", agent, "--socket", str(sock), *args]
    )


def claude_turn(
    clis: lab_clis.Clis,
    server: FakeModelServer,
    tmp_path: Path,
    sock: Path,
    scenario: str,
    hook_args: tuple[str, ...] = (),
) -> dict:
    hook = our_hook("claude-code", sock, *hook_args)
    command = {"type": "command", "command": f"cd {ROOT} && {hook}"}
    settings = tmp_path / "settings.json"
    settings.write_text(
        json.dumps(
            {
                "hooks": {
                    "PermissionRequest": [{"matcher": "*", "hooks": [dict(command, timeout=60)]}],
                    "PostToolUse": [{"matcher": "*", "hooks": [command]}],
                    "Stop": [{"hooks": [command]}],
                }
            }
        )
    )
    project = tmp_path / "project"
    project.mkdir()
    env = lab_clis.claude_env(server.anthropic_url, tmp_path / "home")
    done = lab_clis.run(
        lab_clis.claude_command(
            clis,
            f"lab:{scenario} please",
            permission_mode="default",
            extra=("--settings", str(settings)),
        ),
        env,
        project,
        timeout=WAIT,
    )
    assert done.returncode == 0, done.stderr[-800:]
    return json.loads(done.stdout.splitlines()[-1])


def test_claude_code_p_mode_permission_request_allowed_by_the_user(
    clis: lab_clis.Clis, fake_model: FakeModelServer, tmp_path: Path, sock: Path
):
    serve = Serve(sock, ["y", "c"])
    try:
        result = claude_turn(clis, fake_model, tmp_path, sock, "denied")
    finally:
        lines = serve.stop()
    assert result["permission_denials"] == []  # the user's allow reached Claude Code
    assert (
        "Claude Code wants to run Bash: rm -rf build. It says: Remove the build folder. Allow?"
        in lines
    )
    after = lines[lines.index("Allowed.") :]
    assert after[1] == "Running Bash: rm -rf build."
    # its success right after that line says nothing new (issue 30 item 8): not said
    assert not any(line.startswith("Bash finished") for line in after), after
    assert "I could not remove the build folder." in lines  # Stop's last_assistant_message


def test_claude_code_p_mode_permission_request_denied_by_the_user(
    clis: lab_clis.Clis, fake_model: FakeModelServer, tmp_path: Path, sock: Path
):
    serve = Serve(sock, ["n"])
    try:
        result = claude_turn(clis, fake_model, tmp_path, sock, "denied")
    finally:
        lines = serve.stop()
    assert [d["tool_name"] for d in result["permission_denials"]] == ["Bash"]
    assert "Denied." in lines
    assert not any(line.startswith("Running Bash") for line in lines)


def test_claude_code_p_mode_no_answer_is_said_as_the_denial_it_is(
    clis: lab_clis.Clis, fake_model: FakeModelServer, tmp_path: Path, sock: Path
):
    """No dialog in `claude -p`: the hook's "ask" denies, and announcer says so."""
    serve = Serve(sock, [])  # nobody answers
    try:
        result = claude_turn(
            clis, fake_model, tmp_path, sock, "denied", hook_args=("--timeout", "4")
        )
    finally:
        lines = serve.stop()
    assert [d["tool_name"] for d in result["permission_denials"]] == ["Bash"]
    assert "No answer in time: Claude Code will not run it." in lines
    assert not [line for line in lines if "ask you itself" in line]
    assert not any(line.startswith("Running Bash") for line in lines)


def test_codex_hooks_are_heard_once_each_with_the_last_message(
    clis: lab_clis.Clis, fake_model: FakeModelServer, tmp_path: Path, sock: Path
):
    env = lab_clis.codex_env(fake_model.openai_url, tmp_path / "home")
    command = {"type": "command", "command": f"cd {ROOT} && {our_hook('codex', sock)}"}
    hooks = {
        event: [dict({"hooks": [command]}, **({"matcher": "*"} if "Tool" in event else {}))]
        for event in ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop")
    }
    (Path(env["CODEX_HOME"]) / "hooks.json").write_text(json.dumps({"hooks": hooks}))
    project = tmp_path / "project"
    project.mkdir()
    serve = Serve(sock, [])
    try:
        done = lab_clis.run(
            lab_clis.codex_command(
                clis, "lab:one-tool please", extra=("--dangerously-bypass-hook-trust",)
            ),
            env,
            project,
            timeout=WAIT,
        )
    finally:
        lines = serve.stop()
    assert done.returncode == 0, done.stderr[-800:]
    assert lines.count("Running Bash: echo hello.") == 1
    running = lines.index("Running Bash: echo hello.")
    # its success right after its start says nothing new (issue 30 item 8): not said
    assert lines[running + 1] == "The command printed hello.", lines
    assert "The command printed hello." in lines
    assert "Codex finished responding." in lines
    assert not any("never reported back" in line or "timed out" in line for line in lines)


# -- the documented set (docs/hooks.md), as a user registers it ------------------------

ANNOUNCE_COMMAND = "announcer hook claude-code"


def documented_settings(sock: Path, form: str = "setsid") -> dict:
    """docs/hooks.md's first ``json`` block, with this checkout's announcer and socket.

    ``form="detach"``: the docs' form for systems without ``setsid``, where each
    announce-only hook is ``announcer hook claude-code --detach``.
    """
    text = (ROOT / "docs" / "hooks.md").read_text()
    hooks = json.loads(text.split("```json\n", 1)[1].split("```", 1)[0])["hooks"]
    ours = f"{sys.executable} -m announcer hook claude-code --socket {sock}"
    for event, entries in hooks.items():
        for entry in entries:
            for handler in entry["hooks"]:
                assert ANNOUNCE_COMMAND in handler["command"], handler
                handler["command"] = handler["command"].replace(ANNOUNCE_COMMAND, ours)
                if form == "detach" and event != "PermissionRequest":
                    handler["command"] = f"{ours} --detach"
    return {"hooks": hooks}


def documented_turn(
    clis: lab_clis.Clis,
    server: FakeModelServer,
    tmp_path: Path,
    sock: Path,
    scenario: str,
    permission_mode: str,
    form: str = "setsid",
) -> dict:
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps(documented_settings(sock, form)))
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.md").write_text("one\ntwo\n")
    env = lab_clis.claude_env(server.anthropic_url, tmp_path / "home")
    env["PYTHONPATH"] = str(ROOT)  # `python -m announcer` from this checkout
    done = lab_clis.run(
        lab_clis.claude_command(
            clis,
            f"lab:{scenario} please",
            permission_mode=permission_mode,
            extra=("--settings", str(settings)),
        ),
        env,
        project,
        timeout=WAIT,
    )
    assert done.returncode == 0, done.stderr[-800:]
    return json.loads(done.stdout.splitlines()[-1])


def heard_until(serve: Serve, last: str, seconds: float = 30.0) -> list[str]:
    """serve's lines once ``last`` was printed: detached hooks may still be on their way
    when Claude Code exits."""
    deadline = time.monotonic() + seconds
    while last not in serve.lines and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(1.0)  # anything after it (there should be nothing) is heard too
    return serve.stop()


@pytest.mark.parametrize("form", ["setsid", "detach"])
def test_the_documented_hook_set_speaks_every_call_in_order_on_the_real_claude_code(
    clis: lab_clis.Clis, tmp_path: Path, sock: Path, form: str
):
    settings = documented_settings(sock, form)
    assert ("setsid -f" in settings["hooks"]["PostToolUse"][0]["hooks"][0]["command"]) == (
        form == "setsid"
    )
    assert "--detach" in settings["hooks"]["Stop"][0]["hooks"][0]["command"]
    serve = Serve(sock, [])
    # The fake model answers at once, so Claude Code starts the hooks ~50 ms apart; a
    # model that takes a little time (as every real one does) keeps this test about the
    # order announcer restores, not about how fast a busy machine starts Python.
    try:
        with FakeModelServer(delay=0.03) as paced:
            documented_turn(clis, paced, tmp_path, sock, "several", "acceptEdits", form)
    finally:
        lines = heard_until(serve, "Claude Code finished responding.")
    said = [line for line in lines if not line.startswith("Listening for")]
    assert said == [
        "Claude Code session started.",  # the first hook of a session says so
        # each end comes right after its own start: "Bash finished: ls." would say
        # nothing that line did not (issue 30 item 8), so it is kept for the record
        "Running Bash: ls.",
        "Running Read: notes.md in project.",
        "Running Bash: wc -l notes.md.",
        "I looked at the files.",
        "Claude Code finished responding.",
    ]


def test_the_documented_permission_hook_still_waits_for_the_user_and_never_allows_alone(
    clis: lab_clis.Clis, fake_model: FakeModelServer, tmp_path: Path, sock: Path
):
    serve = Serve(sock, ["y", "c"])
    try:
        result = documented_turn(clis, fake_model, tmp_path, sock, "denied", "default")
    finally:
        lines = heard_until(serve, "Claude Code finished responding.")
    assert result["permission_denials"] == []  # the user's allow reached Claude Code
    asked = lines.index(
        "Claude Code wants to run Bash: rm -rf build. It says: Remove the build folder. Allow?"
    )
    allowed = lines.index("Allowed.")
    assert asked < allowed < lines.index("Running Bash: rm -rf build.")
    assert lines.index("I could not remove the build folder.") > allowed


def test_claude_code_p_ends_an_async_hook_that_still_runs_so_the_docs_do_not_use_async(
    clis: lab_clis.Clis, fake_model: FakeModelServer, tmp_path: Path
):
    """Claude Code (2.1.330 to 2.1.337) ends ``"async": true`` hooks still running when
    ``claude -p`` ends (and waits about a second more to exit), or exits before one even
    began: an announcement sent that way can be cut off or lost, so docs/hooks.md
    detaches with ``setsid -f`` instead."""
    log = tmp_path / "async.log"
    pid_file = tmp_path / "async.pid"  # the hook's shell, to know at once when it ended
    slow = f"echo $$ > {pid_file}; echo start >> {log}; cat > /dev/null; sleep 3; echo end >> {log}"
    handler = {"type": "command", "command": slow, "timeout": 10, "async": True}
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"hooks": {"Stop": [{"hooks": [handler]}]}}))
    project = tmp_path / "project"
    project.mkdir()
    env = lab_clis.claude_env(fake_model.anthropic_url, tmp_path / "home")
    done = lab_clis.run(
        lab_clis.claude_command(clis, "lab:one-tool please", extra=("--settings", str(settings))),
        env,
        project,
        timeout=WAIT,
    )
    assert done.returncode == 0, done.stderr[-800:]
    deadline = time.monotonic() + 10
    while "start" not in (log.read_text() if log.exists() else "") and time.monotonic() < deadline:
        time.sleep(0.05)
    if not pid_file.exists():
        # Claude Code 2.1.337 sometimes exits before the async hook even begins: the
        # announcement is lost as surely (seen in a quiet run of the whole suite).
        assert "end" not in (log.read_text() if log.exists() else "")
        return
    # The hook's shell writes "end" 3 s after its input closes unless it is ended first:
    # once it has gone, the log holds all it ever will (no need to wait the 3 s out).
    hook_shell = int(pid_file.read_text())

    def still_runs() -> bool:  # that pid, still running the hook's command (not a reuse)
        return alive(hook_shell) and str(log) in command_line(hook_shell)

    deadline = time.monotonic() + WAIT
    while still_runs() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not still_runs(), "the async hook still runs"
    assert log.read_text().split() == ["start"]  # started, and ended before it could finish
