"""Our sentences about an agent's activity are said in the user's language, and say so (Ch. 11)."""

from __future__ import annotations

from typing import Any

import pytest

from announcer.formats import FORMAT_NAMES, AdapterOutput, get_adapter
from tests.formats.aaep_schemas import PEERS
from tests.formats.conftest import STREAMS, assert_valid_stream
from tests.formats.test_listen_format import listen
from tests.support.speech_record import agent_speech

CODEX_SAMPLE = PEERS / "codex-exec" / "exec-json-sample.jsonl"
AEP_GOLDEN = PEERS / "aep-agenteventprotocol" / "golden.jsonl"


def run(name: str, path: Any, language: str) -> AdapterOutput:
    adapter = get_adapter(name, language=language)
    out = AdapterOutput()
    lines = path.read_bytes().splitlines(keepends=True)
    for index, line in enumerate(lines):
        out.extend(adapter.feed(line, 1_700_000_000.0 + index))
    out.extend(adapter.finish(1_700_000_000.0 + len(lines)))
    return out


def summaries(events: list[dict[str, Any]]) -> list[str]:
    return [e["summary_normal"] for e in events if "summary_normal" in e]


def test_a_real_codex_stream_in_spanish_is_tagged_es_end_to_end(tmp_path) -> None:
    """The real CLI with ``--language es``: Spanish sentences, spoken as Spanish."""
    records = listen(
        "codex", str(CODEX_SAMPLE), tmp_path / "speech.jsonl", extra=["--language", "es"]
    )
    ours = {r["text"]: r["language"] for r in agent_speech(records)}
    assert ours["Codex comenzó."] == "es"
    assert ours["Ejecutando shell: ls."] == "es"
    # its end, right after its start, is kept for the record (issue 30 item 8)
    assert "Shell terminó: ls." not in ours
    assert not any(text.startswith(("Running", "Codex started")) for text in ours)


def test_adapter_events_carry_the_language_they_are_written_in() -> None:
    spanish = run("codex", CODEX_SAMPLE, "es-MX").events  # a regional tag finds "es"
    assert_valid_stream(spanish)
    ours = [e for e in spanish if e["type"] != "aaep:agent.output.streaming"]
    assert {e["localization_hints"]["primary_language"] for e in ours} == {"es"}
    assert summaries(spanish)[:2] == ["Codex comenzó.", "Codex está trabajando."]
    # the agent's own words are never translated, and not tagged with our language
    chunks = [e for e in spanish if e["type"] == "aaep:agent.output.streaming"]
    assert any("README.md" in e["chunk"] for e in chunks)
    assert all("localization_hints" not in e for e in chunks)


def test_a_language_without_a_catalog_gets_english_tagged_en() -> None:
    events = run("codex", CODEX_SAMPLE, "sw").events
    assert summaries(events)[0] == "Codex started."
    assert events[0]["localization_hints"]["primary_language"] == "en"


@pytest.mark.parametrize(
    ("language", "started"),
    [
        ("fr", "Session Claude Code démarrée."),
        ("de", "Claude Code-Sitzung gestartet."),
        ("pt-BR", "Sessão do Claude Code iniciada."),
        ("ar", "بدأت جلسة Claude Code."),
        ("yo", "Ìpàdé Claude Code bẹ̀rẹ̀."),
    ],
)
def test_every_catalog_speaks_the_aep_golden_events(language: str, started: str) -> None:
    events = run("aep", AEP_GOLDEN, language).events
    assert_valid_stream(events)
    assert started in summaries(events)
    tag = events[0]["localization_hints"]["primary_language"]
    assert tag == language


def test_a_tool_and_a_failure_in_spanish_from_real_claude_code_lines() -> None:
    tool_use = STREAMS / "claude_code__stream_json__v1__assistant_message_tool_use.jsonl"
    failed = STREAMS / "claude_code__stream_json__v1__result_error.jsonl"
    adapter = get_adapter("claude-code", language="es")
    events: list[dict[str, Any]] = []
    for index, path in enumerate((tool_use, failed)):
        events += adapter.feed(path.read_bytes(), 1_700_000_000.0 + index).events
    events += adapter.finish(1_700_000_010.0).events
    said = summaries(events)
    assert "Ejecutando bash." in said
    assert any(text.startswith("Claude Code se detuvo con un error") for text in said)


def test_every_format_accepts_a_language() -> None:
    for name in FORMAT_NAMES:
        assert get_adapter(name, language="es").language == "es"
