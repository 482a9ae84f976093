"""Benchmark: how long a fresh ``announcer`` process takes, against a bare ``python -c pass``.

Claude Code and Codex start ``announcer hook claude-code|codex`` on every hook call
and wait for it, so its start-up is paid several times per agent turn. In one run,
round-robin so machine load falls on every side alike, this times:

- ``python -c pass`` with the same interpreter (the baseline: Python's own start-up),
- ``announcer hook claude-code`` with a PostToolUse payload on stdin and no
  announcer listening (the common announce-only hook when announcer is not running),
- ``announcer --help``,
- ``announcer validate FILE`` on the bundled banking session (its first 20 events),
- ``announcer listen --ui plain --speech none --exit-when-done FILE`` on the same events:
  a whole live session in the plain line UI (engine, runtime, no Textual).

Prints ONE JSON line with the median wall time of each (ms), each median as a multiple
of the baseline, and whether the targets hold: hook <= 3x, --help <= 6x (issue 15).
CPU time (user + sys of the child) is reported beside it: what the start costs when
other jobs share the machine.
Usage: python benchmarks/startup.py [--runs N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from importlib import resources
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HOOK_TARGET = 3.0
HELP_TARGET = 6.0
LISTEN_PLAIN = ["--ui", "plain", "--speech", "none", "--exit-when-done"]

POST_TOOL_USE = {
    "hook_event_name": "PostToolUse",
    "session_id": "bench-session",
    "transcript_path": "/tmp/bench.jsonl",
    "cwd": "/tmp",
    "tool_name": "Bash",
    "tool_use_id": "toolu_bench",
    "tool_input": {"command": "ls", "description": "List files"},
    "tool_response": {"stdout": "a\nb\n", "stderr": "", "interrupted": False},
}


def announcer_command() -> list[str]:
    """The console script beside this interpreter (what an agent runs), else ``-m announcer``."""
    script = Path(sys.executable).with_name("announcer")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "announcer"]


def timed(command: list[str], stdin_bytes: bytes, env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, child CPU seconds) of one run; a failing run stops the benchmark."""
    before = os.times()
    started = time.perf_counter()
    done = subprocess.run(command, input=stdin_bytes, capture_output=True, env=env, check=False)
    wall = time.perf_counter() - started
    after = os.times()
    if done.returncode != 0:
        raise SystemExit(f"{command} exited {done.returncode}: {done.stderr.decode()[-500:]}")
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    return wall, cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21, help="runs of each command (default 21)")
    args = parser.parse_args(argv)
    runs = max(3, min(args.runs, 500))

    announcer = announcer_command()
    with tempfile.TemporaryDirectory(prefix="ann-bench-") as scratch:
        scratch_dir = Path(scratch)
        events = scratch_dir / "events.jsonl"
        session = resources.files("announcer.data").joinpath("banking_session.jsonl")
        events.write_text("".join(session.read_text().splitlines(keepends=True)[:20]))
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        # as installed: byte-code cached (the warm-up run writes it), not compiled per run
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        # no announcer listens here: the hook finds no socket and exits at once
        env["ANNOUNCER_HOOK_SOCKET"] = str(scratch_dir / "nobody" / "hook.sock")
        env["ANNOUNCER_CONFIG"] = str(scratch_dir / "none.toml")  # defaults, not this user's
        payload = json.dumps(POST_TOOL_USE).encode()
        sides = {
            "python": ([sys.executable, "-c", "pass"], b""),
            "hook": ([*announcer, "hook", "claude-code"], payload),
            "help": ([*announcer, "--help"], b""),
            "validate": ([*announcer, "validate", str(events)], b""),
            "listen_plain": ([*announcer, "listen", *LISTEN_PLAIN, str(events)], b""),
        }
        walls: dict[str, list[float]] = {name: [] for name in sides}
        cpus: dict[str, list[float]] = {name: [] for name in sides}
        for command, stdin_bytes in sides.values():  # warm the file cache
            timed(command, stdin_bytes, env)
        for _ in range(runs):
            for name, (command, stdin_bytes) in sides.items():
                wall, cpu = timed(command, stdin_bytes, env)
                walls[name].append(wall)
                cpus[name].append(cpu)

    median_ms = {name: statistics.median(values) * 1000 for name, values in walls.items()}
    cpu_ms = {name: statistics.median(values) * 1000 for name, values in cpus.items()}
    base = median_ms["python"]
    ratios = {name: median_ms[name] / base for name in sides if name != "python"}
    print(
        json.dumps(
            {
                "benchmark": "startup",
                "runs": runs,
                "python_ms": round(base, 1),
                "hook_ms": round(median_ms["hook"], 1),
                "help_ms": round(median_ms["help"], 1),
                "validate_ms": round(median_ms["validate"], 1),
                "hook_x_python": round(ratios["hook"], 2),
                "help_x_python": round(ratios["help"], 2),
                "validate_x_python": round(ratios["validate"], 2),
                "listen_plain_ms": round(median_ms["listen_plain"], 1),
                "listen_plain_x_python": round(ratios["listen_plain"], 2),
                "hook_target_x": HOOK_TARGET,
                "help_target_x": HELP_TARGET,
                "targets_met": ratios["hook"] <= HOOK_TARGET and ratios["help"] <= HELP_TARGET,
                "cpu_ms": {name: round(value, 1) for name, value in cpu_ms.items()},
                "load_average_1min": round(os.getloadavg()[0], 2),
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
