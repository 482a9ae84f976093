"""The turn as a whole (issue 33, item 2): one digest at the end of a long turn, and on
request, built in the engine from the events it already handled (the real ACP mapping in,
an instant speech backend on a clock the test holds)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from announcer.engine.pipeline import Engine
from announcer.engine.prompts import UserAnswer
from announcer.engine.replies import ReplyReady
from announcer.engine.settings import UserSettings
from announcer.engine.speech_commands import Speak
from announcer.formats.acp import AcpAdapter
from tests.support.pace_replay import acp_session_frames

CWD = "/home/ada/project"
OPTIONS = [
    {"optionId": "once", "name": "Allow", "kind": "allow_once"},
    {"optionId": "no", "name": "Reject", "kind": "reject_once"},
]


class Turn:
    """A Claude Code turn through the ACP mapping into the engine; what was heard."""

    def __init__(self, **settings: Any) -> None:
        self.engine = Engine(UserSettings(**settings))
        self.engine.trust_extension("acp")
        self.engine.set_subscription("acp", "sub_1")
        self.adapter = AcpAdapter("Claude Code", "claude-code")
        self.now = 1_000.0
        self.heard: list[tuple[str, str]] = []  # (kind, text)

    def run(self, commands: list[Any]) -> None:
        pending = list(commands)
        while pending:
            command = pending.pop(0)
            if isinstance(command, Speak):
                self.heard.append((command.announcement.kind, command.announcement.text))
                pending += self.engine.on_speech_done(command.utterance_id, self.now)

    def take(self, output: Any, after: float = 1.0) -> list[dict[str, Any]]:
        for event in output.events:
            self.run(self.engine.receive(json.dumps(event), "acp", self.now))
        self.now += after
        self.run(self.engine.tick(self.now))
        return list(output.events)

    def update(self, kind: str, /, **fields: Any) -> list[dict[str, Any]]:
        params = {"sessionId": "s1", "update": {"sessionUpdate": kind, **fields}}
        return self.take(self.adapter.update(params, self.now))

    def tool(self, call: str, title: str, kind: str, **done: Any) -> None:
        self.update("tool_call", toolCallId=call, title=title, kind=kind, status="in_progress")
        self.take(self.adapter.flush_running(self.now))
        self.update("tool_call_update", toolCallId=call, **done)

    def play(self, seconds: float) -> str:
        """A turn of ``seconds``: an edit, a passing and a failing command, a question the
        user rejects, the agent's last words; the digest said at its end, if any."""
        self.take(self.adapter.session_opened("s1", CWD, self.now))
        self.take(self.adapter.prompt_sent("s1", self.now))
        diff = {"type": "diff", "path": f"{CWD}/src/app.py",
                "oldText": "a = 1\nb = 3\nc = 4\n", "newText": "a = 1\nb = 2\n"}  # fmt: skip
        self.tool("e1", "Edit src/app.py", "edit", status="completed", content=[diff])
        self.tool("c1", "npm run build", "execute", status="completed")
        failure = {"exit_code": 1, "stderr": "2 failing"}
        self.tool("c2", "npm test", "execute", status="failed", rawOutput=failure)
        call = {"toolCallId": "p1", "title": "git push", "kind": "execute"}
        params = {"sessionId": "s1", "options": OPTIONS, "toolCall": call}
        question = self.take(self.adapter.permission_requested("k1", params, self.now), 2.0)[-1]
        outcome = self.engine.answer(
            UserAnswer(question["reply_token"], decision="reject"), self.now
        )
        assert isinstance(outcome, ReplyReady), outcome
        assert self.adapter.answer(question["reply_token"], "reject") == "no"
        self.run(self.engine.take_speech())
        self.update("tool_call_update", toolCallId="p1", status="failed")
        text = {"type": "text", "text": "I fixed the parser. Two tests still fail."}
        self.update("agent_message_chunk", content=text)
        self.now += max(0.0, seconds - (self.now - 1_000.0))
        self.take(self.adapter.turn_ended("s1", "end_turn", self.now))
        digests = [said for kind, said in self.heard if kind == "system.digest"]
        assert len(digests) <= 1, digests
        return digests[0] if digests else ""


