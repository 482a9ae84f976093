"""Issue 31 item 11: the agent's start lines are not said again after the user's message.

The real command (``AgentRun``) with the scripted agent's long settings line (some forty
words) at ``--speech paced`` (the record on stderr): the user types a message while that
line is being said. The message's echo cut it off, and it used to be said again whole,
with "is ready." before it, ahead of the agent's answer (about 5 s at 180 wpm).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from tests.acp_frontend.test_agent_command import AgentRun
from tests.support.speech_record import follow, spoken_in
from tests.support.waiting import wait_until

STATUS_START = "Mode: Ask before every edit and every command."


def test_a_message_typed_during_the_start_lines_is_not_followed_by_them(tmp_path: Path) -> None:
    agent = AgentRun(
        tmp_path,
        "--speech",
        "paced",
        "--pace",
        "200",  # the settings line lasts some 12 s: the message comes while it is said
        agent=[sys.executable, "-m", "tests.acp_frontend.sdk_agent", "--long-settings"],
    )
    assert agent.proc.stderr is not None
    record = follow(agent.proc.stderr)

    def started(text: str) -> bool:
        return any(r["action"] == "speak" and str(r["text"]).startswith(text) for r in record)

    try:
        wait_until(lambda: started(STATUS_START), "the settings line begun")
        agent.type("hello")
        wait_until(lambda: started("Hello."), "the agent's answer said")
        wait_until(lambda: started("Scripted Agent finished the turn."), "the turn's end said")
        assert agent.quit() == 0
    finally:
        if agent.proc.poll() is None:
            agent.proc.kill()
    lines = list(record)
    said = spoken_in(lines)
    echo = next(i for i, text in enumerate(said) if text.startswith("Sent to "))
    # the message came while the settings line was said (else this proves nothing)
    assert any(r["action"] == "cancel" and str(r["text"]).startswith(STATUS_START) for r in lines)
    after = said[echo:]
    assert not [t for t in after if t.startswith(STATUS_START) or t.endswith("is ready.")], said
    assert said.count("Scripted Agent is ready.") == 1, said


def test_a_message_typed_before_the_agent_started_is_answered_before_the_start_lines(
    tmp_path: Path,
) -> None:
    """The message is typed while the agent is still starting (its ``session/new`` waits
    for the test). It goes as soon as the session is open; "is ready." and the settings
    line (some 12 s at this pace) used to be said first, holding the answer back. Now the
    answer comes first, "is ready." is kept for the record, and the settings line is said
    once, after the answer, as the turn ends."""
    started = tmp_path / "start-now"
    agent = AgentRun(
        tmp_path,
        "--speech",
        "paced",
        "--pace",
        "200",
        agent=[sys.executable, "-m", "tests.acp_frontend.sdk_agent", "--long-settings"],
        env={**os.environ, "SDK_AGENT_START_WHEN": str(started)},
    )
    assert agent.proc.stderr is not None
    record = follow(agent.proc.stderr)

    def begun(text: str) -> bool:
        return any(r["action"] == "speak" and str(r["text"]).startswith(text) for r in record)

    def echoed() -> bool:
        # named by its command until it says its own name (ACP initialize)
        return any("is starting; your message goes" in str(r["text"]) for r in record)

    try:
        agent.type("hello")
        wait_until(echoed, "the message's echo")
        started.touch()
        wait_until(lambda: begun("Scripted Agent finished the turn."), "the turn's end said")
        assert agent.quit() == 0
    finally:
        if agent.proc.poll() is None:
            agent.proc.kill()
    said = spoken_in(list(record))
    answer = next(i for i, text in enumerate(said) if text.startswith("Hello."))
    early = said[:answer]
    assert not [t for t in early if t.startswith(STATUS_START) or "Agent is ready" in t], said
    # said once, after the answer's words, as the turn ends
    end = said.index("Scripted Agent finished the turn.")
    assert [i for i, t in enumerate(said) if t.startswith(STATUS_START)] == [end - 1], said
    assert said[answer : end - 1] == ["Hello.", "This is the scripted agent.", "Done."], said
    assert "Scripted Agent is ready." not in said, said
