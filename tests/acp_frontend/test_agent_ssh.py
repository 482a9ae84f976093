"""``announcer agent --ssh HOST NAME``: the preset's command runs on HOST over ``ssh -T``.

A real OpenSSH server (Debian's ``openssh-server``) is started by the test on 127.0.0.1
at a free port, with a throwaway host key and user key; the real ``ssh`` client connects
to it. On the "remote" side, the preset's program is a stand-in that writes down the
command line and environment it was started with, then runs the scripted ACP agent, so
the test sees what reached the host and hears the agent answer through the tunnel.
"""

from __future__ import annotations

import contextlib
import getpass
import os
import shlex
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.acp_frontend.test_agent_command import ROOT, AgentRun

SSHD = "/usr/sbin/sshd"
START_SECONDS = 20.0


def _on_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


@dataclass
class SshServer:
    process: subprocess.Popen[bytes]
    port: int
    folder: Path
    bin_dir: Path
    ssh_command: str
    host: str

    def session_processes(self) -> list[int]:
        """The per-connection sshd processes: children of the server we started."""
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
        try:
            return [int(pid) for pid in children.read_text().split()]
        except OSError:
            return []


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _keygen(path: Path) -> None:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)],
        check=True,
        capture_output=True,
        timeout=30,
    )


@pytest.fixture
def sshd(tmp_path: Path) -> Iterator[SshServer]:
    missing = [p for p in (SSHD, shutil.which("ssh"), shutil.which("ssh-keygen")) if not p]
    if missing or not Path(SSHD).exists():
        message = "openssh-server and openssh-client are needed (scripts/bootstrap.sh test)"
        if _on_ci():
            pytest.fail(message)
        pytest.skip(message)
    privsep = Path("/run/sshd")  # sshd refuses to start without its privilege separation folder
    if not privsep.is_dir():
        try:
            privsep.mkdir(mode=0o755, parents=True)
        except OSError:
            pytest.skip("sshd needs /run/sshd, and it cannot be made here")
    folder = tmp_path / "ssh"
    folder.mkdir()
    _keygen(folder / "host_key")
    _keygen(folder / "user_key")
    (folder / "authorized_keys").write_text((folder / "user_key.pub").read_text())
    bin_dir = tmp_path / "remote-bin"
    bin_dir.mkdir()
    port = _free_port()
    config = folder / "sshd_config"
    config.write_text(
        f"Port {port}\n"
        "ListenAddress 127.0.0.1\n"
        f"HostKey {folder / 'host_key'}\n"
        f"PidFile {folder / 'sshd.pid'}\n"
        f"AuthorizedKeysFile {folder / 'authorized_keys'}\n"
        "StrictModes no\n"
        "UsePAM no\n"
        "PasswordAuthentication no\n"
        "KbdInteractiveAuthentication no\n"
        "PermitRootLogin prohibit-password\n"
        # the remote's PATH has the stand-in agents; PYTHONPATH finds the scripted agent
        f"SetEnv PATH={bin_dir}:/usr/local/bin:/usr/bin:/bin PYTHONPATH={ROOT}\n"
    )
    process = subprocess.Popen(
        [SSHD, "-D", "-e", "-f", str(config)],
        stdout=subprocess.DEVNULL,
        stderr=open(folder / "sshd.log", "wb"),  # noqa: SIM115 - closed with the process
        start_new_session=True,
    )
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"sshd ended: {(folder / 'sshd.log').read_text()[-1000:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                break
        except OSError:
            time.sleep(0.1)
    else:
        process.kill()
        pytest.fail("sshd did not listen in time")
    ssh = shlex.join(
        [
            "ssh",
            "-F",
            "/dev/null",
            "-p",
            str(port),
            "-i",
            str(folder / "user_key"),
            "-o",
            "IdentitiesOnly=yes",
            "-o",
            "StrictHostKeyChecking=no",
            "-o",
            f"UserKnownHostsFile={folder / 'known_hosts'}",
            "-o",
            "LogLevel=ERROR",
        ]
    )
    server = SshServer(process, port, folder, bin_dir, ssh, f"{getpass.getuser()}@127.0.0.1")
    try:
        yield server
    finally:
        for pid in server.session_processes():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, 9)
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def stand_in(server: SshServer, program: str) -> Path:
    """``program`` on the remote PATH: notes its arguments and environment, then speaks ACP."""
    script = server.bin_dir / program
    notes = server.folder / program
    script.write_text(
        "#!/bin/sh\n"
        f"printf '%s\\n' \"$@\" > {shlex.quote(str(notes))}.argv\n"
        f"env > {shlex.quote(str(notes))}.env\n"
        f"exec {shlex.quote(sys.executable)} -m tests.acp_frontend.sdk_agent\n"
    )
    script.chmod(0o755)
    return notes


