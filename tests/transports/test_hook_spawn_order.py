"""Announce-only hooks that run side by side are heard in the order the agent started them.

Claude Code may start the next hook before the last one has reached the announcer
(``setsid -f`` in docs/hooks.md, ``--detach``, ``"async": true``), and an interpreter
can take 30-300 ms to start. Each request carries when its hook process was started
(the kernel's start time, ``hook_client.spawned_at``), and ``SpawnOrder`` lets them go
on in that order. Pure rules on an injected clock; then a real socket and real hook
processes.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from announcer.transports.hook_bridge import (
    HookBridgeServer,
    SpawnOrder,
    ask_announcer,
)
from announcer.transports.hook_client import boot_clock, spawned_at

ROOT = Path(__file__).resolve().parents[2]
HOOK = (sys.executable, "-m", "announcer", "hook", "claude-code")


def post_tool_use(command: str) -> dict[str, object]:
    return {
        "hook_event_name": "PostToolUse",
        "session_id": "s1",
        "cwd": "/home/me/shop",
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "tool_response": {"stdout": "", "stderr": ""},
    }


# -- the rules, on an injected clock -----------------------------------------------


def test_a_hook_started_first_goes_first_though_it_arrived_last():
    order = SpawnOrder(hold_seconds=0.5)
    later = order.arrive([100.05, 2001], blocking=False, now=100.10)  # fast interpreter
    earlier = order.arrive([100.00, 2000], blocking=False, now=100.30)  # slow one
    assert order.release(100.40) == []  # both still inside their hold
    assert order.next_due() == pytest.approx(100.50)
    assert order.release(100.50) == [earlier]  # the later one's hold runs to 100.55
    assert order.release(100.55) == [later]
    assert len(order) == 0


def test_when_a_later_hook_goes_on_every_earlier_waiting_one_goes_first():
    order = SpawnOrder(hold_seconds=0.5)
    first = order.arrive([10.00, 7], blocking=False, now=10.05)
    second = order.arrive([10.20, 8], blocking=False, now=10.25)
    third = order.arrive([10.10, 9], blocking=False, now=10.65)  # arrived after its hold
    assert order.release(10.65) == [first, third]  # the second's hold runs to 10.70
    assert order.release(10.70) == [second]


def test_a_question_never_waits_but_earlier_news_is_said_before_it():
    order = SpawnOrder(hold_seconds=0.5)
    news = order.arrive([50.00, 1], blocking=False, now=50.05)
    question = order.arrive([50.02, 2], blocking=True, now=50.06)
    assert order.release(50.06) == [news, question]
    late_news = order.arrive([50.40, 3], blocking=False, now=50.45)
    question2 = order.arrive([50.41, 4], blocking=True, now=50.46)
    assert order.release(50.46) == [late_news, question2]


def test_the_same_tick_is_ordered_by_pid_then_by_arrival():
    order = SpawnOrder(hold_seconds=0.5)
    b = order.arrive([7.00, 31], blocking=False, now=7.10)
    a = order.arrive([7.00, 30], blocking=False, now=7.12)
    assert order.release(7.50) == [a, b]


@pytest.mark.parametrize(
    "stamp",
    [None, "soon", [1.0], [True, 3], [5.0, "pid"], [5.0, 3, 1], [5000.0, 3], [-100.0, 3]],
)
def test_a_request_without_a_believable_stamp_goes_on_at_once(stamp):
    order = SpawnOrder(hold_seconds=0.5)
    ticket = order.arrive(stamp, blocking=False, now=100.0)
    assert order.release(100.0) == [ticket]


def test_this_process_start_time_is_on_the_boot_clock_and_before_now():
    started = spawned_at()
    now = boot_clock()
    assert now - 3600 * 24 * 365 < started <= now + 0.02


# -- a real socket --------------------------------------------------------------------


def short_socket(tmp_path: Path) -> Path:
    """A socket path short enough for AF_UNIX (tmp_path can be too long)."""
    return Path(f"/tmp/ann-order-{os.getpid()}-{abs(hash(tmp_path)) % 10**8}") / "hook.sock"


def remove(sock: Path) -> None:
    if sock.parent.exists():
        for child in sock.parent.iterdir():
            child.unlink()
        sock.parent.rmdir()


async def test_over_the_socket_the_earlier_started_hook_is_handled_first(tmp_path: Path):
    sock = short_socket(tmp_path)
    heard: list[str] = []

    async def handler(payload, blocking, timeout, agent):
        heard.append(payload["tool_input"]["command"])
        return None

    try:
        async with HookBridgeServer(handler, sock):
            now = boot_clock()
            # the hook started second reaches the socket first
            await asyncio.to_thread(
                ask_announcer,
                post_tool_use("echo second"),
                blocking=False,
                timeout=5,
                path=sock,
                spawned=(now - 0.05, 4002),
            )
            await asyncio.sleep(0.1)
            await asyncio.to_thread(
                ask_announcer,
                post_tool_use("echo first"),
                blocking=False,
                timeout=5,
                path=sock,
                spawned=(now - 0.10, 4001),
            )
            deadline = time.monotonic() + 10
            while len(heard) < 2 and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
    finally:
        remove(sock)
    assert heard == ["echo first", "echo second"]


# -- the hook command with --detach ----------------------------------------------------


class RawListener:
    """A plain Unix socket server of ours that records each request and its sender's pid."""

    def __init__(self, sock: Path) -> None:
        sock.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(str(sock))
        self.server.listen(8)
        self.server.settimeout(30)

    def take(self) -> tuple[dict[str, object], int]:
        conn, _ = self.server.accept()
        with conn:
            raw = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
            pid = struct.unpack("3i", raw)[0]
            conn.settimeout(30)
            data = b""
            while not data.endswith(b"\n"):
                chunk = conn.recv(65536)
                if not chunk:
                    break
                data += chunk
        return json.loads(data), pid

    def close(self) -> None:
        self.server.close()


