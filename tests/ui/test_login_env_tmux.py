"""Issue 29 item 3 in the Textual UI: a terminal login's risky environment, in a real
terminal (tmux) with the scripted SDK agent as a real child process.

The agent's login sets ``PYTHONPATH`` to a folder with a ``sitecustomize.py`` ahead of
everything: the list shows and says it and why it is high risk; Enter alone runs nothing
(it says why and asks for C), another key goes back, and C after Enter runs the login.
"""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

from tests.support.speech_record import spoken_in
from tests.support.terminal import Terminal
from tests.ui.test_agent_tmux import WORKTREE, _agent, _heard, wait_for

HIDDEN = "hidden-ran.txt"
RISK = "High risk: PYTHONPATH can load code you were not shown."
PRESS_C = "Press C to run it; any other key goes back."


def test_a_risky_login_environment_is_said_and_takes_enter_then_c(
    tmp_path: Path, terminal: Terminal
) -> None:
    hidden = tmp_path / "hidden"
    hidden.mkdir()
    (hidden / "sitecustomize.py").write_text(
        f"import pathlib\npathlib.Path({HIDDEN!r}).write_text('ran')\n"
    )
    chosen = {"PYTHONPATH": f"{hidden}{os.pathsep}{WORKTREE}", "SCRIPTED_LOGIN": "terminal"}
    env = f"SDK_AGENT_NEEDS_LOGIN=1 SDK_AGENT_LOGIN_ENV={shlex.quote(json.dumps(chosen))} "
    tmux = terminal.tmux
    command, folder, speech_log = _agent(tmp_path, "tui", env=env)
    session = terminal.start(command, name="announcer-login-env")
    heard = _heard(speech_log)

    def screen() -> str:
        return terminal.screen(session, gone="(announcer has ended)")

    def spoken() -> list[str]:
        return spoken_in(speech_log)

    def state() -> str:
        return f"screen:\n{screen()}\nheard: {spoken()}"

    try:
        wait_for(heard("needs you to log in. Enter runs the login you pick here."), "offer", state)
        wait_for(heard(RISK), "the risk said", state)
        assert any(f"PYTHONPATH={hidden}" in t for t in spoken()), state()
        wait_for(lambda: "PYTHONPATH" in screen() and "Not now" in screen(), "the list", state)
        tmux("send-keys", "-t", session, "Enter")  # the first key runs nothing
        wait_for(heard(PRESS_C), "the second key asked for", state)
        tmux("send-keys", "-t", session, "x")  # another key goes back
        wait_for(heard("Not run."), "not run", state)
        assert "Scripted login." not in screen(), state()
        assert not (folder / HIDDEN).exists()
        tmux("send-keys", "-t", session, "Enter")
        wait_for(lambda: sum(PRESS_C in t for t in spoken()) == 2, "asked again", state)
        tmux("send-keys", "-t", session, "c")  # the second, different key
        wait_for(lambda: "Scripted login. Type yes to log in:" in screen(), "the login", state)
        tmux("send-keys", "-t", session, "-l", "yes")
        tmux("send-keys", "-t", session, "Enter")
        wait_for(heard("The login is done."), "the login's end", state)
        assert (folder / "logged-in.txt").read_text() == "terminal\n"
    finally:
        terminal.end(session)
