"""``announcer agent`` with the real ACP adapters from npm, offline against the lab's fake model.

claude-agent-acp and codex-acp (pinned in tests/lab/clis.py) run as the user would start
them; the fake Anthropic and OpenAI servers script the model. What the producer receives
is what the agent really did on disk: allow lets ``rm -rf build`` remove the folder,
reject and cancel leave it. What the user hears is the jsonl speech record.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.acp_frontend.test_agent_command import AgentRun
from tests.lab.clis import (
    Clis,
    acp_adapter,
    claude_env,
    codex_env,
    codex_sandbox_path,
    copilot_env,
    gemini_env,
    opencode_env,
    qwen_env,
)
from tests.lab.fake_model import EDIT_FILE, EDIT_TEXT, FakeModelServer

#: announcer's flags in every lab run: the fastest pace a user can set (``pace_wpm``, 600).
#: A risky accept waits until its question was said through at the user's pace (issue 20,
#: engine/answer_guard.py); at the default 180 that is 20 s and more of "Not yet." for a
#: long question. These tests are about what the agent asks and does, not about that wait
#: (tests/engine and tests/ui prove the rule; tests/lab/test_pace_lab.py hears at 600 too).
LISTENER = ("--pace", "600")

#: how each preset started by name reaches the fake model (environment and settings only)
LAB_AGENT_ENV = {
    "qwen": qwen_env,
    "opencode": opencode_env,
    "gemini": gemini_env,
    "copilot": copilot_env,
}


def asking_claude_home(home: Path) -> None:
    """Claude's own setting for the preset's mode (``default``: it asks), in the scratch HOME.

    The preset sets it as a config option once the session is open; until announcer's
    ACP client applies config options, the lab's Claude gets it from its settings file
    (tests/lab/test_presets_lab.py proves the config option itself).
    """
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"permissions": {"defaultMode": "default"}}))


def claude_agent(tmp: Path, clis: Clis, fake_model: FakeModelServer) -> AgentRun:
    env = {**os.environ, **claude_env(fake_model.anthropic_url, tmp / "home")}
    asking_claude_home(tmp / "home")
    run = AgentRun(tmp, *LISTENER, agent=[str(acp_adapter(clis, "claude-agent-acp"))], env=env)
    (run.folder / "build").mkdir()
    (run.folder / "build" / "keep.txt").write_text("built\n")
    return run


def test_claude_code_acp_allow_really_removes_the_folder(
    tmp_path: Path, clis: Clis, fake_model: FakeModelServer
) -> None:
    agent = claude_agent(tmp_path, clis, fake_model)
    try:
        agent.wait_for("is ready.")
        agent.type("lab:denied please")
        question = agent.wait_for("Confirmation needed.")
        assert "rm -rf build" in question and "High risk." in question
        agent.wait_for("Accept or reject")
        # the second, confirming key is asked for once the question was heard (issue 20)
        agent.answer_until("a", "to confirm")
        agent.type("c")
        agent.wait_for("finished the turn.")
        assert not (agent.folder / "build").exists()
    finally:
        assert agent.quit() == 0


def test_claude_code_acp_reject_really_keeps_the_folder(
    tmp_path: Path, clis: Clis, fake_model: FakeModelServer
) -> None:
    agent = claude_agent(tmp_path, clis, fake_model)
    try:
        agent.wait_for("is ready.")
        agent.type("lab:denied please")
        agent.wait_for("Accept or reject")
        agent.answer("r")
        agent.wait_for("finished the turn.")
        assert (agent.folder / "build" / "keep.txt").exists()
    finally:
        assert agent.quit() == 0
    heard = agent.heard()
    assert any(t.startswith("Confirmation needed.") for t in heard)
    # A refused call is not read out again as a failure afterwards: it is the user's reject.
    assert not any("failed" in t.lower() for t in heard), [t for t in heard if "ail" in t]
    assert "You rejected: rm -rf build." in heard


def test_claude_code_acp_cancel_mid_turn_withdraws_the_question(
    tmp_path: Path, clis: Clis, fake_model: FakeModelServer
) -> None:
    agent = claude_agent(tmp_path, clis, fake_model)
    try:
        agent.wait_for("is ready.")
        agent.type("lab:denied please")
        agent.wait_for("Accept or reject")
        agent.type(":cancel")
        agent.wait_for("you cancelled it")
        assert (agent.folder / "build" / "keep.txt").exists()
    finally:
        assert agent.quit() == 0
    assert "You stopped the turn, so the question was withdrawn." in " ".join(agent.heard())


def test_codex_acp_is_heard_through_the_engine(
    tmp_path: Path, clis: Clis, fake_model: FakeModelServer
) -> None:
    env = {**os.environ, **codex_env(fake_model.openai_url, tmp_path / "home")}
    env["PATH"] = os.pathsep.join(p for p in (codex_sandbox_path(clis), env["PATH"]) if p)
    agent = AgentRun(tmp_path, *LISTENER, agent=[str(acp_adapter(clis, "codex-acp"))], env=env)
    try:
        agent.wait_for("is ready.")
        agent.type("lab:one-tool please")
        agent.wait_for("Codex finished the turn.")
    finally:
        assert agent.quit() == 0
    heard = agent.heard()
    assert "The command printed hello." in heard
    assert any(t.startswith("Echo hello") for t in heard)


def test_claude_agent_acp_offers_no_always_for_a_command_and_always_answers_nothing(
    tmp_path: Path, clis: Clis, fake_model: FakeModelServer
) -> None:
    """claude-agent-acp 0.101.0 offers only Yes and No for a command (its "always" options
    change modes, which the plan-approval tests cover): the question names no "always",
    an "always" line is refused in words and sends nothing, and the reject still works."""
    agent = claude_agent(tmp_path, clis, fake_model)
    try:
        agent.wait_for("is ready.")
        agent.type("lab:denied please")
        question = agent.wait_for("Confirmation needed.")
        assert "rm -rf build" in question and "always" not in question.lower()
        agent.wait_for("Accept or reject")
        agent.answer_until("always", "offers no always answer")
        agent.answer("r")
        agent.wait_for("finished the turn.")
        assert (agent.folder / "build").exists()
    finally:
        assert agent.quit() == 0
    heard = agent.heard()
    assert sum(t.startswith("Confirmation needed.") for t in heard) == 1


def test_claude_code_acp_and_codex_acp_side_by_side(
    tmp_path: Path, clis: Clis, fake_model: FakeModelServer
) -> None:
    """``announcer agent claude codex``: the real adapters at once, each answered on its own.

    claude asks to ``rm -rf build`` while codex runs its own command; the accept goes to
    claude only (the folder really goes), and codex's words are heard, named.
    """
    home = tmp_path / "home"
    env = {
        **os.environ,
        **claude_env(fake_model.anthropic_url, home),
        **codex_env(fake_model.openai_url, home),
    }
    asking_claude_home(home)
    bin_dir = str(acp_adapter(clis, "claude-agent-acp").parent)
    env["PATH"] = os.pathsep.join(p for p in (bin_dir, codex_sandbox_path(clis), env["PATH"]) if p)
    run = AgentRun(tmp_path, *LISTENER, env=env, names=["claude", "codex"])
    (run.folder / "build").mkdir()
    (run.folder / "build" / "keep.txt").write_text("built\n")
    try:
        ready = [run.wait_for("is ready."), run.wait_for("is ready.")]
        assert any("Claude is ready." in r for r in ready) and any("Codex" in r for r in ready)
        run.type("@claude lab:denied please")
        question = run.wait_for("Confirmation needed.")
        assert "claude wants to run: rm -rf build" in question.lower()
        run.wait_for("(claude)")  # the prompt line names whose question it is
        run.type("@codex lab:one-tool please")  # a message, though claude's question is open
        run.wait_for("Sent to codex:")
        run.answer_until("a", "to confirm")
        run.type("c")
        for agent in ("Claude", "Codex"):  # in whichever order they finish
            if not any(f"{agent} finished the turn." in line for line in run.seen):
                run.wait_for(f"{agent} finished the turn.")
        assert not (run.folder / "build").exists()
    finally:
        assert run.quit() == 0
    heard = run.heard()
    assert "The command printed hello." in " ".join(heard)
    assert any(t.startswith(("codex: ", "claude: ")) for t in heard), heard
    # the answer's echo names whose question it answered (issue 31, item 3)
    assert "Sent to claude: accept." in heard, heard
    assert not any(t.startswith("Sent: ") for t in heard), heard


def test_claude_agent_acp_asks_the_users_own_question_and_the_model_gets_the_answer(
    tmp_path: Path, clis: Clis, fake_model: FakeModelServer
) -> None:
    """AskUserQuestion through the current Claude adapter: an ACP elicitation, asked by
    announcer field by field; the model receives exactly the user's choice."""
    adapter = acp_adapter(clis, "claude-agent-acp")
    if not adapter.exists():  # the lab still pins the frozen @zed-industries adapter
        pytest.skip("the lab pins no claude-agent-acp (the current Claude adapter) yet")
    env = {**os.environ, **claude_env(fake_model.anthropic_url, tmp_path / "home")}
    agent = AgentRun(tmp_path, *LISTENER, agent=[str(adapter)], env=env)
    try:
        agent.wait_for("is ready.")
        agent.type("lab:ask please")
        # Issue 30 item 3: one key sends the choice; the "Other" note is the typed answer.
        # (Decline and Cancel are typed as words, not numbered: issue 30 item 3)
        agent.wait_for("Choose a number from 1 to 2, or type your own answer:")
        agent.answer("2")  # Postgres, sent at once: no second question, no review
        agent.wait_for("finished the turn.")
    finally:
        assert agent.quit() == 0
    answered = json.dumps([r.body for r in fake_model.requests])
    assert '\\"Which database should the app use?\\"=\\"Postgres\\"' in answered
    heard = " ".join(agent.heard())
    assert "asks: Which database should the app use?" in heard
    assert "tool_use_error" not in heard and "failed" not in heard.lower()


