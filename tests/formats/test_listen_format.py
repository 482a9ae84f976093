"""``announcer listen --format NAME FILE|-`` end to end: real process, the runtime, jsonl speech."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.formats.aaep_schemas import PEERS
from tests.support.speech_record import agent_speech

ROOT = Path(__file__).resolve().parents[2]
STREAMS = PEERS / "agent-cli-streams"


def listen(
    fmt: str,
    source: str | list[str],
    speech: Path,
    stdin: bytes | None = None,
    extra: list[str] | None = None,
) -> list[dict]:
    sources = [source] if isinstance(source, str) else source
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "announcer",
            "listen",
            "--format",
            fmt,
            "--ui",
            "none",
            "--speech",
            f"jsonl:{speech}",
            "--exit-when-done",
            *(extra or []),
            *sources,
        ],
        cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        input=stdin,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in speech.read_text().splitlines()]


def spoken_texts(records: list[dict]) -> list[str]:
    return [r["text"] for r in agent_speech(records)]


@pytest.mark.parametrize(
    ("fmt", "path", "expected"),
    [
        (
            "codex",
            PEERS / "codex-exec" / "exec-json-sample.jsonl",
            [
                "Codex started.",
                "Running shell: ls.",
                "Yep — there’s a README.md in the repository root.",
                "Codex finished.",
            ],
        ),
        (
            "claude-code",
            STREAMS / "claude_code__stream_json__v1__crlf_lines.jsonl",
            ["Claude Code started.", "hello"],
        ),
        (
            "opencode",
            STREAMS / "opencode__run_json__v1__blank_lines.jsonl",
            ["OpenCode session started.", "OK"],
        ),
        (
            "aep",
            PEERS / "aep-agenteventprotocol" / "golden.jsonl",
            ["Claude Code session started.", "Running Bash."],
        ),
    ],
)
def test_listen_format_file(fmt: str, path: Path, expected: list[str], tmp_path: Path):
    said = spoken_texts(listen(fmt, str(path), tmp_path / "speech.jsonl"))
    positions = [said.index(text) for text in expected]  # each is heard...
    assert positions == sorted(positions)  # ...in order


def test_listen_format_stdin_and_the_stream_end_closes_open_output(tmp_path: Path):
    """A Gemini delta with no result after it: finishing the stream completes the output."""
    stream = (STREAMS / "gemini_cli__stream_json__v1__message.jsonl").read_bytes()
    said = spoken_texts(listen("gemini", "-", tmp_path / "speech.jsonl", stdin=stream))
    assert said[-1] == "OK"


def test_two_claude_code_streams_keep_their_own_tool_calls_and_sessions(tmp_path: Path):
    """Each source has its own adapter: one stream's tool result cannot close the other's call.

    Both real fixtures use the native session ``sess-1`` and tool id ``t1``. Stream A calls
    bash and never hears back; stream B reports a result for a ``t1`` it never started.
    One shared adapter used to join them ("Bash finished.") and open only one session.
    """
    tool_use = STREAMS / "claude_code__stream_json__v1__assistant_message_tool_use.jsonl"
    tool_result = STREAMS / "claude_code__stream_json__v1__assistant_message_tool_result.jsonl"
    said = spoken_texts(
        listen("claude-code", [str(tool_use), str(tool_result)], tmp_path / "speech.jsonl")
    )
    assert said.count("Claude Code session started.") == 2  # one session per stream
    assert "Bash finished." not in said
    # A: its own call stays open until its stream ends
    assert said.index("Running bash.") < said.index(
        "Bash timed out. It never reported back before the stream ended."
    )
    # B: a result for a call this stream never made names no tool
    assert said.index("A tool was running.") < said.index("A tool finished.")


def test_listen_unknown_format_is_refused(tmp_path: Path):
    result = subprocess.run(
        [sys.executable, "-m", "announcer", "listen", "--format", "nonsense", "--ui", "none", "-"],
        cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        input=b"",
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert result.returncode != 0
    assert "nonsense" in result.stderr.decode()


CURSOR_MAPPING = """
schema_version: aep.mapping/v1
agent: cursor
display_name: Cursor
events:
  - id: cursor.shell
    when: {/hook_event_name: beforeShellExecution}
    canonical_event: action.requested
    fields:
      session.id: {source: /conversation_id}
      action.id: {source: /generation_id}
      action.input: {source: /command_input, display_style: indented_json}
      tool.name: {value: shell}
"""


def test_listen_with_a_users_mapping_file(tmp_path: Path):
    """One YAML file makes another agent's native hook payloads audible."""
    mapping = tmp_path / "cursor.yaml"
    mapping.write_text(CURSOR_MAPPING)
    payload = {
        "hook_event_name": "beforeShellExecution",
        "conversation_id": "c1",
        "generation_id": "g1",
        "command_input": {"command": "make deploy"},
    }
    said = spoken_texts(
        listen(
            f"mapping:{mapping}", "-", tmp_path / "speech.jsonl", stdin=json.dumps(payload).encode()
        )
    )
    assert "Running shell: make deploy." in said


def test_a_broken_mapping_file_is_refused_naming_the_field(tmp_path: Path):
    mapping = tmp_path / "bad.yaml"
    mapping.write_text(
        CURSOR_MAPPING.replace("{source: /conversation_id}", "{source: conversation_id}")
    )
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "announcer",
            "listen",
            "--format",
            f"mapping:{mapping}",
            "--ui",
            "none",
            "-",
        ],
        cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        input=b"",
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert result.returncode != 0
    assert "events[0].fields.session.id.source" in result.stderr.decode()
