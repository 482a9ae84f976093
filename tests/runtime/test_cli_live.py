"""``announcer listen`` and ``announcer demo`` as a user runs them: real processes, real sockets.

The demo producer runs as a child process; the listener is a second one whose
standard input the test types into only after the question was printed. Both
are stopped by process id.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections import deque
from pathlib import Path
from typing import Any

import pytest

from tests.producer.live import (
    TIMEOUT,
    WORKTREE,
    scenario_path,
    start_producer_process,
    stop_process,
    validate,
)
from tests.support.producers import http_url, producer_url, ws_url
from tests.support.speech_record import records, spoken_in

# A person answers after the arming interval (answer_arming_seconds, default 1 s);
# waiting longer is always safe.
ARMED_AFTER = 1.5
# Tests whose subject is not the arming interval run the listener with a short one: an
# answer typed too early only gets "Not yet." and is typed again (Listener.answer).
SHORT_ARMING = {"ANNOUNCER_ANSWER_ARMING_SECONDS": "0.2"}
# How often an answer typed too early (on a loaded machine) is typed again: 30 s in all.
ANSWER_TRIES = 60


class Listener:
    """``announcer listen`` in a child process, read line by line."""

    def __init__(self, *args: str, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "announcer", *args],
            cwd=WORKTREE,
            env={**os.environ, **(env or {})},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: list[str] = []
        # how long a person waits before answering: the arming interval given, and a bit
        self.armed_after = ARMED_AFTER
        if env and "ANNOUNCER_ANSWER_ARMING_SECONDS" in env:
            self.armed_after = float(env["ANNOUNCER_ANSWER_ARMING_SECONDS"]) + 0.3
        self._queue: queue.Queue[str | None] = queue.Queue()
        self._unread: deque[str | None] = deque()  # read off the pipe, not yet waited for
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._queue.put(line.rstrip("\n"))
        self._queue.put(None)

    def wait_line(self, needle: str) -> str:
        while True:
            try:
                line = self._unread.popleft() if self._unread else self._queue.get(timeout=TIMEOUT)
            except queue.Empty:
                raise AssertionError(f"never printed {needle!r}; printed: {self.lines}") from None
            if line is None:
                raise AssertionError(f"exited before printing {needle!r}; printed: {self.lines}")
            self.lines.append(line)
            if needle in line:
                return line

    def answer(self, text: str) -> None:
        """Type as a person would, once the question's keys are armed (1 s, and its first
        words spoken). On a loaded machine its speech may start later: the key then gets
        "Not yet." (it costs nothing) and is typed again. Lines printed meanwhile stay for
        ``wait_line``."""
        time.sleep(self.armed_after)
        for _ in range(ANSWER_TRIES):
            while not self._queue.empty():  # printed before the key: not its reply
                self._unread.append(self._queue.get())
            self.type(text)
            try:
                reply = self._queue.get(timeout=TIMEOUT)
            except queue.Empty:
                return
            if reply is None or not reply.startswith("Not yet."):
                self._unread.append(reply)
                return
            self.lines.append(reply)
            time.sleep(0.5)
        raise AssertionError(f"{text!r} got only 'Not yet.' {ANSWER_TRIES} times: {self.lines}")

    def press_until(self, text: str, needle: str, *, not_yet: str = "Not yet.") -> str:
        """Type ``text`` until ``needle`` is printed: each early try gets ``not_yet`` (a key
        waits until the question was heard, issue 20), and costs nothing."""
        deadline = time.monotonic() + TIMEOUT
        while True:
            self.type(text)
            while True:
                line = self.wait_line("")
                if needle in line:
                    return line
                if not_yet in line:
                    break
            assert time.monotonic() < deadline, f"never printed {needle!r}"
            time.sleep(0.5)

    def type(self, text: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(text + "\n")
        self.proc.stdin.flush()

    def finish(self) -> int:
        code = self.proc.wait(timeout=TIMEOUT)
        while self._unread:
            unread = self._unread.popleft()
            if unread is None:
                return code
            self.lines.append(unread)
        while True:
            try:
                line = self._queue.get(timeout=TIMEOUT)
            except queue.Empty:
                break
            if line is None:
                break
            self.lines.append(line)
        return code

    def stop(self) -> None:
        stop_process(self.proc)


def _get(port: int, path: str) -> Any:
    with urllib.request.urlopen(http_url(port, path), timeout=TIMEOUT) as response:
        return json.loads(response.read())


# Scenario pauses the tests only wait through: "replaced" withdraws its first question
# 30 scenario seconds in (0.6 s here); the test waits on the second question's line.
SPEEDS = {"replaced": "0.02"}


@pytest.fixture
def producer(request: pytest.FixtureRequest) -> Any:
    scenario = getattr(request, "param", "confirm")
    speed = SPEEDS.get(scenario, "0.1")
    proc, port = start_producer_process("--scenario", scenario_path(scenario), "--speed", speed)
    yield port
    stop_process(proc)


@pytest.mark.parametrize("transport", ["ws", "sse"])
def test_listen_answers_a_confirmation_from_the_keyboard(producer: int, transport: str) -> None:
    source = producer_url(transport, producer)
    listener = Listener("listen", source, "--speech", "none", "--exit-when-done", env=SHORT_ARMING)
    try:
        # The prompt line names the action.
        listener.wait_line("Accept or reject: Send the email to Alice? [a/r] (Test producer)")
        listener.type("maybe")
        listener.wait_line("Please type a to accept or r to reject: Send the email to Alice")
        listener.answer("a")
        # Irreversible: a second, different key confirms.
        listener.wait_line("Accept: Send the email to Alice? Type c then Enter to confirm")
        listener.type("c")
        listener.wait_line("Sent: accept.")
        assert listener.finish() == 0
    finally:
        listener.stop()
    replies = _get(producer, "/demo/replies")
    assert [(r["decision"], r["decided_by"]) for r in replies] == [("accept", "user:local")]
    validate(replies[0]["message"])
    assert any("Email sent." in line for line in listener.lines)
    assert _get(producer, "/demo/status")["closed_by_subscriber"] == 1


@pytest.mark.parametrize("producer", ["clarify"], indirect=True)
def test_listen_asks_each_clarification_kind_and_checks_the_input(producer: int) -> None:
    listener = Listener(
        "listen", http_url(producer), "--speech", "none", "--exit-when-done", env=SHORT_ARMING
    )
    try:
        listener.wait_line("Type your answer and press Enter:")
        listener.answer("Alice")
        listener.wait_line("Yes or no:")
        listener.answer("perhaps")
        listener.wait_line("Please type y for yes or n for no.")
        listener.type("n")
        listener.wait_line("2. Double room")
        listener.wait_line("Choose a number from 1 to 2:")
        listener.answer("7")
        listener.wait_line("Please type a number from 1 to 2.")
        listener.type("2")
        listener.wait_line("Type a number:")
        listener.answer("four")
        listener.wait_line("That is not a number.")
        listener.type("4")
        listener.wait_line("Nights: 4.")
        assert listener.finish() == 0
    finally:
        listener.stop()
    replies = _get(producer, "/demo/replies")
    assert [r["response"] for r in replies] == ["Alice", False, "double", 4]


@pytest.mark.parametrize("producer", ["ticker"], indirect=True)
def test_ctrl_c_closes_the_subscription(producer: int) -> None:
    listener = Listener("listen", ws_url(producer), "--speech", "none")
    try:
        listener.wait_line("Tick 1.")
        listener.proc.send_signal(signal.SIGINT)
        assert listener.finish() == 0
    finally:
        listener.stop()
    assert _get(producer, "/demo/status")["closed_by_subscriber"] == 1  # §5.8


def test_auto_reject_from_the_command_line(producer: int) -> None:
    listener = Listener(
        "listen",
        ws_url(producer),
        "--speech",
        "none",
        "--auto-reject",
        "--exit-when-done",
    )
    try:
        listener.wait_line("The email was not sent.")
        assert listener.finish() == 0
    finally:
        listener.stop()
    replies = _get(producer, "/demo/replies")
    assert [(r["decision"], r["decided_by"]) for r in replies] == [
        ("reject", "auto:configured_policy")
    ]


def test_plaintext_to_another_host_is_refused() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "announcer", "listen", "ws://192.0.2.1/aaep/v1/ws"],
        cwd=WORKTREE,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert result.returncode == 2
    assert "--allow-insecure" in result.stderr and "Traceback" not in result.stderr


def test_the_live_demo_runs_end_to_end(tmp_path: Path) -> None:
    record = tmp_path / "speech.jsonl"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "announcer",
            "demo",
            "--scenario",
            scenario_path("confirm"),
            "--auto-reject",
            "--ui",
            "none",
            "--speech",
            f"jsonl:{record}",
        ],
        cwd=WORKTREE,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT * 2,
    )
    assert result.returncode == 0, result.stderr
    spoken = records(record)
    texts = spoken_in(spoken)
    assert any(t.startswith("Confirmation needed") for t in texts)
    assert "The email was not sent." in texts
    assert all(set(r) >= {"action", "text", "urgency", "interrupt", "t"} for r in spoken)


def test_an_unavailable_format_adapter_is_a_clear_error() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "announcer", "listen", "-", "--format", "no-such-format"],
        cwd=WORKTREE,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert result.returncode != 0
    assert "unknown --format 'no-such-format'" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("producer", ["replaced"], indirect=True)
@pytest.mark.parametrize("transport", ["ws", "sse"])
def test_a_key_meant_for_a_replaced_question_never_answers_the_new_one(
    producer: int, transport: str, tmp_path: Path
) -> None:
    """Issue 12 item 1, as reproduced: R1 (5 dollars) is withdrawn, R2 (delete the
    production database) takes its place, and `a` typed for R1 arrives just after."""
    source = producer_url(transport, producer)
    speech = tmp_path / "speech.jsonl"
    # A wide arming interval so the machine's load cannot make "just after" late.
    arming = 3.0
    listener = Listener(
        "listen",
        source,
        "--speech",
        f"jsonl:{speech}",
        "--exit-when-done",
        # The question is said through sooner at the fastest pace (how long it takes to
        # say is not this test's subject; the wait for it still holds, see press_until).
        "--pace",
        "600",
        env={"ANNOUNCER_ANSWER_ARMING_SECONDS": str(arming)},
    )
    try:
        listener.wait_line("Accept or reject: Send 5 dollars to Alice? [a/r] (Hostile Agent)")
        listener.wait_line(
            "Accept or reject: Delete the production database? [a/r] (Hostile Agent)"
        )
        listener.type("a")  # meant for the 5 dollars
        listener.wait_line("Not yet.")  # issue 20: two words, and no re-reading
        assert _get(producer, "/demo/replies") == []  # the producer received nothing
        time.sleep(arming + 0.5)
        # an irreversible accept also waits until the question was said through
        listener.press_until(
            "a", "Accept: Delete the production database? Type c then Enter to confirm"
        )
        assert _get(producer, "/demo/replies") == []  # one key never accepts this
        listener.type("c")
        listener.wait_line("Sent: accept.")
        if not any("Database deleted." in line for line in listener.lines):
            listener.wait_line("Database deleted.")  # over SSE it may come first
        assert listener.finish() == 0
    finally:
        listener.stop()
    replies = _get(producer, "/demo/replies")
    assert [(r["decision"], r["decided_by"]) for r in replies] == [("accept", "user:local")]
    validate(replies[0]["message"])
    heard = spoken_in(speech)
    # What the user HEARD: the new question, then the two-word cue, then the step; the
    # question once (issue 20: an early key never brings a re-reading).
    question = next(i for i, t in enumerate(heard) if "Delete the production database" in t)
    refusal = heard.index("Not yet.")
    step = heard.index("C.")  # issue 30 items 1 and 2: heard short
    assert refusal < step and question < step
    assert len([t for t in heard if t.startswith("Confirmation needed. Delete the")]) == 1, heard