def test_a_long_turn_ends_with_one_digest_after_the_turns_end() -> None:
    turn = Turn(digest_after_seconds=120)
    said = turn.play(150)
    assert said == (
        "Claude Code's turn: Changed: Changes 3 lines in src/app.py. Ran: npm run build; "
        "npm test: 2 failed. You answered: rejected: Claude Code wants to run: git push. "
        "Errors: 1. "
        "Last words: Two tests still fail."
    ), said
    texts = [text for _, text in turn.heard]
    assert texts.index("Claude Code finished the turn.") < texts.index(said)


def test_a_short_turn_says_none_and_the_digest_is_there_on_request() -> None:
    turn = Turn(digest_after_seconds=120)
    assert turn.play(30) == ""
    turn.run(turn.engine.say_digest(turn.now))  # ":digest"
    assert turn.heard[-1][0] == "system.digest"
    assert "Ran: npm run build; npm test: 2 failed." in turn.heard[-1][1]


def test_terse_verbosity_says_counts() -> None:
    said = Turn(digest_after_seconds=60, verbosity="terse").play(90)
    assert said == ("Claude Code's turn: Files changed: 1. Commands: 2, failed: 1. Answered: 1."), (
        said
    )


def test_nothing_to_sum_up_yet() -> None:
    turn = Turn()
    turn.run(turn.engine.say_digest(turn.now))
    assert turn.heard == [("system.digest", "No turn to sum up yet.")]


def test_digest_in_the_plain_interface_names_the_users_answer(asked) -> None:  # type: ignore[no-untyped-def]
    """``:digest`` in ``announcer agent``: the scripted agent's turn, the user's answer in it."""
    agent = asked("write", "Accept or reject: Scripted Agent wants to run: echo hello > out.txt?")
    agent.answer("a")
    agent.wait_for("Scripted Agent finished the turn.")
    agent.type(":digest")
    said = agent.wait_for("Scripted Agent's turn:")
    assert "You answered: allowed: Scripted Agent wants to run: echo hello > out.txt." in said
    assert agent.quit() == 0
    heard = [line for line in agent.heard() if line.startswith("Scripted Agent's turn:")]
    assert len(heard) == 1 and "You answered: allowed:" in heard[0]  # said, and once


LAB_SESSION = Path(__file__).parents[2] / "benchmarks" / "data" / "lab_plan_session.jsonl"


@pytest.mark.parametrize("answered_late", [False, True])
def test_a_recorded_turn_of_the_real_claude_adapter_ends_with_its_digest(
    answered_late: bool,
) -> None:
    """claude-agent-acp's recorded turn (tests/lab/acp_tee.py): a read, a command the user
    allowed, the agent's words. ``answered_late``: the turn's end arrives while the question
    is still open (a replay at the recording's times); the digest then follows the answer."""
    engine = Engine(UserSettings(digest_after_seconds=1, answer_arming_seconds=0))
    engine.trust_extension("acp")
    engine.set_subscription("acp", "sub_1")
    heard: list[tuple[str, str]] = []

    def run(commands: list[Any], now: float) -> None:
        pending = list(commands)
        while pending:
            command = pending.pop(0)
            if isinstance(command, Speak):
                heard.append((command.announcement.kind, command.announcement.text))
                pending += engine.on_speech_done(command.utterance_id, now)

    lines = LAB_SESSION.read_text(encoding="utf-8").splitlines()
    start, token = 1_000.0, ""
    for at, frame in acp_session_frames(lines):
        run(engine.receive(json.dumps(frame), "acp", start + at), start + at)
        if frame["type"].endswith("awaiting.confirmation"):
            token = frame["reply_token"]
            if not answered_late:
                outcome = engine.answer(UserAnswer(token, decision="accept"), start + at)
                assert isinstance(outcome, ReplyReady)
                run(engine.take_speech(), start + at)
    if answered_late:
        assert not any(kind == "system.digest" for kind, _ in heard)
        outcome = engine.answer(UserAnswer(token, decision="accept"), start + 30)
        assert isinstance(outcome, ReplyReady)
        run(engine.take_speech(), start + 30)
    digests = [text for kind, text in heard if kind == "system.digest"]
    assert digests == [
        "Claude Agent's turn: Ran: touch made.txt. You answered: allowed: Claude Agent wants "
        "to run: touch made.txt. Last words: Tell me if you want a different name for the file."
    ]
