"""AEP (both 0.1 drafts) and mapping files -> AAEP events."""

from __future__ import annotations

import json

import pytest

from announcer.formats import MappingError, get_adapter, parse_mapping
from announcer.formats.mapping import builtin_mapping, resolve_pointer
from tests.formats.aaep_schemas import PEERS
from tests.formats.conftest import run_stream, spoken

AEP_PEERS = PEERS / "aep-agenteventprotocol"


def seed_event(type_: str, **fields: object) -> str:
    event = {
        "aep_version": "0.1",
        "id": f"evt_{type_.replace('.', '_')}_{len(json.dumps(fields))}",
        "type": type_,
        "time": "2026-05-09T12:00:00.000Z",
        "agent": {"slug": "claude", "display_name": "Claude Code", "version": "1.4.2"},
        "session": {"id": "sess_abc"},
    }
    event.update(fields)
    return json.dumps(event)


def test_seed_example_action_requested_is_joined_to_its_completion(validate):
    lines = [
        seed_event("session.start", workspace={"cwd": "/workspace/project"}),
        seed_event(
            "action.requested",
            hook="PreToolUse",
            action={"type": "tool_call", "id": "call_xyz", "input": {"command": "bun test"}},
            tool={"type": "native", "name": "Bash"},
        ),
        seed_event(
            "action.completed",
            action={"type": "tool_call", "id": "call_xyz", "status": "completed", "output": "ok"},
            metrics={"duration_ms": 2500},
        ),
        seed_event("session.end"),
    ]
    out = run_stream("aep", lines)
    validate(out.events)
    assert spoken(out.events) == [
        ("session.started", "Claude Code session started in project."),
        ("tool.invoked", "Running Bash: bun test."),
        ("tool.completed", "Bash finished: bun test."),
        ("session.completed", "Claude Code session ended."),
    ]
    invoked, completed = out.events[1], out.events[2]
    assert invoked["tool_call_id"] == completed["tool_call_id"]
    assert completed["duration_ms"] == 2500
    assert out.events[0]["producer"] == {
        "agent_id": "claude",
        "agent_name": "Claude Code",
        "agent_version": "1.4.2",
    }


def test_seed_denied_and_failed_actions_join_by_action_id(validate):
    lines = [
        seed_event(
            "action.requested",
            action={"id": "a1", "input": {"file_path": "/srv/app/main.py"}},
            tool={"name": "Write"},
        ),
        seed_event(
            "action.requested",
            action={"id": "a2", "input": {"command": "rm -rf /"}},
            tool={"name": "Bash"},
        ),
        seed_event("action.denied", action={"id": "a2"}, decision={"reason": "matched deny rule"}),
        seed_event("action.failed", action={"id": "a1", "error": "disk full"}),
    ]
    out = run_stream("aep", lines)
    validate(out.events)
    said = spoken(out.events)
    assert ("tool.invoked", "Running Write: main.py in app.") in said  # a path, summarised
    assert ("tool.completed", "Bash failed. Denied: matched deny rule.") in said
    assert ("tool.completed", "Write failed. Disk full.") in said
    calls = {
        e["tool"]: e["tool_call_id"] for e in out.events if e["type"] == "aaep:agent.tool.invoked"
    }
    for event in out.events:
        if event["type"] == "aaep:agent.tool.completed":
            assert event["tool_call_id"] == calls[event["tool"]]


def test_display_styles_summarise_paths_urls_and_json():
    lines = [
        seed_event(
            "notification",
            content=[{"type": "link", "text": "https://github.com/o/r/pull/7", "style": "url"}],
        ),
        seed_event(
            "notification",
            content=[
                {"type": "cfg", "text": "/home/me/.config/app/settings.toml", "style": "path"}
            ],
        ),
        seed_event(
            "notification",
            content=[
                {
                    "type": "payload",
                    "text": '{"a": 1, "b": [1, 2], "c": null}',
                    "style": "indented_json",
                }
            ],
        ),
    ]
    said = [text for _, text in spoken(run_stream("aep", lines).events)]
    assert "Claude Code: a link to github.com" in said
    assert "Claude Code: settings.toml in app" in said
    assert "Claude Code: 3 fields: a, b, c" in said


