"""Every way of ending announcer ends every process it started (issue 21 item 8, issue 22 item 10).

Real processes throughout: announcer is a child process of the test, and so are its agents.
The ACP agent (tests/acp_frontend/sdk_agent.py) starts a ``sleep`` of its own, in its
process group or, as Node's ``detached`` does, in a session of its own; a ``stdio:``
producer starts one too. The test then sends SIGHUP, SIGTERM or SIGINT to announcer alone
(not to its group, as a closed terminal or a ``kill`` would) and proves from ``/proc`` that
no process is left, that the WebSocket producer received the subscription's close, and
that the hook socket was removed. A closed terminal is a tmux session killed under the
Textual UI.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.acp_frontend.test_agent_command import AgentRun
from tests.producer.live import (
    TIMEOUT,
    WORKTREE,
    scenario_path,
    start_producer_process,
    stop_process,
)
from tests.runtime.test_cli_live import Listener
from tests.support.processes import alive
from tests.support.waiting import wait_until

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")

SIGNALS = [signal.SIGHUP, signal.SIGTERM, signal.SIGINT]
SDK_AGENT = [sys.executable, "-m", "tests.acp_frontend.sdk_agent"]


def running_with(marker: str) -> list[int]:
    """Living processes whose command line holds ``marker`` (a unique sleep length)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            words = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if marker.encode() in words and alive(int(entry)):
            found.append(int(entry))
    return found


def wait_or_tell_where(proc: subprocess.Popen[str]) -> int:
    """Its exit status; if it hangs, a failure with every thread's stack (SIGABRT to a
    process started with PYTHONFAULTHANDLER=1), so a hang seen once says where it was."""
    try:
        return proc.wait(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGABRT)
        _, stderr = proc.communicate(timeout=30)
        raise AssertionError(f"announcer did not end; where it was:\n{stderr}") from None


