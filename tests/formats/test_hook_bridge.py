"""The Claude Code hook bridge end to end: real processes, a real Unix socket, the plain UI.

The hook never allows by default: no announcer, no answer in time, or closed
input all print ``ask``.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from announcer.transports.hook_client import claude_code_hook_output
from tests.support.cli import start_announcer as announcer
from tests.support.speech_record import spoken_in as spoken
from tests.support.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
WAIT = 60.0  # generous: a loaded 2-core machine
# Answer keys wait out the arming interval (default 1 s) after a question is shown; a
# person answers later than that, and so do these tests. Waiting longer is always safe.
ARMED_AFTER = 1.5
# Tests whose subject is not the arming interval run with a short one: the keys line is
# printed after the question is presented, so a test that waits this long after reading
# it types after the arming, whatever the machine's load.
SHORT_ARMING = 0.2

PRE_TOOL_USE = {
    "hook_event_name": "PreToolUse",
    "session_id": "abc123",
    "transcript_path": "/home/me/.claude/projects/x.jsonl",
    "cwd": "/home/me/shop",
    "permission_mode": "default",
    "tool_name": "Bash",
    "tool_use_id": "toolu_01ABC",
    "tool_input": {"command": "rm -rf build", "description": "Clean the build folder"},
}


class Served:
    """A running ``announcer hook serve`` whose output lines we can wait for."""

    def __init__(self, sock: Path, *command: str, arming: float | None = SHORT_ARMING) -> None:
        """``arming``: the answer_arming_seconds it runs with (None: the default, 1 s)."""
        self.socket = sock
        env = {} if arming is None else {"ANNOUNCER_ANSWER_ARMING_SECONDS": str(arming)}
        self.armed_after = ARMED_AFTER if arming is None else arming + 0.3
        self.proc = announcer(*(command or ("hook", "serve", "--socket", str(sock))), env=env)
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))

    def wait_for(self, prefix: str) -> str:
        while True:
            try:
                line = self.lines.get(timeout=WAIT)
            except queue.Empty:
                raise AssertionError(f"never saw {prefix!r}; saw {self.seen}") from None
            self.seen.append(line)
            if line.startswith(prefix):
                return line

    def answer(self, *lines: str) -> None:
        """Type answer lines once the question's keys are armed (answer_arming_seconds)."""
        time.sleep(self.armed_after)
        for line in lines:
            self.type(line)

    def type(self, text: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(text)
        self.proc.stdin.flush()

    def stop(self) -> None:
        self.proc.kill()  # only the process this test started
        self.proc.wait(timeout=WAIT)


@pytest.fixture
def sock(tmp_path: Path) -> Path:
    # AF_UNIX paths are short; pytest's tmp_path can be long
    short = Path(f"/tmp/ann-{os.getpid()}-{abs(hash(tmp_path)) % 10**8}")
    yield short / "hook.sock"
    if short.exists():
        for child in short.iterdir():
            child.unlink()
        short.rmdir()


@pytest.fixture
def served(sock: Path) -> Iterator[Served]:
    server = Served(sock)
    server.wait_for("Listening for Claude Code and Codex hooks")
    yield server
    server.stop()


def run_hook(payload: object, sock: Path, *, timeout: float = WAIT) -> subprocess.Popen[str]:
    """Start ``announcer hook claude-code`` with the payload on its stdin, as Claude Code does."""
    body = payload if isinstance(payload, str) else json.dumps(payload)
    with tempfile.TemporaryFile("w+") as stdin:
        stdin.write(body)
        stdin.seek(0)
        return announcer(
            "hook", "claude-code", "--socket", str(sock), "--timeout", str(timeout), stdin=stdin
        )


def hook_output(proc: subprocess.Popen[str]) -> dict:
    out, err = proc.communicate(timeout=WAIT * 2)
    assert proc.returncode == 0, err
    return json.loads(out)


def test_pre_tool_use_allowed_from_the_plain_ui(served: Served, sock: Path):
    hook = run_hook(PRE_TOOL_USE, sock)
    assert served.wait_for("Claude Code wants to run") == (
        "Claude Code wants to run Bash: rm -rf build. It says: Clean the build folder. Allow?"
    )
    served.wait_for("Press y")
    served.answer("y\n", "c\n")  # allowing a medium-risk action takes a second key
    assert hook_output(hook) == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "permissionDecisionReason": "Allowed by the user in announcer.",
        }
    }