def test_unknown_seed_types_are_announced_from_their_content_text(validate):
    lines = [
        seed_event(
            "workspace.branch_switched", content=[{"type": "text", "text": "Switched to main"}]
        ),
        seed_event("model.token_budget"),
    ]
    out = run_stream("aep", lines)
    validate(out.events)
    assert ("progress.updated", "Claude Code: Switched to main") in spoken(out.events)
    assert [d.code for d in out.diagnostics] == ["unknown_type"]


def test_agent_approve_question_asked_needing_permission_is_a_confirmation(validate):
    path = PEERS / "agentapprove-aep" / "agentnotify-question.asked-example.json"
    out = run_stream("aep", [json.dumps(json.loads(path.read_text()))])
    validate(out.events)
    confirmation = out.events[-1]
    assert confirmation["type"] == "aaep:agent.awaiting.confirmation"
    assert confirmation["urgency"] == "critical"
    assert confirmation["default_decision"] == "reject"  # never allow by default
    assert confirmation["action"] == "May I run the release workflow?"
    assert confirmation["summary_terse"] == "Release approval required"
    assert confirmation["reply_token"].startswith("rpl_")


def test_a_plain_question_is_a_clarification(validate):
    out = run_stream(
        "aep",
        [seed_event("question.asked", content=[{"type": "question", "text": "Which branch?"}])],
    )
    validate(out.events)
    assert out.events[-1]["type"] == "aaep:agent.awaiting.clarification"
    assert out.events[-1]["question"] == "Which branch?"


def test_golden_permission_request_becomes_a_confirmation_and_form_a_clarification(validate):
    lines = (AEP_PEERS / "golden.jsonl").read_text().splitlines()
    out = run_stream("aep", lines)
    validate(out.events)
    confirmations = [e for e in out.events if e["type"] == "aaep:agent.awaiting.confirmation"]
    assert [c["action"] for c in confirmations] == [
        "Permission requested: Bash — rm -rf build/",
        "Permission requested: Bash — git push --force origin main",
    ]
    form = next(e for e in out.events if e["type"] == "aaep:agent.awaiting.clarification")
    assert form["question"].startswith("Configure the new service deployment. Service name;")
    # the two events that share one id across two agents are both kept (ids are per source)
    assert (
        len([e for e in out.events if e["producer"]["agent_id"] in ("alpha-agent", "beta-agent")])
        == 8
    )


def test_invalid_aep_cases_never_crash_and_what_is_emitted_is_valid(validate):
    cases = json.loads((AEP_PEERS / "invalid-cases.json").read_text())["cases"]
    for case in cases:
        events = case.get("events") or [case["event"]]
        out = run_stream("aep", [json.dumps(e) for e in events])
        validate(out.events)


def test_json_pointer_resolution():
    doc = {"a/b": {"~k": [10, 20]}, "": 1}
    assert resolve_pointer(doc, "/a~1b/~0k/1") == 20
    assert resolve_pointer(doc, "/") == 1
    assert resolve_pointer(doc, "") == doc
    missing = resolve_pointer(doc, "/nope")
    assert missing is resolve_pointer(doc, "/a~1b/~0k/9")


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("schema_version: other\nagent: x\nevents: [{canonical_event: a}]", "schema_version"),
        ("schema_version: aep.mapping/v1\nevents: [{canonical_event: a}]", "agent"),
        ("schema_version: aep.mapping/v1\nagent: x\nevents: []", "events"),
        (
            "schema_version: aep.mapping/v1\nagent: x\nevents: [{when: {}}]",
            "events[0].canonical_event",
        ),
        (
            "schema_version: aep.mapping/v1\nagent: x\n"
            "events: [{canonical_event: a, when: {x: 1}}]",
            "events[0].when",
        ),
        (
            "schema_version: aep.mapping/v1\nagent: x\nevents:\n"
            "  - {canonical_event: a, fields: {tool.name: {source: tool_name}}}",
            "events[0].fields.tool.name.source",
        ),
        ("a: [", "YAML"),
    ],
)
def test_bad_mapping_files_name_the_field(text, field):
    with pytest.raises(MappingError, match=field.replace("[", r"\[").replace("]", r"\]")):
        parse_mapping(text)


