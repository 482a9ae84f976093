"""Issue 29 item 3: an ACP terminal login's environment, shown, said and weighed.

``announcer agent --ui plain`` on pipes with the scripted SDK agent as a real child
process. Its terminal login (ACP ``authMethods``, type ``terminal``) carries an ``env`` the
agent chose: here a ``PYTHONPATH`` that puts a folder with a ``sitecustomize.py`` first,
so the login would run code the user was never shown. The offer shows and says every
variable beyond the harmless few, says why it is high risk, and takes a second line (C)
before the login runs; anything else runs nothing.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.acp_frontend.test_agent_command import ROOT, AgentRun

HIDDEN = "hidden-ran.txt"


def _hidden_code(tmp_path: Path) -> Path:
    """A folder whose sitecustomize.py leaves a mark in the working folder when it runs."""
    folder = tmp_path / "hidden"
    folder.mkdir()
    (folder / "sitecustomize.py").write_text(
        f"import pathlib\npathlib.Path({HIDDEN!r}).write_text('ran')\n"
    )
    return folder


def test_a_login_with_pythonpath_is_shown_said_and_takes_two_lines(tmp_path: Path) -> None:
    hidden = _hidden_code(tmp_path)
    chosen = {"PYTHONPATH": f"{hidden}{os.pathsep}{ROOT}", "SCRIPTED_LOGIN": "terminal"}
    agent = AgentRun(
        tmp_path,
        env={
            **os.environ,
            "SDK_AGENT_NEEDS_LOGIN": "1",
            "SDK_AGENT_LOGIN_ENV": json.dumps(chosen),
        },
    )
    try:
        agent.wait_for("needs you to log in. Type the number of a login")
        agent.wait_for("  1. Claude Subscription: ")
        shown = agent.wait_for("It runs with ")
        assert f"PYTHONPATH={hidden}" in shown and "SCRIPTED_LOGIN=terminal" in shown
        risk = agent.wait_for("High risk: ")
        assert "PYTHONPATH can load code you were not shown." in risk
        agent.answer("1")  # one line: the login does not run yet
        agent.wait_for("Run login 1? Type c then Enter to run it")
        agent.type("yes")  # anything else goes back
        agent.wait_for("Not run.")
        assert not (agent.folder / HIDDEN).exists()
        assert not any("Scripted login." in line for line in agent.seen)
        agent.answer("1")
        agent.wait_for("Run login 1?")
        agent.type("c")  # the second, different line: the user chose it, told why
        agent.wait_for("Scripted login. Type yes to log in:")
        agent.type("yes")
        agent.wait_for("The login is done.")
        agent.wait_for("is ready.")
    finally:
        assert agent.quit() == 0
    assert (agent.folder / "logged-in.txt").read_text() == "terminal\n"
    heard = " ".join(agent.heard())
    assert f"PYTHONPATH={hidden}" in heard
    assert "High risk: PYTHONPATH can load code you were not shown." in heard


def test_an_ordinary_variable_is_shown_and_said_and_one_line_runs_it(tmp_path: Path) -> None:
    agent = AgentRun(tmp_path, env={**os.environ, "SDK_AGENT_NEEDS_LOGIN": "1"})
    try:
        agent.wait_for("  1. Claude Subscription: ")
        assert agent.wait_for("It runs with ").strip() == "It runs with SCRIPTED_LOGIN=terminal."
        agent.answer("1")
        agent.wait_for("Scripted login. Type yes to log in:")
        agent.type("yes")
        agent.wait_for("is ready.")
    finally:
        assert agent.quit() == 0
    assert not any("High risk" in line for line in agent.seen)
    assert "It runs with SCRIPTED_LOGIN=terminal." in " ".join(agent.heard())
