"""``announcer agent`` end to end: the real command, the plain UI on pipes, a real ACP agent.

The agent (tests/acp_frontend/sdk_agent.py) is written with the SDK's agent side and runs as a
child process; it creates ``out.txt`` only when allowed. What the producer receives is
what it did (the file, the outcome it recorded); what the user hears is the jsonl record.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections import deque
from pathlib import Path
from queue import Empty, Queue

from tests.support.speech_record import spoken_in

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 60.0
# The arming interval (``answer_arming_seconds``) these runs get: none of them is about its
# length (tests/ui/test_key_timing.py and tests/runtime/test_cli_live.py test the default
# 1 s). A key still arms only after it and the question's first words.
ARMING_SECONDS = "0.2"
# A person answers once the question is out and armed: its last line printed, then the
# arming interval and its first two words at PACE_WPM (0.2 s) after that. A key typed
# before still gets "Not yet." and is typed again (the wait only spares those tries).
ARMED_AFTER = 0.2 + 0.2
# How long an answer that got "Not yet." waits before it is typed again, and how often:
# 60 s in all (a turn-into-failure bound, never a measure).
RETRY_AFTER = 0.25
ANSWER_TRIES = 240
# The pace the engine reckons speech at (``pace_wpm``, the top of its range): a question
# counts as heard, and a high-risk accept is let through, that much sooner. No test that
# runs ``announcer agent`` here is about the pace; tests/speech and tests/engine are.
PACE_WPM = "600"


class AgentRun:
    """``announcer agent`` with its stdin and stdout on pipes, read line by line."""

    def __init__(
        self,
        tmp: Path,
        *extra: str,
        agent: list[str] | None = None,
        env: dict[str, str] | None = None,
        names: list[str] | None = None,
        config: Path | None = None,
        subcommand: str = "agent",
    ) -> None:
        self.folder = tmp / "work"
        self.folder.mkdir(exist_ok=True)
        self.record = tmp / "speech.jsonl"
        env = {
            **(os.environ if env is None else env),
            "PYTHONPATH": str(ROOT),
            "ANNOUNCER_CONFIG": str(config or tmp / "none.toml"),
            "PYTHONIOENCODING": "utf-8",
        }
        env.setdefault("ANNOUNCER_PACE_WPM", PACE_WPM)
        env.setdefault("ANNOUNCER_ANSWER_ARMING_SECONDS", ARMING_SECONDS)
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "announcer",
                subcommand,
                "--ui",
                "plain",
                "--speech",
                f"jsonl:{self.record}",
                # ``listen`` has no --cwd: its agents work in the folder it runs in
                *(["--cwd", str(self.folder)] if subcommand == "agent" else []),
                *extra,
                # several agents by NAME (presets or saved in the settings file), or one command
                *(
                    names
                    or ["--", *(agent or [sys.executable, "-m", "tests.acp_frontend.sdk_agent"])]
                ),
            ],
            cwd=ROOT if subcommand == "agent" else self.folder,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )
        self.lines: Queue[str] = Queue()
        self.seen: list[str] = []
        self._unread: deque[str] = deque()  # read off the pipe, not yet waited for
        self._last_printed = time.monotonic()  # when the newest line came off the pipe
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._last_printed = time.monotonic()
            self.lines.put(line.rstrip("\n"))

    def _next_line(self, timeout: float) -> str | None:
        if self._unread:
            return self._unread.popleft()
        try:
            return self.lines.get(timeout=timeout)
        except Empty:
            return None

    def wait_for(self, text: str) -> str:
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            line = self._next_line(0.5)
            if line is None:
                continue
            self.seen.append(line)
            if text in line:
                return line
        raise AssertionError(f"never printed {text!r}; printed: {self.seen}")

    def wait_for_each(self, *texts: str) -> list[str]:
        """Each text printed, in whatever order (two sources starting at once print in the
        order this machine happens to run them): the line that held each."""
        return [
            next((line for line in self.seen if text in line), None) or self.wait_for(text)
            for text in texts
        ]

    def answer(self, line: str) -> None:
        """Type an answer as a person would: once the question is out (nothing more printed)
        and armed (:data:`ARMED_AFTER` after its last line). On a loaded machine its speech
        may start later: the key then gets "Not yet." (issue 20: it costs nothing, the
        question is not read again), and is typed again. Lines printed before the key stay
        for ``wait_for``, and so does its reply."""
        self._until_armed()
        for _ in range(ANSWER_TRIES):
            while not self.lines.empty():  # printed before the key: not its reply
                self._unread.append(self.lines.get())
            self.type(line)
            try:  # the key's reply: the first line off the pipe after it
                reply = self.lines.get(timeout=TIMEOUT)
            except Empty:
                return
            if not reply.startswith("Not yet."):
                self._unread.append(reply)
                return
            self.seen.append(reply)
            time.sleep(RETRY_AFTER)
        raise AssertionError(f"{line!r} got only 'Not yet.' {ANSWER_TRIES} times: {self.seen}")

    def _until_armed(self) -> None:
        """Until :data:`ARMED_AFTER` has passed since the newest line was printed: the
        question's lines (its prompt line may come after the line a test waited for) are
        all out, and the first line after the key is its reply. Bounded: output that never
        pauses (another agent's) leaves it to the "Not yet." tries."""
        deadline = time.monotonic() + TIMEOUT
        while (quiet := time.monotonic() - self._last_printed) < ARMED_AFTER:
            if time.monotonic() > deadline:
                return
            time.sleep(ARMED_AFTER - quiet)

    def answer_until(self, line: str, needle: str) -> str:
        """Type ``line`` until ``needle`` is printed; an early try gets "Not yet." (a
        high-risk accept waits until its question was heard, issue 20) and costs nothing.
        Every line is read up to the needle or the "Not yet.", so the first try is typed at
        once: the wait follows the arming, not a guess."""
        deadline = time.monotonic() + 60
        while True:
            self.type(line)
            while True:
                printed = self.wait_for("")
                if needle in printed:
                    return printed
                if printed.startswith("Not yet."):
                    break
            assert time.monotonic() < deadline, f"never printed {needle!r}; printed: {self.seen}"
            time.sleep(RETRY_AFTER)

    def type(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def quit(self) -> int:
        self.type(":quit")
        try:
            return self.proc.wait(timeout=TIMEOUT)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()

    def heard(self) -> list[str]:
        return spoken_in(self.record)


def test_allow_lets_the_command_run_and_the_user_hears_it(asked) -> None:  # type: ignore[no-untyped-def]
    agent = asked("write", "Accept or reject: Scripted Agent wants to run: echo hello > out.txt?")
    agent.answer("a")  # issue 20: an ordinary (medium-risk) command is one key
    agent.wait_for("Scripted Agent finished the turn.")
    assert (agent.folder / "out.txt").read_text() == "hello\n"
    assert not any("Type c then Enter" in line for line in agent.seen)
    assert agent.quit() == 0
    heard = agent.heard()
    question = next(t for t in heard if t.startswith("Confirmation needed."))
    assert "Scripted Agent wants to run: echo hello > out.txt." in question
    assert "The agent waits for your answer." not in question  # detailed only (issue 31)
    assert "Created out.txt." in heard


def test_reject_stops_the_command(asked) -> None:  # type: ignore[no-untyped-def]
    agent = asked("write", "Accept or reject:")
    agent.answer("r")
    agent.wait_for("Scripted Agent finished the turn.")
    assert not (agent.folder / "out.txt").exists()
    assert agent.quit() == 0


def test_cancelling_the_turn_withdraws_the_open_question(asked) -> None:  # type: ignore[no-untyped-def]
    agent = asked("wait", "Accept or reject:")
    agent.type(":cancel")
    agent.wait_for("you cancelled it")
    # The agent's request was answered "cancelled", exactly once, and nothing ran.
    assert (agent.folder / "permission-outcome.txt").read_text() == "None"
    agent.type("a")  # too late: no question is open any more
    agent.wait_for("No question is waiting")
    assert agent.quit() == 0
    heard = " ".join(agent.heard())
    assert "You stopped the turn, so the question was withdrawn." in heard


def test_a_message_while_the_agent_works_is_refused_with_the_reason(asked) -> None:  # type: ignore[no-untyped-def]
    agent = asked("wait", "Accept or reject:")
    agent.answer("r")
    agent.wait_for("Sent: reject")
    agent.type(":cancel")
    agent.quit()


def test_an_agent_that_cannot_start_says_why_and_exits(finished) -> None:  # type: ignore[no-untyped-def]
    agent = [sys.executable, "-m", "tests.acp_frontend.sdk_agent"]
    done = finished(
        "--ui", "plain", "--speech", "none", "--", *agent, env={"SDK_AGENT_FAIL_AT_START": "1"}
    )
    assert "no model configured" in done.stdout + done.stderr
    assert "Giving up" in done.stdout


def test_a_preset_that_is_not_installed_says_what_to_install(tmp_path: Path, finished) -> None:  # type: ignore[no-untyped-def]
    done = finished("codex", env={"PATH": str(tmp_path)})
    assert done.returncode == 2
    assert "npm install -g @agentclientprotocol/codex-acp@2.6.0" in done.stderr


def test_a_message_typed_while_the_agent_starts_is_sent_once_it_is_ready(tmp_path: Path) -> None:
    agent = AgentRun(tmp_path)
    agent.type("hello")  # before "ready": the agent process is still starting
    agent.wait_for("This is the scripted agent.")
    agent.wait_for("Scripted Agent finished the turn.")
    assert agent.quit() == 0


def test_a_program_name_without_a_preset_is_started_as_the_agent(finished) -> None:  # type: ignore[no-untyped-def]
    done = finished("no-such-agent-program")
    assert done.returncode == 2
    assert "neither a preset" in done.stderr


def test_an_agent_with_always_and_no_never_is_asked_as_it_offers(asked) -> None:  # type: ignore[no-untyped-def]
    """codex-acp 2.6.0 offers "always" (accept_execpolicy_amendment) and no "never": the
    prompt line names only "always", and "never" is refused saying so (issue 31, item 6)."""
    agent = asked("write-no-never", "Accept or reject: Scripted Agent wants to run:")
    line = agent.seen[-1]
    assert "[a/r; always: from now on]" in line, line
    question = next(t for t in agent.heard() if t.startswith("Confirmation needed."))
    # what "always" covers in a few words; its label on a key, W (issue 31, item 10)
    assert "Always: commands that start with echo hello." in question, question
    assert "don't ask again" not in question, question
    agent.answer("w")
    agent.wait_for("Always: Yes, and don't ask again for commands that start with `echo hello`")
    agent.answer("never")
    agent.wait_for("The agent offers no never answer for this question; always is offered.")
    agent.answer("r")
    agent.wait_for("Scripted Agent finished the turn.")
    assert (agent.folder / "choices.txt").read_text().split() == ["no"]
    assert agent.quit() == 0


def test_always_and_never_reach_the_agents_own_options_after_a_second_line(asked) -> None:  # type: ignore[no-untyped-def]
    agent = asked("write", "[a/r; always or never: from now on]")
    agent.answer("always")
    agent.wait_for("Always allow: Scripted Agent wants to run: echo hello > out.txt?")
    assert not (agent.folder / "choices.txt").exists()  # one line sends nothing
    agent.type("c")
    agent.wait_for("Scripted Agent finished the turn.")
    agent.type("write")
    agent.wait_for("Accept or reject:")
    agent.answer("never")
    agent.wait_for("Always reject:")
    agent.type("x")  # anything but c goes back: nothing is sent
    agent.wait_for("Nothing was sent. The question is still open.")
    agent.type("never")
    agent.wait_for("Always reject:")
    agent.type("c")
    agent.wait_for("Scripted Agent finished the turn.")
    assert (agent.folder / "choices.txt").read_text().split() == ["always", "never"]
    agent.type("never")  # a lone answer word with no question open is not a message
    agent.wait_for("No question is waiting")
    assert agent.quit() == 0


def test_a_waiting_question_is_reminded_at_the_interval_the_user_set(asked) -> None:  # type: ignore[no-untyped-def]
    agent = asked("write", "Accept or reject:", "--reminder-seconds", "2")
    agent.wait_for("Still waiting for your answer: Scripted Agent wants to run")
    agent.answer("r")
    agent.wait_for("Scripted Agent finished the turn.")
    assert agent.quit() == 0
    heard = agent.heard()
    assert any(t.startswith("Still waiting for your answer") for t in heard)


def test_the_agents_terminal_login_runs_here_on_the_users_key_and_the_agent_starts(
    tmp_path: Path,
) -> None:
    """ACP terminal auth: the agent's session/new needs a login, and its authMethods offer
    one of type terminal. The user hears it with its command, picks it by number, the
    login runs in this terminal (it reads the user's own ``yes``, not announcer), and on
    its exit status 0 the agent is started again and its session opens."""
    agent = AgentRun(tmp_path, env={**os.environ, "SDK_AGENT_NEEDS_LOGIN": "1"})
    try:
        agent.wait_for("needs you to log in. Type the number of a login")
        offered = agent.wait_for("  1. Claude Subscription: ")
        assert offered.endswith("-m tests.acp_frontend.sdk_agent --cli auth login")
        assert not any("API key" in line for line in agent.seen)  # not a terminal login
        agent.answer("1")
        agent.wait_for("Scripted login. Type yes to log in:")  # the login has the terminal
        agent.type("yes")
        agent.wait_for("The login is done. Starting python again.")
        agent.wait_for("is ready.")  # reconnected, reinitialized, its session open
        agent.type("hello")
        agent.wait_for("finished the turn.")
    finally:
        assert agent.quit() == 0
    # the method's env reached the login, and nothing was typed into it but the user's line
    assert (agent.folder / "logged-in.txt").read_text() == "terminal\n"
    heard = " ".join(agent.heard())
    assert "needs you to log in. Type the number of a login to run it here" in heard


def test_not_now_leaves_the_login_to_the_user_and_says_what_to_run(tmp_path: Path) -> None:
    agent = AgentRun(tmp_path, env={**os.environ, "SDK_AGENT_NEEDS_LOGIN": "1"})
    agent.wait_for("needs you to log in. Type the number of a login")
    agent.answer("n")
    said = agent.wait_for("run in a terminal:")
    assert "--cli auth login" in said and "ANTHROPIC_API_KEY" in said
    assert agent.proc.wait(timeout=30) != 0
    assert not (agent.folder / "logged-in.txt").exists()


def test_a_killed_agent_is_said_with_its_running_command_and_never_its_debug_line(run) -> None:  # type: ignore[no-untyped-def]
    """Issue 31, item 7: killed mid-command, the agent "was killed by signal 9" (not "its
    process ended with status -9"), its command "did not finish" (not "timed out"), what it
    left running is said, and a debug line is not read as its last words."""
    agent = run()
    agent.type("sleep-killed 300")
    line = agent.wait_for("stopped unexpectedly")
    assert agent.quit() == 1
    heard = " ".join(agent.heard())
    assert "it was killed by signal 9" in heard, heard
    assert "The command sleep 300 did not finish: Scripted Agent stopped." in heard, heard
    assert "It left sleep 300 running; announcer stopped it." in heard, heard
    assert "timed out" not in heard and "never reported back" not in heard, heard
    assert "durationMs" not in heard and "durationMs" not in line, line


def test_the_code_and_addresses_an_agent_wrote_are_printed_whole_on_a_command(run) -> None:  # type: ignore[no-untyped-def]
    """Issue 31, item 14: speech says "code block, 2 lines, Python" and a URL by its host;
    ``:code`` and ``:links`` print them whole, as the agent wrote them."""
    agent = run()
    agent.type("code")
    agent.wait_for("Scripted Agent finished the turn.")
    agent.type(":code")
    agent.wait_for("def total(items):")
    agent.wait_for("    return sum(items)")
    agent.type(":links")
    agent.wait_for("https://packaging.python.org/en/latest/tutorials/packaging-projects/")
    assert agent.quit() == 0
    heard = " ".join(agent.heard())
    assert "code block, 2 lines, Python" in heard, heard
    assert "packaging-projects" not in heard  # speech keeps the host; the command has it all


def test_the_agents_prompt_suggestions_are_listed_on_suggestions(run) -> None:  # type: ignore[no-untyped-def]
    """Issue 33, item 5 (in part): both forms of a suggestion (ACP
    ``prompt_suggestions_update``; claude-agent-acp's ``session_info_update._meta``), the
    newest kept, blank ones left out, control characters never printed."""
    agent = run()
    agent.type(":suggestions")
    agent.wait_for("The agent has suggested nothing to send next.")
    agent.type("suggest")
    agent.wait_for("Scripted Agent finished the turn.")
    agent.type(":suggestions")
    agent.wait_for("1. Commit the fix")
    agent.wait_for("2. Open a pull request")
    agent.type(":suggestions 3")
    agent.wait_for("There is no suggestion 3; there are 2.")
    assert agent.quit() == 0
    assert not any("Run the tests" in line for line in agent.seen[-4:])
    assert not any("\x1b" in line for line in agent.seen)
