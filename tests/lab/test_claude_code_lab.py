"""The real Claude Code CLI against the fake model: what a listener hears of each scenario.

Each scenario runs once (``lab`` caches it); the stream is then heard at several
verbosities through the same adapter, engine and jsonl speech record as
``announcer watch --speech jsonl``. Denials, failures and the end are checked
sentence for sentence; the rest by counts.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from tests.lab.clis import claude_command, claude_env, run
from tests.lab.conftest import Lab, on_ci
from tests.lab.transcript import spoken
from tests.support.speech_record import records as records_of
from tests.support.speech_record import spoken_in

ROOT = Path(__file__).resolve().parents[2]
FMT = "claude-code"


def test_one_call_is_named_by_its_description_and_the_command_comes_at_detailed(lab: Lab):
    assert lab.claude_heard("one-tool") == [
        "Claude Code started in claude-one-tool.",
        "Running Bash: Print hello.",  # its end right after says nothing new (issue 30 8)
        "The command printed hello.",
        "Claude Code finished.",
    ]
    terse = lab.claude_heard("one-tool", "terse")
    assert terse[1:3] == ["Bash: Print hello.", "The command printed hello."]
    assert terse[-1] == "Claude Code finished." and "Done." not in terse
    detailed = lab.claude_heard("one-tool", "detailed")
    assert "Running Bash: Print hello. Command: echo hello" in detailed


def test_partial_messages_announce_each_call_once_with_its_input(lab: Lab):
    partial = lab.claude_heard("one-tool", partial="yes")
    assert partial.count("Running Bash: Print hello.") == 1
    assert "Running Bash." not in partial  # never before the input arrived
    assert partial[-2:] == ["The command printed hello.", "Claude Code finished."]
    many = lab.claude_heard("parallel", partial="yes")
    assert sorted(s for s in many if s.startswith("Running")) == [
        "Running Bash: Print one.",
        "Running Bash: Print three.",
        "Running Bash: Print two.",
    ]


def test_parallel_calls_are_told_apart_when_they_finish(lab: Lab):
    said = lab.claude_heard("parallel")
    finished = sorted(s for s in said if s.startswith("Bash finished"))
    every = [
        "Bash finished: Print one.",
        "Bash finished: Print three.",
        "Bash finished: Print two.",
    ]
    # each end names its call; the one whose end came right after its own start (the last
    # started, when its result comes first) says nothing new and is not said (issue 30 8)
    assert set(finished) <= set(every) and len(finished) >= 2, said
    terse = lab.claude_heard("parallel", "terse")
    done = [s for s in terse if s.startswith("Bash done")]
    every_done = ["Bash done: Print one.", "Bash done: Print three.", "Bash done: Print two."]
    assert set(done) <= set(every_done) and len(done) >= 2, terse


def test_several_calls_in_a_row(lab: Lab):
    said = lab.claude_heard("several")
    assert said[:2] == ["Claude Code started in claude-several.", "Let me look around."]
    assert sum(s.startswith("Running") for s in said) == 3
    # one after another, each end right after its own start: said by nothing new, so not
    # said (issue 30 item 8: "Bash finished: ls." right after "Running Bash: ls.")
    assert not [s for s in said if " finished" in s and s.startswith(("Bash", "Read"))], said
    assert "Running Read: notes.md in claude-several." in said
    assert not [s for s in said if "failed" in s]


def test_a_new_file_is_written_and_no_full_path_is_spoken(lab: Lab):
    result = lab.claude("edit")
    assert (result.folder / "hello.txt").read_text() == "hello from the lab\n"
    for verbosity in ("terse", "normal", "detailed"):
        said = spoken(FMT, result.stdout, verbosity=verbosity)
        assert not [s for s in said if str(result.folder) in s or "/" in s], said
    assert "Running Write: hello.txt in claude-edit." in lab.claude_heard("edit")


def test_a_failing_command_is_said_once_at_every_verbosity(lab: Lab):
    assert lab.claude_heard("fail").count("Bash failed. Exit code 2.") == 1
    assert lab.claude_heard("fail", "detailed").count("Bash failed. Exit code 2.") == 1
    assert not [s for s in lab.claude_heard("fail", "detailed") if "Bash failed: " in s]
    assert lab.claude_heard("fail", "terse").count("Bash failed.") == 1


def test_a_denied_call_is_a_denial_by_the_permission_settings_not_a_failure(lab: Lab):
    result = lab.claude("denied", permission_mode="default")
    final = json.loads(result.stdout.splitlines()[-1])
    assert [d["tool_name"] for d in final["permission_denials"]] == ["Bash"]
    said = spoken(FMT, result.stdout)
    assert "Bash was denied by the Claude Code permission settings." in said
    assert not [s for s in said if "failed" in s]
    assert said[-2:] == ["I could not remove the build folder.", "Claude Code finished."]
    assert "Bash denied." in spoken(FMT, result.stdout, verbosity="terse")
    detailed = spoken(FMT, result.stdout, verbosity="detailed")
    denial = next(s for s in detailed if "was denied" in s)
    assert "needs approval" in denial and str(result.folder) not in denial
    # an older stream without the system/permission_denied line: the result's
    # permission_denials still say it, at the end
    older = "\n".join(
        line for line in result.stdout.splitlines() if '"permission_denied"' not in line
    )
    said = spoken(FMT, older)
    assert said[-1] == "Claude Code finished. 1 tool call was denied: Bash."


def test_a_subagent_is_named_by_its_description_never_its_prompt(lab: Lab):
    said = lab.claude_heard("subagent")
    assert said.count("Starting a subagent: Count functions.") == 1
    assert said.count("Subagent finished: Count functions.") == 1
    assert not [s for s in said if "lab:sub-inner" in s or "your prompt" in s]
    assert "There are no Python files here." not in said  # the subagent's words to Claude
    assert said[-1] == "Claude Code finished."
    assert not [s for s in said if "session started" in s]
    # Claude Code prints two results: back to back at the end (one end is said), or one
    # before the subagent finishes and one after Claude went on (then it was resumed)
    ends = said.count("Claude Code finished.")
    assert ends == 1 or (ends == 2 and "Claude Code resumed the session." in said), said


def test_long_markdown_is_read_without_its_markup(lab: Lab):
    said = lab.claude_heard("markdown")
    assert len(said) >= 10
    assert not [s for s in said if any(mark in s for mark in ("**", "`", "##", "|"))]
    assert "The parser now accepts nested lists and keeps offsets exact." in said


def test_a_thought_is_its_headline_and_the_body_comes_at_detailed(lab: Lab):
    assert "Thinking: Checking the files." in lab.claude_heard("reasoning")
    detailed = lab.claude_heard("reasoning", "detailed")
    assert "Thinking: Checking the files. I should list the folder first." in detailed
    assert "Thinking." in lab.claude_heard("reasoning", "terse")


def test_an_api_error_is_said_once_and_nothing_starts_after_it(lab: Lab):
    result = lab.claude("api-error")
    assert result.returncode == 1
    said = spoken(FMT, result.stdout)
    assert said[-1] == "Error. Claude Code stopped with an error."
    assert sum("stopped with an error" in s for s in said) == 1
    assert sum("started" in s for s in said) == 1


def test_the_screen_reader_mode_watch_turns_on_is_accepted_by_the_real_cli(lab: Lab, tmp_path):
    help_text = run(
        [str(lab.clis.claude), "--help"], claude_env(lab.server.url, tmp_path / "h"), tmp_path
    ).stdout
    assert "--ax-screen-reader" in help_text
    env = claude_env(lab.server.anthropic_url, tmp_path / "home") | {"CLAUDE_AX_SCREEN_READER": "1"}
    done = run(claude_command(lab.clis, "lab:one-tool please"), env, tmp_path)
    assert done.returncode == 0
    assert spoken(FMT, done.stdout)[1:] == lab.claude_heard("one-tool")[1:]


def test_watch_runs_claude_through_npx_and_env_and_says_so(lab: Lab, tmp_path):
    """``announcer watch -- env ... npx claude ...``: the format through both launchers."""
    env = claude_env(lab.server.anthropic_url, tmp_path / "home")
    env["PYTHONPATH"] = str(ROOT)
    command = claude_command(lab.clis, "lab:fail please")
    command[0] = "claude"
    launcher = ["env", "LAB=1", "npx", "--prefix", str(lab.clis.folder), "--no-install"]
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
    assert "turned on Claude Code's screen-reader mode (CLAUDE_AX_SCREEN_READER=1)" in done.stderr
    records = records_of(done.stdout)
    said = spoken_in(records)
    assert said.count("Bash failed. Exit code 2.") == 1
    assert said[-1] == "Claude Code finished."
    assert Counter(r["session_id"] for r in records).most_common(1)[0][1] == len(records)


def test_watch_tells_claude_from_its_first_line_behind_a_script(lab: Lab, tmp_path):
    """A wrapper script hides the agent's name: the stream's first line names it."""
    script = tmp_path / "run-agent"
    script.write_text('#!/bin/sh\nexec "$@"\n')
    script.chmod(0o755)
    env = claude_env(lab.server.anthropic_url, tmp_path / "home")
    env["PYTHONPATH"] = str(ROOT)
    command = claude_command(lab.clis, "lab:one-tool please")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "announcer",
            "watch",
            "--speech",
            "jsonl",
            "--",
            str(script),
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
    said = [json.loads(line)["text"] for line in done.stdout.splitlines()]
    assert said[1:] == lab.claude_heard("one-tool")[1:]
    assert "cannot tell" not in done.stderr and "turned on" not in done.stderr


def interactive_screens(
    lab: Lab, tmp_path: Path, variants: dict[str, dict[str, str]]
) -> dict[str, str]:
    """Claude Code's interactive screen in a real terminal (tmux), once its first dialog shows,
    for each variant of its environment (started side by side, each in a tmux of its own)."""
    if shutil.which("tmux") is None:
        if on_ci():
            pytest.fail("tmux is missing (scripts/bootstrap.sh test installs it)")
        pytest.skip("tmux is not installed")
    sessions = {name: f"announcer-lab-{name}-{os.getpid()}" for name in variants}
    # a server of our own per variant, apart from anyone else's tmux
    tmux = {name: ["tmux", "-L", session] for name, session in sessions.items()}
    screens = dict.fromkeys(variants, "")
    try:
        for name, extra_env in variants.items():
            home, project = tmp_path / f"home-{name}", tmp_path / f"proj-{name}"
            project.mkdir()
            env = (
                claude_env(lab.server.anthropic_url, home) | extra_env | {"TERM": "xterm-256color"}
            )
            # skip the first-run theme picker and the folder trust question
            (home / ".claude.json").write_text(
                json.dumps(
                    {
                        "hasCompletedOnboarding": True,
                        "theme": "dark",
                        "projects": {str(project): {"hasTrustDialogAccepted": True}},
                    }
                )
            )
            assignments = [shlex.quote(f"{k}={v}") for k, v in env.items()]
            claude = [shlex.quote(str(lab.clis.claude)), "--model", "claude-sonnet-4-5"]
            shell = " ".join(["env", "-i", *assignments, *claude])
            where = ["-x", "100", "-y", "30", "-c", str(project)]
            subprocess.run(
                [*tmux[name], "new-session", "-d", "-s", sessions[name], *where, shell],
                check=True,
                timeout=30,
            )
        for _ in range(300):  # up to 60 s for the first dialogs
            for name in variants:
                if "API key" not in screens[name]:
                    screens[name] = subprocess.run(
                        [*tmux[name], "capture-pane", "-p", "-t", sessions[name]],
                        capture_output=True,
                        text=True,
                        timeout=30,
                        check=False,
                    ).stdout
            if all("API key" in screen for screen in screens.values()):
                break
            time.sleep(0.2)
        return screens
    finally:
        socket_dir = Path(os.environ.get("TMUX_TMPDIR") or "/tmp") / f"tmux-{os.getuid()}"
        for name, session in sessions.items():
            subprocess.run([*tmux[name], "kill-server"], timeout=30, check=False)
            (socket_dir / session).unlink(missing_ok=True)


def test_the_screen_reader_mode_flattens_claude_codes_interactive_screen(lab: Lab, tmp_path):
    """What watch's CLAUDE_AX_SCREEN_READER=1 does on the real CLI: flat text, no borders."""
    screens = interactive_screens(
        lab, tmp_path, {"plain": {}, "ax": {"CLAUDE_AX_SCREEN_READER": "1"}}
    )
    plain, flat = screens["plain"], screens["ax"]
    assert "API key" in plain and "API key" in flat, (plain, flat)
    assert "─" in plain  # the usual screen draws borders
    assert "Screen Reader Mode: on" in flat
    assert "─" not in flat and "❯" not in flat
