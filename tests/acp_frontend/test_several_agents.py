"""Several ACP agents side by side in one ``announcer agent``: the plain UI on pipes.

Two scripted SDK agents (tests/acp_frontend/sdk_agent.py, real child processes) are saved in the
settings file as ``[producers.alpha] source = "acp:..."`` and started together with
``announcer agent alpha beta``. Each logs what it RECEIVES (``prompts-alpha.txt``,
``answers-alpha.txt``) and writes its own files, so the tests check that a prompt and an
answer reach only the agent they were meant for; the jsonl record is what the user HEARS.
"""

from __future__ import annotations

import json
import shlex
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.acp_frontend.test_agent_command import TIMEOUT, AgentRun
from tests.support.processes import alive


def _agent_source(tag: str) -> str:
    return "acp:" + shlex.join([sys.executable, "-m", "tests.acp_frontend.sdk_agent", "--tag", tag])


def _config(tmp: Path, extra: dict[str, str] | None = None, head: str = "") -> Path:
    sources = {"alpha": _agent_source("alpha"), "beta": _agent_source("beta"), **(extra or {})}
    path = tmp / "settings.toml"
    path.write_text(
        head
        + "".join(
            f"[producers.{name}]\nsource = {_toml_string(source)}\n"
            for name, source in sources.items()
        ),
        encoding="utf-8",
    )
    return path


def _toml_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


@pytest.fixture
def agents(run: Callable[..., AgentRun], tmp_path: Path) -> Callable[..., AgentRun]:
    """``announcer agent NAME...`` with the agents saved in a settings file (alpha and beta
    by default), once it says it is starting them."""

    def start(*names: str, extra: dict[str, str] | None = None, head: str = "") -> AgentRun:
        config = _config(tmp_path, extra, head)
        return run(names=list(names or ("alpha", "beta")), config=config, ready="starting")

    return start


def _ready(run: AgentRun, *titles: str) -> None:
    """Every agent said it is ready, in whichever order they started."""
    said = [run.wait_for("is ready.") for _ in titles]
    for title in titles:
        assert any(f"{title} is ready." in line for line in said), said


def test_interleaved_output_is_named_and_a_prompt_reaches_only_its_target(agents) -> None:  # type: ignore[no-untyped-def]
    run = agents()
    _ready(run, "Alpha", "Beta")
    run.type("@alpha hello")
    run.type("@beta hello")  # both answer at once: their words interleave
    run.wait_for("finished the turn.")
    run.wait_for("finished the turn.")
    run.type("plan")  # no @: to the agent last addressed, beta
    run.wait_for("Beta finished the turn.")
    assert run.quit() == 0
    assert _lines(run.folder / "prompts-alpha.txt") == ["hello"]
    assert _lines(run.folder / "prompts-beta.txt") == ["hello", "plan"]
    heard = run.heard()
    # The agents' own words are named whenever the speaker changes; a sentence that
    # already names its agent ("Beta finished the turn.") is not named twice.
    assert any(t.startswith("alpha: ") for t in heard), heard
    assert any(t.startswith("beta: ") for t in heard), heard
    assert not any(t.startswith(("alpha: Alpha", "beta: Beta")) for t in heard), heard
    speaker = None
    for text in heard:
        named = next((n for n in ("alpha", "beta") if n in text.casefold()), None)
        if text in ("This is the scripted agent.", "Done.", "Working on the fix.", "Hello."):
            assert speaker is not None, f"{text!r} was said before any agent was named"
        if named:
            speaker = named
    # The plan was said once, for beta only.
    assert sum("Step 2 of 3" in t for t in heard) == 1


def test_two_agents_questions_are_answered_once_each_by_the_right_agent(agents) -> None:  # type: ignore[no-untyped-def]
    run = agents()
    _ready(run, "Alpha", "Beta")
    run.type("@alpha write")
    run.wait_for(
        "Accept or reject: Alpha wants to run: echo hello > out.txt? "
        "[a/r; always or never: from now on] (alpha)"
    )
    # A line starting with @ is a message even while a question is open: never an answer.
    run.type("@beta write")
    run.wait_for("Sent to beta:")
    run.answer("a")  # answers the question shown: alpha's (medium risk: one key)
    run.wait_for(
        "Accept or reject: Beta wants to run: echo hello > out.txt? "
        "[a/r; always or never: from now on] (beta)"
    )
    run.answer("r")
    run.wait_for("Beta finished the turn.")
    # Every echo of an answer names its agent (issue 31, item 3): beta's question may
    # come before alpha's "Sent", so an unnamed one sounds like an answer to beta.
    run.wait_for_each("Sent to alpha: accept.", "Sent to beta: reject.")
    assert not any(line.startswith("Sent: ") for line in run.seen), run.seen
    run.type("r")  # too late: nothing is open, and nothing is sent to anyone
    run.wait_for("No question is waiting")
    assert run.quit() == 0
    # What each agent received: exactly one answer, its own.
    assert _lines(run.folder / "answers-alpha.txt") == ["call-1 once"]
    assert _lines(run.folder / "answers-beta.txt") == ["call-1 no"]
    assert (run.folder / "out-alpha.txt").read_text() == "hello\n"
    assert not (run.folder / "out-beta.txt").exists()
    assert _lines(run.folder / "prompts-alpha.txt") == ["write"]
    assert _lines(run.folder / "prompts-beta.txt") == ["write"]
    heard = run.heard()
    questions = [t for t in heard if t.startswith("Confirmation needed.")]
    assert any("Alpha wants to run" in q for q in questions)
    assert any("Beta wants to run" in q for q in questions)
    assert any("waiting after this one" in t and "beta" in t for t in heard), heard


