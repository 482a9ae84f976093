"""Liberal where the spec allows, never silent where it does not (issue 13, item 6).

A producer of our own on loopback WebSocket sends what the TypeScript reference
producer sends (``"summary_normal": ""`` on every ``agent.output.streaming`` chunk),
a core type from a newer version, and urgent events without words. The tests assert
what the user hears (the jsonl speech record) and what they can read in the
diagnostics without ``-v``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.producer.live import running
from tests.reliability.flood_producer import CONTEXT, LoopbackProducer, event
from tests.reliability.test_flood import hear, heard, listening


def chunk(sequence: int, text: str, position: int, complete: bool) -> str:
    # As the TypeScript reference producer writes every chunk: an empty summary_normal.
    return event(
        sequence,
        "agent.output.streaming",
        summary_normal="",
        chunk=text,
        position=position,
        complete=complete,
        coalesce_hint="none",
        output_id="out_ts1",
    )


async def test_streamed_chunks_with_an_empty_summary_are_spoken(tmp_path: Path) -> None:
    parts = ["The build passed. ", "All forty tests ran ", "in nine seconds."]

    async def script(producer: LoopbackProducer, websocket: Any) -> None:
        await producer.send(websocket, event(0, "agent.session.started", summary_normal="Go."))
        position = 0
        for index, text in enumerate(parts, start=1):
            await producer.send(websocket, chunk(index, text, position, index == len(parts)))
            position += len(text)
        await producer.send(
            websocket, event(4, "agent.session.completed", summary_normal="Finished.")
        )
        await producer.stop_flooding.wait()

    record = tmp_path / "speech.jsonl"
    async with LoopbackProducer(script) as producer:
        session, _recorder = listening(producer.url, record, paced=False)
        async with running(session):
            await hear(record, "Finished.", timeout=30)
    said = " ".join(heard(record))
    assert "The build passed." in said
    assert "All forty tests ran in nine seconds." in said
    assert session.engine.diagnostics.counts() == {}  # nothing dropped, nothing to warn
    assert producer.received[0]["type"] == "subscription.request"


async def test_a_newer_core_type_with_a_summary_is_spoken_generically(tmp_path: Path) -> None:
    async def script(producer: LoopbackProducer, websocket: Any) -> None:
        await producer.send(websocket, event(0, "agent.session.started", summary_normal="Go."))
        await producer.send(
            websocket, event(1, "agent.memory.saved", summary_normal="Saved a note for later.")
        )
        # No summary: nothing to say, so it stays invalid; being urgent, it is mentioned.
        await producer.send(websocket, event(2, "agent.memory.wiped", "critical"))
        await producer.stop_flooding.wait()

    record = tmp_path / "speech.jsonl"
    async with LoopbackProducer(script) as producer:
        session, _recorder = listening(producer.url, record, paced=False)
        async with running(session):
            await hear(record, "Saved a note for later.", timeout=30)
            await hear(record, "urgent message that could not be read", timeout=30)
            report = "\n".join(session.diagnostics_report())
    counts = session.engine.diagnostics.counts()
    assert counts["type.unknown_core"] == 2  # one warned (spoken), one dropped
    assert session.engine.diagnostics.warned == 1 and session.engine.diagnostics.dropped == 1
    assert "type.unknown_core: 2" in report
    assert "type=aaep:agent.memory.wiped" in report  # which one, by its envelope


async def test_an_urgent_event_without_words_gets_a_generic_critical_announcement(
    tmp_path: Path,
) -> None:
    alarm = json.loads(event(1, "acme:alarm.raised", "critical"))
    alarm["@context"] = [CONTEXT, "https://acme.example/aaep/v1"]

    async def script(producer: LoopbackProducer, websocket: Any) -> None:
        await producer.send(websocket, event(0, "agent.session.started", summary_normal="Go."))
        await producer.send(websocket, json.dumps(alarm))
        await producer.stop_flooding.wait()

    record = tmp_path / "speech.jsonl"
    async with LoopbackProducer(script) as producer:
        session, _recorder = listening(producer.url, record, paced=False)
        async with running(session):
            await hear(record, "Urgent acme:alarm.raised from Flooder.", timeout=30)
    lines = [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines()]
    [said] = [line for line in lines if line.get("text", "").startswith("Urgent acme")]
    assert said["urgency"] == "critical" and said["event_id"] == "evt_1"
