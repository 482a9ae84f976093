"""``announcer validate`` run as a real process on real and hand-made files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from protocol_samples import FIXTURES

ROOT = Path(__file__).resolve().parents[2]


def validate(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "announcer", "validate", *args],
        cwd=ROOT,
        input=stdin.decode() if stdin is not None else None,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_valid_files_exit_zero_one_line_per_message() -> None:
    files = sorted(str(p) for p in (FIXTURES / "valid").glob("*.json"))
    captured = sorted(str(p) for p in FIXTURES.glob("captured-*.jsonl"))
    result = validate(*files, *captured)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 5 + 13 + 20
    assert all(": ok " in line for line in lines)
    assert any(line.endswith("ok handshake subscription.request") for line in lines)


def test_invalid_files_give_reasons_and_exit_one() -> None:
    files = sorted(str(p) for p in (FIXTURES / "invalid").glob("*.json"))
    result = validate(*files)
    assert result.returncode == 1
    by_name = {Path(line.split(":", 1)[0]).name: line for line in result.stdout.splitlines()}
    assert by_name["malformed-event-id.json"].endswith(
        'invalid aaep:agent.session.started: event_id: must be "evt_" followed by 1-64 '
        "letters or digits (§3.2.3)"
    )
    assert 'urgency: must be "critical"' in by_name["no-critical-urgency-on-errored.json"]
    assert "(§6.4.1)" in by_name["wrong-default-decision.json"]
    # Several missing fields are one sentence, shorter to hear.
    assert by_name["missing-required-fields.json"].endswith(
        "invalid aaep:agent.session.started: missing required fields session_id, timestamp, "
        "producer, summary_normal (§3.2.4, §3.2.5, §3.2.6, §4.1.1)"
    )


def test_stdin_json_lines_with_stream_rules_and_json_output(tmp_path: Path) -> None:
    single = json.loads((FIXTURES / "invalid" / "duplicate-completion-streaming.json").read_text())
    first = {**single, "event_id": "evt_firstone1", "position": 0}
    lines = [json.dumps(first), json.dumps(single), "{broken", "[1, 2]", ""]
    result = validate("--json", "-", stdin="\n".join(lines).encode())
    assert result.returncode == 1
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["status"] for r in records] == ["ok", "invalid", "invalid", "invalid"]
    assert [r["line"] for r in records] == [1, 2, 3, 4]
    assert "output.after_completion" in [d["code"] for d in records[1]["diagnostics"]]
    assert records[2]["diagnostics"][0]["code"] == "json.syntax"
    assert records[3]["diagnostics"][0]["code"] == "message.not_object"


def test_hand_made_malformed_files(tmp_path: Path) -> None:
    binary = tmp_path / "binary.jsonl"
    binary.write_bytes(b"\xff\xfe\x00garbage\n\x00\x01\n")
    empty = tmp_path / "empty.json"
    empty.write_text("  \n")
    huge = tmp_path / "huge.json"
    huge.write_bytes(b'{"summary_normal": "' + b"x" * (2 * 1024 * 1024) + b'"}')
    result = validate(str(binary), str(empty), str(huge), str(tmp_path / "missing.json"))
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "encoding.utf8" not in result.stdout  # plain sentences, not codes
    assert "is not UTF-8" in result.stdout
    assert "holds no messages" in result.stderr
    assert "cannot read" in result.stderr
    assert "events larger than 65536 bytes are dropped (§3.7)" in result.stdout


def test_pretty_printed_document_is_one_message(tmp_path: Path) -> None:
    pretty = tmp_path / "pretty.json"
    pretty.write_text(
        json.dumps(
            json.loads((FIXTURES / "valid" / "agent.session.started.json").read_text()), indent=4
        )
    )
    result = validate(str(pretty))
    assert result.returncode == 0
    assert result.stdout.count("\n") == 1 and ":1: ok event" in result.stdout


def test_hostile_names_are_escaped_in_the_output(tmp_path: Path) -> None:
    event = json.loads((FIXTURES / "valid" / "agent.session.started.json").read_text())
    event["type"] = "aaep:\x1b[31mred"
    event["bad\x07key"] = 1
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(event))
    result = validate(str(path))
    assert result.returncode == 1
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout
    assert "\\x1b[31mred" in result.stdout


def test_an_unknown_type_in_the_aaep_namespace_is_invalid_as_section_3_11_3_says(
    tmp_path: Path,
) -> None:
    """Issue 22 item 8: validate says invalid (exit 1); listen still announces it."""
    unknown = {
        "@context": "https://aaep-protocol.org/context/v1",
        "type": "aaep:agent.session.paused",
        "event_id": "evt_8a3f5b22c91e4d7a",
        "session_id": "sess_2c91a7b4d23f1e88",
        "timestamp": "2026-05-24T14:22:11.342Z",
        "producer": {"agent_id": "retirement-planner"},
        "summary_normal": "Paused for a moment.",
    }
    path = tmp_path / "unknown.json"
    path.write_text(json.dumps(unknown), encoding="utf-8")
    result = validate(str(path))
    assert result.returncode == 1, result.stdout
    assert "invalid event aaep:agent.session.paused" in result.stdout
    assert "(§3.11.3)" in result.stdout
    replay = subprocess.run(
        [sys.executable, "-m", "announcer", "replay", str(path), "--no-delay"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert replay.stdout.strip() == "Paused for a moment."