def test_permission_request_denied_with_a_reason(served: Served, sock: Path):
    payload = dict(PRE_TOOL_USE, hook_event_name="PermissionRequest")
    payload.pop("tool_use_id")
    hook = run_hook(payload, sock)
    served.wait_for("Press y")
    served.answer("what?\n")  # not an answer: asked again, nothing decided
    served.wait_for("Please type y to allow or n to deny.")
    served.type("n\n")
    assert hook_output(hook) == {
        "hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": {"behavior": "deny", "message": "Denied by the user in announcer."},
        }
    }


def test_other_hook_events_are_announced_without_blocking(served: Served, sock: Path):
    hook = run_hook(
        {"hook_event_name": "SessionStart", "session_id": "abc123", "cwd": "/home/me/shop"}, sock
    )
    out, err = hook.communicate(timeout=WAIT)
    assert (hook.returncode, out) == (0, ""), err
    assert served.wait_for("Claude Code session") == "Claude Code session started in shop."
    hook = run_hook(
        {"hook_event_name": "Notification", "session_id": "abc123", "message": "Waiting"}, sock
    )
    assert hook.communicate(timeout=WAIT)[0] == ""
    assert served.wait_for("Claude Code:") == "Claude Code: Waiting"


def test_no_announcer_answers_ask(sock: Path):
    assert not sock.exists()
    result = hook_output(run_hook(PRE_TOOL_USE, sock))
    assert result["hookSpecificOutput"]["permissionDecision"] == "ask"
    assert "No announcer is running" in result["hookSpecificOutput"]["permissionDecisionReason"]


@pytest.mark.parametrize(
    ("attended", "reason"),
    [
        ("1", "No announcer is running; the agent asks you itself."),
        ("0", "No announcer is running and no one is at the prompt, so it is not run."),
    ],
)
def test_the_reason_claude_code_reads_is_true_for_how_it_runs(
    sock: Path, attended: str, reason: str
):
    """In `claude -p` (CLAUDE_CODE_SESSION_ATTENDED=0) an "ask" is a denial."""
    result = subprocess.run(
        [sys.executable, "-m", "announcer", "hook", "claude-code", "--socket", str(sock)],
        input=json.dumps(PRE_TOOL_USE),
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=str(ROOT), CLAUDE_CODE_SESSION_ATTENDED=attended),
        timeout=WAIT,
    )
    output = json.loads(result.stdout)["hookSpecificOutput"]
    assert (output["permissionDecision"], output["permissionDecisionReason"]) == ("ask", reason)


def test_no_announcer_for_permission_request_leaves_the_dialog_to_claude(sock: Path):
    payload = dict(PRE_TOOL_USE, hook_event_name="PermissionRequest")
    assert hook_output(run_hook(payload, sock)) == {
        "hookSpecificOutput": {"hookEventName": "PermissionRequest"}
    }


def test_user_not_answering_in_time_answers_ask(served: Served, sock: Path):
    hook = run_hook(PRE_TOOL_USE, sock, timeout=3)
    served.wait_for("Press y")
    result = hook_output(hook)  # nobody types anything
    assert result["hookSpecificOutput"]["permissionDecision"] == "ask"


def test_announcer_that_never_replies_answers_ask(sock: Path):
    sock.parent.mkdir(mode=0o700)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(sock))
    listener.listen(1)
    try:
        hook = run_hook(PRE_TOOL_USE, sock, timeout=2)
        conn, _ = listener.accept()  # accept, read, and stay silent
        with conn:
            result = hook_output(hook)
    finally:
        listener.close()
    assert result["hookSpecificOutput"]["permissionDecision"] == "ask"
    assert "in time" in result["hookSpecificOutput"]["permissionDecisionReason"]


