"""``announcer replay FILE``: play a recorded AAEP session through the engine.

Each line of the JSON Lines file goes through the same engine a live connection
uses (validation, tracking, policy, coalescing, scheduling) and the resulting
speech goes to the ``text`` or ``jsonl`` backend. Time follows the events' own
timestamps: ``--no-delay`` plays at once but decides exactly as in real time
(the user's pace, barge-ins and skipped stale news all happen on the recorded
clock), and ``--speed X`` waits in real time, X times faster.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import TextIO

from announcer.config import add_settings_flags, load_settings
from announcer.config.loader import flag_layer
from announcer.engine.pipeline import Engine
from announcer.engine.settings import UserSettings
from announcer.engine.speech_commands import SpeechCommand
from announcer.speech.backend import SpeechBackend
from announcer.speech.driver import SpeechDriver
from announcer.speech.jsonl import JsonlBackend
from announcer.speech.text import TextBackend

# A recording that pauses longer than this is not worth waiting for.
MAX_REPLAY_GAP_SECONDS = 10.0


class ReplayClock:
    """Seconds since the first event, on the recording's timeline."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def add_replay_options(parser: argparse.ArgumentParser, *, default_speed: float | None) -> None:
    # --speech, --language, --verbosity, --pace, the voice flags and --config, as on listen.
    add_settings_flags(parser)
    timing = parser.add_mutually_exclusive_group()
    timing.add_argument(
        "--no-delay", action="store_true", help="play at once (decisions keep recorded timing)"
    )
    timing.add_argument(
        "--speed",
        type=float,
        default=default_speed,
        help="honour the timestamps, this many times faster than real time",
    )


def file_settings(args: argparse.Namespace) -> UserSettings:
    """The user's settings file and ``ANNOUNCER_*`` variables; the flags go on top of these."""
    return load_settings(getattr(args, "config", None))


def settings_from_args(args: argparse.Namespace, base: UserSettings | None = None) -> UserSettings:
    """Flags win over ``base`` (the file and environment), which wins over defaults."""
    settings = base or UserSettings()
    given, _ = flag_layer(args)
    if not given:
        return settings
    return UserSettings.model_validate({**settings.model_dump(), **given})


# A recording is replayed on its own clock, so speech goes where no voice has to keep time.
REPLAY_SPEECH = ("text", "jsonl")


def replay_speech(args: argparse.Namespace, settings: UserSettings) -> str:
    """``--speech`` for a replay: text, jsonl or jsonl:PATH; an audio setting means text.

    The settings file's usual voice (``backend = "pyttsx3"``) does not stop a replay
    from printing; asking for audio on the command line is refused with the reason.
    """
    spec = getattr(args, "backend", None)
    if spec is None:
        spec = settings.backend
        name, _, _ = spec.partition(":")
        return spec if name in REPLAY_SPEECH else "text"
    name, _, _ = spec.partition(":")
    if name not in REPLAY_SPEECH:
        raise SystemExit(
            f"announcer: --speech {spec}: a replay prints (text) or records (jsonl, "
            "jsonl:PATH); to hear a session aloud, use 'announcer demo' or 'announcer listen'"
        )
    return spec


def _timestamp_of(line: str) -> float | None:
    """Seconds since the epoch of a frame's ``timestamp``, or None if it has none."""
    try:
        data = json.loads(line)
    except (ValueError, RecursionError):
        return None
    value = data.get("timestamp") if isinstance(data, dict) else None
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if parsed.tzinfo is None:
        return None
    return parsed.timestamp()


