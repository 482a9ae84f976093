"""`announcer agent --ui tui` in a real terminal (tmux), with the scripted SDK agent.

What Pilot cannot show: the keys as a terminal really sends them, several in one read.
Ctrl+J arrives as a line feed and must make a new line, Enter must send (after every
letter typed before it), a capital R (Shift+R) must start "reject always", Shift+A and
Enter typed together must be "allow always", and a lone Escape must reach the app. The agent
(tests/acp_frontend/sdk_agent.py) is a real child process and records the option it received.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.processes import alive, children, command_line, descendants
from tests.support.speech_record import spoken_in
from tests.support.terminal import Terminal
from tests.support.waiting import wait_until

WORKTREE = Path(__file__).resolve().parents[2]
TIMEOUT = 90.0
# No wait before a key works (0 turns the arming interval off): these tests are about the
# keys a terminal sends and the processes a closed terminal ends, not about the interval,
# which tests/ui/test_key_timing.py, tests/engine and tests/ui/test_tmux_e2e.py check at
# its real length. A key then works as soon as its dialog or list is there.
ARMING = 0.0


def wait_for(condition: Callable[[], bool], what: str, seen: Callable[[], str] = str) -> None:
    """``wait_until``, and what the terminal showed and said if it never came."""
    try:
        wait_until(condition, what, timeout=TIMEOUT, poll=0.1)
    except AssertionError as gave_up:
        raise AssertionError(f"{gave_up}; {seen()}") from None


def _agent(tmp_path: Path, ui: str, *, env: str = "", then: str = "") -> tuple[str, Path, Path]:
    """The shell line that starts ``announcer agent --ui UI`` with the scripted agent (its
    ``env`` words before it), its working folder and its speech record. Without ``then``
    announcer is exec'd (the window is announcer); with it, announcer runs from the shell
    and ``then`` follows it, as from a user's shell."""
    folder = tmp_path / "work"
    folder.mkdir()
    speech_log = tmp_path / "speech.jsonl"
    command = (
        f"cd {WORKTREE} && PYTHONPATH={WORKTREE} ANNOUNCER_CONFIG={tmp_path / 'none.toml'} "
        f"ANNOUNCER_ANSWER_ARMING_SECONDS={ARMING} {env}"
        f"{'' if then else 'exec '}{sys.executable} -m announcer agent --ui {ui} "
        f"--speech jsonl:{speech_log} "
        f"--cwd {folder} -- {sys.executable} -m tests.acp_frontend.sdk_agent{then}"
    )
    return command, folder, speech_log


def _heard(speech_log: Path) -> Callable[[str], Callable[[], bool]]:
    """``heard(text)``: a condition, true once ``text`` was said (in part of an utterance)."""
    return lambda text: lambda: any(text in t for t in spoken_in(speech_log))


