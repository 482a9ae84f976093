"""The benchmark script keeps working (its speed is measured by running it, not here)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_benchmark_prints_one_json_line_with_both_rates() -> None:
    result = subprocess.run(
        [
            sys.executable,
            "benchmarks/validate.py",
            "--events",
            "400",
            "--schema-events",
            "60",
            "--repeat",
            "1",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 1
    figures = json.loads(lines[0])
    assert figures["events"] == 400 and figures["jsonschema_events"] == 60
    assert figures["jsonschema_valid"] == 60  # the corpus is valid for the official schemas too
    for key in ("events_per_s", "jsonschema_events_per_s", "ratio"):
        assert figures[key] > 0
