"""``announcer watch -- COMMAND...``: run an agent CLI and announce its JSON stream.

The agent's stdout (its JSON Lines) goes through the format adapter; its stderr
and stdin stay connected to the terminal, so it can still ask you things. The
agent's exit status is ours: a script can run ``announcer watch -- codex exec
--json ...`` and test the result as if it ran codex directly.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from announcer.formats import FORMAT_NAMES, AdapterOutput, get_adapter

#: command name -> the stream format it prints with the flags in docs/formats.md
FORMAT_BY_COMMAND = {
    "claude": "claude-code",
    "claude-code": "claude-code",
    "codex": "codex",
    "gemini": "gemini",
    "opencode": "opencode",
}
# the flag each agent needs to print JSON Lines; we remind the user, never rewrite their command
JSON_FLAGS = {
    "claude-code": ("--output-format", "stream-json"),
    "codex": ("--json",),
    "gemini": ("--output-format", "stream-json"),
    "opencode": ("--format", "json"),
}


def guess_format(command: list[str]) -> str | None:
    if not command:
        return None
    return FORMAT_BY_COMMAND.get(Path(command[0]).name.removesuffix(".exe").lower())


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
        help="the agent's stream format (guessed from the command name when absent)",
    )
    parser.add_argument(
        "--events",
        type=Path,
        default=None,
        help="also write the AAEP events to this JSON Lines file",
    )
    parser.add_argument("--quiet", action="store_true", help="do not print announcements")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND [ARGS...]")
    parser.set_defaults(func=run_watch)


class TextAnnouncer:
    """Prints what a listener would hear at normal verbosity, one line per announcement.

    Streamed text is held until its output completes, so a sentence is never cut
    across lines. The engine's speech pipeline replaces this when it runs the show.
    """

    def __init__(self, out: IO[str]) -> None:
        self.out = out
        self.pending: dict[str, list[str]] = {}

    def __call__(self, event: dict[str, Any]) -> None:
        if event.get("type") == "aaep:agent.output.streaming":
            key = str(event.get("output_id", ""))
            self.pending.setdefault(key, []).append(str(event.get("chunk", "")))
            if event.get("complete") is True:
                text = "".join(self.pending.pop(key, [])).strip()
                if text:
                    self._say(text)
            return
        text = event.get("summary_normal") or event.get("question") or event.get("action")
        status = event.get("status")
        if event.get("type") == "aaep:agent.tool.completed" and status in ("error", "timeout"):
            # as the engine says it: the outcome first, then the producer's reason
            tool = str(event.get("tool", "tool")).replace("_", " ")
            lead = f"{tool[:1].upper()}{tool[1:]} {'failed' if status == 'error' else 'timed out'}."
            text = f"{lead} {text}" if isinstance(text, str) and text else lead
        if isinstance(text, str) and text:
            self._say(text)

    def flush(self) -> None:
        for key in list(self.pending):
            text = "".join(self.pending.pop(key)).strip()
            if text:
                self._say(text)

    def _say(self, text: str) -> None:
        print(text, file=self.out, flush=True)


def pump(
    stream: IO[bytes],
    adapter_name: str,
    deliver: Callable[[dict[str, Any]], None],
    report: Callable[[str], None],
) -> int:
    """Feed every line of ``stream`` to a fresh adapter; return the count of dropped lines."""
    adapter = get_adapter(adapter_name)
    dropped = 0

    def handle(out: AdapterOutput) -> None:
        nonlocal dropped
        for event in out.events:
            deliver(event)
        for diagnostic in out.diagnostics:
            dropped += 1
            report(str(diagnostic))

    for line in stream:
        handle(adapter.feed(line, time.time()))
    handle(adapter.finish(time.time()))
    return dropped


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
    if fmt is None:
        print(
            f"announcer watch: cannot tell the stream format of {command[0]!r}; add --format "
            f"({', '.join(FORMAT_NAMES)})",
            file=sys.stderr,
        )
        return 2
    flags = JSON_FLAGS.get(fmt) if args.format is None else None
    if flags and flags[-1] not in command:
        print(
            f"announcer watch: {command[0]} prints JSON only with {' '.join(flags)}; "
            "without it there is little to announce.",
            file=sys.stderr,
        )
    announcer = TextAnnouncer(sys.stdout)
    events_file = args.events.open("w", encoding="utf-8") if args.events else None

    def deliver(event: dict[str, Any]) -> None:
        if events_file is not None:
            events_file.write(json.dumps(event, ensure_ascii=False) + "\n")
            events_file.flush()
        if not args.quiet:
            announcer(event)

    def report(message: str) -> None:
        if os.environ.get("ANNOUNCER_DEBUG"):
            print(f"announcer watch: dropped {message}", file=sys.stderr)

    try:
        proc = subprocess.Popen(command, stdout=subprocess.PIPE)
    except FileNotFoundError:
        print(f"announcer watch: command not found: {command[0]}", file=sys.stderr)
        return 127
    except PermissionError:
        print(f"announcer watch: cannot run {command[0]}: permission denied", file=sys.stderr)
        return 126
    assert proc.stdout is not None
    try:
        dropped = pump(proc.stdout, fmt, deliver, report)
    except KeyboardInterrupt:
        # the agent got the same Ctrl-C from the terminal; let it finish its way
        dropped = 0
    finally:
        announcer.flush()
        if events_file is not None:
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


__all__ = ["guess_format", "pump", "register"]
