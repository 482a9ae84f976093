"""Rewrite tests/formats/expected/*.json from the adapters (review the diff before committing).

Run: /work/venv/bin/python -m tests.formats.regenerate_expected
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.formats.aaep_schemas import PEERS
from tests.formats.conftest import FORMAT_BY_PREFIX, STREAMS, heard, run_file, speech_of, spoken

EXPECTED = Path(__file__).parent / "expected"


def stream_cases() -> dict[str, tuple[str, Path]]:
    cases = {p.name: (FORMAT_BY_PREFIX[p.name.split("_")[0]], p) for p in sorted(STREAMS.iterdir())}
    cases["codex-exec/exec-json-sample.jsonl"] = (
        "codex",
        PEERS / "codex-exec" / "exec-json-sample.jsonl",
    )
    cases["aep-agenteventprotocol/golden.jsonl"] = (
        "aep",
        PEERS / "aep-agenteventprotocol" / "golden.jsonl",
    )
    return cases


def main() -> None:
    result = {}
    for key, (fmt, path) in stream_cases().items():
        out = run_file(fmt, path)
        result[key] = {
            "format": fmt,
            "announcements": [f"{kind} | {text}" for kind, text in spoken(out.events)],
            "diagnostics": [d.code for d in out.diagnostics],
            "speech": heard(speech_of(out.events)),
        }
    EXPECTED.mkdir(exist_ok=True)
    (EXPECTED / "streams.json").write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