def test_the_seeds_cursor_example_mapping_works(validate):
    mapping = parse_mapping(
        """
schema_version: aep.mapping/v1
agent: cursor
display_name: Cursor
events:
  - id: cursor.shell_approval
    source_event: beforeShellExecution
    when:
      /event_name: beforeShellExecution
    canonical_event: action.requested
    fields:
      action.id:
        source: /tool_call_id
      action.input:
        source: /tool_input
        display_style: indented_json
      tool.name:
        source: /tool_name
        display_style: plain_text
      workspace.cwd:
        source: /cwd
        display_style: path
    content:
      - type: prompt
        text:
          source: /prompt
        style: markdown
"""
    )
    adapter = get_adapter("cursor-hooks", mapping=mapping)
    payload = {
        "event_name": "beforeShellExecution",
        "tool_call_id": "tc1",
        "tool_name": "shell",
        "tool_input": {"cmd": "make deploy"},
        "cwd": "/w/p",
        "prompt": "deploy it",
    }
    out = adapter.feed(json.dumps(payload), 1_700_000_000.0)
    validate(out.events)
    assert ("tool.invoked", "Running shell: make deploy.") in spoken(out.events)
    unmapped = adapter.feed(json.dumps({"event_name": "afterFileEdit"}), 1_700_000_001.0)
    assert [d.code for d in unmapped.diagnostics] == ["unmapped"]


def test_codex_peer_hook_payloads_through_our_codex_mapping(validate):
    hooks = json.loads((AEP_PEERS / "mappings" / "codex.json").read_text())["hooks"]
    adapter = get_adapter("codex-hooks")
    events = []
    for index, case in enumerate(hooks.values()):
        out = adapter.feed(json.dumps(case["input"]), 1_700_000_000.0 + index)
        events.extend(out.events)
    events.extend(adapter.finish(1_700_000_100.0).events)
    validate(events)
    said = spoken(events)
    assert ("session.started", "Codex session started in proj.") in said
    assert ("tool.invoked", "Running shell: ls -la.") in said
    assert ("tool.completed", "Shell finished: ls -la.") in said
    assert ("state.changed", "Codex is working on your prompt.") in said


def test_claude_code_mapping_covers_every_hook_the_bridge_forwards():
    mapping = builtin_mapping("claude-code")
    for hook in (
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PermissionRequest",
        "PostToolUse",
        "Notification",
        "Stop",
        "SubagentStop",
        "PreCompact",
        "SessionEnd",
    ):
        assert mapping.rule_for({"hook_event_name": hook}) is not None, hook


def test_claude_code_hook_stream_is_announced(validate):
    payloads = [
        {
            "hook_event_name": "SessionStart",
            "session_id": "s1",
            "cwd": "/home/me/shop",
            "source": "startup",
        },
        {"hook_event_name": "UserPromptSubmit", "session_id": "s1", "prompt": "fix the tests"},
        {
            "hook_event_name": "PostToolUse",
            "session_id": "s1",
            "tool_name": "Edit",
            "tool_use_id": "t1",
            "tool_input": {"file_path": "/home/me/shop/a.py"},
            "tool_response": {"ok": True},
        },
        {
            "hook_event_name": "Notification",
            "session_id": "s1",
            "message": "Claude needs your permission",
        },
        {"hook_event_name": "Stop", "session_id": "s1"},
        {"hook_event_name": "SessionEnd", "session_id": "s1", "reason": "exit"},
    ]
    out = run_stream("claude-code-hooks", [json.dumps(p) for p in payloads])
    validate(out.events)
    assert spoken(out.events) == [
        ("session.started", "Claude Code session started in shop."),
        ("state.changed", "Claude Code is working on your prompt."),
        ("tool.invoked", "Edit was running."),  # no PreToolUse hook: the call is made up quietly
        ("tool.completed", "Edit finished."),
        ("progress.updated", "Claude Code: Claude needs your permission"),
        ("state.changed", "Claude Code finished responding."),
        ("session.completed", "Claude Code session ended."),
    ]
