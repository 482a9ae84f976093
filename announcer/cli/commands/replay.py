"""``announcer replay FILE``: play a recorded AAEP session through the engine, aloud.

Each line of the JSON Lines file goes through the same engine a live connection
uses (validation, tracking, policy, coalescing, scheduling). ``--speech`` takes
every backend ``listen`` takes; by default (``auto``) the session is spoken by the
best voice here and each announcement is printed as it is said.

Two clocks:

- ``text``, ``jsonl`` and ``wav:DIR`` print, record or save, on the recording's own
  clock: ``--no-delay`` plays at once but decides exactly as in real time (the
  user's pace, barge-ins and skipped stale news all happen on the recorded clock;
  ``wav:DIR`` waits for each file to be saved, so it decides as ``jsonl`` does).
- A voice (``auto``, ``speechd``, ``pyttsx3``, ``screenreader``, ``paced``) takes as
  long as speech takes, so the engine runs on the wall clock as for a live producer:
  each event arrives at its recorded time, ``--speed X`` times faster, or all at once
  with ``--no-delay`` (a burst: the agent's words are all said, status news is folded
  as it would be live).

``--speed X`` waits in real time, X times faster, with either clock.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import TextIO

from announcer.config import add_settings_flags, load_settings
from announcer.config.loader import flag_layer
from announcer.engine.pipeline import Engine
from announcer.engine.settings import UserSettings
from announcer.engine.speech_commands import Speak, SpeechCommand
from announcer.protocol.sanitise import one_line
from announcer.runtime.engine_host import EngineHost
from announcer.speech.backend import BackendUnavailable, SpeechBackend, VoiceSettings
from announcer.speech.driver import SpeechDriver

# A recording that pauses longer than this is not worth waiting for.
MAX_REPLAY_GAP_SECONDS = 10.0
# The longest a saved utterance (wav:DIR) is waited for before the replay goes on.
BACKEND_WAIT_SECONDS = 60.0


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


# Backends no listener waits on (printed, recorded, saved as WAV files): the replay keeps
# the recording's own clock for them, with speech at the user's pace (jsonl, wav).
RECORDED_CLOCK_SPEECH = ("text", "jsonl", "none", "wav")


def replay_speech(args: argparse.Namespace, settings: UserSettings) -> str:
    """``--speech`` for a replay (else the ``backend`` setting, ``auto`` by default).

    Every spec ``listen`` takes; a malformed one is refused with the rule it breaks.
    """
    from announcer.speech.registry import split_speech_spec

    spec = getattr(args, "backend", None) or settings.backend
    try:
        split_speech_spec(spec)
    except ValueError as exc:
        raise SystemExit(f"announcer: --speech: {exc}") from None
    return spec


def speaks_aloud(spec: str) -> bool:
    """Whether ``spec`` names a voice, which takes as long as speech takes."""
    return spec.partition(":")[0].strip().lower() not in RECORDED_CLOCK_SPEECH


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
        echo: TextIO | None = None,
        await_backend: bool = False,
    ) -> None:
        self.engine = engine
        self._ended = threading.Event()
        self.clock = clock
        self.echo = echo  # where each utterance is printed as it is said (wav:DIR)
        self.host = EngineHost(
            engine,
            SpeechDriver(backend, notify=self._ended.set),
            clock,
            on_speak=self._echo if echo is not None else None,
        )
        # wav:DIR saves each utterance in the background: the recorded clock waits for it,
        # so the decisions are those of jsonl, made on the same clock.
        self.await_backend = await_backend
        self.speed = speed
        self.sleep = sleep
        self.source_id = source_id
        self._origin: float | None = None
        self._last = 0.0

    def _echo(self, command: Speak) -> Speak:
        assert self.echo is not None
        print_spoken([command], self.echo)
        return command

    def _await_backend(self) -> None:
        """wav:DIR: the recorded clock waits until the backend has saved what it began."""
        host = self.host
        for _ in range(10_000):
            if not (self.await_backend and host.in_flight):
                break
            self._ended.clear()
            if not host.in_flight:
                break
            if not self._ended.wait(BACKEND_WAIT_SECONDS):
                print(
                    "announcer replay: the speech output did not finish an utterance in "
                    f"{BACKEND_WAIT_SECONDS:.0f} seconds; going on",
                    file=sys.stderr,
                )
                break
            host.drain()

    def _tick(self) -> None:
        self.host.tick()
        self._await_backend()

    def _advance_to(self, target: float) -> None:
        """Let recorded time pass, doing whatever the engine had scheduled meanwhile."""
        for _ in range(100_000):
            wake = self.host.next_wakeup()
            if wake is None or wake > target:
                break
            self._wait_until(max(wake, self.clock.now))
            self._tick()
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
            self.host.receive(line, self.source_id)
            self._await_backend()

    def finish(self) -> None:
        """Let queued speech play out; open prompts are left open, not timed out."""
        for _ in range(100_000):
            wake = self.host.next_wakeup()
            if wake is None or wake == self.engine.book.next_deadline():
                break
            self._wait_until(max(wake, self.clock.now))
            self._tick()


def replay(
    lines: Iterable[str],
    args: argparse.Namespace,
    stream: TextIO,
    settings: UserSettings | None = None,
) -> Engine:
    settings = settings_from_args(args, settings)
    # a recording: nobody works now, so "Still working" (issue 33, item 3) would be made up
    settings = settings.model_copy(update={"silence_notice_seconds": 0.0})
    spec = replay_speech(args, settings)
    speed = None if args.no_delay else args.speed
    if speaks_aloud(spec):
        return replay_aloud(lines, spec, settings, stream, speed=speed)
    clock = ReplayClock()
    # jsonl and wav show the scheduler at the user's pace (barge-ins, skipped news); text
    # shows each announcement as it is decided, as a braille display would.
    name = spec.partition(":")[0].strip().lower()
    engine = Engine(settings, paced=name in ("jsonl", "wav"))
    backend = make_backend(spec, stream, clock, settings)
    try:
        backend.start()
    except (BackendUnavailable, OSError) as exc:
        raise SystemExit(f"announcer: --speech {spec}: {exc}") from None
    echo = stream if name == "wav" else None  # the WAV files are saved; the lines printed
    replayer = Replayer(engine, backend, clock, speed=speed, echo=echo, await_backend=name == "wav")
    try:
        replayer.feed(lines)
        replayer.finish()
    finally:
        backend.close()
    return engine


# With no voice progress for this long, the replay stops waiting for speech to end.
SPEECH_STALL_SECONDS = 120.0
# How long to wait when the engine's next moment has come and nothing changed.
IDLE_POLL_SECONDS = 0.05


class AloudReplayer:
    """Feeds lines at their recorded times on the wall clock while a voice speaks.

    Speech ends when the backend says so (from its own thread): the engine then hears
    of it here, on this thread, and decides what comes next. ``speed`` None sends every
    event at once; otherwise event times are divided by it, long silences capped.
    """

    def __init__(
        self,
        engine: Engine,
        backend: SpeechBackend,
        stream: TextIO,
        *,
        speed: float | None,
        voice: VoiceSettings | None = None,
        monotonic: Callable[[], float] = time.monotonic,
        source_id: str = "replay",
    ) -> None:
        self.engine = engine
        self._woken = threading.Event()
        self.stream = stream
        self.speed = speed
        self.source_id = source_id
        self._monotonic = monotonic
        self._start = monotonic()
        self._origin: float | None = None
        self._last = 0.0
        self.host = EngineHost(
            engine,
            SpeechDriver(backend, voice, notify=self._woken.set),
            self.now,
            on_speak=self._print,
        )

    def now(self) -> float:
        return self._monotonic() - self._start

    def _print(self, command: Speak) -> Speak:
        print_spoken([command], self.stream)
        return command

    def _wait_until(self, moment: float) -> None:
        """Let real time reach ``moment`` (recording time over speed), speaking meanwhile."""
        while True:
            self._woken.clear()
            self.host.drain()
            now = self.now()
            wake = self.host.next_wakeup()
            if wake is not None and wake <= now:
                self.host.tick()
                if self.host.next_wakeup() == wake:  # nothing moved: never spin
                    self._woken.wait(IDLE_POLL_SECONDS)
                continue
            if now >= moment:
                return
            timeout = moment - now if wake is None else min(moment, wake) - now
            self._woken.wait(max(timeout, 0.0))

    def feed(self, lines: Iterable[str]) -> None:
        for line in lines:
            if not line.strip():
                continue
            stamp = _timestamp_of(line)
            if stamp is not None and self.speed:
                if self._origin is None:
                    self._origin = stamp
                moment = max(self._last, stamp - self._origin)
                moment = min(moment, self._last + MAX_REPLAY_GAP_SECONDS)
                self._last = moment
                self._wait_until(moment / self.speed)
            else:
                self._wait_until(self.now())
            self.host.receive(line, self.source_id)

    def _quiet(self) -> bool:
        if self.host.in_flight or self.engine.scheduler.queued():
            return False
        wake = self.host.next_wakeup()
        # open prompts are left open, not timed out
        return wake is None or wake == self.engine.book.next_deadline()

    def finish(self) -> None:
        """Let the voice finish what is queued; stop if it makes no progress for minutes."""
        last_progress = self.now()
        while not self._quiet():
            self._woken.clear()
            if self.host.drain():
                last_progress = self.now()
                continue
            now = self.now()
            wake = self.host.next_wakeup()
            if wake is not None and wake <= now and wake != self.engine.book.next_deadline():
                self.host.tick()
                if self.host.next_wakeup() != wake:
                    last_progress = now
                    continue
            if now - last_progress > SPEECH_STALL_SECONDS:
                print(
                    f"announcer replay: the voice said nothing for {SPEECH_STALL_SECONDS:.0f} "
                    "seconds; stopping",
                    file=sys.stderr,
                )
                return
            timeout = 1.0 if wake is None else min(max(wake - now, IDLE_POLL_SECONDS), 1.0)
            self._woken.wait(timeout)


def aloud_backend(spec: str, settings: UserSettings) -> SpeechBackend:
    """The backend ``spec`` names, not started. ``auto`` ends in the printed lines:
    the replay prints every announcement itself, so a text voice would print it twice."""
    from announcer.speech.registry import backend_from_spec

    backend = backend_from_spec(spec, settings, shown=True)
    assert backend is not None  # "none" keeps the recording's clock
    return backend


def replay_aloud(
    lines: Iterable[str],
    spec: str,
    settings: UserSettings,
    stream: TextIO,
    *,
    speed: float | None,
) -> Engine:
    from announcer.speech.registry import user_voice

    engine = Engine(settings)
    try:
        backend = aloud_backend(spec, settings)
        backend.start()
    except (BackendUnavailable, OSError) as exc:
        raise SystemExit(f"announcer: --speech {spec}: {exc}") from None
    replayer = AloudReplayer(engine, backend, stream, speed=speed, voice=user_voice(settings))
    try:
        replayer.feed(lines)
        replayer.finish()
    finally:
        backend.close()
    return engine


def print_spoken(commands: list[SpeechCommand], stream: TextIO) -> None:
    """Each utterance as a plain line as it is said, for the eyes and a braille display."""
    for command in commands:
        if type(command) is Speak:
            line = one_line(command.announcement.text)
            if line:
                stream.write(line + "\n")
                stream.flush()


def make_backend(
    spec: str, stream: TextIO, clock: ReplayClock, settings: UserSettings | None = None
) -> SpeechBackend:
    from announcer.speech.registry import backend_from_spec

    # jsonl stamps the recording's clock; text, and none: the lines are printed
    backend = backend_from_spec(spec, settings, stream=stream, clock=clock)
    if backend is None:
        backend = backend_from_spec("text", stream=stream)
        assert backend is not None  # only "none" builds no backend
    return backend


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