class Replayer:
    """Feeds lines to an engine on the recording's clock and drives a backend."""

    def __init__(
        self,
        engine: Engine,
        backend: SpeechBackend,
        clock: ReplayClock,
        *,
        speed: float | None = None,
        sleep: Callable[[float], None] = time.sleep,
        source_id: str = "replay",
    ) -> None:
        self.engine = engine
        self.driver = SpeechDriver(backend)
        self.clock = clock
        self.speed = speed
        self.sleep = sleep
        self.source_id = source_id
        self._origin: float | None = None
        self._last = 0.0

    def _run(self, commands: list[SpeechCommand]) -> None:
        self.driver.run(commands, lambda uid: self.engine.on_speech_done(uid, self.clock.now))

    def _advance_to(self, target: float) -> None:
        """Let recorded time pass, doing whatever the engine had scheduled meanwhile."""
        for _ in range(100_000):
            wake = self.engine.next_wakeup()
            if wake is None or wake > target:
                break
            self._wait_until(max(wake, self.clock.now))
            self._run(self.engine.tick(self.clock.now))
        self._wait_until(max(target, self.clock.now))

    def _wait_until(self, moment: float) -> None:
        if self.speed and moment > self.clock.now:
            self.sleep(min(moment - self.clock.now, MAX_REPLAY_GAP_SECONDS) / self.speed)
        self.clock.now = moment

    def feed(self, lines: Iterable[str]) -> None:
        for line in lines:
            if not line.strip():
                continue
            stamp = _timestamp_of(line)
            if stamp is not None:
                if self._origin is None:
                    self._origin = stamp
                moment = max(self._last, stamp - self._origin)
                # Never wait out a long recorded silence in full.
                moment = min(moment, self._last + MAX_REPLAY_GAP_SECONDS)
                self._last = moment
                self._advance_to(moment)
            self._run(self.engine.receive(line, self.source_id, self.clock.now))

    def finish(self) -> None:
        """Let queued speech play out; open prompts are left open, not timed out."""
        for _ in range(100_000):
            wake = self.engine.next_wakeup()
            if wake is None or wake == self.engine.book.next_deadline():
                break
            self._wait_until(max(wake, self.clock.now))
            self._run(self.engine.tick(self.clock.now))


def make_backend(spec: str, stream: TextIO, clock: ReplayClock) -> SpeechBackend:
    name, _, path = spec.partition(":")
    if name == "jsonl":
        if path:
            stream = open(path, "w", encoding="utf-8")  # noqa: SIM115 (lives as long as we do)
        return JsonlBackend(stream, clock=clock)
    return TextBackend(stream)


def read_lines(path: str) -> Iterator[str]:
    """Frames of a recording: JSON Lines, or one pretty-printed JSON document."""
    if path == "-":
        yield from sys.stdin  # a live pipe: JSON Lines, one frame at a time
        return
    text = Path(path).read_text(encoding="utf-8", errors="replace")
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        yield from text.splitlines()  # JSON Lines: one frame per line
        return
    yield text  # the whole file is one JSON document


def replay(
    lines: Iterable[str],
    args: argparse.Namespace,
    stream: TextIO,
    settings: UserSettings | None = None,
) -> Engine:
    clock = ReplayClock()
    # jsonl shows the scheduler at the user's pace (barge-ins, skipped news); text
    # shows each announcement as it is decided, as a braille display would.
    settings = settings_from_args(args, settings)
    spec = replay_speech(args, settings)
    engine = Engine(settings, paced=spec.startswith("jsonl"))
    backend = make_backend(spec, stream, clock)
    backend.start()
    speed = None if args.no_delay else args.speed
    replayer = Replayer(engine, backend, clock, speed=speed)
    try:
        replayer.feed(lines)
        replayer.finish()
    finally:
        backend.close()
    return engine


def report_problems(engine: Engine, path: str) -> None:
    if engine.invalid_frames:
        print(
            f"announcer: {engine.invalid_frames} of {engine.frames} messages in {path} were not "
            f"valid AAEP and were skipped; run 'announcer validate {path}' for the reasons.",
            file=sys.stderr,
        )


def run(args: argparse.Namespace) -> int:
    path = args.file
    if path != "-" and not Path(path).is_file():
        print(f"announcer replay: {path}: no such file", file=sys.stderr)
        return 2
    if args.speed is not None and args.speed <= 0:
        print("announcer replay: --speed: must be greater than 0", file=sys.stderr)
        return 2
    engine = replay(read_lines(path), args, sys.stdout, file_settings(args))
    report_problems(engine, path)
    return 0


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "replay",
        help="play a recorded AAEP session (JSON Lines) as announcements",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("file", metavar="FILE", help="JSON Lines of AAEP events, or - for stdin")
    add_replay_options(parser, default_speed=1.0)
    parser.set_defaults(func=run)
