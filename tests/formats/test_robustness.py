"""Nothing a producer sends crashes an adapter, and whatever comes out is valid AAEP."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from announcer.formats import FORMAT_NAMES, get_adapter
from tests.formats.aaep_schemas import assert_valid, protocol_problems
from tests.support.examples import examples

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=5)
    ),
    max_leaves=20,
)
TYPES = [
    "system",
    "assistant",
    "user",
    "result",
    "stream_event",
    "thread.started",
    "turn.started",
    "item.started",
    "item.completed",
    "item.updated",
    "item.delta",
    "turn.failed",
    "init",
    "message",
    "tool_use",
    "tool_result",
    "error",
    "text",
    "step_start",
    "step_finish",
    "session.started",
    "tool.requested",
    "tool.completed",
    "attention.requested",
    "action.requested",
    "action.completed",
    "question.asked",
    "notification",
]
shaped = st.fixed_dictionaries(
    {"type": st.sampled_from(TYPES)},
    optional={
        "session_id": st.text(min_size=1, max_size=8),
        "aep_version": st.just("0.1"),
        "aep": st.just("0.1"),
        "id": st.text(min_size=1, max_size=8),
        "agent": json_values,
        "session": json_values,
        "message": json_values,
        "item": json_values,
        "event": json_values,
        "data": json_values,
        "content": json_values,
        "action": json_values,
        "subtype": st.sampled_from(["init", "success", "error_max_turns", "x"]),
        "kind": st.sampled_from(
            ["TextOutput", "ToolCall", "ToolResult", "Status", "Error", "Unknown", "x"]
        ),
        "agent_kind": st.text(min_size=1, max_size=8),
        "text": json_values,
        "hook_event_name": st.sampled_from(
            ["PreToolUse", "PostToolUse", "Stop", "SessionStart", "x"]
        ),
    },
)
lines = st.lists(
    st.one_of(shaped.map(json.dumps), json_values.map(json.dumps), st.binary(max_size=40)),
    max_size=12,
)


@settings(max_examples=examples(120), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from([n for n in FORMAT_NAMES if n != "aaep"]), stream=lines)
def test_random_input_never_crashes_and_output_is_valid(name, stream):
    adapter = get_adapter(name)
    events = []
    for index, line in enumerate(stream):
        out = adapter.feed(line, 1_700_000_000.0 + index)
        assert not [d for d in out.diagnostics if d.code == "adapter_error"], out.diagnostics
        events.extend(out.events)
    events.extend(adapter.finish(1_700_000_100.0).events)
    assert_valid(events)
    assert protocol_problems(events, warnings=False) == []