def hook(args: list[str], payload: object, env: dict[str, str] | None = None):
    return subprocess.run(
        [*HOOK, *args],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        env=dict(os.environ, **(env or {})),
        check=False,
    )


@pytest.mark.skipif(not hasattr(socket, "SO_PEERCRED"), reason="needs SO_PEERCRED (Linux)")
def test_detach_hands_the_payload_to_a_background_process_stamped_as_the_agent_started_it(
    tmp_path: Path,
):
    sock = short_socket(tmp_path)
    listener = RawListener(sock)
    try:
        before = boot_clock()
        started = time.monotonic()
        done = subprocess.Popen(
            [*HOOK, "--detach", "--socket", str(sock)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        out, err = done.communicate(json.dumps(post_tool_use("ls")), timeout=60)
        assert time.monotonic() - started < 30
        request, sender = listener.take()
    finally:
        listener.close()
        remove(sock)
    assert done.returncode == 0 and out == "" and err == ""
    assert request["payload"] == post_tool_use("ls") and request["blocking"] is False
    started_at, pid = request["spawned"]
    assert pid == done.pid  # the process the agent started, not the background one ...
    assert sender != done.pid  # ... which is the one that connected
    assert before - 0.02 <= started_at <= boot_clock()


def test_detach_never_detaches_a_question_and_without_an_announcer_it_asks(tmp_path: Path):
    sock = short_socket(tmp_path)
    payload = dict(post_tool_use("rm -rf build"), hook_event_name="PreToolUse")
    done = hook(["--detach", "--socket", str(sock)], payload)
    assert done.returncode == 0
    decision = json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"]
    assert decision == "ask"  # never allow


def test_detach_says_on_stderr_why_it_sent_nothing_to_an_unsafe_socket(tmp_path: Path):
    sock = short_socket(tmp_path)
    sock.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
    os.chmod(sock.parent, 0o755)  # open to other users: not trusted
    try:
        done = hook(["--detach", "--socket", str(sock)], post_tool_use("ls"))
    finally:
        remove(sock)
    assert done.returncode == 0 and done.stdout == ""
    assert "not asking the announcer" in done.stderr and "not 700" in done.stderr


def test_a_hook_the_agent_waits_for_carries_no_stamp_and_is_never_held(tmp_path: Path):
    sock = short_socket(tmp_path)
    listener = RawListener(sock)
    try:
        done = hook(["--socket", str(sock)], post_tool_use("ls"))
        request, _sender = listener.take()
    finally:
        listener.close()
        remove(sock)
    assert done.returncode == 0 and done.stdout == ""
    assert "spawned" not in request  # it arrives in the order the agent ran it
    order = SpawnOrder()
    ticket = order.arrive(request.get("spawned"), blocking=False, now=boot_clock())
    assert order.release(boot_clock()) == [ticket]