def unique_seconds() -> str:
    """A sleep length no other test uses, to find its process by command line."""
    return str(40_000 + (os.getpid() * 7 + time.monotonic_ns() // 1000) % 20_000)


def sleep_pids(folder: Path) -> tuple[int, int]:
    path = folder / "sleep-pids.txt"
    wait_until(lambda: path.exists() and path.read_text().endswith("\n"), "the agent's sleep")
    agent_pid, command_pid = path.read_text().split()
    return int(agent_pid), int(command_pid)


@contextlib.contextmanager
def agent_running(tmp_path: Path, how: str) -> Iterator[tuple[AgentRun, str, int, int]]:
    """``announcer agent`` whose agent has run ``HOW SECONDS`` (a sleep of its own): the
    run, the unique sleep length, the agent's and the command's process ids. Announcer is
    stopped by its process id afterwards (SIGTERM first: it ends what it started)."""
    run = AgentRun(tmp_path)
    try:
        run.wait_for("Scripted Agent is ready.")
        seconds = unique_seconds()
        run.type(f"{how} {seconds}")
        agent_pid, command_pid = sleep_pids(run.folder)
        yield run, seconds, agent_pid, command_pid
    finally:
        stop_process(run.proc)


def _get(port: int, route: str) -> Any:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{route}", timeout=TIMEOUT) as response:
        return json.loads(response.read())


@pytest.fixture
def ticker() -> Iterator[int]:
    proc, port = start_producer_process("--scenario", scenario_path("ticker"), "--speed", "0.1")
    yield port
    stop_process(proc)


@pytest.mark.parametrize("how", ["sleep", "sleep-detached"])
@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
def test_a_signal_ends_the_agent_and_the_command_it_started(
    sig: signal.Signals, how: str, tmp_path: Path
) -> None:
    with agent_running(tmp_path, how) as (run, seconds, agent_pid, command_pid):
        assert alive(agent_pid) and alive(command_pid)
        run.proc.send_signal(sig)  # to announcer alone, as kill or a closed terminal does
        code = run.proc.wait(timeout=TIMEOUT)
        assert code in (0, 130), run.proc.stderr.read() if run.proc.stderr else code
        wait_until(lambda: not alive(agent_pid), "the agent ended")
        assert not alive(command_pid), f"{how} {seconds} outlived announcer"
        assert running_with(seconds) == []


def test_an_agent_that_dies_mid_command_says_what_was_left_and_ends_it(tmp_path: Path) -> None:
    with agent_running(tmp_path, "sleep-die") as (run, seconds, agent_pid, command_pid):
        line = run.wait_for("It left sleep")
        assert f"It left sleep {seconds} running; announcer stopped it." in line
        assert not alive(agent_pid) and not alive(command_pid)
        assert running_with(seconds) == []
        run.quit()  # its exit status after an agent's death is the acp work's (issue 21 item 7)
    assert any("It left sleep" in text for text in run.heard())  # said, not only printed


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
def test_listen_closes_cleanly_on_every_signal(
    sig: signal.Signals, ticker: int, tmp_path: Path
) -> None:
    hook_socket = tmp_path / "hooks" / "hook.sock"
    seconds = unique_seconds()
    # a stdio producer whose shell leaves a command of its own behind it
    producer = shlex.join(
        [
            "sh",
            "-c",
            f"sleep {seconds} & exec {shlex.quote(sys.executable)} -m announcer demo-producer"
            f" --stdio --scenario {shlex.quote(scenario_path('ticker'))} --loop --speed 0.1",
        ]
    )
    listener = Listener(
        "listen",
        f"ws://127.0.0.1:{ticker}/aaep/v1/ws",
        f"hooks:{hook_socket}",
        f"stdio:{producer}",
        "--ui",
        "plain",
        "--speech",
        "none",
        env={"ANNOUNCER_CONFIG": str(tmp_path / "none.toml"), "PYTHONPATH": str(WORKTREE)},
    )
    try:
        listener.wait_line("Tick 1.")
        wait_until(hook_socket.exists, "the hook socket")
        wait_until(lambda: len(running_with(seconds)) == 1, "the stdio producer's command")
        listener.proc.send_signal(sig)
        assert listener.finish() in (0, 130)
    finally:
        listener.stop()
    assert _get(ticker, "/demo/status")["closed_by_subscriber"] == 1  # §5.8: a goodbye
    assert not hook_socket.exists()
    wait_until(lambda: running_with(seconds) == [], "the stdio producer's command ended")


def tmux(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["tmux", *args], capture_output=True, text=True, timeout=TIMEOUT)


class InTerminal:
    """``announcer ARGS`` in a terminal of its own: a tmux server (``tmux -L``) that the test
    closes under it, as a user closes a terminal window (SIGHUP to announcer)."""

    def __init__(self, name: str, tmp_path: Path, *args: str, cwd: Path | None = None) -> None:
        self.server = f"announcer-signals-{os.getpid()}-{name}"
        self.command = shlex.join(
            [
                "env",
                f"PYTHONPATH={WORKTREE}",
                f"ANNOUNCER_CONFIG={tmp_path / 'none.toml'}",
                sys.executable,
                "-m",
                "announcer",
                *args,
            ]
        )
        self.where = ["-c", str(cwd)] if cwd is not None else []
        self.pane_pid = 0

    def __enter__(self) -> InTerminal:
        started = tmux(
            "-L", self.server, "new-session", "-d", "-x", "100", "-y", "30", *self.where,
            self.command,
        )  # fmt: skip
        assert started.returncode == 0, started.stderr
        try:
            self.pane_pid = int(tmux("-L", self.server, "display", "-p", "#{pane_pid}").stdout)
        except BaseException:
            tmux("-L", self.server, "kill-server")
            raise
        return self

    def type(self, line: str) -> None:
        tmux("-L", self.server, "send-keys", "-l", line)
        tmux("-L", self.server, "send-keys", "Enter")

    def close(self) -> None:
        """The terminal closes; announcer (the pane's process) must end with it."""
        tmux("-L", self.server, "kill-server")
        wait_until(lambda: not alive(self.pane_pid), "announcer ended with its terminal")

    def __exit__(self, *_: object) -> None:
        tmux("-L", self.server, "kill-server")


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is a Debian package")
@pytest.mark.parametrize("ui", ["tui", "plain"])
def test_a_closed_terminal_ends_the_agent_and_its_command(ui: str, tmp_path: Path) -> None:
    folder = tmp_path / "work"
    folder.mkdir()
    seconds = unique_seconds()
    record = tmp_path / "speech.jsonl"
    agent = ["agent", "--ui", ui, "--speech", f"jsonl:{record}", "--cwd", str(folder)]
    with InTerminal(ui, tmp_path, *agent, "--", *SDK_AGENT, cwd=WORKTREE) as terminal:
        wait_until(
            lambda: record.exists() and "Scripted Agent is ready." in record.read_text(),
            "the agent is ready",
        )
        terminal.type(f"sleep {seconds}")
        agent_pid, command_pid = sleep_pids(folder)
        terminal.close()
        wait_until(lambda: not alive(agent_pid), "the agent ended")
        assert not alive(command_pid)
        assert running_with(seconds) == []


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
def test_watch_ends_the_agent_cli_and_its_commands_on_every_signal(
    sig: signal.Signals, tmp_path: Path
) -> None:
    seconds = unique_seconds()
    pids = tmp_path / "pids.txt"
    # an agent CLI streaming Codex JSON that runs a command in a process group of its own
    agent = tmp_path / "agent.py"
    agent.write_text(
        "import json, os, subprocess, sys, time\n"
        f"child = subprocess.Popen(['sleep', '{seconds}'], process_group=0)\n"
        f"open({str(pids)!r}, 'w').write(f'{{os.getpid()}} {{child.pid}}\\n')\n"
        "print(json.dumps({'type': 'thread.started', 'thread_id': 't1'}), flush=True)\n"
        "time.sleep(600)\n",
        encoding="utf-8",
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "announcer", "watch", "--format", "codex", "--speech", "none",
         "--", sys.executable, str(agent)],
        cwd=WORKTREE,
        env={**os.environ, "PYTHONPATH": str(WORKTREE), "PYTHONFAULTHANDLER": "1",
             "ANNOUNCER_CONFIG": str(tmp_path / "none.toml")},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        wait_until(lambda: pids.exists() and pids.read_text().endswith("\n"), "the agent ran")
        agent_pid, command_pid = map(int, pids.read_text().split())
        proc.send_signal(sig)  # to announcer alone
        code = wait_or_tell_where(proc)
        assert code != 0
        wait_until(lambda: not alive(agent_pid), "the agent CLI ended")
        wait_until(lambda: not alive(command_pid), "its command ended")
        assert running_with(seconds) == []
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
        if proc.stderr is not None:
            proc.stderr.close()


def test_an_agent_killed_mid_command_has_its_detached_command_stopped(tmp_path: Path) -> None:
    """A command in a session of its own (Node's ``detached``) is found once its agent is
    gone, and stopped; the user is told it was left running."""
    with agent_running(tmp_path, "sleep-detached") as (run, seconds, agent_pid, command_pid):
        run.wait_for("The command is running.")  # the agent's words after it started it
        os.kill(agent_pid, signal.SIGKILL)  # the adapter is killed mid-turn
        line = run.wait_for("It left sleep")
        assert f"It left sleep {seconds} running; announcer stopped it." in line
        wait_until(lambda: not alive(command_pid), "the detached command ended")
        assert running_with(seconds) == []
        assert run.proc.poll() is None  # announcer itself goes on


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is a Debian package")
def test_a_closed_terminal_under_the_textual_ui_says_goodbye_and_removes_the_socket(
    ticker: int, tmp_path: Path
) -> None:
    hook_socket = tmp_path / "hooks" / "hook.sock"
    record = tmp_path / "speech.jsonl"
    listen = ["listen", f"ws://127.0.0.1:{ticker}/aaep/v1/ws", f"hooks:{hook_socket}"]
    tui = ["--ui", "tui", "--speech", f"jsonl:{record}"]
    with InTerminal("listen", tmp_path, *listen, *tui) as terminal:
        wait_until(lambda: record.exists() and "Tick 1." in record.read_text(), "news heard")
        wait_until(hook_socket.exists, "the hook socket")
        terminal.close()
    assert _get(ticker, "/demo/status")["closed_by_subscriber"] == 1  # §5.8: a goodbye
    assert not hook_socket.exists()


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is a Debian package")
@pytest.mark.parametrize("after", [0.3, 0.8, 1.5])
def test_a_terminal_closed_while_the_textual_ui_starts_still_ends_announcer(
    after: float, ticker: int, tmp_path: Path
) -> None:
    """At any moment: a signal before the app has finished starting used to stop only the
    session, and the app ran on for ever with no terminal."""
    listen = ["listen", f"ws://127.0.0.1:{ticker}/aaep/v1/ws", "--ui", "tui", "--speech", "none"]
    with InTerminal("early", tmp_path, *listen) as terminal:
        time.sleep(after)  # an awkward moment, not a synchronisation: any moment must do
        terminal.close()
