"""Issue 22 item 1: what a flood skips unread keeps its words (bounded and counted).

Over ``SOURCE_QUEUE_LIMIT`` waiting frames, news is skipped unread and said as a count;
its words still reach the transcript and History (``announcement_skipped``), never
spoken. The store is bounded; what it cannot keep is counted and shown as a count.
"""

from __future__ import annotations

from typing import Any

from announcer.engine.skipped_news import SkippedNewsStore, words_of


def frame(n: int, **fields: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "@context": "https://aaep-protocol.org/context/v1",
        "type": "aaep:agent.tool.invoked",
        "event_id": f"evt_s{n}",
        "session_id": "sess_s",
        "timestamp": "2026-11-27T12:00:00Z",
        "producer": {"agent_id": "flooder", "agent_name": "Flooder"},
        "urgency": "normal",
        "tool": "read_file",
        "summary_normal": f"Reading file number {n}.",
    }
    data.update(fields)
    return data


def test_words_follow_the_users_verbosity_then_the_payload() -> None:
    both = frame(1, summary_terse="Reading.")
    assert words_of(both, "terse") == "Reading."
    assert words_of(both, "normal") == "Reading file number 1."
    bare = frame(2)
    del bare["summary_normal"]
    assert words_of(bare) == "read_file"


def test_the_store_keeps_words_in_order_per_producer_and_counts_what_it_forgets() -> None:
    store = SkippedNewsStore(limit=3)
    for n in range(1, 6):
        store.add(frame(n), "flooder")
    store.add(frame(6, producer={"agent_id": "other"}), "other")
    assert store.total == 6 and len(store) == 3 and store.forgotten == 3
    kept, forgotten = store.take("flooder")
    assert [w.text for w in kept] == ["Reading file number 4.", "Reading file number 5."]
    assert forgotten == 3
    assert store.take("flooder") == ([], 0)  # shown once
    [other], none = store.take("other")
    assert other.text == "Reading file number 6." and none == 0


def test_skipped_words_are_sanitised_when_taken() -> None:
    store = SkippedNewsStore()
    store.add(frame(1, summary_normal="Done \x1b[31mred\x1b[0m [@click=app.quit]x"), "flooder")
    [words], _ = store.take("flooder")
    assert "\x1b" not in words.text
    assert words.event_id == "evt_s1" and words.session_id == "sess_s"
