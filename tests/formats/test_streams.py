"""Every shared fixture stream turned into valid AAEP events and the expected announcements."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.formats.conftest import STREAMS, heard, run_file, run_stream, speech_of, spoken
from tests.formats.regenerate_expected import stream_cases
from tests.support.speech_record import spoken_in

EXPECTED = json.loads((Path(__file__).parent / "expected" / "streams.json").read_text())
CASES = stream_cases()


def test_every_fixture_stream_has_expectations():
    assert set(EXPECTED) == set(CASES)
    assert len([p for p in STREAMS.iterdir()]) == len(CASES) - 2


@pytest.mark.parametrize("key", sorted(CASES))
def test_fixture_stream_announcements(key, validate):
    fmt, path = CASES[key]
    out = run_file(fmt, path)
    validate(out.events)
    assert [f"{k} | {t}" for k, t in spoken(out.events)] == EXPECTED[key]["announcements"]
    assert [d.code for d in out.diagnostics] == EXPECTED[key]["diagnostics"]


@pytest.mark.parametrize("key", sorted(CASES))
def test_fixture_stream_speech_through_the_engine(key):
    """What the jsonl speech backend records when the engine plays the adapter's events."""
    fmt, path = CASES[key]
    assert heard(speech_of(run_file(fmt, path).events)) == EXPECTED[key]["speech"]


@pytest.mark.parametrize("key", sorted(CASES))
def test_fixture_streams_are_deterministic_and_sequenced(key):
    fmt, path = CASES[key]
    first, second = run_file(fmt, path), run_file(fmt, path)
    assert [e["event_id"] for e in first.events] == [e["event_id"] for e in second.events]
    by_session: dict[str, list[int]] = {}
    for event in first.events:
        by_session.setdefault(event["session_id"], []).append(event["sequence_number"])
    for numbers in by_session.values():
        assert numbers == list(range(len(numbers)))  # §3: 0 on session.started, then +1


def test_raw_backend_lines_are_never_spoken():
    """The Codex sample's command output (a directory listing) must not reach speech."""
    _, path = CASES["codex-exec/exec-json-sample.jsonl"]
    out = run_file("codex", path)
    everything = json.dumps(out.events)
    assert "pnpm-workspace.yaml" not in everything
    assert "flake.lock" not in everything


def test_claude_code_tool_call_joined_to_result_by_id(validate):
    lines = [
        '{"type":"system","subtype":"init","session_id":"s","cwd":"/home/me/shop","model":"m"}',
        '{"type":"assistant","session_id":"s","message":{"id":"m1","content":[{"type":"tool_use",'
        '"name":"Bash","id":"toolu_9","input":{"command":"npm test"}}]}}',
        '{"type":"user","session_id":"s","message":{"content":[{"type":"tool_result",'
        '"tool_use_id":"toolu_9","is_error":true,"content":"Exit code 1\\nnpm ERR! 1 failing"}]}}',
        '{"type":"result","subtype":"success","session_id":"s","is_error":false,"duration_ms":4000,'
        '"num_turns":2,"total_cost_usd":0.0123}',
    ]
    out = run_stream("claude-code", lines)
    validate(out.events)
    invoked, completed = (e for e in out.events if e["type"].startswith("aaep:agent.tool."))
    assert invoked["tool_call_id"] == completed["tool_call_id"]
    assert invoked["summary_normal"] == "Running Bash: npm test."
    assert completed["status"] == "error" and completed["error_message"] == "exit code 1"
    assert "npm ERR" not in json.dumps(out.events)  # the tool's raw output is never spoken
    assert out.events[0]["summary_normal"] == "Claude Code started in shop."
    assert out.events[0]["producer"] == {
        "agent_id": "claude-code",
        "agent_name": "Claude Code",
        "model": "m",
    }
    done = out.events[-1]
    assert done["type"] == "aaep:agent.session.completed"
    assert (
        done["summary_detailed"]
        == "Claude Code finished, took 4 seconds, 2 turns, cost 0.01 dollars."
    )


