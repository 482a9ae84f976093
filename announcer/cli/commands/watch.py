"""``announcer watch -- COMMAND...``: run an agent CLI and announce its JSON stream.

The agent's stdout (its JSON Lines) goes through the format adapter; its stderr
and stdin stay connected to the terminal, so it can still ask you things. The
agent's exit status is ours: a script can run ``announcer watch -- codex exec
--json ...`` and test the result as if it ran codex directly.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, get_args

from announcer.agents.catalogue import stream_presets
from announcer.engine.pipeline import Engine
from announcer.engine.settings import UserSettings
from announcer.formats import FORMAT_NAMES, AdapterOutput, get_adapter
from announcer.formats.detect import format_of_command, format_of_line
from announcer.i18n.translate import catalog_language
from announcer.protocol.events import Verbosity
from announcer.runtime.engine_host import EngineHost
from announcer.speech.backend import BackendUnavailable, SpeechBackend, VoiceSettings
from announcer.speech.driver import SpeechDriver
from announcer.transports.processes import end_family, track

VERBOSITIES = get_args(Verbosity)


def _optional(module: str) -> Any:
    """The settings file and the speech registry, when this build has them."""
    try:
        return importlib.import_module(module)
    except ImportError:
        return None


def add_speech_flags(parser: argparse.ArgumentParser) -> None:
    config_flags = _optional("announcer.config.flags")
    if config_flags is not None and hasattr(config_flags, "add_settings_flags"):
        config_flags.add_settings_flags(parser)  # --speech, --verbosity, --config, ...
        return
    parser.add_argument("--config", type=Path, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--speech", dest="backend", default=None, help="speech: text or jsonl")
    parser.add_argument("--verbosity", choices=VERBOSITIES, default=None, help="how much to say")


def settings_from(args: argparse.Namespace) -> UserSettings:
    loader = _optional("announcer.config.loader")
    if loader is not None and hasattr(loader, "load_settings"):
        settings: UserSettings = loader.load_settings(args.config, flags=args)
        return settings
    changes = {k: getattr(args, k) for k in ("backend", "verbosity") if getattr(args, k, None)}
    return UserSettings.model_validate({**UserSettings().model_dump(), **changes})


def make_backend(name: str, settings: UserSettings) -> tuple[SpeechBackend, VoiceSettings]:
    from announcer.speech.registry import backend_from_spec, user_voice

    # --speech NAME[:ARG]; the announcements are printed anyway, so "none" is text.
    backend = backend_from_spec(name, settings, stream=sys.stdout)
    if backend is None:
        backend = backend_from_spec("text", settings, stream=sys.stdout)
        assert backend is not None  # only "none" builds no backend
    return backend, user_voice(settings)


def json_flags(fmt: str | None) -> tuple[str, ...]:
    """The flags the agent printing ``fmt`` needs to print JSON Lines (its agent file's
    ``[cli] json_args``); we remind the user, never rewrite their command."""
    preset = stream_presets().get(fmt or "")
    return preset.cli.json_args if preset is not None and preset.cli is not None else ()


def guess_format(command: list[str]) -> str | None:
    """The format from the command, through npx, npm exec, node and env launchers."""
    return format_of_command(command)


#: the most lines looked at for the format when the command does not tell it
SNIFF_LINES = 50


def quiet_mode_env(fmt: str | None, env: dict[str, str]) -> tuple[dict[str, str], str | None]:
    """The agent's environment with its own screen-reader mode on, and what to tell the user.

    The mode is the agent file's ``[quiet] env`` (announcer/agents/*.toml) of the preset
    whose CLI prints ``fmt``; environment only, so the user's command is never rewritten.
    A value the user already set is kept, so ``CLAUDE_AX_SCREEN_READER=0`` opts out.
    """
    preset = stream_presets().get(fmt or "")
    added = preset.quiet_env(env) if preset is not None else {}
    if preset is None or not added:
        return env, None
    names = " ".join(f"{key}={value}" for key, value in added.items())
    first = next(iter(added))
    return (
        {**env, **added},
        f"announcer watch: turned on {preset.title}'s screen-reader mode ({names}); "
        f"set {first}=0 to keep it off",
    )


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "watch",
        help="run an agent CLI and announce what it does",
        description=(
            "Run COMMAND, announce its JSON stream, and exit with its exit status. "
            "Example: announcer watch -- codex exec --json 'fix the tests'"
        ),
    )
    parser.add_argument(
        "--format",
        choices=FORMAT_NAMES,
        default=None,
        help=(
            "the agent's stream format (when absent: from the command, also through npx, "
            "npm exec, node or env, else from its first output line)"
        ),
    )
    parser.add_argument(
        "--events",
        type=Path,
        default=None,
        help="also write the AAEP events to this JSON Lines file",
    )
    parser.add_argument(
        "--drain-seconds",
        type=float,
        default=60.0,
        help="after the agent exits, how long queued speech may still play (default 60)",
    )
    add_speech_flags(parser)
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND [ARGS...]")
    parser.set_defaults(func=run_watch)


class EngineAnnouncer:
    """The agent's events through the same engine and speech backend as any AAEP producer.

    Time is the wall clock since the watch began; speech completions reported by a
    backend thread wake the loop through ``wake``.
    """

    SOURCE = "watch"

    def __init__(self, settings: UserSettings, wake: Callable[[], None]) -> None:
        self.started = time.monotonic()
        try:
            backend, voice = make_backend(settings.backend, settings)
            backend.start()
        except BackendUnavailable as exc:
            print(
                f"announcer watch: speech backend {settings.backend!r} unavailable ({exc}); "
                "printing announcements instead",
                file=sys.stderr,
            )
            backend, voice = make_backend("text", settings)
            backend.start()
        self.backend = backend
        # text reports completion at once: pace it at the user's speed so news is skipped
        # as a listener's would be; jsonl records every decision without waiting
        paced = getattr(backend, "name", settings.backend) == "text"
        self.engine = Engine(settings, paced=paced)
        self.engine.trust_extension(self.SOURCE)  # the agent's stream, mapped by us
        self.host = EngineHost(self.engine, SpeechDriver(backend, voice, notify=wake), self.now)

    def now(self) -> float:
        return time.monotonic() - self.started

    def deliver(self, event: dict[str, Any]) -> None:
        self.host.receive(event, self.SOURCE)

    def service(self) -> float:
        """Feed finished utterances back, run due timers; seconds until the next timer."""
        self.host.drain()
        self.host.tick_if_due()
        wake = self.host.next_wakeup()
        return 0.5 if wake is None else min(0.5, max(0.01, wake - self.now()))

    def finish(self, wake_queue: queue.Queue[tuple[str, bytes | None]], limit: float) -> int:
        """The agent is gone: nobody can answer its questions; let queued speech finish.

        Returns how many announcements the time limit cut off (speaking or queued), so
        the cut is never silent.
        """
        self.host.source_closed(self.SOURCE)
        deadline = self.now() + limit
        unspoken = 0
        while True:
            status = self.engine.status()
            unspoken = status.queued + (status.speaking is not None)
            if unspoken == 0 or self.now() >= deadline:
                break
            wait = self.service()
            with contextlib.suppress(queue.Empty):
                wake_queue.get(timeout=max(0.0, min(wait, deadline - self.now())))
        self.backend.close()
        return unspoken


def _drain(inbox: queue.Queue[tuple[str, bytes | None]]) -> None:
    """Wait out the rest of an output we cannot announce (the reader thread empties the pipe)."""
    while True:
        kind, _ = inbox.get()
        if kind == "eof":
            return


def _read_lines(stream: IO[bytes], into: queue.Queue[tuple[str, bytes | None]]) -> None:
    for line in stream:
        into.put(("line", line))
    into.put(("eof", None))


# After Ctrl-C, how long the agent may take to end its own way before it is ended.
INTERRUPT_GRACE_SECONDS = 5.0


class _Stopped(Exception):
    """SIGTERM or SIGHUP arrived (a kill, a closed terminal)."""

    def __init__(self, signal_number: int) -> None:
        super().__init__(signal_number)
        self.signal = signal_number


def _raise_stopped(signal_number: int, _frame: object) -> None:
    raise _Stopped(signal_number)


def _stop_on_signals() -> dict[int, Any]:
    """SIGTERM and SIGHUP stop the watch the way Ctrl-C does; the old handlers, to restore."""
    previous: dict[int, Any] = {}
    for name in ("SIGTERM", "SIGHUP"):
        number = getattr(signal, name, None)
        if number is not None:
            with contextlib.suppress(ValueError, OSError):  # not the main thread
                previous[number] = signal.signal(number, _raise_stopped)
    return previous


def _restore(previous: dict[int, Any]) -> None:
    for number, handler in previous.items():
        with contextlib.suppress(ValueError, OSError, TypeError):
            signal.signal(number, handler)


def _end_agent(proc: subprocess.Popen[bytes], *, grace: float) -> None:
    """Give the agent ``grace`` seconds to end, then end it and every command it started.

    It shares announcer's terminal session (so it can ask you things), so its family is
    its descendants and their own groups, never announcer's group or the shell's session.
    """
    if grace > 0:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=grace)
    asyncio.run(end_family(proc.pid, own_session=False, tree=proc.returncode is None))


def run_watch(args: argparse.Namespace) -> int:
    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        print(
            "announcer watch: give the agent command after --, e.g. announcer watch -- codex exec "
            "--json 'fix the tests'",
            file=sys.stderr,
        )
        return 2
    fmt = args.format or guess_format(command)
    flags = json_flags(fmt) if args.format is None else None
    if flags and not all(flag in command for flag in flags if flag.startswith("-")):
        print(
            f"announcer watch: {' '.join(command[:3])} prints JSON only with {' '.join(flags)}; "
            "without it there is little to announce.",
            file=sys.stderr,
        )
    settings = settings_from(args)
    # only when the command itself runs the agent (not a replay given --format)
    env, told = quiet_mode_env(guess_format(command), dict(os.environ))
    if told:
        print(told, file=sys.stderr)
    try:
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, env=env)
    except FileNotFoundError:
        print(f"announcer watch: command not found: {command[0]}", file=sys.stderr)
        return 127
    except PermissionError:
        print(f"announcer watch: cannot run {command[0]}: permission denied", file=sys.stderr)
        return 126
    assert proc.stdout is not None
    track(proc.pid, own_session=False)  # ends with announcer, however announcer ends
    previous_handlers = _stop_on_signals()
    inbox: queue.Queue[tuple[str, bytes | None]] = queue.Queue()
    announcer = EngineAnnouncer(settings, lambda: inbox.put(("wake", None)))
    threading.Thread(target=_read_lines, args=(proc.stdout, inbox), daemon=True).start()
    events_file = args.events.open("w", encoding="utf-8") if args.events else None
    # our sentences about the agent's activity are in the user's language (Chapter 11)
    language = catalog_language(settings.languages)
    adapter = get_adapter(fmt, language=language) if fmt else None
    waiting: list[bytes] = []  # lines read before the first line told the format
    ended = False
    dropped = 0

    def handle(out: AdapterOutput) -> None:
        nonlocal dropped
        for event in out.events:
            if events_file is not None:
                events_file.write(json.dumps(event, ensure_ascii=False) + "\n")
                events_file.flush()
            announcer.deliver(event)
        for diagnostic in out.diagnostics:
            dropped += 1
            if os.environ.get("ANNOUNCER_DEBUG"):
                print(f"announcer watch: dropped {diagnostic}", file=sys.stderr)

    try:
        while True:
            wait = announcer.service()
            try:
                kind, line = inbox.get(timeout=wait)
            except queue.Empty:
                continue
            if kind == "line" and line is not None:
                if adapter is None:
                    waiting.append(line)
                    fmt = format_of_line(line)
                    if fmt is None and len(waiting) < SNIFF_LINES:
                        continue
                    if fmt is None:
                        break
                    adapter = get_adapter(fmt, language=language)
                    for held in waiting:
                        handle(adapter.feed(held, time.time()))
                    waiting = []
                    continue
                handle(adapter.feed(line, time.time()))
            elif kind == "eof":
                ended = True
                break
        if adapter is None:
            dropped += len(waiting)
            print(
                f"announcer watch: cannot tell the stream format of {' '.join(command[:2])!r} "
                f"from its command or its first lines; add --format ({', '.join(FORMAT_NAMES)})",
                file=sys.stderr,
            )
            if not ended:
                _drain(inbox)
        else:
            handle(adapter.finish(time.time()))
        unspoken = announcer.finish(inbox, limit=args.drain_seconds)
        if unspoken:
            print(
                f"announcer watch: --drain-seconds {args.drain_seconds:g} ran out with "
                f"{unspoken} announcement(s) still to say; they were dropped",
                file=sys.stderr,
            )
    except KeyboardInterrupt:
        # the agent got the same Ctrl-C from the terminal; let it end its own way, briefly
        announcer.backend.close()
        _end_agent(proc, grace=INTERRUPT_GRACE_SECONDS)
    except _Stopped as stopped:
        # a kill or a closed terminal: the agent and every command it started end too
        announcer.backend.close()
        _end_agent(proc, grace=0.0)
        if events_file is not None:
            events_file.close()
        proc.wait()
        return 128 + stopped.signal
    finally:
        _restore(previous_handlers)
        if events_file is not None and not events_file.closed:
            events_file.close()
    status = proc.wait()
    if dropped:
        print(
            f"announcer watch: {dropped} line(s) of {command[0]} output were not announced "
            "(set ANNOUNCER_DEBUG=1 to list them)",
            file=sys.stderr,
        )
    if status < 0:  # killed by a signal: report it the way a shell does
        return 128 + -status
    return status


__all__ = ["guess_format", "quiet_mode_env", "register"]
