"""Benchmark: a real Claude Code turn of four tool calls, with the documented hooks and without.

Runs the pinned Claude Code CLI from the agent lab (tests/lab: installed with npm into
the shared lab cache, ``tests/lab/clis.py``, pointed at the scripted fake model on
127.0.0.1) in ``-p`` mode on a turn that calls four tools one after another, and times, in
one run, round-robin:

- ``none``: no hooks at all (the baseline);
- ``documented``: the hook set docs/hooks.md tells users to register (its first
  ``json`` block, read from the file: the announce-only hooks start
  ``setsid -f announcer hook claude-code --detach`` so Claude Code waits only for a
  shell), with
  ``announcer hook serve`` listening;
- ``detach``: the portable form the docs give for systems without ``setsid``: the
  announce-only hooks run ``announcer hook claude-code --detach`` (Claude Code waits for
  one interpreter start each);
- ``plain``: every hook a plain ``announcer hook claude-code`` (the set documented
  before: Claude Code waits for each hook to reach the announcer);
- ``async``: ``detach`` with ``"async": true`` on the announce-only hooks (Claude Code
  does not wait for them, but ends those still running when ``claude -p`` ends);
- ``python_floor``: every hook ``python -c pass`` with the same interpreter: what any
  hook that starts Python costs before it does anything;
- ``http_floor``: the announce-only hooks as Claude Code HTTP hooks (``"type": "http"``,
  verified on this CLI) to a loopback receiver that only reads the payload. announcer
  does not serve HTTP hooks (docs/hooks.md says why: a loopback port has no owner).

Each hooked turn also counts the lines the announcer printed and checks they came in
the order of the calls (every call's "Running ..." in call order, Claude's last message
last), so a set-up that is fast because its hooks never ran, or that scrambles the
speech, cannot pass. Prints ONE JSON line: the median turn time of each, the ratio to
``none``, the lines heard and turns heard in order, and whether the target holds
(<= 1.3x, issue 15) for the documented set, with the load average.
Usage: python benchmarks/hook_turn.py [--runs N]
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.lab import clis as lab_clis  # noqa: E402
from tests.lab.fake_model import SCENARIOS, Call, FakeModelServer, Scenario, Turn  # noqa: E402

TARGET = 1.3
SCENARIO = "bench-four-tools"
BLOCKING = ("PermissionRequest", "PreToolUse")


def four_tools() -> Scenario:
    def bash(command: str, description: str) -> Call:
        return Call(("Bash", {"command": command, "description": description}), None)

    return Scenario(
        SCENARIO,
        (
            Turn(calls=(bash("ls", "List the files"),)),
            Turn(calls=(Call(("Read", {"file_path": "{cwd}/notes.md"}), None),)),
            Turn(calls=(bash("wc -l notes.md", "Count lines"),)),
            Turn(calls=(bash("echo done", "Say done"),)),
            Turn(text="I looked at the files."),
        ),
        "four tool calls one after another (benchmarks/hook_turn.py)",
    )


def documented_hooks() -> dict[str, Any]:
    """The first ``json`` block of docs/hooks.md: the set-up the docs tell users to register."""
    text = (ROOT / "docs" / "hooks.md").read_text()
    block = text.split("```json\n", 1)[1].split("```", 1)[0]
    hooks: dict[str, Any] = json.loads(block)["hooks"]
    return hooks


ANNOUNCE_COMMAND = "announcer hook claude-code"


def hook_settings(
    announcer: list[str],
    sock: Path,
    *,
    form: str = "documented",
    command: str = "",
    http_url: str = "",
) -> dict[str, Any]:
    """The documented hooks with our command and socket; the announce-only ones varied by form.

    ``documented``: as docs/hooks.md writes them; ``plain``: every hook the plain command;
    ``detach``: announce-only hooks with ``--detach``; ``async``: the same with
    ``"async": true``; ``command`` replaces every command; ``http_url`` makes the
    announce-only hooks HTTP hooks.
    """
    ours = " ".join([*announcer, "hook", "claude-code", "--socket", str(sock)])
    hooks: dict[str, Any] = {}
    for event, entries in documented_hooks().items():
        hooks[event] = []
        for entry in entries:
            handlers = []
            for handler in entry["hooks"]:
                written = str(handler["command"])
                assert ANNOUNCE_COMMAND in written, written
                handler = dict(handler, command=written.replace(ANNOUNCE_COMMAND, ours))
                if event not in BLOCKING:
                    if form in ("plain", "detach", "async"):
                        handler["command"] = ours
                    if form in ("detach", "async"):
                        handler["command"] += " --detach"
                    if form == "async":
                        handler["async"] = True
                    if http_url:
                        handler = {"type": "http", "url": http_url, "timeout": 10}
                elif form != "documented":
                    handler["command"] = ours
                if command:
                    handler["command"] = command
                handlers.append(handler)
            hooks[event].append(dict(entry, hooks=handlers))
    return {"hooks": hooks}


# What the announcer prints for the turn, in the order it must come: each call as it
# is announced, then Claude's last message (Stop's last_assistant_message).
IN_ORDER = (
    "Running Bash: ls.",
    "Running Read: notes.md",
    "Running Bash: wc -l notes.md.",
    "Running Bash: echo done.",
    "I looked at the files.",
)


def heard_in_order(lines: list[str]) -> bool:
    """Whether every expected line was heard, in the order of the calls."""
    positions = []
    for expected in IN_ORDER:
        found = [i for i, line in enumerate(lines) if line.startswith(expected)]
        if len(found) != 1:
            return False
        positions.append(found[0])
    return positions == sorted(positions)


class HttpFloor:
    """A loopback HTTP receiver that reads each hook payload, counts it and answers ``{}``."""

    def __init__(self) -> None:
        import http.server

        self.received = 0
        floor = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length", "0")))
                floor.received += 1
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def take(self) -> int:
        count, self.received = self.received, 0
        return count


class Listener:
    """``announcer hook serve`` on a socket, counting what it prints."""

    def __init__(self, announcer: list[str], sock: Path, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [*announcer, "hook", "serve", "--socket", str(sock)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        first = self.lines.get(timeout=60)
        if not first.startswith("Listening"):
            raise SystemExit(f"hook serve did not start: {first}")

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))

    def drain(self, settle: float = 1.0) -> list[str]:
        got: list[str] = []
        deadline = time.monotonic() + settle
        while time.monotonic() < deadline:
            try:
                got.append(self.lines.get(timeout=0.1))
                deadline = time.monotonic() + settle
            except queue.Empty:
                pass
        return got

    def stop(self) -> None:
        self.proc.kill()  # only the process this benchmark started
        self.proc.wait(timeout=30)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="turns of each kind (default 7)")
    args = parser.parse_args(argv)
    runs = max(2, min(args.runs, 50))
    try:
        clis = lab_clis.ensure_clis()
    except lab_clis.LabUnavailable as exc:
        raise SystemExit(f"agent lab unavailable: {exc}") from None
    SCENARIOS[SCENARIO] = four_tools()
    announcer = [str(Path(sys.executable).with_name("announcer"))]
    if not Path(announcer[0]).exists():
        announcer = [sys.executable, "-m", "announcer"]

    with tempfile.TemporaryDirectory(prefix="ann-turn-") as scratch_name:
        scratch = Path(scratch_name)
        project = scratch / "project"
        project.mkdir()
        (project / "notes.md").write_text("one\ntwo\n")
        sock_dir = Path(tempfile.mkdtemp(prefix="ann-turn-sock-", dir="/tmp"))
        sock = sock_dir / "hook.sock"
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: byte-code cached
        listener = Listener(announcer, sock, env)
        floor = HttpFloor()
        try:
            with FakeModelServer(cwd=str(project)) as server:
                cli_env = lab_clis.claude_env(server.anthropic_url, scratch / "home")
                cli_env.pop("PYTHONDONTWRITEBYTECODE", None)
                settings = {}
                variants = {
                    "documented": hook_settings(announcer, sock),
                    "detach": hook_settings(announcer, sock, form="detach"),
                    "plain": hook_settings(announcer, sock, form="plain"),
                    "async": hook_settings(announcer, sock, form="async"),
                    "python_floor": hook_settings(
                        announcer, sock, command=f"{sys.executable} -c pass"
                    ),
                    "http_floor": hook_settings(announcer, sock, http_url=floor.url),
                }
                for name, hooks in variants.items():
                    path = scratch / f"{name}.json"
                    path.write_text(json.dumps(hooks))
                    settings[name] = ("--settings", str(path))
                kinds: dict[str, tuple[str, ...]] = {"none": (), **settings}
                seconds: dict[str, list[float]] = {kind: [] for kind in kinds}
                heard: dict[str, list[int]] = {kind: [] for kind in kinds}
                ordered: dict[str, int] = {kind: 0 for kind in kinds}
                for _ in range(runs + 1):  # the first round warms caches and is not counted
                    for kind, extra in kinds.items():
                        command = lab_clis.claude_command(
                            clis,
                            f"lab:{SCENARIO} please",
                            permission_mode="bypassPermissions",
                            extra=extra,
                        )
                        started = time.perf_counter()
                        done = lab_clis.run(command, cli_env, project, timeout=120)
                        elapsed = time.perf_counter() - started
                        if done.returncode != 0:
                            raise SystemExit(f"{kind} turn failed: {done.stderr[-500:]}")
                        tools = done.stdout.count('"type":"tool_use"')
                        if tools < 4:
                            raise SystemExit(f"{kind} turn ran {tools} tool calls, not 4")
                        seconds[kind].append(elapsed)
                        lines = listener.drain()
                        heard[kind].append(len(lines) + floor.take())
                        ordered[kind] += heard_in_order(lines)
        finally:
            floor.server.shutdown()
            listener.stop()
            for child in sock_dir.iterdir():
                child.unlink()
            sock_dir.rmdir()

    median = {kind: statistics.median(values[1:]) for kind, values in seconds.items()}
    ratio = {kind: median[kind] / median["none"] for kind in median}
    print(
        json.dumps(
            {
                "benchmark": "hook_turn",
                "cli": lab_clis.PINNED["@anthropic-ai/claude-code"],
                "runs": runs,
                "tools_per_turn": 4,
                "turn_s": {kind: round(value, 3) for kind, value in median.items()},
                "x_no_hooks": {kind: round(value, 2) for kind, value in ratio.items()},
                # lines hook serve printed, plus payloads the HTTP floor received
                "heard_per_turn": {
                    kind: statistics.median(values[1:]) for kind, values in heard.items()
                },
                # turns (of runs + 1) whose announcer lines came whole and in call order
                "turns_in_order": {
                    kind: ordered[kind]
                    for kind in kinds
                    if kind not in ("none", "python_floor", "http_floor")
                },
                "target_x": TARGET,
                "target_met": ratio["documented"] <= TARGET,
                "load_average_1min": round(os.getloadavg()[0], 2),
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
