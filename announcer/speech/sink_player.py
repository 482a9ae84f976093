"""A player with no sound card: copies a WAV's samples to a file at playback speed.

Run as a script (``python -I -S sink_player.py --out OUT IN.wav``, or with
``--standby`` to wait for "IN<TAB>OUT" on stdin) so it starts fast and imports
nothing from announcer. Like a sound card it consumes audio in
real time, so killing it mid-way leaves exactly what was "heard" so far: the
WAV header is kept valid after every chunk. ``--raw`` writes bare PCM instead
(to a FIFO, say), so a listener can time the first sample.
"""

from __future__ import annotations

import sys
import time
import wave

CHUNK_SECONDS = 0.01


def play(source: str, out: str, raw: bool) -> int:
    with wave.open(source, "rb") as wav:
        params = wav.getparams()
        frames_per_chunk = max(1, int(params.framerate * CHUNK_SECONDS))
        start = time.monotonic()
        written = 0
        with open(out, "wb", buffering=0) as sink:
            writer = None
            if not raw:
                writer = wave.open(sink, "wb")  # noqa: SIM115 - closed below, header kept valid meanwhile
                writer.setnchannels(params.nchannels)
                writer.setsampwidth(params.sampwidth)
                writer.setframerate(params.framerate)
            while True:
                data = wav.readframes(frames_per_chunk)
                if not data:
                    break
                if writer is not None:
                    writer.writeframes(data)
                else:
                    sink.write(data)
                written += len(data) // (params.sampwidth * params.nchannels)
                ahead = start + written / params.framerate - time.monotonic()
                if ahead > 0:
                    time.sleep(ahead)
            if writer is not None:
                writer.close()
    return 0


def main(argv: list[str]) -> int:
    # argparse alone costs ~20 ms to import; a player must start fast
    raw = "--raw" in argv
    standby = "--standby" in argv
    rest = [a for a in argv if a not in ("--raw", "--standby")]
    try:
        if standby:
            # kept ready by the parent: the job arrives on stdin as "SOURCE<TAB>OUT"
            line = sys.stdin.readline().rstrip("\n")
            if not line:
                return 0
            source, out = line.split("\t", 1)
        else:
            if len(rest) != 3 or rest[0] != "--out":
                print(
                    "usage: sink_player.py [--raw] (--standby | --out OUT SOURCE)", file=sys.stderr
                )
                return 2
            out, source = rest[1], rest[2]
        return play(source, out, raw)
    except (OSError, ValueError, wave.Error, EOFError) as exc:
        print(f"sink player: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
