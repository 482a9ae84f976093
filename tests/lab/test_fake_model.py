"""The fake model server itself, spoken to over loopback HTTP with httpx (no CLI needed)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.lab.fake_model import FALLBACK_TEXT, SCENARIOS, FakeModelServer


@pytest.fixture(scope="module")
def server() -> Iterator[FakeModelServer]:
    with FakeModelServer(cwd="/work/project") as running:
        yield running


def sse(response: httpx.Response) -> list[tuple[str, dict[str, Any]]]:
    events, name = [], ""
    for line in response.iter_lines():
        if line.startswith("event: "):
            name = line[7:]
        elif line.startswith("data: "):
            events.append((name, json.loads(line[6:])))
    return events


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def test_messages_stream_a_tool_call_then_the_answer(server: FakeModelServer):
    body = {"model": "m", "stream": True, "max_tokens": 100, "messages": [user("lab:one-tool go")]}
    with httpx.stream("POST", server.url + "/v1/messages?beta=true", json=body) as response:
        assert response.status_code == 200
        assert response.headers["content-type"] == "text/event-stream"
        events = sse(response)
    names = [n for n, _ in events]
    assert names[0] == "message_start" and names[-1] == "message_stop"
    assert all(n == e["type"] for n, e in events)
    start = next(e for n, e in events if n == "content_block_start")
    assert start["content_block"]["type"] == "tool_use"
    assert start["content_block"]["name"] == "Bash"
    partial = "".join(
        e["delta"]["partial_json"]
        for n, e in events
        if n == "content_block_delta" and e["delta"]["type"] == "input_json_delta"
    )
    assert json.loads(partial) == {"command": "echo hello", "description": "Print hello"}
    stop = next(e for n, e in events if n == "message_delta")
    assert stop["delta"]["stop_reason"] == "tool_use"
    # with the tool's result in the conversation, the next turn is the answer
    tool_id = start["content_block"]["id"]
    body["messages"] += [
        {"role": "assistant", "content": [start["content_block"]]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_id}]},
    ]
    body["stream"] = False
    answer = httpx.post(server.url + "/v1/messages", json=body).json()
    assert answer["content"] == [{"type": "text", "text": "The command printed hello."}]
    assert answer["stop_reason"] == "end_turn"
    assert [r.scenario for r in server.requests_for("one-tool")] == ["one-tool", "one-tool"]


def test_responses_stream_parallel_calls_and_plain_json(server: FakeModelServer):
    body = {
        "model": "m",
        "stream": True,
        "input": [
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "lab:parallel"}],
            }
        ],
    }
    with httpx.stream("POST", server.openai_url + "/responses", json=body) as response:
        events = sse(response)
    assert events[0][0] == "response.created" and events[-1][0] == "response.completed"
    calls = [e["item"] for n, e in events if n == "response.output_item.done"]
    assert [json.loads(c["arguments"])["cmd"] for c in calls] == [
        "echo one",
        "echo two",
        "echo three",
    ]
    assert {c["name"] for c in calls} == {"exec_command"}
    outputs = [
        {"type": "function_call_output", "call_id": c["call_id"], "output": "ok"} for c in calls
    ]
    body["input"] += calls + outputs
    body["stream"] = False
    answer = httpx.post(server.openai_url + "/responses", json=body).json()
    assert answer["status"] == "completed"
    assert answer["output"][0]["content"][0]["text"] == "All three ran."


def test_reasoning_streams_its_summary_and_errors_use_each_apis_shape(server: FakeModelServer):
    body = {"model": "m", "stream": True, "input": "lab:reasoning"}
    with httpx.stream("POST", server.openai_url + "/responses", json=body) as response:
        events = sse(response)
    summary = "".join(e["delta"] for n, e in events if n == "response.reasoning_summary_text.delta")
    assert summary == SCENARIOS["reasoning"].turns[0].reasoning
    refused = httpx.post(server.openai_url + "/responses", json={"input": "lab:api-error"})
    assert refused.status_code == 400 and refused.json()["error"]["code"] == "lab_refused"
    refused = httpx.post(server.url + "/v1/messages", json={"messages": [user("lab:api-error")]})
    assert refused.status_code == 400 and refused.json()["type"] == "error"


def test_no_scenario_gets_a_plain_answer_and_paths_use_the_agents_folder(server: FakeModelServer):
    answer = httpx.post(server.url + "/v1/messages", json={"messages": [user("make a title")]})
    assert answer.json()["content"][0]["text"] == FALLBACK_TEXT
    body = {
        "system": "Primary working directory: /home/me/proj\n",
        "messages": [user("lab:edit")],
    }
    answer = httpx.post(server.url + "/v1/messages", json=body).json()
    assert answer["content"][0]["input"]["file_path"] == "/home/me/proj/hello.txt"
    assert httpx.head(server.url + "/").status_code == 200
    assert httpx.post(server.url + "/v1/other", json={}).status_code == 404
