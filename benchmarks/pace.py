"""Speech at the pace of a real voice, each class of speech by its own rule (issue 20).

Replays, on a simulated clock (``tests/support/pace_replay.py``), through the ``paced``
backend at 180 and 300 words per minute:

* ``demo``: the built-in demo producer playing the ``tour`` scenario, a simulated user
  answering each question a second after hearing it;
* ``recorded``: the bundled recording ``announcer/data/banking_session.jsonl``;
* ``busy``: three copies of that recording at once, two seconds apart (six sessions);
* ``agent``: a coding agent's turn through announcer's ACP mapping (a plan, five tools,
  a 14-sentence markdown answer streamed at an agent's speed, a permission question,
  the plan done: ``pace_replay.agent_session_frames``);
* ``lab``: a real agent's recorded turn (claude-agent-acp against the lab's fake model,
  ``tests/lab/test_pace_plan_lab.py``: a plan, a read, a command it asks about first, the
  plan done and a long markdown answer), ``benchmarks/data/lab_plan_session.jsonl``.

For each, per class (``PaceReport.classes``):

* ``status``: p50/p95/max seconds from when a piece of status news could be said (its
  arrival, or the end of its own source's earlier speech: order within a source comes
  first) to its speech, or to the summary it was folded into; how many were said, folded;
* ``questions``: p95/max seconds from the end of the sentence being spoken (and of its
  source's earlier speech) to the question's start; ``from_arrival_max_s`` the longest
  wait from arrival, whatever came before it;
* ``words``: the agent's sentences, how many were dropped, and the p95/max gap before a
  sentence after the previous sentence of the same answer ended;
* ``stale`` (status news said more than 10 s after it could be) and ``out_of_order``
  (heard before an earlier event of its session).

Every figure is printed beside a plain first-in-first-out queue (``fifo``) on the same
input. Targets (issue 20): status p50 <= 1 s and p95 <= 3 s, questions p95 <= 1 s, words
0 dropped and gap p95 <= 3 s, 0 stale, 0 out of order; ``met`` says which hold.
Prints one JSON line. Run: ``.venv/bin/python benchmarks/pace.py``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from announcer.engine.announcement import Announcement
from announcer.engine.scheduler import SpeechScheduler, _Queued, estimated_seconds
from announcer.engine.settings import UserSettings
from announcer.engine.speech_commands import SpeechCommand
from tests.support.pace_replay import (
    PaceReport,
    acp_session_frames,
    agent_session_frames,
    bundled_recording,
    busy_recording,
    recorded_frames,
    run_demo,
    run_recording,
)

RATES = (180, 300)
SOURCES = ("demo", "recorded", "busy", "agent", "lab")
LAB_SESSION = Path(__file__).resolve().parent / "data" / "lab_plan_session.jsonl"


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


def _reports(
    factory: Callable[[UserSettings], SpeechScheduler] | None, wpm: int
) -> dict[str, PaceReport]:
    settings = UserSettings(pace_wpm=wpm)
    return {
        "demo": run_demo(settings, scheduler_factory=factory),
        "recorded": run_recording(
            recorded_frames(bundled_recording()), settings, scheduler_factory=factory
        ),
        "busy": run_recording(busy_recording(), settings, scheduler_factory=factory),
        "agent": run_recording(agent_session_frames(), settings, scheduler_factory=factory),
        "lab": run_recording(
            acp_session_frames(LAB_SESSION.read_text(encoding="utf-8").splitlines()),
            settings,
            scheduler_factory=factory,
        ),
    }


def _met(classes: dict[str, Any]) -> dict[str, bool]:
    status, questions, words = classes["status"], classes["questions"], classes["words"]
    return {
        "status": status["p50_s"] <= 1.0 and status["p95_s"] <= 3.0,
        "questions": questions["p95_s"] <= 1.0,
        "words": words["dropped"] == 0 and words["gap_p95_s"] <= 3.0,
        "stale": classes["stale"] == 0,
        "order": classes["out_of_order"] == 0,
    }


def main() -> None:
    started = time.perf_counter()
    results: dict[str, object] = {}
    met: dict[str, dict[str, bool]] = {}
    for wpm in RATES:
        ours = _reports(None, wpm)
        fifo = _reports(FifoScheduler, wpm)
        for name in SOURCES:
            classes = ours[name].classes()
            results[f"{name}_{wpm}"] = {"ours": classes, "fifo": fifo[name].classes()}
            met[f"{name}_{wpm}"] = _met(classes)
    results["met"] = met
    results["all_met"] = all(all(flags.values()) for flags in met.values())
    results["seconds"] = round(time.perf_counter() - started, 2)
    results["load_average_1m"] = round(os.getloadavg()[0], 2)
    print(json.dumps(results))


if __name__ == "__main__":
    import argparse

    # --help says what the benchmark does and runs nothing (issue 30 item 8).
    argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    ).parse_args()
    main()
