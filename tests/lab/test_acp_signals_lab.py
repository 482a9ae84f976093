"""The real ACP adapters end with announcer, and so do the commands they started
(issue 21 item 8: "closing the terminal leaves the adapter running, orphaned").

claude-agent-acp (pinned in tests/lab/clis.py) runs offline against the lab's fake model,
which has Claude Code run a long command (a Python sleep) through its Bash tool. While it runs,
announcer gets SIGHUP, SIGTERM or SIGINT; afterwards no process of the adapter's family is
left: not the adapter, not Claude Code, not the command.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from queue import Empty

import pytest

from tests.acp_frontend.test_agent_command import AgentRun
from tests.lab.clis import Clis, acp_adapter, claude_env
from tests.lab.fake_model import SCENARIOS, Call, FakeModelServer, Scenario, Turn
from tests.producer.live import stop_process
from tests.runtime.test_signals import alive, running_with, unique_seconds, wait_until
from tests.support.lab_agents import LISTENER, asking_claude_home

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")


def waiting_command(seconds: str) -> str:
    """A command that runs for SECONDS, found by that word in its command line. Not a bare
    ``sleep``: Claude Code 2.1.33x refuses a standalone sleep ("use Monitor")."""
    return f"python3 -c 'import sys, time; time.sleep(int(sys.argv[1]))' {seconds}"


def long_command_scenario(seconds: str) -> str:
    """A scenario of the fake model whose one tool call waits for SECONDS."""
    name = f"sleep-{seconds}"
    SCENARIOS[name] = Scenario(
        name,
        (
            Turn(
                calls=(
                    Call(("Bash", {"command": waiting_command(seconds), "description": "Wait"})),
                )
            ),
            Turn(text="The wait is over."),
        ),
        "a command that runs for a long time",
    )
    return name


def answer_until_running(run: AgentRun, seconds: str) -> None:
    """Accept the command when asked, with the confirming key when one is asked for, until
    the waiting command runs; Claude Code may also run it without asking. A high-risk
    accept (this ``python3 -c`` runs code announcer cannot check) waits until the question
    was heard through, so ``a`` is pressed again, as a person would, until it is taken."""
    deadline = time.monotonic() + 120
    asked = confirmed = False
    pressed_at = 0.0
    while not running_with(seconds):
        if time.monotonic() > deadline:
            raise AssertionError(f"the command never ran; printed: {run.seen}")
        try:
            line = run.lines.get(timeout=0.2)
            run.seen.append(line)
        except Empty:
            line = ""
        if "Accept or reject" in line:
            asked = True
        if "then Enter to confirm" in line and not confirmed:
            run.type("c")  # not low risk: a second, confirming key
            confirmed = True
        elif asked and not confirmed and time.monotonic() - pressed_at > 0.5:
            run.type("a")
            pressed_at = time.monotonic()


def descendants(root: int) -> set[int]:
    """``root``'s living descendants now, from /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            ppid = int(stat[stat.rfind(")") + 2 :].split()[1])
            children.setdefault(ppid, []).append(int(entry))
    found: set[int] = set()
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), []):
            if child not in found:
                found.add(child)
                stack.append(child)
    return {pid for pid in found if alive(pid)}


@pytest.mark.parametrize(
    "sig", [signal.SIGHUP, signal.SIGTERM, signal.SIGINT], ids=lambda s: s.name
)
def test_a_signal_ends_the_real_adapter_and_its_command(
    sig: signal.Signals, tmp_path: Path, clis: Clis, fake_model: FakeModelServer
) -> None:
    seconds = unique_seconds()
    scenario = long_command_scenario(seconds)
    env = {**os.environ, **claude_env(fake_model.anthropic_url, tmp_path / "home")}
    asking_claude_home(tmp_path / "home")  # the preset's mode: Claude asks before it runs
    run = AgentRun(tmp_path, *LISTENER, agent=[str(acp_adapter(clis, "claude-agent-acp"))], env=env)
    try:
        run.wait_for("is ready.")
        run.type(f"lab:{scenario} please")
        answer_until_running(run, seconds)
        family = descendants(run.proc.pid)
        assert family, "the adapter and Claude Code run under announcer"
        run.proc.send_signal(sig)  # to announcer alone, as kill or a closed terminal does
        run.proc.wait(timeout=60)
        for pid in family:
            wait_until(lambda pid=pid: not alive(pid), f"process {pid} ended")
        assert running_with(seconds) == []
    finally:
        stop_process(run.proc)  # SIGTERM first: announcer ends what it started
