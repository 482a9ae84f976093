"""``announcer agent`` with an ACP agent registry (issue 33, item 1), end to end.

The registry is a snapshot the test builds (tests/support/acp_registry.py), read from a
file, from the settings file's ``agent_registry``, or over HTTP from a loopback server.
Its ``scripted`` entry is an npx package; a stand-in ``npx`` on the test's PATH records
the command line it got and runs the scripted ACP agent (tests/acp_frontend/sdk_agent.py)
with the registry's arguments, so the agent that answers is a real child process.
"""

from __future__ import annotations

import hashlib
import http.server
import io
import json
import os
import platform
import subprocess
import sys
import tarfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from announcer.formats.acp_registry import platform_key
from tests.acp_frontend.test_agent_command import ROOT, TIMEOUT, AgentRun
from tests.support.acp_registry import write_snapshot

NO_PRESET = (
    "No preset for Scripted Agent: it may act without asking. Its modes are Ask before "
    "edits, Auto review; :mode changes it. Modes that ask first: Ask before edits."
)
HERE = platform_key(platform.system(), platform.machine())


def _runner(folder: Path, name: str) -> Path:
    """A stand-in ``npx`` (or any program): logs its arguments and the registry's variable,
    then runs the scripted agent with what follows ``--yes PACKAGE``."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / name
    log = folder.parent / f"{name}-calls.jsonl"
    script.write_text(
        f"#!{sys.executable}\n"
        "import json, os, sys\n"
        f"with open({str(log)!r}, 'a') as f:\n"
        "    f.write(json.dumps([sys.argv[1:], os.environ.get('REGISTRY_ENV_CHECK')]) + '\\n')\n"
        "skip = 2 if sys.argv[1:2] == ['--yes'] else 0\n"
        "os.execv(sys.executable, [sys.executable, '-m', 'tests.acp_frontend.sdk_agent',"
        " *sys.argv[1 + skip:]])\n",
        encoding="utf-8",
    )
    script.chmod(0o755)
    return log


def _env(tmp_path: Path, bin_dir: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "PYTHONPATH": str(ROOT),
    }


def _announcer(
    tmp_path: Path, *words: str, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "announcer", "agent", *words],
        cwd=ROOT,
        env={"ANNOUNCER_CONFIG": str(tmp_path / "none.toml"), **env},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, http.server.ThreadingHTTPServer]]:
    """The snapshot's folder served on 127.0.0.1 (port 0): its registry.json address."""
    folder = tmp_path / "served"
    write_snapshot(folder)

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
            super().__init__(*args, directory=str(folder), **kwargs)

        def log_message(self, *args: object) -> None:
            return None

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/registry.json", server
    finally:
        server.shutdown()
        server.server_close()


def test_a_registry_agent_starts_through_npx_is_said_to_have_no_preset_and_is_answered_once(
    tmp_path: Path,
) -> None:
    registry = write_snapshot(tmp_path / "registry")
    config = tmp_path / "config.toml"
    config.write_text(f"agent_registry = {json.dumps(str(registry))}\n", encoding="utf-8")
    calls = _runner(tmp_path / "bin", "npx")
    agent = AgentRun(
        tmp_path,
        names=["scripted"],
        config=config,
        env={**_env(tmp_path, tmp_path / "bin"), "ANNOUNCER_CONFIG": str(config)},
    )
    try:
        agent.wait_for(NO_PRESET)
        agent.type("write")
        agent.wait_for("Accept or reject: Scripted Agent wants to run: echo hello > out.txt?")
        agent.answer("a")
        agent.wait_for("Scripted Agent finished the turn.")
        assert agent.quit() == 0
    finally:
        if agent.proc.poll() is None:
            agent.proc.kill()
    # the agent received one answer, the one the user gave
    assert (agent.folder / "choices.txt").read_text().split() == ["once"]
    assert (agent.folder / "out.txt").read_text() == "hello\n"
    # started as the registry says: npx --yes PACKAGE ARGS, with the registry's environment
    (line,) = calls.read_text().splitlines()
    assert json.loads(line) == [["--yes", "@lab/scripted-agent@1.0.0", "--modes"], "from-registry"]
    assert NO_PRESET in agent.heard()
    # started in its own default mode: announcer set none (no session/set_mode was sent)
    assert not (agent.folder / "settings.txt").exists()