def test_one_agent_dying_is_said_and_the_other_keeps_working(agents) -> None:  # type: ignore[no-untyped-def]
    run = agents()
    _ready(run, "Alpha", "Beta")
    pids = {tag: int(_lines(run.folder / f"pid-{tag}.txt")[0]) for tag in ("alpha", "beta")}
    run.type("@beta die")
    run.wait_for("Beta stopped unexpectedly")
    run.type("@beta are you there")
    run.wait_for("beta has stopped; nothing was sent.")
    run.type(":to")
    run.wait_for("Agents: alpha: ready; beta: stopped.")
    run.type("@alpha hello")
    run.wait_for("Alpha finished the turn.")
    assert alive(pids["alpha"]), "the agent that did not die stopped"
    assert not alive(pids["beta"]), "the agent that died still runs"
    assert run.quit() == 1  # an agent stopped unexpectedly: the run did not go well
    assert _lines(run.folder / "prompts-beta.txt") == ["die"]  # never the later message
    assert _lines(run.folder / "prompts-alpha.txt") == ["hello"]
    deadline = time.monotonic() + TIMEOUT  # turns a hang into a failure; never a measure
    while alive(pids["alpha"]) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(pids["alpha"]), "the agent's process outlived announcer"
    heard = " ".join(run.heard())
    assert "the scripted agent crashed on purpose" in heard


def test_cancel_and_switch_act_on_the_named_agent_only(agents) -> None:  # type: ignore[no-untyped-def]
    run = agents()
    _ready(run, "Alpha", "Beta")
    run.type("@alpha wait")
    run.wait_for("Accept or reject: Alpha wants to run: rm -rf build?")
    run.type(":cancel beta")
    run.wait_for("beta is not working on anything.")
    run.type("@gamma hello")
    run.wait_for("No agent is called gamma. The agents are: alpha, beta.")
    run.type(":to beta")
    run.wait_for("Messages now go to beta.")
    run.type(":cancel alpha")
    run.wait_for("you cancelled it")
    assert (run.folder / "permission-outcome-alpha.txt").read_text() == "None"
    run.type("hello")  # to beta, the target now
    run.wait_for("Beta finished the turn.")
    run.type("@")  # as :agents
    run.wait_for("Messages go to beta. Agents: alpha: ")
    run.type("@alpha")  # as :to alpha
    run.wait_for("Messages now go to alpha.")
    run.type(":cancel")  # the target now: alpha, which is idle
    run.wait_for("alpha is not working on anything.")
    assert run.quit() == 0
    assert _lines(run.folder / "prompts-alpha.txt") == ["wait"]
    assert _lines(run.folder / "prompts-beta.txt") == ["hello"]
    assert _lines(run.folder / "answers-alpha.txt") == ["call-3 cancelled"]


def test_an_agent_that_cannot_start_is_said_and_the_others_run(agents) -> None:  # type: ignore[no-untyped-def]
    broken = "acp:" + shlex.join(
        [
            sys.executable,
            "-c",
            "import sys; print('no model configured', file=sys.stderr); sys.exit(3)",
        ]
    )
    run = agents("alpha", "broken", extra={"broken": broken})
    line, _ = run.wait_for_each("Giving up on broken", "Alpha is ready.")
    assert "no model configured" in line
    run.type("hello")
    run.wait_for("Alpha finished the turn.")
    assert run.quit() == 0
    assert not any("Retrying" in t for t in run.heard())


