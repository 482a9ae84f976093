"""Issue 20 with a real agent's whole turn: claude-agent-acp (from npm, offline against the
lab's fake model) makes a plan, reads a file, asks before a command, finishes its plan and
writes a long markdown answer, through ``announcer agent --speech paced``. Every sentence of
the answer is in the jsonl speech record, in order, once; the plan, the tools and the
question are heard too.

With ``LAB_RECORD_ACP_SESSION=FILE`` the agent's own ACP messages, timed, are written
to FILE (``tests/lab/acp_tee.py``): that is how ``announcer/data/lab_plan_session.jsonl``,
the real-agent input of ``benchmarks/pace.py``, was recorded.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path

from tests.acp_frontend.test_agent_command import TIMEOUT, AgentRun
from tests.lab.clis import Clis, acp_adapter, claude_env
from tests.lab.fake_model import FakeModelServer
from tests.lab.plan_scenario import MADE_FILE, NAME, NOTES, PLAN_SENTENCES
from tests.support.lab_agents import asking_claude_home
from tests.support.speech_record import follow, spoken_in


def test_a_real_agents_plan_tools_question_and_long_answer_are_heard_at_pace(
    tmp_path: Path, clis: Clis, fake_model: FakeModelServer
) -> None:
    home = tmp_path / "home"
    env = {**os.environ, **claude_env(fake_model.anthropic_url, home)}
    asking_claude_home(home)  # Claude asks before a command (its "default" mode)
    log = tmp_path / "acp.jsonl"
    adapter = str(acp_adapter(clis, "claude-agent-acp"))
    agent = AgentRun(
        tmp_path,
        "--speech",
        "paced",
        "--pace",
        "600",
        agent=[sys.executable, "-m", "tests.lab.acp_tee", str(log), "--", adapter],
        env=env,
    )
    (agent.folder / "notes.md").write_text(NOTES)
    assert agent.proc.stderr is not None
    heard = follow(agent.proc.stderr)

    def said() -> list[str]:
        return spoken_in(list(heard))

    try:
        agent.wait_for("is ready.")
        agent.type(f"lab:{NAME} please")
        agent.wait_for("Accept or reject")
        # A medium-risk command: one key accepts once the question was heard (issue 20);
        # a key pressed before that gets a short "Not yet." and costs nothing.
        try:
            agent.answer_until("a", "Sent: accept.")
        except AssertionError as e:
            raise AssertionError(f"{e}\nHEARD: {list(heard)}") from None
        agent.wait_for("finished the turn.")
        deadline = time.monotonic() + TIMEOUT
        while not any("finished the turn." in text for text in said()):
            assert time.monotonic() < deadline, said()
            time.sleep(0.1)
        assert agent.quit() == 0
    finally:
        if agent.proc.poll() is None:
            agent.proc.kill()
    recorded = os.environ.get("LAB_RECORD_ACP_SESSION")
    if recorded:
        shutil.copyfile(log, recorded)
    texts = said()
    # Every sentence of the long answer, in order, once (never skipped, never said twice).
    heard = [t for t in texts if any(t.startswith(s[:-1]) for s in PLAN_SENTENCES)]
    for sentence in PLAN_SENTENCES:
        assert any(text.startswith(sentence[:-1]) for text in texts), (sentence, texts)
    assert [next(s for s in PLAN_SENTENCES if t.startswith(s[:-1])) for t in heard] == (
        PLAN_SENTENCES
    )
    # The plan, its end, the question and the tools were heard too; nothing as a bare count.
    assert any(text.startswith("All 3 steps done") for text in texts), texts
    assert any(text.startswith("Read notes.md") for text in texts), texts
    assert any(text.startswith("Confirmation needed.") for text in texts), texts
    assert any(MADE_FILE in text for text in texts), texts
    assert not any("updates skipped" in text for text in texts)
    assert (agent.folder / MADE_FILE).exists()
    # The agent's own messages were recorded, with their times.
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert any(m["message"].get("method") == "session/request_permission" for m in lines)
