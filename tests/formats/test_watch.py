"""`announcer watch -- COMMAND`: a real child process, its stream announced, its status kept."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from announcer.cli.commands.watch import guess_format
from tests.formats.aaep_schemas import PEERS, assert_valid

ROOT = Path(__file__).resolve().parents[2]
WAIT = 120


def watch(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-m", "announcer", "watch", *args],
        cwd=ROOT,
        env=env,
        text=True,
        capture_output=True,
        timeout=WAIT,
        check=False,
    )


def fake_agent(tmp_path: Path, stream: Path, exit_code: int) -> Path:
    script = tmp_path / "agent.py"
    script.write_text(
        "import sys\n"
        f"sys.stdout.buffer.write(open({str(stream)!r}, 'rb').read())\n"
        "print('progress noise on stderr', file=sys.stderr)\n"
        f"sys.exit({exit_code})\n"
    )
    return script


def test_watch_announces_the_codex_stream_and_keeps_the_exit_status(tmp_path: Path):
    agent = fake_agent(tmp_path, PEERS / "codex-exec" / "exec-json-sample.jsonl", 3)
    events = tmp_path / "events.jsonl"
    result = watch(
        "--format",
        "codex",
        "--speech",
        "jsonl",
        "--events",
        str(events),
        "--",
        sys.executable,
        str(agent),
    )
    assert result.returncode == 3
    records = [json.loads(line) for line in result.stdout.splitlines()]
    said = [r["text"] for r in records if r["action"] == "speak"]
    # through the engine at the user's pace: the first news, the command, the answer, the end
    assert said[0] == "Codex started."
    assert "Running shell: bash -lc ls." in said
    assert "Yep — there’s a README.md in the repository root." in said
    assert said[-1] == "Codex finished."
    assert all(r["session_id"] == records[0]["session_id"] for r in records)
    assert "progress noise on stderr" in result.stderr  # the agent's stderr passes through
    written = [json.loads(line) for line in events.read_text().splitlines()]
    assert len(written) == 9
    assert_valid(written)
    assert {r["event_id"] for r in records} <= {e["event_id"] for e in written}


def test_watch_reports_unannounced_lines_and_exit_zero(tmp_path: Path):
    stream = PEERS / "agent-cli-streams" / "codex__versioned__0.61.0__malformed.jsonl"
    agent = fake_agent(tmp_path, stream, 0)
    result = watch("--format", "codex", "--speech", "text", "--", sys.executable, str(agent))
    assert result.returncode == 0
    assert "1 line(s)" in result.stderr
    assert result.stdout.splitlines()[0] == "Codex started."


def test_watch_passes_a_signal_death_through_as_128_plus_signal(tmp_path: Path):
    script = tmp_path / "die.py"
    script.write_text("import os, signal\nos.kill(os.getpid(), signal.SIGTERM)\n")
    result = watch("--format", "gemini", "--speech", "text", "--", sys.executable, str(script))
    assert result.returncode == 128 + 15


def test_watch_missing_command_and_unknown_format():
    assert watch("--format", "codex", "--speech", "text", "--", "/nonexistent/x").returncode == 127
    result = watch("--", "some-unknown-agent")
    assert result.returncode == 2 and "--format" in result.stderr
    assert watch().returncode == 2


def test_format_is_guessed_from_the_command_name():
    assert guess_format(["/usr/local/bin/claude", "-p"]) == "claude-code"
    assert guess_format(["codex", "exec", "--json"]) == "codex"
    assert guess_format(["gemini"]) == "gemini"
    assert guess_format(["opencode", "run"]) == "opencode"
    assert guess_format(["python"]) is None
