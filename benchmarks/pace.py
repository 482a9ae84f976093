"""Speech at the pace of a real voice: delay, staleness and order (issue 14).

Replays, on a simulated clock (``announcer.runtime.pace_replay``), through the
``paced`` backend at 180 and 350 words per minute:

* ``demo``: the built-in demo producer playing the ``tour`` scenario, a simulated
  user answering each question a second after hearing it;
* ``recorded``: the bundled recording ``announcer/data/banking_session.jsonl``
  (two sessions, two questions the recording moves past, an error);
* ``busy``: three copies of that recording at once, two seconds apart (six sessions).

For each, what the user heard: ``p50_s``/``p95_s``/``max_s`` delay from an event's
arrival to the start of its speech, ``stale`` utterances about a question that had
already ended, ``out_of_order`` utterances heard before earlier events of their
session, ``reply_max_s`` the longest wait for the answer to the user's own key.
The same runs go through a plain first-in-first-out queue (``fifo``) as the baseline.
``all`` pools every delay of a scheduler at one rate.

Targets (issue 14): p95 at most 3 s at 180 wpm, 0 stale, 0 out of order.
Prints one JSON line. Run: ``.venv/bin/python benchmarks/pace.py``.
"""

from __future__ import annotations

import json
import sys
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from announcer.engine.announcement import Announcement
from announcer.engine.scheduler import SpeechScheduler, _Queued, estimated_seconds
from announcer.engine.settings import UserSettings
from announcer.engine.speech_commands import SpeechCommand
from announcer.runtime.pace_replay import (
    PaceReport,
    bundled_recording,
    busy_recording,
    recorded_frames,
    run_demo,
    run_recording,
)

RATES = (180, 350)
TARGET_P95_SECONDS = 3.0


class FifoScheduler(SpeechScheduler):
    """The baseline: one first-in-first-out queue; nothing skipped, cut off or reordered."""

    def __init__(self, settings: UserSettings | None = None) -> None:
        super().__init__(settings)
        self._fifo: deque[_Queued] = deque()

    def submit(self, announcement: Announcement, now: float) -> list[SpeechCommand]:
        seconds = estimated_seconds(announcement.text, self.settings.pace_wpm)
        self._fifo.append(_Queued(announcement, now, seconds))
        return self._start_next(now)

    def _start_next(self, now: float) -> list[SpeechCommand]:
        if self._current is not None or not self._fifo:
            return []
        return [self._speak_item(self._fifo.popleft(), now)]

    def withdraw(self, event_id: str, now: float, notice: object = None) -> list[SpeechCommand]:
        notices = [notice] if isinstance(notice, Announcement) else list(notice or ())  # type: ignore[call-overload]
        commands: list[SpeechCommand] = []
        for part in notices:
            commands += self.submit(part, now)
        return commands

    def question_ended(
        self, event_id: str, now: float, reason: str = "question answered"
    ) -> list[SpeechCommand]:
        return []

    def drop_obsolete(self, session_id: str, now: float, *, keep_start: bool = False) -> None:
        return None

    def queued(self, urgency: object = None) -> int:
        return len(self._fifo)


def _pooled(reports: list[PaceReport]) -> dict[str, float | int]:
    pooled = PaceReport()
    for report in reports:
        pooled.delays += report.delays
        pooled.reply_delays += report.reply_delays
        pooled.stale += report.stale
        pooled.out_of_order += report.out_of_order
        pooled.skipped_summaries += report.skipped_summaries
        pooled.unheard += report.unheard
    return pooled.summary()


def measure(
    factory: Callable[[UserSettings], SpeechScheduler] | None, wpm: int
) -> dict[str, object]:
    settings = UserSettings(pace_wpm=wpm)
    reports = {
        "demo": run_demo(settings, scheduler_factory=factory),
        "recorded": run_recording(
            recorded_frames(bundled_recording()), settings, scheduler_factory=factory
        ),
        "busy": run_recording(busy_recording(), settings, scheduler_factory=factory),
    }
    result: dict[str, object] = {name: report.summary() for name, report in reports.items()}
    result["all"] = _pooled(list(reports.values()))
    return result


def main() -> None:
    started = time.perf_counter()
    results: dict[str, object] = {}
    for wpm in RATES:
        results[f"ours_{wpm}"] = measure(None, wpm)
        results[f"fifo_{wpm}"] = measure(FifoScheduler, wpm)
    ours: dict[str, dict[str, float]] = results["ours_180"]  # type: ignore[assignment]
    results["target_p95_s_at_180"] = TARGET_P95_SECONDS
    results["p95_met_at_180"] = {
        name: ours[name]["p95_s"] <= TARGET_P95_SECONDS for name in ("demo", "recorded", "busy")
    }
    results["stale_and_order_met"] = all(
        results[f"ours_{wpm}"][name][key] == 0  # type: ignore[index]
        for wpm in RATES
        for name in ("demo", "recorded", "busy")
        for key in ("stale", "out_of_order")
    )
    results["seconds"] = round(time.perf_counter() - started, 2)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