def test_closed_input_on_the_announcer_answers_ask(served: Served, sock: Path):
    hook = run_hook(PRE_TOOL_USE, sock)
    served.wait_for("Press y")
    assert served.proc.stdin is not None
    served.proc.stdin.close()
    assert hook_output(hook)["hookSpecificOutput"]["permissionDecision"] == "ask"


def test_socket_is_readable_only_by_its_user(served: Served, sock: Path):
    assert stat.S_IMODE(sock.stat().st_mode) == 0o600
    assert stat.S_IMODE(sock.parent.stat().st_mode) == 0o700
    assert sock.stat().st_uid == os.getuid()


def test_garbage_payload_prints_empty_json(sock: Path):
    proc = run_hook("this is not json", sock)
    out, err = proc.communicate(timeout=WAIT)
    assert (proc.returncode, json.loads(out)) == (0, {})
    assert "not a JSON object" in err


def test_hook_output_shapes():
    assert claude_code_hook_output("PreToolUse", "deny", "no") == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "no",
        }
    }
    assert claude_code_hook_output("PermissionRequest", "allow", "ok") == {
        "hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": {"behavior": "allow"},
        }
    }


def test_keys_typed_before_the_question_never_answer_it(served: Served, sock: Path):
    served.type("y\n")  # typed ahead, with no question pending
    first = run_hook({"hook_event_name": "SessionStart", "session_id": "abc123"}, sock)
    first.communicate(timeout=WAIT)
    served.wait_for("Claude Code session")  # the stray "y" has reached the announcer by now
    hook = run_hook(PRE_TOOL_USE, sock, timeout=4)
    served.wait_for("Press y")
    assert hook_output(hook)["hookSpecificOutput"]["permissionDecision"] == "ask"


def test_two_requests_are_asked_one_after_the_other(served: Served, sock: Path):
    first = run_hook(PRE_TOOL_USE, sock)
    served.wait_for("Press y")
    second = run_hook(
        dict(PRE_TOOL_USE, tool_use_id="toolu_02", tool_input={"command": "ls"}), sock
    )
    served.answer("n\n")
    assert hook_output(first)["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert (
        served.wait_for("Claude Code wants to run") == "Claude Code wants to run Bash: ls. Allow?"
    )
    served.wait_for("Press y")
    served.answer("y\n", "c\n")
    assert hook_output(second)["hookSpecificOutput"]["permissionDecision"] == "allow"


def run_codex_hook(payload: object, sock: Path, *, timeout: float = WAIT) -> subprocess.Popen[str]:
    body = json.dumps(payload)
    with tempfile.TemporaryFile("w+") as stdin:
        stdin.write(body)
        stdin.seek(0)
        return announcer(
            "hook", "codex", "--socket", str(sock), "--timeout", str(timeout), stdin=stdin
        )


CODEX_PERMISSION = {
    "hook_event_name": "PermissionRequest",
    "session_id": "s_fix_1",
    "turn_id": "t_fix_1",
    "tool_name": "Bash",
    "tool_input": {"command": "rm -rf build", "description": "clean build dir"},
}


def test_codex_permission_request_allowed_from_the_plain_ui(served: Served, sock: Path):
    hook = run_codex_hook(CODEX_PERMISSION, sock)
    assert served.wait_for("Codex wants") == (
        "Codex wants to run Bash: rm -rf build. It says: clean build dir. Allow?"
    )
    served.wait_for("Press y")
    served.answer("y\n", "c\n")  # allowing a medium-risk action takes a second key
    assert hook_output(hook) == {
        "hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": {"behavior": "allow"},
        }
    }


