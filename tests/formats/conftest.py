"""Shared helpers for the format adapter tests: run a stream, validate, speak."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from announcer.formats import AdapterOutput, get_adapter
from tests.formats.aaep_schemas import PEERS, assert_valid, protocol_problems

STREAMS = PEERS / "agent-cli-streams"
FORMAT_BY_PREFIX = {
    "claude": "claude-code",
    "codex": "codex",
    "gemini": "gemini",
    "opencode": "opencode",
}


def run_stream(
    name: str, lines: list[bytes] | list[str], start: float = 1_700_000_000.0
) -> AdapterOutput:
    adapter = get_adapter(name)
    total = AdapterOutput()
    for index, line in enumerate(lines):
        total.extend(adapter.feed(line, start + index))
    total.extend(adapter.finish(start + len(lines)))
    return total


def run_file(name: str, path: Path) -> AdapterOutput:
    return run_stream(name, path.read_bytes().splitlines(keepends=True))


def spoken(events: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """What a listener hears at normal verbosity: (event type, text)."""
    out = []
    for event in events:
        kind = event["type"].removeprefix("aaep:agent.")
        text = event.get("chunk") if kind == "output.streaming" else event.get("summary_normal", "")
        if kind == "output.streaming" and text == "":
            continue  # a completion marker, silent
        if kind == "tool.completed" and event["status"] != "success":
            # subscribers lead with the outcome (the engine's policy does), then the reason
            outcome = "failed" if event["status"] == "error" else "timed out"
            text = f"{event['tool'].replace('_', ' ')} {outcome}. {text}"
        out.append((kind, text or ""))
    return out


def assert_valid_stream(events: list[dict[str, Any]]) -> None:
    """Valid against the official schemas, and clean for our protocol decoder and stream checks."""
    assert_valid(events)
    assert protocol_problems(events) == []


@pytest.fixture
def validate():
    return assert_valid_stream


def speech_of(
    events: list[dict[str, Any]], *, verbosity: str | None = None
) -> list[dict[str, Any]]:
    """Play AAEP events through the real engine into the jsonl speech backend; its records."""
    import argparse
    import io
    import json

    from announcer.cli.commands.replay import replay

    args = argparse.Namespace(
        backend="jsonl",
        no_delay=True,
        speed=None,
        verbosity=verbosity,
        cognitive_load=None,
        language=None,
        after_interrupt=None,
        pace_wpm=None,
    )
    stream = io.StringIO()
    engine = replay([json.dumps(e, ensure_ascii=False) for e in events], args, stream)
    assert engine.invalid_frames == 0, list(engine.diagnostics)
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def heard(records: list[dict[str, Any]]) -> list[str]:
    """The jsonl records as "urgency | text" (speak) or "cancel" lines."""
    return [
        f"{r['urgency']} | {r['text']}" if r["action"] == "speak" else "cancel" for r in records
    ]