def test_claude_agent_acp_plan_approval_reads_the_plan_and_asks_which_always(
    tmp_path: Path, clis: Clis, fake_model: FakeModelServer
) -> None:
    """ExitPlanMode through the current Claude adapter: the plan is read by steps (it comes
    in a tool_call_update that, under load, may follow the question: then the question is
    asked again with it, so the test waits for the question that read it); "always" asks
    which of the two mode switches."""
    adapter = acp_adapter(clis, "claude-agent-acp")
    if not adapter.exists():  # the lab still pins the frozen @zed-industries adapter
        pytest.skip("the lab pins no claude-agent-acp (the current Claude adapter) yet")
    env = {**os.environ, **claude_env(fake_model.anthropic_url, tmp_path / "home")}
    agent = AgentRun(tmp_path, *LISTENER, agent=[str(adapter)], env=env)
    try:
        agent.wait_for("is ready.")
        agent.type(":mode plan")
        agent.wait_for("is now Plan.")
        agent.type("lab:plan-exit please")
        question = agent.wait_for("The plan has 3 steps: 1. Read auth.py. 2. Fix the token check.")
        assert question.startswith("[needs you] Confirmation needed."), question
        assert "Always: Yes, and use auto mode or Yes, and bypass permissions" in question
        agent.wait_for("Accept or reject")  # the prompt of the question that read the plan
        agent.answer("always")
        agent.wait_for("to confirm")
        agent.type("c")
        agent.wait_for("Choose a number from 1 to 2:")  # which always: never the first
        # nothing went to the agent yet, and nothing says so (issue 31, item 2)
        assert not any("Sent: accept" in line for line in agent.seen), agent.seen
        agent.answer("1")
        agent.wait_for("is now Auto.")  # the new mode is said
        agent.wait_for("finished the turn.")
    finally:
        assert agent.quit() == 0


