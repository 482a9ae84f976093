"""Benchmark: agent stream lines -> AAEP events, per adapter, against bare json.loads.

No peer library does this translation, so the yardstick is the floor every adapter
pays anyway: ``json.loads`` of the same lines. Each corpus is the shared fixture
streams (agent CLI streams, the Codex exec sample, the AEP golden events) repeated
to ``--lines`` lines. Reports lines per second for the adapter and for json.loads,
and the overhead factor. Prints one JSON line.

Usage: python benchmarks/formats.py [--lines N]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from announcer.formats import get_adapter

PEERS = Path(os.environ.get("ANNOUNCER_SHARED", "/work/shared")) / "peers"
CORPORA = {
    "claude-code": sorted((PEERS / "agent-cli-streams").glob("claude_code__*.jsonl")),
    "codex": [
        *sorted((PEERS / "agent-cli-streams").glob("codex__*.jsonl")),
        PEERS / "codex-exec" / "exec-json-sample.jsonl",
    ],
    "gemini": sorted((PEERS / "agent-cli-streams").glob("gemini_cli__*.jsonl")),
    "opencode": sorted((PEERS / "agent-cli-streams").glob("opencode__*.jsonl")),
    "aep": [PEERS / "aep-agenteventprotocol" / "golden.jsonl"],
}


def corpus(paths: list[Path], size: int) -> list[bytes]:
    lines = [
        line for p in paths for line in p.read_bytes().splitlines(keepends=True) if line.strip()
    ]
    return (lines * (size // len(lines) + 1))[:size]


def rate(count: int, seconds: float) -> float:
    return round(count / seconds) if seconds > 0 else float("inf")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, default=20000)
    args = parser.parse_args()
    result: dict[str, object] = {"benchmark": "formats", "lines": args.lines}
    for name, paths in CORPORA.items():
        lines = corpus(paths, args.lines)
        started = time.perf_counter()
        for line in lines:
            try:  # noqa: SIM105 - a context manager per line would slow the yardstick
                json.loads(line)
            except ValueError:
                pass  # the fixtures' deliberately malformed lines
        baseline = time.perf_counter() - started
        adapter = get_adapter(name)
        events = 0
        started = time.perf_counter()
        for index, line in enumerate(lines):
            events += len(adapter.feed(line, 1_700_000_000.0 + index).events)
        events += len(adapter.finish(1_700_000_000.0 + len(lines)).events)
        elapsed = time.perf_counter() - started
        result[name] = {
            "adapter_lines_per_s": rate(len(lines), elapsed),
            "json_loads_lines_per_s": rate(len(lines), baseline),
            "overhead_x": round(elapsed / baseline, 1) if baseline else None,
            "events": events,
        }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
