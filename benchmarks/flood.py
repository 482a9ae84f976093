"""A flood over a real WebSocket on loopback: throughput, memory, keys, Ctrl-C, the next question.

Prints ONE JSON line. For each strategy and each flood (``normal``: tool calls at normal
urgency; ``critical``: urgent state changes), a producer in this process floods a
subscriber started as a child process (the real ``LiveSession`` and plain line UI,
speech recorded by the ``jsonl`` backend paced at the user's words per minute, as a
voice would take its time). Measured per case:

* ``frames_per_s``: flood frames the subscriber took in per second (the producer's
  sends wait on the WebSocket's flow control, so this is the subscriber's pace);
* ``peak_rss_mb``: the subscriber's peak resident memory (VmHWM);
* ``key_p99_ms``: ``:status`` typed on the plain UI during the flood, to its answer;
* ``question_s``: from the end of the flood to the plain UI presenting the confirmation
  the producer sent next ("Accept or reject: …"), and whether the reply came back (the
  reject key typed once the question's keys have armed, as the key guard requires);
* ``shutdown_s``: SIGINT (Ctrl-C) during a second flood, to the process exiting.

Strategies, side by side in the same run:

* ``announcer``: the shipped strategy (a per-source bound on waiting frames that pauses
  the reader, and urgent messages beyond a small backlog folded into spoken counts);
* ``plain_fifo`` (baseline): the same program with an unbounded first-in-first-out
  queue and every urgent message queued for speech.

Targets (issue 13): peak < 150 MB, key p99 < 200 ms, shutdown < 2 s, question presented
within 2 s of the flood's end. Every loop is bounded in count and time.

Usage: python benchmarks/flood.py [--frames 150000] [--seconds 40]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import os
import signal
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

CONTEXT = "https://aaep-protocol.org/context/v1"
PRODUCER = {"agent_id": "flooder", "agent_name": "Flooder"}
SESSION = "sess_flood"
QUESTION_PRINTED = "Accept or reject: Delete the build folder"
STATUS_PRINTED = "question(s) waiting"
# the question's keys arm after 1 s and its first words spoken (engine/answer_guard.py)
ARMING_WAIT_S = 1.2
ARMING_TRIES = 5
TARGETS = {"peak_rss_mb": 150, "key_p99_ms": 200, "shutdown_s": 2.0, "question_s": 2.0}
STRATEGIES = ("announcer", "plain_fifo")
FLOODS = ("normal", "critical")


# ---- the subscriber (a child process) ----------------------------------------------


def run_subscriber(strategy: str, source: str, record: str) -> int:
    """The real session and plain UI; ``plain_fifo`` lifts both bounds (the baseline)."""
    from announcer.cli.launch import make_driver, run_session
    from announcer.engine import folding
    from announcer.engine.pipeline import Engine
    from announcer.engine.settings import UserSettings
    from announcer.runtime import backpressure
    from announcer.runtime.session import LiveSession
    from announcer.transports import TransportOptions

    if strategy == "plain_fifo":
        backpressure.SOURCE_QUEUE_LIMIT = 10**12
        backpressure.SOURCE_QUEUE_HARD_LIMIT = 10**12
        folding.CRITICAL_BACKLOG_PER_PRODUCER = 10**12  # type: ignore[misc]
    settings = UserSettings()
    driver = make_driver(f"jsonl:{record}", settings)
    session = LiveSession(
        [source],
        settings,
        TransportOptions(),
        driver=driver,
        engine=Engine(settings, paced=True),
    )
    gc.collect()
    gc.freeze()  # as ``announcer listen`` does
    stalls = Stalls()
    try:
        return asyncio.run(stalls.around(run_session(session, "plain")))
    finally:
        stalls.write(os.environ.get("ANNOUNCER_FLOOD_STALLS"))


class Stalls:
    """Where a key can wait inside the subscriber: event-loop lag and garbage collection.

    A timer due every ``TICK`` seconds records how late it ran (the loop was busy, or the
    process was not scheduled: both delay a key the same way) and how much CPU this
    process used meanwhile (the part our own work explains); ``gc.callbacks`` time each
    collection. Written as JSON for the parent to print beside the key latency.
    """

    TICK = 0.01

    def __init__(self) -> None:
        self.lags: list[float] = []
        self.busy: list[float] = []
        self.gc_pauses: list[float] = []
        self._gc_started = 0.0
        gc.callbacks.append(self._gc)

    def _gc(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._gc_started = time.perf_counter()
        elif self._gc_started:
            self.gc_pauses.append(time.perf_counter() - self._gc_started)

    async def around(self, work: Any) -> int:
        watch = asyncio.ensure_future(self._watch())
        try:
            return int(await work)
        finally:
            watch.cancel()

    async def _watch(self) -> None:
        while True:
            due = time.perf_counter() + self.TICK
            cpu = time.process_time()
            await asyncio.sleep(self.TICK)
            if len(self.lags) < 1_000_000:  # bounded: 10 ms ticks, runs are bounded in time
                self.lags.append(max(0.0, time.perf_counter() - due))
                # of which our own work: CPU this process used meanwhile, beyond the tick
                self.busy.append(max(0.0, time.process_time() - cpu - self.TICK))

    def write(self, path: str | None) -> None:
        if not path:
            return
        Path(path).write_text(
            json.dumps(
                {
                    "loop_lag_p99_ms": _ms(p99(self.lags)),
                    "loop_lag_max_ms": _ms(max(self.lags, default=0.0)),
                    # the lag our own work explains; the rest is waiting for a CPU
                    "loop_busy_p99_ms": _ms(p99(self.busy)),
                    "loop_busy_max_ms": _ms(max(self.busy, default=0.0)),
                    "gc_pause_max_ms": _ms(max(self.gc_pauses, default=0.0)),
                    "gc_total_ms": _ms(sum(self.gc_pauses)),
                }
            )
        )


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(1000 * seconds, 1)


# ---- the producer (this process) ----------------------------------------------------------


def event(sequence: int, kind: str, urgency: str, **fields: Any) -> str:
    return json.dumps(
        {
            "@context": CONTEXT,
            "type": f"aaep:{kind}",
            "event_id": f"evt_{sequence}x{os.getpid()}",
            "session_id": SESSION,
            "sequence_number": sequence,
            "timestamp": "2026-06-30T14:22:20.014Z",
            "producer": PRODUCER,
            "urgency": urgency,
            **fields,
        }
    )


def flood_frame(sequence: int, flood: str) -> str:
    if flood == "critical":
        return event(
            sequence,
            "agent.state.changed",
            "critical",
            from_state="working",
            to_state="working",
            summary_normal=f"Alert {sequence}: the disk is nearly full.",
        )
    return event(
        sequence,
        "agent.tool.invoked",
        "normal",
        tool="read_file",
        tool_call_id=f"call_{sequence}",
        summary_normal=f"Reading file number {sequence}.",
    )


def question(sequence: int) -> str:
    return event(
        sequence,
        "agent.awaiting.confirmation",
        "critical",
        action="Delete the build folder.",
        consequence="The folder is removed.",
        reply_token="rpl_afterflood",
        timeout_seconds=300,
        default_decision="reject",
        summary_normal="Delete the build folder?",
    )


class Producer:
    """One loopback WebSocket producer: handshake, flood, question, second flood."""

    def __init__(self, frames: int, seconds: float, flood: str) -> None:
        self.frames = frames
        self.seconds = seconds
        self.flood = flood
        self.connected = asyncio.Event()
        self.flood_started = 0.0
        self.flood_ended = 0.0
        self.sent = 0
        self.question_sent = asyncio.Event()
        self.reply: dict[str, Any] | None = None
        self.replied = asyncio.Event()
        self.second_flood = asyncio.Event()
        self.sequence = 1

    async def handle(self, websocket: Any) -> None:
        try:
            first = json.loads(await asyncio.wait_for(websocket.recv(), 10))
            if first.get("type") == "subscription.request":
                await websocket.send(
                    json.dumps(
                        {
                            "type": "subscription.accepted",
                            "subscription_id": "sub_flood",
                            "aaep_version": "1.0.0",
                            "producer": PRODUCER,
                            "honored_capabilities": first.get("capabilities", {}),
                        }
                    )
                )
            reader = asyncio.ensure_future(self._read(websocket))
            started = event(0, "agent.session.started", "normal", summary_normal="Flood begins.")
            await websocket.send(started)
            self.connected.set()
            deadline = time.perf_counter() + self.seconds
            self.flood_started = time.perf_counter()
            while self.sent < self.frames and time.perf_counter() < deadline:
                await websocket.send(flood_frame(self.sequence, self.flood))
                self.sequence += 1
                self.sent += 1
                if self.sent % 64 == 0:
                    await asyncio.sleep(0)  # let this process's key probe run too
            self.flood_ended = time.perf_counter()
            await websocket.send(question(self.sequence))
            self.sequence += 1
            self.question_sent.set()
            await self.second_flood.wait()
            deadline = time.perf_counter() + self.seconds
            while time.perf_counter() < deadline:  # until the subscriber goes away
                await websocket.send(flood_frame(self.sequence, self.flood))
                self.sequence += 1
                if self.sequence % 64 == 0:
                    await asyncio.sleep(0)
            reader.cancel()
        except Exception:  # the subscriber closing mid-flood ends the case
            return

    async def _read(self, websocket: Any) -> None:
        with contextlib.suppress(Exception):  # the subscriber closing ends the reading
            async for message in websocket:
                data = json.loads(message)
                if data.get("type") == "confirmation.reply":
                    self.reply = data
                    self.replied.set()


class Subscriber:
    """The child process, its stdout read line by line with arrival times.

    The lines are read and timed by a thread of their own: this process also runs the
    flood, and a line noticed only when this event loop next got round to it would add
    the producer's own delays to the subscriber's key latency.
    """

    def __init__(self, process: asyncio.subprocess.Process, stdout: int) -> None:
        self.process = process
        self.lines: list[tuple[float, str]] = []
        self.new_line = asyncio.Event()
        self.ended = False
        self._stdout = stdout
        self._loop = asyncio.get_running_loop()
        self._thread = threading.Thread(target=self._read, name="subscriber-stdout", daemon=True)
        self._thread.start()

    def _read(self) -> None:
        with open(self._stdout, "rb", buffering=0) as pipe:
            pending = b""
            while True:
                data = pipe.read(65536)
                now = time.perf_counter()
                if not data:
                    break
                pending += data
                *complete, pending = pending.split(b"\n")
                for line in complete:
                    self.lines.append((now, line.decode("utf-8", "replace") + "\n"))
                if complete:
                    self._notify()
        self.ended = True
        self._notify()

    def _notify(self) -> None:
        with contextlib.suppress(RuntimeError):  # this case's loop has closed
            self._loop.call_soon_threadsafe(self.new_line.set)

    async def wait_for(self, needle: str, after: int, timeout: float) -> tuple[float, int] | None:
        """When a line containing ``needle`` arrived at index >= ``after``, or None."""
        deadline = time.perf_counter() + timeout
        index = after
        while True:
            while index < len(self.lines):
                at, text = self.lines[index]
                index += 1
                if needle in text:
                    return at, index
            remaining = deadline - time.perf_counter()
            if remaining <= 0 or self.ended:
                return None
            self.new_line.clear()
            try:
                await asyncio.wait_for(self.new_line.wait(), remaining)
            except TimeoutError:
                return None

    def type_line(self, text: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write((text + "\n").encode())

    def peak_rss_mb(self) -> float | None:
        try:
            status = Path(f"/proc/{self.process.pid}/status").read_text()
        except OSError:
            return None
        for line in status.splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
        return None


async def probe_keys(subscriber: Subscriber, stop: asyncio.Event, latencies: list[float]) -> None:
    """Type ``:status`` every 100 ms during both floods; time each answer."""
    while not stop.is_set() and subscriber.process.returncode is None:
        sent = time.perf_counter()
        after = len(subscriber.lines)
        subscriber.type_line(":status")
        answer = await subscriber.wait_for(STATUS_PRINTED, after, 5.0)
        latencies.append((answer[0] if answer else time.perf_counter()) - sent)
        await asyncio.sleep(0.1)


async def answer_after_arming(subscriber: Subscriber, producer: Producer) -> bool:
    """Reject the question with one key, as a user would once its keys have armed.

    A key typed before the arming interval (answer_guard: 1 s and the question's first
    words spoken) is refused and the question is read again, so the key is typed again
    after each refusal; a bounded number of tries.
    """
    for _ in range(ARMING_TRIES):
        await asyncio.sleep(ARMING_WAIT_S)
        subscriber.type_line("r")  # rejecting takes one key
        try:
            await asyncio.wait_for(producer.replied.wait(), ARMING_WAIT_S * 2)
            return True
        except TimeoutError:
            continue
    return False


def p99(values: list[float]) -> float | None:
    if not values:
        return None
    if len(values) < 2:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[98]


async def run_case(strategy: str, flood: str, frames: int, seconds: float) -> dict[str, Any]:
    import websockets.asyncio.server as ws_server

    producer = Producer(frames, seconds, flood)
    server = await ws_server.serve(
        producer.handle,
        "127.0.0.1",
        0,
        max_size=None,
        subprotocols=["aaep.v1"],  # type: ignore[list-item]
    )
    port = server.sockets[0].getsockname()[1]
    with tempfile.TemporaryDirectory() as folder:
        record = Path(folder) / "speech.jsonl"
        stdout_read, stdout_write = os.pipe()
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            __file__,
            "--subscriber",
            strategy,
            f"ws://127.0.0.1:{port}",
            str(record),
            stdin=asyncio.subprocess.PIPE,
            stdout=stdout_write,
            stderr=asyncio.subprocess.DEVNULL,
            env={
                **os.environ,
                "XDG_STATE_HOME": folder,
                "XDG_CONFIG_HOME": folder,
                "ANNOUNCER_FLOOD_STALLS": str(Path(folder) / "stalls.json"),
            },
        )
        os.close(stdout_write)
        subscriber = Subscriber(process, stdout_read)
        result: dict[str, Any] = {}
        try:
            await asyncio.wait_for(producer.connected.wait(), 30)
            latencies: list[float] = []
            probing_done = asyncio.Event()
            keys = asyncio.ensure_future(probe_keys(subscriber, probing_done, latencies))
            await asyncio.wait_for(producer.question_sent.wait(), seconds + 30)
            flood_seconds = producer.flood_ended - producer.flood_started
            presented = await subscriber.wait_for(QUESTION_PRINTED, 0, 30)
            with_reply = presented is not None and await answer_after_arming(subscriber, producer)
            producer.second_flood.set()
            await asyncio.sleep(1.0)
            probing_done.set()
            await asyncio.wait_for(keys, 10)
            peak = subscriber.peak_rss_mb()
            interrupted = time.perf_counter()
            process.send_signal(signal.SIGINT)
            try:
                await asyncio.wait_for(process.wait(), 30)
                shutdown: float | None = round(time.perf_counter() - interrupted, 3)
            except TimeoutError:
                shutdown = None
            result = {
                "frames": producer.sent,
                "frames_per_s": round(producer.sent / flood_seconds) if flood_seconds else None,
                "peak_rss_mb": peak,
                "key_p99_ms": round(1000 * (p99(latencies) or 0), 1) if latencies else None,
                "key_probes": len(latencies),
                "question_s": (
                    round(presented[0] - producer.flood_ended, 3) if presented else None
                ),
                "reply_received": with_reply
                and producer.reply is not None
                and producer.reply.get("decision") == "reject",
                "shutdown_s": shutdown,
            }
            stalls = Path(folder) / "stalls.json"
            if stalls.exists():  # where a key waited inside the subscriber
                result.update(json.loads(stalls.read_text()))
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
            server.close()
            await server.wait_closed()
    return result


def meets_targets(case: dict[str, Any]) -> bool:
    return all(
        case.get(name) is not None and case[name] < limit for name, limit in TARGETS.items()
    ) and bool(case.get("reply_received"))


# The bounded load generator (issue 22 item 1: keys answered at load 5-8 too): at most
# this many busy processes, each ending by itself after its time bound.
MAX_LOAD_WORKERS = 8
BUSY_LOOP = (
    "import time, sys\nend = time.time() + float(sys.argv[1])\nwhile time.time() < end: pass"
)


def start_load(workers: int, seconds: float) -> list[Any]:
    """``workers`` CPU-bound processes for at most ``seconds`` (bounded in count and time)."""
    import subprocess

    return [
        subprocess.Popen([sys.executable, "-c", BUSY_LOOP, str(seconds)])
        for _ in range(min(max(workers, 0), MAX_LOAD_WORKERS))
    ]


def stop_load(processes: list[Any]) -> None:
    for process in processes:
        if process.poll() is None:
            process.kill()
        process.wait()


async def run_all(
    frames: int, seconds: float, load: int = 0, cases: list[tuple[str, str]] | None = None
) -> dict[str, Any]:
    result: dict[str, Any] = {"benchmark": "flood", "frames": frames, "targets": TARGETS}
    # Timings on a shared machine depend on the others' work: the load is printed beside them.
    result["load_average_1m_before"] = round(os.getloadavg()[0], 2)
    result["load_workers"] = min(load, MAX_LOAD_WORKERS)
    wanted = cases or [(strategy, flood) for strategy in STRATEGIES for flood in FLOODS]
    for strategy, flood in wanted:
        loaders = start_load(load, seconds * 3 + 60) if load else []
        try:
            if loaders:
                await asyncio.sleep(5)  # let the load average climb before measuring
                result[f"{strategy}_{flood}_load_average_1m"] = round(os.getloadavg()[0], 2)
            case = await run_case(strategy, flood, frames, seconds)
        finally:
            stop_load(loaders)
        for name, value in case.items():
            result[f"{strategy}_{flood}_{name}"] = value
        if strategy == "announcer":
            result[f"announcer_{flood}_meets_targets"] = meets_targets(case)
    result["load_average_1m_after"] = round(os.getloadavg()[0], 2)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--frames", type=int, default=150_000, help="frames per flood")
    parser.add_argument("--seconds", type=float, default=40.0, help="time bound per flood")
    parser.add_argument("--subscriber", nargs=3, metavar=("STRATEGY", "SOURCE", "RECORD"))
    parser.add_argument(
        "--load",
        type=int,
        default=0,
        help=f"busy processes beside the run (at most {MAX_LOAD_WORKERS}; each time-bounded)",
    )
    parser.add_argument(
        "--case",
        action="append",
        metavar="STRATEGY:FLOOD",
        help="run only these cases, e.g. announcer:critical (repeatable)",
    )
    args = parser.parse_args()
    if args.subscriber:
        return run_subscriber(*args.subscriber)
    cases = [tuple(c.split(":", 1)) for c in args.case] if args.case else None
    print(json.dumps(asyncio.run(run_all(args.frames, args.seconds, args.load, cases))))  # type: ignore[arg-type]
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