@pytest.mark.parametrize("preset_id", sorted(LAB_AGENT_ENV))
def test_a_preset_started_by_name_answers_and_asks_before_a_delete(
    preset_id: str, tmp_path: Path, clis: Clis, fake_model: FakeModelServer
) -> None:
    """``announcer agent qwen`` (opencode, gemini, copilot): the preset's own command line and
    settings, found on PATH; a plain answer is heard, and a delete is asked and obeyed."""
    env = {**os.environ, **LAB_AGENT_ENV[preset_id](fake_model, tmp_path / "home")}
    bin_dir = str(acp_adapter(clis, "qwen").parent)
    env["PATH"] = os.pathsep.join([bin_dir, env["PATH"]])
    run = AgentRun(tmp_path, *LISTENER, env=env, names=[preset_id])
    (run.folder / "build").mkdir()
    (run.folder / "build" / "keep.txt").write_text("built\n")
    try:
        run.wait_for("is ready.")
        run.type("lab:reasoning please")
        run.wait_for("nothing needs to change")
        run.wait_for("finished the turn.")
        run.type("lab:denied please")
        question = run.wait_for("Confirmation needed.")
        assert "rm -rf build" in question
        run.wait_for("Accept or reject")
        # a delete: two keys, once the question was heard (issue 20)
        run.answer_until("a", "to confirm")
        run.type("c")
        run.wait_for("finished the turn.")
        assert not (run.folder / "build").exists()
    finally:
        assert run.quit() == 0
    heard = run.heard()
    assert sum(t.startswith("Confirmation needed.") for t in heard) == 1