def test_the_message_box_and_reject_always_with_real_terminal_keys(
    tmp_path: Path, terminal: Terminal
) -> None:
    tmux = terminal.tmux
    command, folder, speech_log = _agent(tmp_path, "tui")
    session = terminal.start(command, name="announcer-agent")
    heard = _heard(speech_log)

    def screen() -> str:
        return terminal.screen(session)

    def spoken() -> list[str]:
        return spoken_in(speech_log)

    def choices() -> list[str]:
        path = folder / "choices.txt"
        return path.read_text().split() if path.exists() else []

    def state() -> str:
        return f"screen:\n{screen()}\nheard: {spoken()}"

    try:
        wait_for(heard("Scripted Agent is ready."), "the agent to start", state)
        wait_for(lambda: "Message to Scripted Agent" in screen(), "the message box", state)
        # the welcome is said once the box has the focus: typing starts after it
        wait_for(heard("type, then press Enter. F1 for help."), "the welcome", state)
        # Typed fast, with the new line and Enter right behind the letters (as a fast
        # typist or a paste sends them): every letter lands before the Enter sends.
        tail = "there " + "quick " * 30 + "end."
        tmux("send-keys", "-t", session, "-l", "hello")
        tmux("send-keys", "-t", session, "C-j")  # a line feed: a new line, not a send
        tmux("send-keys", "-t", session, "-l", tail)
        tmux("send-keys", "-t", session, "Enter")
        wait_for(heard("Sent to Scripted Agent: hello there quick"), "the message sent", state)
        wait_for(heard("Scripted Agent finished the turn."), "the turn's end", state)

        # what is said can come before the screen is drawn again (seen beside stress-ng)
        def transcript() -> str:
            return " ".join(tmux("capture-pane", "-p", "-J", "-t", session).split())

        wait_for(lambda: f"You: hello {tail}" in transcript(), "the message shown", state)
        assert heard("New line.")()
        tmux("send-keys", "-t", session, "Escape")  # nothing runs: said so
        wait_for(heard("Scripted Agent is not working on anything."), "the Escape", state)
        tmux("send-keys", "-t", session, "-l", "write")
        tmux("send-keys", "-t", session, "Enter")
        wait_for(lambda: "Reject (R)" in screen(), "the permission dialog", state)
        wait_for(heard("Shift+A allows it from now on"), "the always keys said", state)
        tmux("send-keys", "-t", session, "R")  # Shift+R as the terminal sends it
        wait_for(heard("Always reject: Scripted Agent wants to run"), "the second step", state)
        assert choices() == []
        tmux("send-keys", "-t", session, "Enter")
        wait_for(lambda: choices() == ["never"], "the agent's reject-always option", state)
        wait_for(heard("finished the turn"), "the turn's end", state)
        assert not (folder / "out.txt").exists()
        # Shift+A and Enter in one breath (one read by the terminal): the dialog still
        # takes them in order, so it is allow always, not Enter on the focused Reject.
        tmux("send-keys", "-t", session, "-l", "write")
        tmux("send-keys", "-t", session, "Enter")
        wait_for(lambda: "Reject (R)" in screen(), "the second dialog", state)
        # the dialog said its keys again: it is up and takes them
        wait_for(
            lambda: sum("Shift+A allows it from now on" in t for t in spoken()) == 2,
            "the second dialog's keys said",
            state,
        )
        tmux("send-keys", "-t", session, "A", "Enter")
        wait_for(lambda: choices() == ["never", "always"], "allow always", state)
        wait_for(lambda: (folder / "out.txt").exists(), "the file the agent writes", state)
    finally:
        terminal.end(session)


def test_the_agents_terminal_login_runs_with_the_app_suspended(
    tmp_path: Path, terminal: Terminal
) -> None:
    """ACP terminal auth in the Textual UI: the agent needs a login and offers one of type
    terminal; the list says it, Enter runs it in this terminal with the app suspended (the
    login reads the user's own keys), and on its success the agent starts and its session
    opens."""
    tmux = terminal.tmux
    command, folder, speech_log = _agent(tmp_path, "tui", env="SDK_AGENT_NEEDS_LOGIN=1 ")
    session = terminal.start(command, name="announcer-login")
    heard = _heard(speech_log)

    def screen() -> str:
        return terminal.screen(session, gone="(announcer has ended)")

    def spoken() -> list[str]:
        return spoken_in(speech_log)

    def state() -> str:
        return f"screen:\n{screen()}\nheard: {spoken()}"

    announcer = terminal.pane_pid(session)
    started: set[int] = set()
    try:
        wait_for(
            heard("needs you to log in. Enter runs the login you pick here."), "the offer", state
        )
        assert any("Claude Subscription: python" in t for t in spoken()), state()
        wait_for(lambda: "Not now" in screen(), "the list", state)
        tmux("send-keys", "-t", session, "Enter")  # the first login
        wait_for(lambda: "Scripted login. Type yes to log in:" in screen(), "the login", state)
        tmux("send-keys", "-t", session, "-l", "yes")
        tmux("send-keys", "-t", session, "Enter")
        wait_for(heard("The login is done."), "the login's end", state)
        wait_for(heard("is ready."), "the agent's session", state)
        assert (folder / "logged-in.txt").read_text() == "terminal\n"
        started.update(descendants(announcer))
    finally:
        terminal.end(session)
    # the closed terminal ends announcer and everything it started: nothing spins on after
    wait_for(lambda: not any(alive(pid) for pid in {announcer, *started}), "all to end")


