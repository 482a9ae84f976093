"""Issue 20 with a real agent: claude-agent-acp (from npm, offline against the lab's fake
model) streams a long markdown answer through ``announcer agent --speech paced``; every
sentence of it is in the jsonl speech record, in order, at the pace of a voice.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from tests.acp_frontend.test_agent_command import TIMEOUT, AgentRun
from tests.lab.clis import Clis, acp_adapter, claude_env
from tests.lab.fake_model import FakeModelServer
from tests.support.speech_record import follow, spoken_in

# LONG_MARKDOWN as a listener hears it (text hygiene reads headings and items as sentences).
SENTENCES = [
    "Summary of the change.",
    "The parser now accepts nested lists and keeps offsets exact.",
    "What changed.",
    "The tokenizer reads one line at a time.",
    "Errors name the line and the column.",
    "The old parse_all function is gone.",
    "How to try it.",
    "That is all for this change.",
    "Tell me if you want the tests run again.",
]


def test_a_real_agents_long_answer_is_heard_whole_at_pace(
    tmp_path: Path, clis: Clis, fake_model: FakeModelServer
) -> None:
    env = {**os.environ, **claude_env(fake_model.anthropic_url, tmp_path / "home")}
    # The paced backend (a voice's timing, 600 words a minute) writes the record to stderr.
    agent = AgentRun(
        tmp_path,
        "--speech",
        "paced",
        "--pace",
        "600",
        agent=[str(acp_adapter(clis, "claude-agent-acp"))],
        env=env,
    )
    assert agent.proc.stderr is not None
    heard = follow(agent.proc.stderr)

    def said() -> list[str]:
        return spoken_in(list(heard))

    try:
        agent.wait_for("is ready.")
        agent.type("lab:markdown please")
        agent.wait_for("finished the turn.")
        deadline = time.monotonic() + TIMEOUT
        while not any("finished the turn." in text for text in said()):
            assert time.monotonic() < deadline, said()
            time.sleep(0.1)
        assert agent.quit() == 0
    finally:
        if agent.proc.poll() is None:
            agent.proc.kill()
    texts = said()
    heard = [text for text in texts if any(text.startswith(s[:-1]) for s in SENTENCES)]
    for sentence in SENTENCES:
        assert any(text.startswith(sentence[:-1]) for text in texts), (sentence, texts)
    # In order, and each once (never skipped, never said twice).
    assert [next(s for s in SENTENCES if t.startswith(s[:-1])) for t in heard] == SENTENCES
    assert not any("updates skipped" in text for text in texts)