def test_codex_without_announcer_stays_silent_so_codex_asks(sock: Path):
    proc = run_codex_hook(CODEX_PERMISSION, sock)
    out, _ = proc.communicate(timeout=WAIT)
    assert (proc.returncode, out) == (0, "")


def test_codex_pre_tool_use_is_only_announced(served: Served, sock: Path):
    payload = dict(CODEX_PERMISSION, hook_event_name="PreToolUse", tool_use_id="call_1")
    out, _ = run_codex_hook(payload, sock).communicate(timeout=WAIT)
    assert out == ""  # Codex cannot take "ask" from PreToolUse: we never decide there
    assert served.wait_for("Running") == "Running Bash: rm -rf build."


def hooks_socket_ready(sock: Path) -> None:
    """`listen hooks:PATH` listens once its socket is made private (chmod after listen());
    it says "Connected to coding-agent hooks" only later (the 2 s settle, or the first
    hook), so waiting for that line would wait out the settle time."""
    wait_until(
        lambda: sock.exists() and stat.S_IMODE(sock.stat().st_mode) == 0o600,
        "the hook socket",
    )


@pytest.fixture
def listening(sock: Path) -> Iterator[Served]:
    """The real announcer: `announcer listen hooks:PATH` with the plain UI on stdin."""
    server = Served(sock, "listen", f"hooks:{sock}", "--ui", "plain", "--speech", "none")
    hooks_socket_ready(sock)
    yield server
    server.stop()


def test_listen_hooks_plain_ui_accepts(listening: Served, sock: Path):
    hook = run_hook(PRE_TOOL_USE, sock)
    listening.wait_for("Connected to coding-agent hooks")
    said = listening.wait_for("[needs you] Confirmation needed.")  # the earcon, as text
    assert "Claude Code wants to run Bash: rm -rf build." in said
    # The prompt line names the action and who asks.
    listening.wait_for(
        "Accept or reject: Claude Code wants to run Bash: rm -rf build. It says: Clean the build "
        "folder. [a/r] (Claude Code)"  # its own full stop kept (issue 30 item 1), not "?"
    )
    listening.answer("a\n")
    # the confirm step names the action by its first sentence (issue 20: not read again)
    listening.wait_for("Accept: Claude Code wants to run Bash: rm -rf build? Type c then Enter")
    listening.type("c\n")
    assert hook_output(hook)["hookSpecificOutput"]["permissionDecision"] == "allow"


def test_listen_hooks_plain_ui_rejects(listening: Served, sock: Path):
    hook = run_hook(dict(PRE_TOOL_USE, tool_use_id="toolu_reject"), sock)
    listening.wait_for("Accept or reject:")
    listening.answer("r\n")
    result = hook_output(hook)["hookSpecificOutput"]
    assert result["permissionDecision"] == "deny"
    assert result["permissionDecisionReason"]


def test_listen_hooks_no_answer_in_time_is_ask(listening: Served, sock: Path):
    hook = run_hook(dict(PRE_TOOL_USE, tool_use_id="toolu_slow"), sock, timeout=4)
    listening.wait_for("Accept or reject:")
    assert hook_output(hook)["hookSpecificOutput"]["permissionDecision"] == "ask"
    # the question is withdrawn aloud, once: the engine's timer, not a second sentence
    listening.wait_for("Time is up; the agent will ask you itself: Claude Code wants to run Bash")
    note = {"hook_event_name": "Notification", "session_id": "s-after", "message": "Build done"}
    assert run_hook(note, sock).wait(WAIT) == 0
    listening.wait_for("Claude Code: Build done")
    assert not [line for line in listening.seen if "No answer in time" in line]


@pytest.fixture
def served_default_arming(sock: Path) -> Iterator[Served]:
    """``announcer hook serve`` with the default arming interval (the test's subject)."""
    server = Served(sock, arming=None)
    server.wait_for("Listening for Claude Code and Codex hooks")
    yield server
    server.stop()