def _start_a_login(
    tmp_path: Path, terminal: Terminal, ui: str
) -> tuple[str, int, list[int], Callable[[], str]]:
    """``announcer agent --ui UI`` in tmux with an agent that needs a terminal login, the
    login picked and running (it has the terminal): the tmux session, announcer's pid, the
    processes it has started (the login among them) and a description for failures."""
    # not exec'd: as from a shell, announcer's end alone hangs up nothing in the terminal
    command, _folder, speech_log = _agent(
        tmp_path, ui, env="SDK_AGENT_NEEDS_LOGIN=1 ", then="; sleep 600"
    )
    session = terminal.start(command, name="announcer-login")
    shell = terminal.pane_pid(session)

    def screen() -> str:
        return terminal.screen(session, gone="(the terminal has closed)")

    def announcers() -> list[int]:
        return [pid for pid in children(shell) if "-m announcer" in command_line(pid)]

    wait_for(lambda: bool(announcers()), "announcer to start", screen)
    announcer = announcers()[0]

    def spoken() -> list[str]:
        return spoken_in(speech_log)

    def state() -> str:
        running = {pid: command_line(pid) for pid in [announcer, *descendants(announcer)]}
        return f"screen:\n{screen()}\nheard: {spoken()}\nrunning: {running}"

    wait_for(lambda: any("needs you to log in" in t for t in spoken()), "the offer", state)
    if ui == "tui":
        wait_for(lambda: "Not now" in screen(), "the list", state)
        terminal.type(session, "Enter")  # the first login
    else:
        # the offer is said once its number is taken (no arming wait: ARMING)
        terminal.type(session, "1", literally=True)
        terminal.type(session, "Enter")
    wait_for(lambda: "Scripted login. Type yes to log in:" in screen(), "the login", state)

    def the_login() -> list[int]:
        return [pid for pid in descendants(announcer) if "auth login" in command_line(pid)]

    wait_for(lambda: bool(the_login()), "the login's process", state)
    return session, announcer, descendants(announcer), state


@pytest.mark.parametrize("ui", ["tui", "plain"])
def test_a_closed_terminal_during_the_login_ends_announcer_its_agent_and_the_login(
    tmp_path: Path, terminal: Terminal, ui: str
) -> None:
    """The terminal closes (its tmux server is killed) while the login has it and the
    Textual app is suspended: SIGHUP ends announcer, its agent and the login, and nothing
    is left spinning on the dead terminal."""
    _session, announcer, started, state = _start_a_login(tmp_path, terminal, ui)
    assert started, state()
    terminal.close()
    wait_for(
        lambda: not any(alive(pid) for pid in [announcer, *started]),
        "announcer, its agent and the login to end",
        lambda: str({pid: command_line(pid) for pid in [announcer, *started] if alive(pid)}),
    )


@pytest.mark.parametrize("ui", ["tui", "plain"])
def test_sigterm_during_the_login_ends_announcer_its_agent_and_the_login(
    tmp_path: Path, terminal: Terminal, ui: str
) -> None:
    """A kill (SIGTERM) to announcer while the login has the terminal (the Textual app
    suspended): the loop still hears it, the login is ended with announcer, and so is the
    agent."""
    _session, announcer, started, state = _start_a_login(tmp_path, terminal, ui)
    os.kill(announcer, signal.SIGTERM)
    wait_for(
        lambda: not any(alive(pid) for pid in [announcer, *started]),
        "announcer, its agent and the login to end",
        state,
    )


def test_the_app_ends_instead_of_spinning_when_its_input_has_ended(
    tmp_path: Path, terminal: Terminal
) -> None:
    """Standard input at its end (here /dev/null; a closed terminal reads the same): the
    app's input reader takes the first empty read as the end, so announcer ends with its
    agent instead of reading nothing at full CPU for as long as the window stays open."""
    command, _folder, _speech = _agent(
        tmp_path, "tui", then=" < /dev/null; echo announcer ended; sleep 600"
    )
    session = terminal.start(command, name="announcer-eof")
    shell = terminal.pane_pid(session)
    seen: set[int] = set()

    def announcer_ended() -> bool:
        seen.update(pid for pid in descendants(shell) if "sleep" not in command_line(pid))
        return "announcer ended" in terminal.screen(session)

    wait_for(announcer_ended, "announcer to end", lambda: str(sorted(seen)))
    wait_for(lambda: not any(alive(pid) for pid in seen), "its agent to end")
