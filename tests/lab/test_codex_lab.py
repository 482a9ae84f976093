"""The real Codex CLI (``codex exec --json``) against the fake model: what a listener hears.

Codex 0.169 with a model it has no metadata for reports that as an ``error`` item
first: a warning, heard as one, never as "Codex error".
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.lab.clis import codex_command, codex_env
from tests.lab.conftest import Lab
from tests.lab.transcript import spoken

ROOT = Path(__file__).resolve().parents[2]
FMT = "codex"
WARNING = (
    "Codex warning: Model metadata for gpt-lab-model not found. Defaulting to fallback "
    "metadata; this can degrade performance and cause issues."
)


def test_one_command_is_unwrapped_and_the_end_is_said_once(lab: Lab):
    said = lab.codex_heard("one-tool")
    # Status lines fit the time at normal verbosity (issue 20 item 2): the warning is cut
    # at a sentence end.
    assert said[1] in (WARNING, "Codex warning: Model metadata for gpt-lab-model not found.…")
    assert said[:1] + said[2:] == [
        "Codex started.",
        "Codex is working.",
        "Running shell: echo hello.",  # its end right after says nothing new (issue 30 8)
        "The command printed hello.",
        "Codex finished.",
    ]
    terse = lab.codex_heard("one-tool", "terse")
    assert terse[-3:] == [
        "Shell: echo hello.",
        "The command printed hello.",
        "Codex finished.",
    ]
    assert not [s for s in terse if s in ("Shell.", "Done.")]
    for verbosity in ("terse", "normal", "detailed"):
        said = lab.codex_heard("one-tool", verbosity)
        assert not [s for s in said if "/bin/bash" in s or "Codex error" in s]
        assert not [s for s in said if "finished the turn" in s]


def test_commands_in_a_row_and_in_parallel(lab: Lab):
    for scenario, count in (("several", 3), ("parallel", 3)):
        said = lab.codex_heard(scenario)
        assert sum(s.startswith("Running shell: ") for s in said) == count
        finished = [s for s in said if s.startswith("Shell finished")]
        # Codex runs parallel calls one after another or at once (it varies): an end that
        # comes right after its own start says nothing new and is not said (issue 30 item
        # 8); any other end names its call
        assert len(finished) < count or scenario == "parallel", said
        running = {s.removeprefix("Running shell: ") for s in said if s.startswith("Running")}
        assert all(s.removeprefix("Shell finished: ") in running for s in finished), said
        assert said[-1] == "Codex finished."
    assert {"Running shell: echo one.", "Running shell: echo two."} <= set(
        lab.codex_heard("parallel")
    )


def test_a_new_file_is_created_not_edited_in_a_patch(lab: Lab):
    result = lab.codex("edit")
    assert (result.folder / "hello.txt").read_text() == "hello from the lab\n"
    said = lab.codex_heard("edit")
    assert "Creating hello.txt." in said
    assert not [s for s in said if "in patch" in s or "/" in s]


def test_a_failing_command_is_said_once_at_every_verbosity(lab: Lab):
    assert lab.codex_heard("fail").count("Shell failed. Exit code 2.") == 1
    assert lab.codex_heard("fail", "detailed").count("Shell failed. Exit code 2.") == 1
    assert lab.codex_heard("fail", "terse").count("Shell failed.") == 1


def test_a_thought_is_heard_as_headline_then_body(lab: Lab):
    said = lab.codex_heard("reasoning")
    assert said[3:5] == [
        "Thinking: Checking the files.",
        "I thought about it: nothing needs to change.",
    ]
    assert "Thinking: Checking the files. I should list the folder first." in lab.codex_heard(
        "reasoning", "detailed"
    )


def test_an_api_failure_is_said_once_and_nothing_starts_after_it(lab: Lab):
    result = lab.codex("api-error")
    assert result.returncode == 1
    kinds = [json.loads(line)["type"] for line in result.stdout.splitlines()]
    assert kinds[-2:] == ["error", "turn.failed"]  # Codex reports the failure twice
    said = spoken(FMT, result.stdout)
    assert said[-1] == "Error. Codex failed: lab: the request was refused."
    assert sum("refused" in s for s in said) == 1
    assert said.count("Codex started.") == 1 and said[0] == "Codex started."


def test_an_escalation_refused_by_exec_leaves_no_line_so_nothing_ran(lab: Lab):
    """``codex exec`` refuses ``require_escalated`` on stderr only: no command is announced."""
    result = lab.codex("denied")
    assert "approval policy is Never" in result.stderr
    said = lab.codex_heard("denied")
    assert not [s for s in said if "rm -rf" in s]
    assert said[-2:] == ["I could not remove the build folder.", "Codex finished."]


def test_long_markdown_is_read_without_its_markup(lab: Lab):
    said = lab.codex_heard("markdown")
    assert len(said) >= 10
    assert not [s for s in said if any(mark in s for mark in ("**", "`", "##", "|"))]


def test_watch_runs_codex_through_npx_without_a_quiet_mode_it_cannot_verify(lab: Lab, tmp_path):
    env = codex_env(lab.server.openai_url, tmp_path / "home")
    env["PYTHONPATH"] = str(ROOT)
    command = codex_command(lab.clis, "lab:fail please")
    command[0] = "codex"
    launcher = ["npx", "--prefix", str(lab.clis.folder), "--no-install"]
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "announcer",
            "watch",
            "--speech",
            "jsonl",
            "--",
            *launcher,
            *command,
        ],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "turned on" not in done.stderr
    said = [json.loads(line)["text"] for line in done.stdout.splitlines()]
    assert said.count("Shell failed. Exit code 2.") == 1
    assert said[-1] == "Codex finished."


def test_a_subagent_is_started_without_reading_its_prompt(lab: Lab):
    """Codex's spawn_agent (multi_agent_v1) is a ``collab_tool_call`` item."""
    result = lab.codex("subagent")
    assert '"collab_tool_call"' in result.stdout
    said = lab.codex_heard("subagent")
    assert said[3:5] == ["Starting a subagent.", "The subagent started."]
    assert not [s for s in said if "lab:sub-inner" in s]
    assert said[-1] == "Codex finished."
    # the subagent really ran: it asked the fake model with its own prompt
    assert [r for r in lab.server.requests_for("sub-inner") if r.path.endswith("/responses")]
