"""`announcer watch -- COMMAND`: a real child process, its stream announced, its status kept."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from announcer.cli.commands.watch import guess_format, quiet_mode_env
from tests.formats.aaep_schemas import PEERS, assert_valid
from tests.support.speech_record import records as records_of
from tests.support.speech_record import spoken_in

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
    records = records_of(result.stdout)
    said = spoken_in(records)
    # through the engine at the user's pace: the first news, the command, the answer, the end
    assert said[0] == "Codex started."
    assert "Running shell: ls." in said
    assert "Yep — there’s a README.md in the repository root." in said
    assert said[-1] == "Codex finished."
    assert all(r["session_id"] == records[0]["session_id"] for r in records)
    assert "progress noise on stderr" in result.stderr  # the agent's stderr passes through
    written = [json.loads(line) for line in events.read_text().splitlines()]
    assert len(written) == 8  # the turn's end is the session's end: said once
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


def test_watch_missing_command_and_unknown_format(tmp_path: Path):
    assert watch("--format", "codex", "--speech", "text", "--", "/nonexistent/x").returncode == 127
    assert watch("--", "some-unknown-agent").returncode == 127
    assert watch().returncode == 2
    # neither the command nor its output tells the format: said, and the status kept
    script = tmp_path / "plain.py"
    script.write_text("print('hello, not JSON')\nraise SystemExit(4)\n")
    result = watch("--speech", "text", "--", sys.executable, str(script))
    assert result.returncode == 4
    assert "cannot tell the stream format" in result.stderr and "--format" in result.stderr


def test_watch_tells_the_format_from_the_first_line_when_the_command_does_not(tmp_path: Path):
    agent = fake_agent(tmp_path, PEERS / "codex-exec" / "exec-json-sample.jsonl", 0)
    result = watch("--speech", "jsonl", "--", sys.executable, str(agent))
    assert result.returncode == 0, result.stderr
    said = [json.loads(line)["text"] for line in result.stdout.splitlines()]
    assert said[0] == "Codex started." and said[-1] == "Codex finished."


def test_format_is_guessed_from_the_command_name():
    assert guess_format(["/usr/local/bin/claude", "-p"]) == "claude-code"
    assert guess_format(["codex", "exec", "--json"]) == "codex"
    assert guess_format(["gemini"]) == "gemini"
    assert guess_format(["opencode", "run"]) == "opencode"
    assert guess_format(["python"]) is None


def test_format_is_guessed_through_npx_npm_node_and_env():
    assert guess_format(["npx", "claude", "-p"]) == "claude-code"
    assert guess_format(["npx", "-y", "@anthropic-ai/claude-code@2.1.330", "-p"]) == "claude-code"
    assert guess_format(["npx", "--package", "@openai/codex", "codex", "exec"]) == "codex"
    assert guess_format(["npm", "exec", "--", "@openai/codex", "exec", "--json"]) == "codex"
    assert guess_format(["pnpm", "dlx", "@google/gemini-cli"]) == "gemini"
    node = ["node", "/opt/lib/node_modules/@openai/codex/bin/codex.js", "exec", "--json"]
    assert guess_format(["env", "-u", "HOME", "A=1", *node]) == "codex"
    assert guess_format(["env", "A=1", "npx", "--yes", "claude"]) == "claude-code"
    assert guess_format(["npx", "cowsay"]) is None
    assert guess_format(["env", "A=1"]) is None
    assert guess_format(["node"]) is None


def test_a_package_folder_tells_the_agent_but_a_folder_named_like_a_program_does_not():
    """The names come from the agent files' [cli] tables (issue 32 step 4): a package's
    folder is the agent's; a folder named like a program (any agent's) is only a folder."""
    assert guess_format(["node", "/opt/node_modules/opencode-ai/dist/main.js"]) == "opencode"
    assert guess_format(["bun", "/opt/node_modules/claude-code/dist/cli.js"]) == "claude-code"
    assert guess_format(["node", "/home/ada/codex/run.js"]) is None
    assert guess_format(["node", "/home/ada/opencode/run.js"]) is None


def test_the_first_line_tells_the_format():
    from announcer.formats.detect import format_of_line

    assert format_of_line('{"type":"system","subtype":"init","session_id":"s"}') == "claude-code"
    assert format_of_line(b'{"type":"thread.started","thread_id":"t"}') == "codex"
    assert format_of_line('{"type":"init","session_id":"s","model":"g"}') == "gemini"
    assert format_of_line("npm notice: a new version") is None
    assert format_of_line("[1, 2]") is None


def test_claude_codes_screen_reader_mode_is_turned_on_unless_the_user_set_it():
    env, told = quiet_mode_env("claude-code", {"PATH": "/bin"})
    assert env["CLAUDE_AX_SCREEN_READER"] == "1" and told and "screen-reader" in told
    env, told = quiet_mode_env("claude-code", {"CLAUDE_AX_SCREEN_READER": "0"})
    assert env["CLAUDE_AX_SCREEN_READER"] == "0" and told is None
    assert quiet_mode_env("codex", {}) == ({}, None)


def test_drain_seconds_running_out_is_said(tmp_path: Path):
    agent = fake_agent(tmp_path, PEERS / "codex-exec" / "exec-json-sample.jsonl", 0)
    # the text backend is paced at the user's speed: no time at all leaves speech unsaid
    result = watch(
        "--format",
        "codex",
        "--speech",
        "text",
        "--drain-seconds",
        "0",
        "--",
        sys.executable,
        str(agent),
    )
    assert result.returncode == 0
    assert "--drain-seconds 0 ran out with" in result.stderr
