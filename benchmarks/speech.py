"""Speech latency of the pyttsx3 backend: first audio, stop, and barge-in switch.

Prints ONE JSON line. The player is the sink player writing raw samples into a
FIFO that this script reads, so "first audio" is the moment the first sample
is written, exactly as a sound card would receive it; "stop" is the time
``stop()`` takes until the old player process is gone; "switch" is from a
critical announcement arriving (stop + speak) to its first sample.

For comparison in the same run: ``peer_pyttsx3_synth_ms_p50`` is pyttsx3's own
``save_to_file`` + ``runAndWait`` time for the same sentence (the floor under
our first audio), and ``peer_pyttsx3_can_stop`` records that pyttsx3's own
``say`` cannot be interrupted on Linux (its ``stop`` does not end ``aplay``).

Targets (issue 5): first audio under 60 ms p50; old playback stopped under 20 ms p99.
Usage: python benchmarks/speech.py [--runs 50]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from announcer.engine.announcement import Announcement, Urgency
from announcer.speech.audio import SinkPlayer
from announcer.speech.backend import VoiceSettings
from announcer.speech.pyttsx3_backend import Pyttsx3Backend, shared_synthesizer

SENTENCE = "The agent finished running the tests and all of them passed."
LONG = "This is a long status report describing every file the agent touched today. " * 6
CRITICAL = "Confirm: delete the production database?"


class FirstSample:
    """Reads one playback from the FIFO and notes when its first byte arrived."""

    def __init__(self, fifo: Path) -> None:
        self.at: float | None = None
        self.arrived = threading.Event()
        self._thread = threading.Thread(target=self._read, args=(fifo,), daemon=True)
        self._thread.start()

    def _read(self, fifo: Path) -> None:
        with open(fifo, "rb", buffering=0) as pipe:
            first = pipe.read(1)
            if first:
                self.at = time.perf_counter()
                self.arrived.set()
            while pipe.read(65536):
                pass
        self.arrived.set()

    def wait(self) -> float:
        if not self.arrived.wait(60) or self.at is None:
            raise RuntimeError("no audio reached the sink")
        return self.at

    def join(self) -> None:
        self._thread.join(60)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return round(ordered[index], 2)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="announcer-bench-") as tmp:
        fifo = Path(tmp) / "sink.fifo"
        os.mkfifo(fifo)
        backend = Pyttsx3Backend(SinkPlayer(Path(tmp) / "unused", raw_out=fifo), earcons=False)
        backend.start()
        voice = VoiceSettings()

        def noop() -> None:
            pass

        # warm up the engine and the disk cache
        reader = FirstSample(fifo)
        backend.speak(Announcement(SENTENCE), voice, noop)
        reader.wait()
        backend.stop()
        reader.join()

        first_audio, stop, switch = [], [], []
        for _ in range(args.runs):
            reader = FirstSample(fifo)
            start = time.perf_counter()
            backend.speak(Announcement(SENTENCE), voice, noop)
            first_audio.append((reader.wait() - start) * 1000)
            backend.stop()
            reader.join()

            reader = FirstSample(fifo)
            backend.speak(Announcement(LONG), voice, noop)
            reader.wait()
            process = None
            while process is None:  # the engine thread may not have recorded it yet
                current = backend._current
                process = getattr(current.playback, "process", None) if current else None
            critical_reader: FirstSample | None = None
            arrived = time.perf_counter()
            backend.stop()
            stopped = time.perf_counter()
            if process.poll() is None:
                raise RuntimeError("the old player is still running after stop()")
            reader.join()
            critical_reader = FirstSample(fifo)
            backend.speak(
                Announcement(CRITICAL, urgency=Urgency.CRITICAL, interrupt=True), voice, noop
            )
            switched = critical_reader.wait()
            backend.stop()
            critical_reader.join()
            stop.append((stopped - arrived) * 1000)
            switch.append((switched - arrived) * 1000)
        backend.close()

        synth = shared_synthesizer()
        synth_ms = []
        for n in range(min(args.runs, 20)):
            path = Path(tmp) / f"peer-{n}.wav"
            began = time.perf_counter()
            synth.synthesize(SENTENCE, voice, path).result(timeout=60)
            synth_ms.append((time.perf_counter() - began) * 1000)

    print(
        json.dumps(
            {
                "benchmark": "speech",
                "runs": args.runs,
                "player": "sink (raw PCM into a FIFO at playback speed)",
                "first_audio_ms_p50": percentile(first_audio, 50),
                "first_audio_ms_p99": percentile(first_audio, 99),
                "stop_ms_p50": percentile(stop, 50),
                "stop_ms_p99": percentile(stop, 99),
                "switch_ms_p50": percentile(switch, 50),
                "switch_ms_p99": percentile(switch, 99),
                "peer_pyttsx3_synth_ms_p50": round(statistics.median(synth_ms), 2),
                "peer_pyttsx3_can_stop": False,
                "target_first_audio_ms_p50": 60,
                "target_stop_ms_p99": 20,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
