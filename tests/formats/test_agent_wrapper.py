"""Universal Agent API AgentWrapperEvent JSON Lines, including the structured tools facet."""

from __future__ import annotations

import json

from announcer.formats.wrapper import tools_facet
from tests.formats.conftest import heard, run_stream, speech_of, spoken


def line(kind: str, **fields: object) -> str:
    return json.dumps({"agent_kind": "codex", "kind": kind, **fields})


def test_tools_facet_phases_are_tool_activity_joined_by_id(validate):
    start = tools_facet(
        "command_execution",
        "start",
        status="running",
        tool_name="shell",
        backend_item_id="item_1",
        thread_id="th_1",
    )
    delta = tools_facet(
        "command_execution",
        "delta",
        status="running",
        tool_name="shell",
        backend_item_id="item_1",
        thread_id="th_1",
    )
    fail = tools_facet(
        "command_execution",
        "fail",
        status="failed",
        tool_name="shell",
        backend_item_id="item_1",
        thread_id="th_1",
        exit_code=2,
    )
    start2 = tools_facet(
        "mcp_tool_call", "start", tool_name="github.create_issue", tool_use_id="c2"
    )
    done2 = tools_facet("mcp_tool_call", "complete", status="completed", tool_use_id="c2")
    lines = [
        line("Status", channel="status", message="Thread started"),
        line("TextOutput", channel="assistant", text="Let me run the tests. "),
        line("TextOutput", channel="assistant", text="Then I will report."),
        line("ToolCall", channel="tool", data=start),
        line("ToolCall", channel="tool", data=delta),
        line("ToolResult", channel="tool", data=fail),
        line("ToolCall", channel="tool", data=start2),
        line("ToolResult", channel="tool", data=done2),
        line("Error", channel="error", message="rate limited"),
        line("Unknown", data={"raw": "whatever"}),
        line("ToolCall", channel="tool"),
    ]
    out = run_stream("agent-wrapper", lines)
    validate(out.events)
    assert spoken(out.events) == [
        ("session.started", "Codex session started."),
        ("progress.updated", "Thread started"),
        ("output.streaming", "Let me run the tests. "),
        ("output.streaming", "Then I will report."),
        ("tool.invoked", "Running shell."),
        ("tool.completed", "shell failed. Exit code 2."),
        ("tool.invoked", "Running create issue from github."),
        ("tool.completed", "Create issue from github finished."),
        ("progress.updated", "Error: rate limited"),
    ]
    chunks = [e for e in out.events if e["type"] == "aaep:agent.output.streaming"]
    assert len({c["output_id"] for c in chunks}) == 1  # consecutive TextOutput: one output
    assert [d.code for d in out.diagnostics] == ["unknown_kind", "missing_tools_facet"]
    said = heard(speech_of(out.events))
    assert "normal | Shell failed. Exit code 2." in said


def test_wrapper_lines_that_break_the_contract_are_diagnostics(validate):
    lines = [
        json.dumps({"kind": "TextOutput", "text": "no agent"}),
        json.dumps({"agent_kind": "codex", "kind": "Shouting"}),
        json.dumps({"agent_kind": "codex", "kind": "TextOutput"}),
        json.dumps({"agent_kind": "codex", "kind": "Status", "message": 42}),
        json.dumps({"agent_kind": "codex", "kind": "text_output", "text": "snake case kind"}),
    ]
    out = run_stream("agent-wrapper", lines)
    validate(out.events)
    assert [d.code for d in out.diagnostics] == [
        "missing_agent_kind",
        "invalid_kind",
        "missing_text",
        "invalid_field",
        "empty_status",
    ]
    assert ("output.streaming", "snake case kind") in spoken(out.events)


def test_the_agent_is_called_by_its_agent_files_title_under_any_of_its_names():
    """Issue 32 step 4: the names come from announcer/agents/*.toml, not a list of the
    wrapper's own, so every agent with a file is called by its title; others by their kind."""
    for kind, title in [
        ("gemini_cli", "Gemini CLI"),
        ("claude_code", "Claude Code"),
        ("qwen-code", "Qwen Code"),
        ("kimi", "Kimi Code"),
        ("my_agent", "My Agent"),
    ]:
        text = json.dumps({"agent_kind": kind, "kind": "Status", "message": "Thread started"})
        out = run_stream("agent-wrapper", [text])
        assert spoken(out.events)[0] == ("session.started", f"{title} session started."), kind
