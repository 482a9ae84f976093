"""The hook channel's Windows form, forced on Linux: loopback TCP and a per-user secret.

Real sockets and real processes: the announcer's bridge serves 127.0.0.1, writes its
endpoint file (port and secret, readable by the user alone), and a real
``announcer hook claude-code`` process asks it. A listener that does not know the
secret (another user's, squatting the port) never gets the tool inputs; a hook that does
not know it is never answered; an endpoint file others could read is not trusted.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from announcer.transports.hook_bridge import HookBridgeServer
from announcer.transports.hook_client import CHANNEL_ENV, HookAnswer, ask_announcer

ROOT = Path(__file__).resolve().parents[2]
WAIT = 60.0

PRE_TOOL_USE = {
    "hook_event_name": "PreToolUse",
    "session_id": "abc123",
    "tool_name": "Bash",
    "tool_input": {"command": "rm -rf build", "description": "SECRET-INPUT"},
}


@pytest.fixture(autouse=True)
def tcp_form(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CHANNEL_ENV, "tcp")


@pytest.fixture
def endpoint(tmp_path: Path) -> Path:
    directory = tmp_path / "announcer"
    directory.mkdir(mode=0o700)
    return directory / "hook.endpoint"


class Asked:
    def __init__(self) -> None:
        self.payloads: list[dict] = []

    async def __call__(self, payload: dict, blocking: bool, timeout: float, agent: str):
        self.payloads.append(payload)
        return HookAnswer("deny", "denied by the user")


async def test_the_hook_asks_the_announcer_over_loopback_tcp(endpoint: Path) -> None:
    asked = Asked()
    async with HookBridgeServer(asked, endpoint) as server:
        info = os.lstat(endpoint)
        assert stat.S_ISREG(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o600
        port = json.loads(endpoint.read_text())["port"]
        assert server._server is not None
        assert server._server.sockets[0].getsockname() == ("127.0.0.1", port)
        answer = await asyncio.to_thread(
            ask_announcer, PRE_TOOL_USE, blocking=True, timeout=WAIT, path=endpoint
        )
        assert answer == HookAnswer("deny", "denied by the user")
        assert asked.payloads[0]["tool_input"]["description"] == "SECRET-INPUT"
        # a real hook process, as the agent starts it
        env = dict(os.environ, PYTHONPATH=str(ROOT), **{CHANNEL_ENV: "tcp"})
        done = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, "-m", "announcer", "hook", "claude-code", "--socket", str(endpoint)],
            input=json.dumps(PRE_TOOL_USE),
            capture_output=True,
            text=True,
            env=env,
            timeout=WAIT,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        output = json.loads(done.stdout)["hookSpecificOutput"]
        assert output["permissionDecision"] == "deny"
        assert len(asked.payloads) == 2 and server.dropped == 0
    assert not endpoint.exists()  # the announcer removes its own endpoint file


class Squatter:
    """A listener on loopback that does not know the secret and records what it gets."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(WAIT)
        self.port = self.sock.getsockname()[1]
        self.received = b""
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        try:
            conn, _ = self.sock.accept()
        except OSError:
            return
        with conn:
            conn.settimeout(5)
            conn.sendall(b'{"proof": "00", "nonce": "aaaaaaaaaaaaaaaaaaaa"}\n')
            try:
                while chunk := conn.recv(65536):
                    self.received += chunk
            except OSError:
                pass

    def close(self) -> None:
        self.sock.close()
        self.thread.join(timeout=WAIT)


@pytest.fixture
def squatter() -> Iterator[Squatter]:
    server = Squatter()
    yield server
    server.close()


def test_a_listener_without_the_secret_gets_no_inputs(endpoint: Path, squatter: Squatter) -> None:
    fd = os.open(endpoint, os.O_WRONLY | os.O_CREAT, 0o600)
    os.write(fd, json.dumps({"port": squatter.port, "secret": "ab" * 32}).encode())
    os.close(fd)
    answer = ask_announcer(PRE_TOOL_USE, blocking=True, timeout=10, path=endpoint)
    assert answer is not None and answer.decision == "ask"
    assert "does not know the secret" in answer.reason
    squatter.close()
    assert b"SECRET-INPUT" not in squatter.received and b"payload" not in squatter.received


def test_an_endpoint_file_others_can_read_is_not_trusted(endpoint: Path) -> None:
    endpoint.write_text(json.dumps({"port": 9, "secret": "ab" * 32}))
    os.chmod(endpoint, 0o644)
    answer = ask_announcer(PRE_TOOL_USE, blocking=True, timeout=10, path=endpoint)
    assert answer is not None and answer.decision == "ask" and "not 600" in answer.reason


async def test_a_hook_without_the_secret_is_never_answered(endpoint: Path) -> None:
    asked = Asked()
    async with HookBridgeServer(asked, endpoint) as server:
        port = json.loads(endpoint.read_text())["port"]

        def stranger() -> bytes:
            with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
                sock.sendall(b'{"bridge": 1, "hello": "0123456789abcdef0123"}\n')
                hello = sock.makefile("rb").readline()
                request = {
                    "bridge": 1,
                    "payload": PRE_TOOL_USE,
                    "blocking": True,
                    "proof": "f" * 64,
                }
                sock.sendall(json.dumps(request).encode() + b"\n")
                return hello + sock.recv(65536)

        got = await asyncio.to_thread(stranger)
        assert b"decision" not in got
        assert asked.payloads == [] and server.dropped == 1


async def test_a_second_announcer_refuses_and_the_first_keeps_its_endpoint(endpoint: Path) -> None:
    async with HookBridgeServer(Asked(), endpoint):
        before = endpoint.read_text()
        second = HookBridgeServer(Asked(), endpoint)
        with pytest.raises(RuntimeError, match="already listens"):
            await second.start()
        await second.close()
        assert endpoint.read_text() == before
