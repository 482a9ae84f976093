"""``--ca-file`` that cannot be used (issue 29 item 10), through the real ``announcer listen``.

A missing file, or one that holds no certificate, is the user's to fix: one sentence
naming the flag and the file, said once, and a non-zero exit; no traceback, no retries
(the loopback listener below counts every connection the command makes).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BOUND = 60.0  # seconds the command may take before the test fails (it ends at once)


LISTEN = [sys.executable, "-m", "announcer", "listen", "--ui", "plain", "--speech", "text"]


async def _run_listen(url: str, ca_file: str, *extra: str) -> subprocess.CompletedProcess[str]:
    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*LISTEN, "--ca-file", ca_file, *extra, url],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=BOUND,
        )

    return await asyncio.to_thread(run)


@pytest.mark.parametrize("scheme", ["https", "wss"])
@pytest.mark.parametrize("problem", ["missing", "not a certificate"])
async def test_an_unusable_ca_file_is_one_clear_error(
    scheme: str, problem: str, tmp_path: Path
) -> None:
    connections = 0

    async def count(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        writer.close()

    server = await asyncio.start_server(count, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    ca_file = tmp_path / "private-ca.pem"
    if problem == "not a certificate":
        ca_file.write_text("this is not a PEM certificate\n")
    path = "/aaep/v1/ws" if scheme == "wss" else ""
    try:
        done = await _run_listen(f"{scheme}://127.0.0.1:{port}{path}", str(ca_file))
    finally:
        server.close()
        await server.wait_closed()
    assert done.returncode != 0
    assert "Traceback" not in done.stderr, done.stderr
    lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    # one sentence, naming the flag and the very file given
    assert len(lines) == 1, lines
    [line] = lines
    assert "--ca-file" in line and str(ca_file) in line, line
    reason = "no such file" if problem == "missing" else "no PEM certificate"
    assert reason in line, line
    assert "socket" not in line  # the old words blamed a socket
    assert connections == 0  # nothing tried, nothing retried


async def test_the_ca_file_error_is_in_the_users_language(tmp_path: Path) -> None:
    missing = tmp_path / "ca.pem"
    done = await _run_listen("https://127.0.0.1:9", str(missing), "--language", "es")
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    [line] = [line for line in done.stderr.splitlines() if line.strip()]
    assert str(missing) in line and "--ca-file" in line
    assert "no such file" not in line  # translated, not English