def test_a_line_typed_as_the_question_appears_decides_nothing(
    served_default_arming: Served, sock: Path
):
    """Issue 12: a key answers only the question the user was told about, once armed."""
    served = served_default_arming
    hook = run_hook(PRE_TOOL_USE, sock)
    served.wait_for("Press y")
    served.type("y\n")  # at once: meant for what was on screen before
    # issue 20: two words, and the question is not shown again; nothing was decided
    served.wait_for("Not yet.")
    assert hook.poll() is None
    assert len([line for line in served.seen if "Claude Code wants to run" in line]) == 1
    served.answer("y\n")
    served.wait_for("Allow? Type c then Enter to confirm")
    served.type("y\n")  # the same key again is not the second key: it goes back
    served.wait_for("Not accepted. The question is still open.")
    served.type("y\n")
    served.wait_for("Allow? Type c then Enter to confirm")
    served.type("c\n")
    served.wait_for("Allowed.")
    assert hook_output(hook)["hookSpecificOutput"]["permissionDecision"] == "allow"


def test_deny_is_one_key_even_in_the_confirm_step(served: Served, sock: Path):
    hook = run_hook(dict(PRE_TOOL_USE, tool_use_id="toolu_deny2"), sock)
    served.wait_for("Press y")
    served.answer("y\n")
    served.wait_for("Allow? Type c then Enter to confirm")
    served.type("n\n")
    served.wait_for("Denied.")
    assert hook_output(hook)["hookSpecificOutput"]["permissionDecision"] == "deny"


@pytest.fixture
def heard(sock: Path, tmp_path: Path) -> Iterator[tuple[Served, Path]]:
    """`announcer listen hooks:PATH` with the plain UI, its speech in a jsonl record."""
    record = tmp_path / "speech.jsonl"
    server = Served(sock, "listen", f"hooks:{sock}", "--ui", "plain", "--speech", f"jsonl:{record}")
    hooks_socket_ready(sock)
    yield server, record
    server.stop()


def wait_heard(record: Path, text: str) -> list[str]:
    import time

    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        said = spoken(record)
        if any(text in line for line in said):
            return said
        time.sleep(0.1)
    raise AssertionError(f"never heard {text!r}; heard {spoken(record)}")


def test_a_question_answered_in_claude_codes_dialog_is_withdrawn_at_once(
    heard: tuple[Served, Path], sock: Path
):
    import time

    listening, record = heard
    payload = dict(PRE_TOOL_USE, hook_event_name="PermissionRequest")
    payload.pop("tool_use_id")
    hook = run_hook(payload, sock, timeout=50)
    listening.wait_for("Accept or reject: ")
    question = wait_heard(record, "Confirmation needed.")[-1]
    assert "If you do not answer within" in question
    assert "Claude Code will ask you itself." in question
    assert "It says: Clean the build folder." in question
    started = time.monotonic()
    # the user allowed it in Claude Code's own dialog: the tool ran
    done = run_hook(
        dict(PRE_TOOL_USE, hook_event_name="PostToolUse", tool_response={"stdout": ""}), sock
    )
    assert done.communicate(timeout=WAIT)[0] == ""
    assert hook_output(hook) == {"hookSpecificOutput": {"hookEventName": "PermissionRequest"}}
    assert time.monotonic() - started < 30  # not the 50 s the hook would wait
    said = wait_heard(record, "Answered in Claude Code itself.")
    assert not any("will be rejected" in line or "No answer in time" in line for line in said)
    said = wait_heard(record, "Running Bash: rm -rf build.")
    # issue 30 item 8: its end comes right after that line and would say nothing new
    assert not [line for line in said if line.startswith("Bash finished")], said
    # a key now answers nothing: the stale question is gone
    listening.type("a\n")
    after = []
    with contextlib.suppress(queue.Empty):
        while True:
            after.append(listening.lines.get(timeout=2))
    assert not any("Sent" in line for line in after), after
    finished = [line for line in spoken(record) if line.startswith("Bash finished")]
    assert not finished, spoken(record)  # nor after it (issue 30 item 8)
