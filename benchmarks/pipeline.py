"""End-to-end engine throughput, barge-in latency and memory under a flood.

1. ``events_per_s``: 100,000 realistic AAEP frames (sessions with state changes, tool
   calls, progress, streamed output, confirmations, completions) through decode,
   validation, tracking, policy, coalescing and scheduling into a recording backend.
2. ``barge_in_ms_p50``/``barge_in_ms_p99``: a critical frame arrives while a normal
   utterance is being spoken; time from the frame entering the engine until the
   backend has been told to stop and to speak the critical text (no real audio).
3. ``peak_rss_mb``: a fresh process pushes 1,000,000 frames through an engine whose
   backend never finishes speaking; ``flood_critical_lost`` must be 0.

Prints one JSON line. Run: ``/work/venv/bin/python benchmarks/pipeline.py``.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from announcer.engine.announcement import Announcement, Urgency
from announcer.engine.pipeline import Engine
from announcer.engine.speech_commands import SpeechCommand
from announcer.speech.backend import BackendCapabilities, VoiceSettings
from announcer.speech.driver import SpeechDriver

CONTEXT = "https://aaep-protocol.org/context/v1"


class RecordingBackend:
    """Records every speak/stop; finishes at once unless ``never_finishes``."""

    name = "recording"
    capabilities = BackendCapabilities(can_interrupt=True)

    def __init__(self, never_finishes: bool = False) -> None:
        self.never_finishes = never_finishes
        self.spoken = 0
        self.stopped = 0
        self.critical_spoken = 0
        self.last: Announcement | None = None
        self.on_event: Callable[[], None] | None = None

    def start(self) -> None:
        pass

    def speak(
        self, announcement: Announcement, voice: VoiceSettings, on_done: Callable[[], None]
    ) -> None:
        self.spoken += 1
        self.last = announcement
        if announcement.urgency is Urgency.CRITICAL:
            self.critical_spoken += 1
        if self.on_event is not None:
            self.on_event()
        if not self.never_finishes:
            on_done()

    def stop(self) -> None:
        self.stopped += 1

    def is_speaking(self) -> bool:
        return self.never_finishes

    def close(self) -> None:
        pass


def _envelope(kind: str, n: int, session: int, seq: int, urgency: str, second: float) -> str:
    millis = round(second * 1000)
    minute, millis = divmod(millis, 60_000)
    sec = millis / 1000
    return (
        f'{{"@context":"{CONTEXT}","type":"aaep:{kind}","event_id":"evt_b{n:010d}",'
        f'"session_id":"sess_b{session:08d}","sequence_number":{seq},'
        f'"timestamp":"2026-05-24T14:{int(minute) % 60:02d}:{sec:06.3f}Z",'
        f'"producer":{{"agent_id":"bench-agent","agent_name":"Bench Agent"}},"urgency":"{urgency}"'
    )


def session_frames(session: int, first_id: int, rng: random.Random) -> list[tuple[str, bool]]:
    """One realistic session: (frame, is_critical) pairs, about 50 events."""
    frames: list[tuple[str, bool]] = []
    seq = 0
    n = first_id
    t = float(session % 3000)

    def add(kind: str, urgency: str, payload: str) -> None:
        nonlocal seq, n, t
        frames.append(
            (_envelope(kind, n, session, seq, urgency, t) + payload + "}", urgency == "critical")
        )
        seq += 1
        n += 1
        t += 0.05

    add(
        "agent.session.started",
        "normal",
        ',"summary_terse":"Started.","summary_normal":"Bench Agent is planning your budget."',
    )
    add(
        "agent.state.changed",
        "background",
        ',"from_state":"idle","to_state":"thinking","summary_normal":"Thinking about it."',
    )
    for call in range(4):
        add(
            "agent.tool.invoked",
            "normal",
            f',"tool":"fetch_balance","tool_call_id":"call_{session}x{call}",'
            '"args_summary":"account 7821","summary_normal":"Checking your balance."',
        )
        add(
            "agent.tool.completed",
            "normal",
            f',"tool":"fetch_balance","tool_call_id":"call_{session}x{call}","status":"success",'
            '"summary_normal":"Your balance is $12,500.00."',
        )
        add("agent.progress.updated", "background", f',"progress":{{"percent":{(call + 1) * 20}}}')
    if rng.random() < 0.2:
        add(
            "agent.awaiting.confirmation",
            "critical",
            f',"action":"Transfer $500.00 to savings.","consequence":"Money moves at once.",'
            f'"reply_token":"rpl_b{session}","timeout_seconds":300,"default_decision":"reject",'
            '"risk_level":"high","reversibility":"irreversible"',
        )
        add("agent.state.changed", "normal", ',"from_state":"awaiting_input","to_state":"thinking"')
    words = [
        "Your",
        "plan",
        "keeps",
        "$1,200.50",
        "a",
        "month",
        "for",
        "rent.",
        "Groceries",
        "get",
        "about",
        "9",
        "percent.",
        "Dr.",
        "Lee",
        "agrees,",
        "e.g.",
        "on",
        "savings.",
    ]
    position = 0
    text_chunks: list[str] = []
    while len(text_chunks) < 30:
        piece = " ".join(rng.choice(words) for _ in range(rng.randint(1, 3))) + " "
        text_chunks.append(piece)
    for index, piece in enumerate(text_chunks):
        done = index == len(text_chunks) - 1
        add(
            "agent.output.streaming",
            "normal",
            f',"chunk":{json.dumps(piece)},"position":{position},'
            f'"complete":{"true" if done else "false"},'
            f'"coalesce_hint":"{"completion" if done else "none"}","output_id":"out_{session}"',
        )
        position += len(piece)
    if rng.random() < 0.05:
        add(
            "agent.session.errored",
            "critical",
            ',"error_category":"transient","summary_normal":"The bank did not answer.",'
            '"remediation_hint":"Try again later."',
        )
    else:
        add("agent.session.completed", "normal", ',"summary_normal":"Budget ready."')
    return frames


def frame_stream(total: int, seed: int = 5) -> Iterator[tuple[str, bool]]:
    rng = random.Random(seed)
    produced = 0
    session = 0
    while produced < total:
        for item in session_frames(session, produced, rng):
            if produced >= total:
                return
            yield item
            produced += 1
        session += 1


def throughput(count: int, repeats: int = 5) -> dict[str, float]:
    """Best of ``repeats`` runs: a shared 2-core machine adds noise, never speed."""
    frames = [raw for raw, _ in frame_stream(count)]
    # As `announcer listen` does after start-up: what exists now lives for the whole run,
    # so the collector need not scan it again and again.
    gc.collect()
    gc.freeze()
    best = best_cpu = float("inf")
    spoken = invalid = 0
    for _ in range(repeats):
        backend = RecordingBackend()
        engine = Engine()
        driver = SpeechDriver(backend)
        clock = [0.0]

        def done(
            uid: int, engine: Engine = engine, clock: list[float] = clock
        ) -> list[SpeechCommand]:
            return engine.on_speech_done(uid, clock[0])

        cpu_start = time.process_time()
        start = time.perf_counter()
        for index, raw in enumerate(frames):
            now = clock[0] = index * 0.001
            driver.run(engine.receive(raw, "bench", now), done)
        best = min(best, time.perf_counter() - start)
        best_cpu = min(best_cpu, time.process_time() - cpu_start)
        spoken, invalid = backend.spoken, engine.invalid_frames
    return {
        "events": count,
        "events_per_s": round(count / best),
        # The same run in CPU time: what the code costs when it has a core to itself.
        "cpu_events_per_s": round(count / best_cpu),
        "spoken": spoken,
        "invalid_frames": invalid,
    }


def barge_in(trials: int) -> dict[str, float]:
    # Urgent news cuts off another session's status line (a question would wait for the
    # end of the sentence instead, issue 20).
    critical = (
        _envelope("agent.session.errored", 1, 1, 0, "critical", 1.0)
        + ',"error_category":"permanent","summary_normal":"The transfer service failed{n}."}'
    )
    normal = (
        _envelope("agent.tool.invoked", 2, 2, 0, "normal", 0.5)
        + ',"tool":"fetch_balance","summary_normal":"Checking your balance, which takes a while."}'
    )
    latencies: list[float] = []
    cpu_latencies: list[float] = []
    for trial in range(trials):
        backend = RecordingBackend(never_finishes=True)
        engine = Engine()
        driver = SpeechDriver(backend)
        driver.execute(engine.receive(normal.replace("evt_b", f"evt_n{trial}x"), "bench", 0.0))
        frame = critical.replace("{n}", str(trial)).replace("evt_b", f"evt_c{trial}x")
        cpu_start = time.thread_time()
        start = time.perf_counter()
        driver.execute(engine.receive(frame, "bench", 1.0))
        elapsed = time.perf_counter() - start
        cpu_latencies.append((time.thread_time() - cpu_start) * 1000)
        assert backend.stopped == 1 and backend.last is not None
        assert backend.last.urgency is Urgency.CRITICAL
        latencies.append(elapsed * 1000)
    latencies.sort()
    cpu_latencies.sort()
    p99 = int(len(latencies) * 0.99) - 1
    # Wall time is what the user waits; on a shared, loaded machine its tail also holds
    # the moments the OS ran someone else, so the CPU time of the same calls is shown too.
    return {
        "barge_in_ms_p50": round(statistics.median(latencies), 3),
        "barge_in_ms_p99": round(latencies[p99], 3),
        "barge_in_cpu_ms_p99": round(cpu_latencies[p99], 3),
    }


def flood(count: int) -> dict[str, float]:
    """A backend that never finishes; every critical event must still be kept."""
    backend = RecordingBackend(never_finishes=True)
    engine = Engine()
    driver = SpeechDriver(backend)
    critical_sent = 0
    start = time.perf_counter()
    for index, (raw, is_critical) in enumerate(frame_stream(count, seed=9)):
        critical_sent += is_critical
        driver.execute(engine.receive(raw, "flood", index * 0.0001))
    elapsed = time.perf_counter() - start
    # A critical event is kept if it was spoken, still waits, or its question was
    # withdrawn by the producer itself (§6.8); anything else would be a loss.
    withdrawn = engine.scheduler.drops["withdrawn by producer"]
    kept = backend.critical_spoken + engine.scheduler.queued(Urgency.CRITICAL) + withdrawn
    return {
        "flood_events": count,
        "flood_events_per_s": round(count / elapsed),
        "flood_critical_sent": critical_sent,
        "flood_critical_withdrawn": withdrawn,
        "flood_critical_lost": max(0, critical_sent - kept),
        "flood_other_drops": sum(engine.scheduler.drops.values()) - withdrawn,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--trials", type=int, default=2_000)
    parser.add_argument("--flood", type=int, default=1_000_000)
    parser.add_argument("--flood-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.flood_only:
        print(json.dumps(flood(args.flood)))
        return 0
    result: dict[str, object] = {}
    # Barge-in first: a heap left large by the throughput run would time the garbage
    # collector rather than the engine.
    latency = barge_in(args.trials)
    result.update(throughput(args.events))
    result.update(latency)
    if args.flood:
        # A fresh process, so peak memory is the flood's alone.
        child = subprocess.run(
            [sys.executable, __file__, "--flood-only", "--flood", str(args.flood)],
            capture_output=True,
            text=True,
            check=True,
        )
        result.update(json.loads(child.stdout.strip().splitlines()[-1]))
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
