"""Issue 29, item 15: §11.4 text_direction in the plain line interface and the speech record.

``announcer listen FILE --ui plain`` as a user runs it: a producer's Arabic words with
``text_direction: rtl`` are printed inside a right-to-left isolate (so they cannot reorder
the line around them), and the jsonl speech record carries the direction with them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support.speech_record import speak_records

ROOT = Path(__file__).resolve().parents[2]
ARABIC = "تم نقل الملف."


def _event(event_id: str, kind: str, **fields: object) -> dict[str, object]:
    return {
        "@context": "https://aaep-protocol.org/context/v1",
        "type": f"aaep:{kind}",
        "event_id": event_id,
        "session_id": "sess_rtl1",
        "timestamp": "2026-01-01T00:00:00Z",
        "producer": {"agent_id": "mover"},
        "localization_hints": {"primary_language": "ar", "text_direction": "rtl"},
        **fields,
    }


def test_rtl_words_are_isolated_in_the_plain_ui_and_the_record_has_their_direction(
    tmp_path: Path,
) -> None:
    source = tmp_path / "rtl.jsonl"
    events = [
        _event("evt_rtl1", "agent.session.started", summary_normal=ARABIC),
        _event("evt_rtl2", "agent.session.completed", summary_normal="انتهى.", outcome="done"),
    ]
    source.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in events))
    speech = tmp_path / "speech.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "announcer", "listen", "--ui", "plain", "--language", "ar",
         "--speech", f"jsonl:{speech}", "--exit-when-done", str(source)],
        cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT), PYTHONIOENCODING="utf-8"),
        stdin=subprocess.DEVNULL, capture_output=True, text=True, encoding="utf-8", timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "\u2067" + ARABIC + "\u2069" in done.stdout, done.stdout
    [said] = [r for r in speak_records(speech) if r["text"] == ARABIC]
    assert said["direction"] == "rtl"
    assert said["text"] == ARABIC  # speech is linear: no isolate in what is said (§11.4.1)