def test_codex_started_by_name_asks_before_an_edit(
    tmp_path: Path, clis: Clis, fake_model: FakeModelServer
) -> None:
    """``announcer agent codex``: the preset starts codex-acp read-only (INITIAL_AGENT_MODE),
    so even a patch inside the working folder is asked, not approved by Codex's reviewer."""
    env = {**os.environ, **codex_env(fake_model.openai_url, tmp_path / "home")}
    bin_dir = str(acp_adapter(clis, "codex-acp").parent)
    env["PATH"] = os.pathsep.join(p for p in (bin_dir, codex_sandbox_path(clis), env["PATH"]) if p)
    run = AgentRun(tmp_path, *LISTENER, env=env, names=["codex"])
    try:
        run.wait_for("is ready.")
        run.type("lab:edit please")
        run.wait_for("Confirmation needed.")
        assert not (run.folder / EDIT_FILE).exists()  # nothing written before the answer
        run.wait_for("Accept or reject")
        run.answer("a")  # an ordinary edit is medium risk: one key (issue 20)
        run.wait_for("finished the turn.")
        assert not any("to confirm" in line for line in run.seen)
    finally:
        assert run.quit() == 0
    assert (run.folder / EDIT_FILE).read_text() == EDIT_TEXT


@pytest.mark.parametrize("started", ["by name", "as a command"])
def test_codex_asks_before_a_command_however_it_is_started(
    started: str, tmp_path: Path, clis: Clis, fake_model: FakeModelServer
) -> None:
    """codex-acp 2.6.0 opens a session in "Auto review" unless told otherwise: then its
    reviewer (the model) decides a command and the user only hears the verdict. Started by
    name (``announcer agent codex``) or as its program (``announcer agent -- codex-acp``),
    it is read-only, says so, and a command that writes is asked on the wire and obeyed."""
    env = {**os.environ, **codex_env(fake_model.openai_url, tmp_path / "home")}
    adapter = acp_adapter(clis, "codex-acp")
    env["PATH"] = os.pathsep.join(
        p for p in (str(adapter.parent), codex_sandbox_path(clis), env["PATH"]) if p
    )
    env.pop("INITIAL_AGENT_MODE", None)
    if started == "by name":
        run = AgentRun(tmp_path, *LISTENER, env=env, names=["codex"])
    else:
        run = AgentRun(tmp_path, *LISTENER, agent=[str(adapter)], env=env)
    try:
        run.wait_for("is ready.")
        settings = run.wait_for("Mode: ")
        assert settings.startswith("Mode: Read-only."), settings
        run.type("lab:command please")
        question = run.wait_for("Confirmation needed.")
        assert "Codex wants to run: touch made.txt" in question
        run.wait_for("Accept or reject")
        run.answer("r")
        run.wait_for("Codex stopped the turn after you rejected it.")
    finally:
        assert run.quit() == 0
    assert not (run.folder / "made.txt").exists()
    heard = run.heard()
    assert "You rejected: touch made.txt." in heard, heard
    assert sum(t.startswith("Confirmation needed.") for t in heard) == 1
    assert not any("reviewer" in t or "Auto review" in t for t in heard), heard


