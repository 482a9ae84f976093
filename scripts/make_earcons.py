"""Generate announcer's earcons: short, distinct, deterministic WAVs made for this project.

Run ``python scripts/make_earcons.py`` to rebuild ``announcer/voices/earcons``; the output is
byte-for-byte the same every time (no randomness, no timestamps). The format,
22050 Hz mono 16-bit, matches what espeak-ng produces, so an earcon can be
joined to the speech that follows it.

Each sound is a few notes of additive synthesis with a short attack and an
exponential decay, kept under half a second so it never delays the words:
rising for beginnings and success, falling for endings and failure, a repeated
high pair for "your answer is needed", a glide for handing over, two soft ticks
for a tool call, one quiet low note for "still working". The names are the
registry in ``announcer/engine/earcons.py``.
"""

from __future__ import annotations

import array
import math
import sys
import wave
from pathlib import Path

RATE = 22050
PEAK = 0.5  # of full scale: audible beside speech, never louder than it

# (start Hz, end Hz, seconds, harmonics weights); end == start for a steady note
Note = tuple[float, float, float, tuple[float, ...]]

SOFT = (1.0, 0.3, 0.1)
BRIGHT = (1.0, 0.5, 0.25, 0.12)
BUZZ = (1.0, 0.0, 0.33, 0.0, 0.2, 0.0, 0.14)
REST: Note = (0.0, 0.0, 0.03, ())

EARCONS: dict[str, list[Note]] = {
    "session_started": [(523.25, 523.25, 0.09, SOFT), (783.99, 783.99, 0.16, SOFT)],
    "completed": [
        (523.25, 523.25, 0.07, BRIGHT),
        (659.25, 659.25, 0.07, BRIGHT),
        (783.99, 783.99, 0.07, BRIGHT),
        (1046.5, 1046.5, 0.18, BRIGHT),
    ],
    "errored": [(220.0, 220.0, 0.14, BUZZ), REST, (174.61, 174.61, 0.24, BUZZ)],
    "cancelled": [(392.0, 392.0, 0.10, SOFT), (261.63, 261.63, 0.18, SOFT)],
    "needs_you": [
        (880.0, 880.0, 0.08, BRIGHT),
        REST,
        (1318.51, 1318.51, 0.08, BRIGHT),
        REST,
        (880.0, 880.0, 0.08, BRIGHT),
        REST,
        (1318.51, 1318.51, 0.12, BRIGHT),
    ],
    "handoff": [(440.0, 990.0, 0.22, SOFT), (990.0, 660.0, 0.12, SOFT)],
    # frequent, so the quietest and shortest: two soft ticks
    "tool": [(1174.66, 1174.66, 0.05, SOFT), REST, (1174.66, 1174.66, 0.05, SOFT)],
    # after a long silence while an agent works: one low, soft note, the quietest of all
    "still_working": [(329.63, 329.63, 0.14, SOFT)],
}

# how loud each sound is beside PEAK; 1.0 unless named here
GAIN: dict[str, float] = {"still_working": 0.4}


def render(notes: list[Note], gain: float = 1.0) -> array.array[int]:
    samples: array.array[int] = array.array("h")
    for start, end, seconds, harmonics in notes:
        count = int(RATE * seconds)
        norm = sum(harmonics) or 1.0
        phase = 0.0
        for i in range(count):
            t = i / RATE
            if not harmonics:
                samples.append(0)
                continue
            freq = start + (end - start) * i / count
            phase += 2 * math.pi * freq / RATE
            attack = min(1.0, t / 0.005)
            release = min(1.0, (count - i) / (RATE * 0.01))
            envelope = attack * release * math.exp(-3.0 * t / seconds)
            value = sum(w * math.sin((k + 1) * phase) for k, w in enumerate(harmonics)) / norm
            samples.append(round(32767 * PEAK * gain * envelope * value))
    return samples


def write(name: str, directory: Path) -> Path:
    samples = render(EARCONS[name], GAIN.get(name, 1.0))
    if sys.byteorder == "big":
        samples.byteswap()
    path = directory / f"{name}.wav"
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(RATE)
        wav.writeframes(samples.tobytes())
    return path


def main() -> int:
    directory = (
        Path(sys.argv[1])
        if len(sys.argv) > 1
        else Path(__file__).resolve().parents[1] / "announcer" / "voices" / "earcons"
    )
    for name in EARCONS:
        print(write(name, directory))
    return 0


if __name__ == "__main__":
    sys.exit(main())