def test_claude_code_partial_messages_are_not_spoken_twice(validate):
    lines = [
        '{"type":"stream_event","session_id":"s","event":{"type":"message_start"}}',
        '{"type":"stream_event","session_id":"s","event":{"type":"content_block_delta","index":0,'
        '"delta":{"type":"text_delta","text":"Hel"}}}',
        '{"type":"stream_event","session_id":"s","event":{"type":"content_block_delta","index":0,'
        '"delta":{"type":"text_delta","text":"lo."}}}',
        '{"type":"stream_event","session_id":"s","event":{"type":"content_block_stop","index":0}}',
        '{"type":"assistant","session_id":"s","message":{"content":[{"type":"text","text":"Hello."}]}}',
    ]
    out = run_stream("claude-code", lines)
    validate(out.events)
    chunks = [e for e in out.events if e["type"] == "aaep:agent.output.streaming"]
    assert "".join(c["chunk"] for c in chunks) == "Hello."
    assert [c["complete"] for c in chunks] == [False, False, True]
    assert len({c["output_id"] for c in chunks}) == 1


def test_malformed_and_odd_lines_become_diagnostics_not_crashes(validate):
    lines: list[bytes] = [
        b"\xff\xfe not utf-8\n",
        b"[1, 2]\n",
        b'"just a string"\n',
        b"{\n",
        b"\r\n",
        b'{"type":"assistant","session_id":"s","message":{"content":"plain string content"}}\r\n',
        b'{"type":"assistant","session_id":"s","message":{"content":[42, {"type":"image"}]}}\n',
        b'{"type":"stream_event","session_id":"s"}\n',
    ]
    out = run_stream("claude-code", lines)
    validate(out.events)
    codes = [d.code for d in out.diagnostics]
    assert codes == [
        "invalid_utf8",
        "not_an_object",
        "not_an_object",
        "invalid_json",
        "invalid_field",
        "unknown_block",
        "missing_field",
    ]
    assert [d.line_number for d in out.diagnostics] == [1, 2, 3, 4, 7, 7, 8]
    assert ("output.streaming", "plain string content") in spoken(out.events)


def test_claude_code_blocks_of_one_message_on_separate_lines_are_separate_outputs(validate):
    """Claude Code prints each content block of a message as its own line, same message id."""
    lines = [
        '{"type":"assistant","session_id":"s","message":{"id":"msg_1","content":'
        '[{"type":"text","text":"First I will look."}]}}',
        '{"type":"assistant","session_id":"s","message":{"id":"msg_1","content":'
        '[{"type":"tool_use","id":"toolu_1","name":"Read","input":{"file_path":"/r/src/app.py"}}]}}',
        '{"type":"user","session_id":"s","message":{"content":[{"type":"tool_result",'
        '"tool_use_id":"toolu_1","content":"def main(): ..."}]}}',
        '{"type":"assistant","session_id":"s","message":{"id":"msg_1","content":'
        '[{"type":"text","text":"Found it."}]}}',
    ]
    out = run_stream("claude-code", lines)
    validate(out.events)
    assert [t for k, t in spoken(out.events) if k != "session.started"] == [
        "First I will look.",
        "Running Read: app.py in src.",
        "Read finished: app.py in src.",
        "Found it.",
    ]
    assert "def main" not in json.dumps(out.events)  # tool output is never spoken


def test_a_codex_run_heard_through_the_engine_at_each_verbosity():
    """The same stream at terse, normal and detailed verbosity, as a listener hears it."""
    _, path = CASES["codex-exec/exec-json-sample.jsonl"]
    events = run_file("codex", path).events
    terse = spoken_in(speech_of(events, verbosity="terse"))
    normal = spoken_in(speech_of(events))
    detailed = spoken_in(speech_of(events, verbosity="detailed"))
    answer = "Yep — there’s a README.md in the repository root."
    for said in (terse, normal, detailed):
        assert answer in said  # the agent's own answer is always heard
    # Issue 20: the tool's final state is said; its start, still waiting when the result
    # came, is folded into it at normal verbosity and said at detailed.
    assert "Shell finished: ls." in normal
    assert "Running shell: ls." in detailed
    assert sum(len(t) for t in terse) < sum(len(t) for t in normal) <= sum(len(t) for t in detailed)
    assert all(r["urgency"] in ("background", "normal") for r in speech_of(events))


def test_a_long_running_stream_keeps_bounded_session_memory(validate):
    from announcer.formats import get_adapter
    from announcer.formats.builder_fields import MAX_SESSIONS

    adapter = get_adapter("opencode")
    for index in range(MAX_SESSIONS + 50):
        line = json.dumps({"type": "text", "session_id": f"s{index}", "text": "ok"})
        adapter.feed(line, 1_700_000_000.0 + index)
    assert len(adapter.builder.sessions) <= MAX_SESSIONS  # type: ignore[attr-defined]
    # a session forgotten and seen again is simply a new session, still valid AAEP
    out = adapter.feed(json.dumps({"type": "text", "session_id": "s0", "text": "again"}), 1.8e9)
    validate(out.events)