def _remote_env(server: SshServer) -> dict[str, str]:
    return {**os.environ, "ANNOUNCER_SSH_COMMAND": server.ssh_command}


def test_presets_run_on_the_host_with_their_asking_settings_and_are_heard_here(
    sshd: SshServer, tmp_path: Path
) -> None:
    qwen = stand_in(sshd, "qwen")
    codex = stand_in(sshd, "codex-acp")
    run = AgentRun(tmp_path, "--ssh", sshd.host, env=_remote_env(sshd), names=["qwen", "codex"])
    try:
        run.wait_for("is ready.")
        run.wait_for("is ready.")
        run.type("@qwen hello")
        run.wait_for("This is the scripted agent.")
        run.wait_for("finished the turn.")
    finally:
        assert run.quit() == 0
    # what reached the host: each preset's own command line and environment
    assert Path(f"{qwen}.argv").read_text().split() == [
        "--acp",
        "--approval-mode",
        "default",
        "--screen-reader",
    ]
    assert Path(f"{codex}.argv").read_text().split() == []
    assert "INITIAL_AGENT_MODE=read-only" in Path(f"{codex}.env").read_text().splitlines()
    assert "This is the scripted agent." in " ".join(run.heard())


def test_a_saved_remote_agent_and_a_command_after_the_separator_run_on_the_host(
    sshd: SshServer, tmp_path: Path
) -> None:
    notes = stand_in(sshd, "my-agent")
    config = tmp_path / "settings.toml"
    config.write_text(f"[producers.box]\nsource = \"acp:ssh:{sshd.host} my-agent --flag 'a b'\"\n")
    run = AgentRun(tmp_path, env=_remote_env(sshd), names=["box"], config=config)
    try:
        run.wait_for("is ready.")
    finally:
        assert run.quit() == 0
    assert Path(f"{notes}.argv").read_text().splitlines() == ["--flag", "a b"]


def test_a_lost_connection_is_said_once(sshd: SshServer, tmp_path: Path) -> None:
    stand_in(sshd, "qwen")
    run = AgentRun(tmp_path, "--ssh", sshd.host, env=_remote_env(sshd), names=["qwen"])
    try:
        run.wait_for("is ready.")
        for pid in sshd.session_processes():  # the connection drops, as when a host goes away
            os.kill(pid, 9)
        run.wait_for("status 255")
    finally:
        if run.proc.poll() is None:
            run.quit()
    lost = [t for t in run.heard() if "status 255" in t]
    assert len(lost) == 1, run.heard()


def test_without_a_reachable_host_ssh_says_why(tmp_path: Path) -> None:
    """A host where nothing listens: said once, in words, and no prompt for a password."""
    if shutil.which("ssh") is None:
        pytest.skip("no ssh client")
    closed = _free_port()  # nothing listens there
    env = {
        **os.environ,
        "ANNOUNCER_SSH_COMMAND": f"ssh -F /dev/null -p {closed} -o StrictHostKeyChecking=no "
        "-o UserKnownHostsFile=/dev/null -o ConnectTimeout=5",
    }
    run = AgentRun(tmp_path, "--ssh", "127.0.0.1", env=env, names=["qwen"])
    try:
        run.wait_for("nothing is listening at that address")
    finally:
        if run.proc.poll() is None:
            run.quit()
    assert sum("nothing is listening" in t for t in run.heard()) == 1


def test_a_preset_missing_on_the_host_says_so_with_its_install_command(
    sshd: SshServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The host itself says what is missing and how to install it, as the agent's last words
    (standard error, exit status 127), and announcer gives up on the agent aloud, once."""
    from announcer.cli.acp_agents import AgentToStart, resolve_agent

    monkeypatch.setenv("ANNOUNCER_SSH_COMMAND", sshd.ssh_command)
    agent = resolve_agent("gemini", None, host=sshd.host)
    assert isinstance(agent, AgentToStart)
    done = subprocess.run(
        agent.command, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 127
    assert done.stderr.strip() == (
        f"Gemini CLI is not installed on {sshd.host}. Install it there with: "
        "npm install -g @google/gemini-cli@0.61.0"
    )
    run = AgentRun(tmp_path, "--ssh", sshd.host, env=_remote_env(sshd), names=["gemini"])
    try:
        run.wait_for("Giving up on Gemini CLI")
    finally:
        if run.proc.poll() is None:
            run.quit()
    gave_up = [t for t in run.heard() if "Giving up on Gemini CLI" in t]
    assert len(gave_up) == 1, run.heard()
    # the host's own sentence is what the user hears, with the install command for that host
    assert (
        f"Gemini CLI is not installed on {sshd.host}. Install it there with: npm install"
        in (gave_up[0])
    )