def test_codex_request_user_input_is_asked_and_the_model_gets_the_answer(
    tmp_path: Path, clis: Clis, fake_model: FakeModelServer
) -> None:
    """Codex's own question (request_user_input, offered in its Plan collaboration mode)
    through codex-acp: an ACP elicitation, asked by announcer; the user hears the question
    and its options, answers, and the model receives exactly that answer."""
    env = {**os.environ, **codex_env(fake_model.openai_url, tmp_path / "home")}
    bin_dir = str(acp_adapter(clis, "codex-acp").parent)
    env["PATH"] = os.pathsep.join(p for p in (bin_dir, codex_sandbox_path(clis), env["PATH"]) if p)
    run = AgentRun(tmp_path, *LISTENER, env=env, names=["codex"])
    try:
        run.wait_for("is ready.")
        run.type(":mode plan")  # "Plan" is Codex's collaboration mode
        run.wait_for("Collaboration mode is now Plan.")
        run.type("lab:ask please")
        # Issue 30 item 3: one key sends the choice; the note is the typed answer.
        # (Decline and Cancel are typed as words, not numbered: issue 30 item 3)
        question = run.wait_for("Choose a number from 1 to 3, or type your own answer:")
        assert "Which database should the app use?" in question
        answered_before = _user_input_answers(fake_model)
        assert answered_before == []  # nothing answered for the user while it waits
        run.answer("2")  # Postgres, sent at once: no second question, no review
        run.wait_for("finished the turn.")
    finally:
        assert run.quit() == 0
    heard = " ".join(run.heard())
    assert "Codex asks: Codex needs your input to continue." in heard
    assert "Which database should the app use?" in heard
    assert "1: SQLite: One file; 2: Postgres: A server" in heard
    # the model receives the user's choice, as codex-acp 2.6.0 words it, once
    answers = _user_input_answers(fake_model)
    assert [a for a in answers if not isinstance(a, str)] == [
        {"answers": {"database": {"answers": ["Postgres"]}}}
    ], answers
    # Beside stress-ng, Codex 0.171.0 once made the call a second time after the user's
    # answer, outside Plan mode, and refused it itself in words ("request_user_input is
    # unavailable in Default mode"). That is Codex's own answer, never one in the user's
    # name: announcer answered exactly once, what the user chose.
    assert all("unavailable in" in a for a in answers if isinstance(a, str)), answers


def _user_input_answers(fake_model: FakeModelServer) -> list[object]:
    """What Codex sent the model as request_user_input's results (one per call)."""
    found: dict[str, object] = {}
    for request in fake_model.requests:
        body = request.body if isinstance(request.body, dict) else {}
        calls = {
            item.get("call_id")
            for item in body.get("input", [])
            if isinstance(item, dict) and item.get("name") == "request_user_input"
        }
        for item in body.get("input", []):
            if (
                isinstance(item, dict)
                and item.get("type") == "function_call_output"
                and item.get("call_id") in calls
            ):
                output = item.get("output")
                try:
                    found[str(item["call_id"])] = json.loads(str(output))
                except ValueError:  # a refusal in words ("... is unavailable in Default mode")
                    found[str(item["call_id"])] = output
    return list(found.values())