def test_options_after_the_names_are_options_and_the_command_follows_the_double_dash() -> None:
    import argparse

    from announcer.cli.main import build_parser

    argv = ["agent", "claude", "codex", "--cwd", "/tmp", "--ui", "none", "--", "my-agent", "--ui"]
    args = build_parser(argv).parse_args(argv)
    from announcer.cli.commands.agent import split_words

    split_words(args)
    assert isinstance(args, argparse.Namespace)
    assert (args.names, args.command, str(args.cwd), args.ui) == (
        ["claude", "codex"],
        ["my-agent", "--ui"],
        "/tmp",
        "none",
    )


def test_two_agents_with_one_short_name_get_two_names() -> None:
    from announcer.cli.acp_agents import AgentToStart, unique_labels

    found = unique_labels([AgentToStart(["x"], "claude", "claude")] * 2)
    assert [a.label for a in found] == ["claude", "claude2"]


def test_listen_hears_an_acp_agent_and_an_aaep_producer_in_one_engine(tmp_path: Path) -> None:
    """``listen alpha stdio:...``: a saved ``acp:`` agent beside an AAEP producer over stdio.

    Both questions are queued in one engine and each answer reaches its own source: the
    producer sends the email, the agent is refused and writes nothing.
    """
    root = Path(__file__).resolve().parents[2]
    producer = "stdio:" + shlex.join(
        [
            sys.executable,
            "-m",
            "announcer",
            "demo-producer",
            "--stdio",
            "--speed",
            "0.05",
            "--scenario",
            str(root / "tests" / "producer" / "scenarios" / "confirm.json"),
        ]
    )
    run = AgentRun(
        tmp_path, names=["alpha", producer], config=_config(tmp_path), subcommand="listen"
    )
    try:
        run.wait_for_each(
            "Accept or reject: Send the email to Alice? [a/r] (Test producer)", "Alpha is ready."
        )
        run.type("@alpha write")  # with the producer's question open: a message, not an answer
        run.wait_for("Sent to alpha:")
        # the producer's email cannot be unsent: two keys, once it has been heard
        run.answer_until("a", "Type c then Enter to confirm")
        run.type("c")
        run.wait_for(
            "Accept or reject: Alpha wants to run: echo hello > out.txt? "
            "[a/r; always or never: from now on] (alpha)"
        )
        run.answer("r")
        run.wait_for("Alpha finished the turn.")
    finally:
        assert run.quit() == 0
    assert _lines(run.folder / "answers-alpha.txt") == ["call-1 no"]
    assert not (run.folder / "out-alpha.txt").exists()
    heard = run.heard()
    assert "Email sent." in heard  # the producer received its accept
    # The producer's words are named too once the agent has spoken in between.
    assert any(t.startswith("Test producer: ") for t in heard), heard


def test_two_agents_speak_with_their_own_voices(agents) -> None:  # type: ignore[no-untyped-def]
    """Issue 33, item 4: each agent's words in the voice set for it (``agent_voices``), our
    own sentences in the user's; the jsonl record names the voice each line was said with."""
    run = agents(head='[agent_voices]\nalpha = "voice-a"\nbeta = "voice-b"\n\n')
    _ready(run, "Alpha", "Beta")
    run.type("@alpha hello")
    run.wait_for("Alpha finished the turn.")
    run.type("@beta hello")
    run.wait_for("Beta finished the turn.")
    assert run.quit() == 0
    records = [r for r in _records(run.record) if r["action"] == "speak"]
    alpha = [r for r in records if r["text"].startswith("alpha: ")]
    beta = [r for r in records if r["text"].startswith("beta: ")]
    assert alpha and beta, [r["text"] for r in records]
    assert {r.get("voice") for r in alpha} == {"voice-a"}
    assert {r.get("voice") for r in beta} == {"voice-b"}
    unvoiced = [r["text"] for r in records if "voice" not in r]
    assert any(text.startswith("Sent to alpha") for text in unvoiced), unvoiced


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def test_a_suggested_prompt_is_sent_with_one_command_to_the_agent_that_suggested_it(agents) -> None:  # type: ignore[no-untyped-def]
    """Issue 33, item 5: ``:suggestions NAME N`` sends that agent's Nth suggestion, to it
    only, and the echo says where it went."""
    run = agents()
    _ready(run, "Alpha", "Beta")
    run.type("@alpha suggest")
    run.wait_for("Alpha finished the turn.")
    run.type("@beta hello")
    run.wait_for("Beta finished the turn.")
    run.type(":suggestions beta")
    run.wait_for("The agent has suggested nothing to send next.")
    run.type(":suggestions alpha 1")
    run.wait_for("Sent to alpha: Commit the fix")
    run.wait_for("Alpha finished the turn.")
    assert run.quit() == 0
    assert _lines(run.folder / "prompts-alpha.txt") == ["suggest", "Commit the fix"]
    assert _lines(run.folder / "prompts-beta.txt") == ["hello"]
