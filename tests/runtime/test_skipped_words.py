"""Issue 22 item 1: over 1,000 queued frames, skipped news keeps its words.

The runtime's own inbound queue (``LiveSession._enqueue``) skips news beyond
``SOURCE_QUEUE_LIMIT`` waiting frames unread and says a count; the words of every
skipped frame are shown (transcript and History, through ``announcement_skipped``)
where the count is said, from a bounded store (``announcer.engine.skipped_news``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from announcer.cli.commands.listen import make_driver
from announcer.engine.announcement import Announcement
from announcer.engine.settings import UserSettings
from announcer.engine.skipped_news import SKIPPED_WORDS_LIMIT
from announcer.runtime.backpressure import SOURCE_QUEUE_LIMIT, Skipped
from announcer.runtime.session import LiveSession
from tests.engine.test_skipped_news import frame


class Shown:
    def __init__(self) -> None:
        self.skipped: list[Announcement] = []

    def announcement_made(self, announcement: Announcement) -> None:
        pass

    def announcement_skipped(self, announcement: Announcement) -> None:
        self.skipped.append(announcement)


@pytest.mark.parametrize("extra", [300, SKIPPED_WORDS_LIMIT + 200])
async def test_a_flood_over_the_queue_limit_shows_every_skipped_frames_words(
    tmp_path: Path, extra: int
) -> None:
    """1,000 frames wait, ``extra`` more are skipped: their words are shown, the newest
    ``SKIPPED_WORDS_LIMIT`` of them, and the number of older ones that could not be kept."""
    settings = UserSettings(pace_wpm=600)
    session = LiveSession(
        ["ws://127.0.0.1:9/"],
        settings,
        driver=make_driver(f"jsonl:{tmp_path / 'speech.jsonl'}", settings),
    )
    shown = Shown()
    session.subscribe(shown)
    [state] = session.states
    for n in range(1, SOURCE_QUEUE_LIMIT + extra + 1):
        session._enqueue(state, json.dumps(frame(n)))
    assert session.skipped_total == extra
    [run] = [item[1] for item in session._inbound if isinstance(item[1], Skipped)]
    session._say_skipped(state, run)
    words = [a.text for a in shown.skipped if a.kind == "agent.tool.invoked"]
    last = SOURCE_QUEUE_LIMIT + extra
    kept = min(extra, SKIPPED_WORDS_LIMIT)
    assert words == [f"Reading file number {n}." for n in range(last - kept + 1, last + 1)]
    counts = [a.text for a in shown.skipped if a.kind == "system.skipped"]
    if extra > SKIPPED_WORDS_LIMIT:
        assert counts == [f"Too many skipped to keep their words: {extra - kept}"]
    else:
        assert counts == []
    assert {a.producer_id for a in shown.skipped} == {"flooder"}
    assert len(session.skipped_news) == 0  # taken, so memory is given back