def test_a_program_on_path_is_preferred_to_npx(tmp_path: Path) -> None:
    registry = write_snapshot(tmp_path / "registry")
    npx_calls = _runner(tmp_path / "bin", "npx")
    own_calls = _runner(tmp_path / "bin", "scripted-agent")
    agent = AgentRun(
        tmp_path,
        "--registry",
        str(registry),
        names=["scripted"],
        env=_env(tmp_path, tmp_path / "bin"),
    )
    try:
        agent.wait_for(NO_PRESET)
        assert agent.quit() == 0
    finally:
        if agent.proc.poll() is None:
            agent.proc.kill()
    assert json.loads(own_calls.read_text()) == [["--modes"], "from-registry"]
    assert not npx_calls.exists()


def test_list_reads_the_registry_over_http_and_then_from_its_cache(
    tmp_path: Path, served: tuple[str, http.server.ThreadingHTTPServer]
) -> None:
    url, server = served
    _runner(tmp_path / "bin", "npx")
    env = _env(tmp_path, tmp_path / "bin")
    listed = _announcer(tmp_path, "--list", "--registry", url, env=env)
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert f"Registry {url}:" in lines
    scripted = next(line for line in lines if line.startswith("scripted ("))
    assert "--yes @lab/scripted-agent@1.0.0 --modes" in scripted
    assert "no preset: it may act without asking" in scripted
    held = next(line for line in lines if line.startswith("held-agent ("))
    assert held.endswith("quarantined: crashes on start")
    binary = next(line for line in lines if line.startswith("bin-agent ("))
    assert "add --download" in binary
    assert any(
        line.startswith("Not read: ") and "agents[4] ('broken'): version" in line for line in lines
    )
    server.shutdown()
    server.server_close()  # the address is gone: the cached copy answers
    again = _announcer(tmp_path, "--list", "--registry", url, env=env)
    assert again.returncode == 0, again.stderr
    assert f"Registry {url}: (a copy from 0 minutes ago)" in again.stdout.splitlines()
    assert "held-agent (" in again.stdout


def test_a_quarantined_agent_is_not_started_and_says_why(tmp_path: Path) -> None:
    registry = write_snapshot(tmp_path / "registry")
    calls = _runner(tmp_path / "bin", "npx")
    done = _announcer(
        tmp_path, "held-agent", "--registry", str(registry), env=_env(tmp_path, tmp_path / "bin")
    )
    assert done.returncode == 2
    assert (
        "Held Agent is quarantined in the registry (crashes on start); not started." in done.stderr
    )
    assert not calls.exists()


def test_an_archive_is_downloaded_only_when_asked_and_run_only_when_its_sha256_matches(
    tmp_path: Path,
) -> None:
    script = (
        f'#!/bin/sh\nexec {sys.executable} -m tests.acp_frontend.sdk_agent --modes "$@"\n'
    ).encode()
    packed = io.BytesIO()
    with tarfile.open(fileobj=packed, mode="w:gz") as tar:
        info = tarfile.TarInfo("bin/bin-agent")
        info.size, info.mode = len(script), 0o755
        tar.addfile(info, io.BytesIO(script))
    body = packed.getvalue()
    served = tmp_path / "served"
    served.mkdir()
    (served / "bin-agent.tar.gz").write_bytes(body)

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
            super().__init__(*args, directory=str(served), **kwargs)

        def log_message(self, *args: object) -> None:
            return None

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    archive = f"http://127.0.0.1:{server.server_address[1]}/bin-agent.tar.gz"
    env = _env(tmp_path, tmp_path / "empty-bin")

    def registry(sha: str, where: str) -> Path:
        path = write_snapshot(tmp_path / where, archive_sha256=sha, platform=HERE)
        data = json.loads(path.read_text())
        data["agents"][2]["distribution"]["binary"][HERE]["archive"] = archive
        path.write_text(json.dumps(data))
        return path

    try:
        good = registry(hashlib.sha256(body).hexdigest(), "good")
        bad = registry("0" * 64, "bad")
        unasked = _announcer(tmp_path, "bin-agent", "--registry", str(good), env=env)
        assert unasked.returncode == 2 and "add --download" in unasked.stderr
        refused = _announcer(tmp_path, "bin-agent", "--download", "--registry", str(bad), env=env)
        assert refused.returncode == 2
        assert "not the registry's " + "0" * 64 in refused.stderr
        assert "nothing was unpacked or run" in refused.stderr
        assert not list((tmp_path / "cache").rglob("bin-agent"))
        agent = AgentRun(
            tmp_path, "--download", "--registry", str(good), names=["bin-agent"], env=env
        )
        try:
            agent.wait_for("No preset for Bin Agent: it may act without asking.")
            assert agent.quit() == 0
        finally:
            if agent.proc.poll() is None:
                agent.proc.kill()
    finally:
        server.shutdown()
        server.server_close()
