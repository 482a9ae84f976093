"""ACP session updates and permission requests -> AAEP events -> what the user hears.

The messages are the wire form real adapters send (camelCase JSON, each tool call
first empty, then titled); every event goes through the real decoder and engine.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from announcer.engine.answer_keys import NO_ANSWERING_UI_KEYS
from announcer.engine.pipeline import Engine
from announcer.engine.prompts import UserAnswer
from announcer.engine.replies import Refusal, ReplyReady
from announcer.engine.settings import UserSettings
from announcer.engine.speech_commands import Speak
from announcer.formats.acp import AcpAdapter
from announcer.protocol.decode import decode_frame
from announcer.runtime.answers import typed_answer
from tests.support.examples import examples

CWD = "/home/ada/project"


def update(session_update: str, /, **fields: Any) -> dict[str, Any]:
    return {"sessionId": "s1", "update": {"sessionUpdate": session_update, **fields}}


def text(chunk: str) -> dict[str, Any]:
    return {"type": "text", "text": chunk}


OPTIONS = [
    {"optionId": "always", "name": "Always allow", "kind": "allow_always"},
    {"optionId": "once", "name": "Allow", "kind": "allow_once"},
    {"optionId": "no", "name": "Reject", "kind": "reject_once"},
]


class Heard:
    """The adapter's events through the real engine, spoken by an instant backend."""

    def __init__(self, **settings: Any) -> None:
        self.adapter = AcpAdapter("Claude Code")
        self.engine = Engine(UserSettings(**settings))
        self.engine.trust_extension("acp")  # events of our own ACP mapping
        self.spoken: list[str] = []
        self.events: list[dict[str, Any]] = []
        self.now = 1_000.0

    def take(self, out: Any) -> list[dict[str, Any]]:
        assert not out.diagnostics, out.diagnostics
        for event in out.events:
            result = decode_frame(json.dumps(event))
            assert result.event is not None, (event["type"], result.diagnostics)
            self.events.append(event)
            self._run(self.engine.receive(json.dumps(event), "acp", self.now))
        self.now += 0.5
        self._run(self.engine.tick(self.now + 5))
        return list(out.events)

    def tick(self) -> None:
        """The engine's clock reaches ``now`` (a silence notice may fall due)."""
        self._run(self.engine.tick(self.now))

    def _run(self, commands: list[Any]) -> None:
        pending = list(commands)
        while pending:
            command = pending.pop(0)
            if isinstance(command, Speak):
                self.spoken.append(command.announcement.text)
                pending += self.engine.on_speech_done(command.utterance_id, self.now)

    def open(self) -> None:
        self.take(self.adapter.session_opened("s1", CWD, self.now))
        self.take(self.adapter.prompt_sent("s1", self.now))

    def send(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        return self.take(self.adapter.update(params, self.now))

    def said(self) -> str:
        return " ".join(self.spoken)


def test_message_chunks_become_sentences_and_the_turn_end_is_said() -> None:
    heard = Heard()
    heard.open()
    for chunk in ("I looked at ", "the code. It ", "is fine."):
        heard.send(update("agent_message_chunk", content=text(chunk)))
    heard.take(heard.adapter.turn_ended("s1", "end_turn", heard.now))
    assert "I looked at the code." in heard.spoken
    assert "It is fine." in heard.spoken
    assert heard.spoken[-1] == "Claude Code finished the turn."


def test_a_tool_call_sent_empty_then_titled_is_announced_once_with_its_description() -> None:
    heard = Heard()
    heard.open()
    heard.send(update("tool_call", toolCallId="t1", title="", kind="execute", status="pending"))
    heard.send(
        update(
            "tool_call_update",
            toolCallId="t1",
            title="npm test",
            kind="execute",
            status="in_progress",
            rawInput={"command": "npm test", "description": "Run the test suite"},
        )
    )
    heard.send(update("tool_call_update", toolCallId="t1", status="completed"))
    invoked = [e for e in heard.events if e["type"] == "aaep:agent.tool.invoked"]
    assert len(invoked) == 1
    # it ran without the user's answer: who approved it is said (issue 31, item 4)
    assert invoked[0]["summary_normal"] == "Claude Code approved: Run the test suite."
    assert invoked[0]["summary_detailed"] == "Claude Code approved: npm test: Run the test suite."
    # its end came right after that line: kept for the record, "done" not said (issue 30
    # item 8: it said nothing the line before it did not)
    completed = [e for e in heard.events if e["type"] == "aaep:agent.tool.completed"]
    assert [e["status"] for e in completed] == ["success"]
    assert "Run the test suite: done." not in heard.said()


def test_a_passing_test_runs_counts_are_said_even_right_after_its_start() -> None:
    """Issue 33 item 2 and issue 30 item 8 together: a success that only says "done" right
    after the line that named it is not said, but a test run's counts are news: "Run the
    test suite: 49 passed, 0 failed." is said, at normal and terse verbosity alike."""
    for verbosity in ("normal", "terse"):
        heard = Heard(verbosity=verbosity)
        heard.open()
        raw = {"command": "npm test", "description": "Run the test suite"}
        heard.send(
            update("tool_call", toolCallId="t1", title="npm test", kind="execute",
                   status="in_progress", rawInput=raw)
        )  # fmt: skip
        output = "PASS src/app.test.js\nTests:       49 passed, 49 total\nTime: 1.2 s"
        heard.send(update("tool_call_update", toolCallId="t1", status="completed",
                          rawOutput=output))  # fmt: skip
        assert "Run the test suite: 49 passed, 0 failed." in heard.spoken, (verbosity, heard.spoken)


def test_diffs_and_locations_are_said_relative_to_the_session_folder() -> None:
    heard = Heard()
    heard.open()
    heard.send(
        update(
            "tool_call",
            toolCallId="e1",
            title="Edit app.py",
            kind="edit",
            status="in_progress",
            locations=[{"path": f"{CWD}/src/app.py"}],
        )
    )
    diff = {
        "type": "diff",
        "path": f"{CWD}/src/app.py",
        "oldText": "a = 1\nb = 3\nc = 4\n",
        "newText": "a = 1\nb = 2\n",
    }
    heard.send(update("tool_call_update", toolCallId="e1", status="completed", content=[diff]))
    said = heard.said()
    assert "Edit app.py in src/app.py." in said
    assert "Changes 3 lines in src/app.py." in said
    assert CWD not in said


def test_a_plan_is_read_when_its_step_changes_and_not_again() -> None:
    heard = Heard()
    heard.open()
    entries = [
        {"content": "Read the code", "priority": "high", "status": "completed"},
        {"content": "Fix the bug", "priority": "high", "status": "in_progress"},
        {"content": "Run the tests", "priority": "low", "status": "pending"},
    ]
    heard.send(update("plan", entries=entries))
    heard.send(update("plan", entries=entries))
    assert heard.spoken.count("Step 2 of 3: Fix the bug.") == 1


def test_a_completed_plan_is_said_once() -> None:
    """Issue 20: "All 3 steps done." when every entry is completed, and not again."""
    heard = Heard()
    heard.open()
    steps = ("Read the code", "Fix the bug", "Run the tests")

    def plan(done: int) -> dict[str, Any]:
        return update(
            "plan",
            entries=[
                {
                    "content": step,
                    "priority": "high",
                    "status": "completed"
                    if i < done
                    else "in_progress"
                    if i == done
                    else "pending",
                }
                for i, step in enumerate(steps)
            ],
        )

    heard.send(plan(2))
    heard.send(plan(3))
    heard.send(plan(3))
    assert heard.spoken.count("Step 3 of 3: Run the tests.") == 1
    # steps 1 and 2 were never said as under way: the end names them (issue 31, item 9)
    assert sum(t.startswith("All 3 steps done.") for t in heard.spoken) == 1


def test_thoughts_are_heard_whole_only_at_detailed_verbosity() -> None:
    for verbosity, expected in (("detailed", True), ("normal", False)):
        heard = Heard(verbosity=verbosity)
        heard.open()
        for piece in ("The user wants ", "a greeting."):
            heard.send(update("agent_thought_chunk", content=text(piece)))
        heard.send(update("agent_message_chunk", content=text("Hello there.")))
        assert ("Thinking: The user wants a greeting." in heard.spoken) is expected
        assert "Hello there." in " ".join(heard.spoken) or heard.adapter.sessions


def test_thoughts_are_never_spoken_in_low_cognitive_load() -> None:
    heard = Heard(verbosity="detailed", cognitive_load="low")
    heard.open()
    heard.send(update("agent_thought_chunk", content=text("A secret plan.")))
    heard.send(update("agent_message_chunk", content=text("Hello there. ")))
    assert "secret" not in heard.said()


def test_token_usage_and_our_own_prompt_echo_are_never_spoken() -> None:
    heard = Heard()
    heard.open()
    before = list(heard.spoken)
    assert heard.send(update("usage_update", used=1200, size=200000)) == []
    assert heard.send(update("user_message_chunk", content=text("my prompt"))) == []
    assert heard.spoken == before


def test_a_permission_is_a_question_that_maps_back_to_the_agents_own_options() -> None:
    heard = Heard()
    heard.open()
    heard.send(update("tool_call", toolCallId="t1", title="", kind="execute", status="pending"))
    heard.send(
        update("tool_call_update", toolCallId="t1", title="echo hello > out.txt", kind="execute")
    )
    params = {
        "sessionId": "s1",
        "toolCall": {"toolCallId": "t1", "title": "echo hello > out.txt", "kind": "execute"},
        "options": OPTIONS,
    }
    events = heard.take(heard.adapter.permission_requested("r1", params, heard.now))
    question = events[-1]
    assert question["type"] == "aaep:agent.awaiting.confirmation"
    assert question["default_decision"] == "reject"
    assert question["allowed_replies"] == ["reject", "accept"]
    # The pending tool was not announced before its own question.
    assert not any(e["type"] == "aaep:agent.tool.invoked" for e in heard.events)
    said = heard.said()
    assert "Claude Code wants to run: echo hello > out.txt." in said
    # no deadline is made up; that it waits is said at detailed verbosity (issue 31, 10)
    assert "The agent waits for your answer." not in said
    assert "If you do not answer" not in said
    detailed = Heard(verbosity="detailed")
    detailed.open()
    detailed.take(detailed.adapter.permission_requested("r1", params, detailed.now))
    assert "The agent waits for your answer." in detailed.said()
    token = question["reply_token"]
    assert heard.adapter.answer(token, "accept") == "once"  # never the "always" option
    assert heard.adapter.answer(token, "accept") is None  # used up: answered once


def test_destructive_requests_are_high_risk_and_deletes_irreversible() -> None:
    adapter = AcpAdapter("Codex")
    adapter.session_opened("s1", CWD, 0.0)
    for title, kind, risk, irreversible in (
        ("rm -rf build", "execute", "high", True),  # a delete cannot be undone
        ("Delete build", "delete", "high", True),
        ("Read notes.md", "read", "low", False),
    ):
        params = {
            "sessionId": "s1",
            "toolCall": {"toolCallId": title, "title": title, "kind": kind},
            "options": OPTIONS,
        }
        question = adapter.permission_requested(title, params, 0.0).events[-1]
        assert (question["risk_level"], question["irreversible"]) == (risk, irreversible)


def test_without_an_allow_once_option_only_reject_is_offered() -> None:
    adapter = AcpAdapter("Codex")
    adapter.session_opened("s1", CWD, 0.0)
    params = {
        "sessionId": "s1",
        "toolCall": {"toolCallId": "x", "title": "git push", "kind": "execute"},
        "options": [{"optionId": "no", "name": "Reject", "kind": "reject_once"}],
    }
    question = adapter.permission_requested("k", params, 0.0).events[-1]
    assert question["allowed_replies"] == ["reject"]
    assert adapter.answer(question["reply_token"], "accept") is None


def test_a_withdrawn_question_is_voided_for_the_engine() -> None:
    heard = Heard()
    heard.open()
    params = {
        "sessionId": "s1",
        "toolCall": {"toolCallId": "t9", "title": "rm -rf build", "kind": "delete"},
        "options": OPTIONS,
    }
    token = heard.take(heard.adapter.permission_requested("k", params, heard.now))[-1][
        "reply_token"
    ]
    assert [p.reply_token for p in heard.engine.pending_prompts()] == [token]
    heard.take(heard.adapter.permission_withdrawn(token, "You stopped the turn.", heard.now))
    assert heard.engine.pending_prompts() == []
    assert heard.adapter.answer(token, "accept") is None


_UPDATES = st.sampled_from(
    [
        ("tool_call", {"title": "", "kind": "execute", "status": "pending"}),
        ("tool_call_update", {"title": "make build", "kind": "execute"}),
        ("tool_call_update", {"status": "in_progress"}),
        ("tool_call_update", {"status": "completed"}),
        ("tool_call_update", {"status": "failed"}),
        ("tool_call", {"title": "ls", "kind": "read", "status": "pending"}),
        ("agent_message_chunk", {"content": text("Some words. ")}),
        ("agent_thought_chunk", {"content": text("hmm")}),
        ("permission", {}),
        ("withdraw", {}),
        ("answer", {}),
    ]
)


@settings(max_examples=examples(150), deadline=None)
@given(
    steps=st.lists(st.tuples(_UPDATES, st.sampled_from(["a", "b", "c"])), max_size=40),
    decisions=st.lists(
        st.sampled_from(["accept", "reject", "accept always", "reject always"]), max_size=40
    ),
)
def test_any_sequence_announces_each_call_once_and_answers_each_permission_once(
    steps: list[tuple[tuple[str, dict[str, Any]], str]], decisions: list[str]
) -> None:
    adapter = AcpAdapter("Agent")
    adapter.session_opened("s1", CWD, 0.0)
    adapter.prompt_sent("s1", 0.0)
    events: list[dict[str, Any]] = []
    tokens: list[str] = []
    answers: dict[str, int] = {}
    for index, ((kind, fields), call) in enumerate(steps):
        now = float(index)
        if kind == "permission":
            params = {
                "sessionId": "s1",
                "toolCall": {"toolCallId": call, "title": f"step {call}", "kind": "execute"},
                "options": ALL_OPTIONS,
            }
            out = adapter.permission_requested(str(index), params, now)
            tokens += [
                e["reply_token"]
                for e in out.events
                if e["type"] == "aaep:agent.awaiting.confirmation"
            ]
        elif kind in ("withdraw", "answer") and not tokens:
            continue
        elif kind == "withdraw":
            out = adapter.permission_withdrawn(tokens[0], "Withdrawn.", now)
        elif kind == "answer":
            token = tokens.pop(0)
            decision, _, scope = (
                decisions[index % len(decisions)] if decisions else "reject"
            ).partition(" ")
            if adapter.answer(token, decision, scope or "once") is not None:
                answers[token] = answers.get(token, 0) + 1
            out = adapter.update(update("agent_message_chunk", content=text("")), now)
        else:
            out = adapter.update(update(kind, toolCallId=call, **fields), now)
        assert not out.diagnostics
        events += out.events
    events += adapter.turn_ended("s1", "end_turn", float(len(steps))).events
    for event in events:
        result = decode_frame(json.dumps(event))
        assert result.event is not None, (event["type"], result.diagnostics)
    invoked = [e["tool_call_id"] for e in events if e["type"] == "aaep:agent.tool.invoked"]
    completed = [e["tool_call_id"] for e in events if e["type"] == "aaep:agent.tool.completed"]
    assert len(invoked) == len(set(invoked))  # no call announced twice
    assert sorted(completed) == sorted(set(completed))  # nor finished twice
    assert all(count == 1 for count in answers.values())  # each question answered once
    sequence = [e["sequence_number"] for e in events if e["session_id"] == events[0]["session_id"]]
    assert sequence == sorted(sequence)


def test_a_rejected_call_is_not_announced_or_read_as_a_failure_afterwards() -> None:
    """claude-code-acp reports a refused call as failed "User refused permission"."""
    heard = Heard()
    heard.open()
    heard.send(update("tool_call", toolCallId="t1", title="rm -rf build", kind="execute"))
    params = {
        "sessionId": "s1",
        "toolCall": {"toolCallId": "t1", "title": "rm -rf build", "kind": "execute"},
        "options": OPTIONS,
    }
    token = heard.take(heard.adapter.permission_requested("k", params, heard.now))[-1][
        "reply_token"
    ]
    assert heard.adapter.answer(token, "reject") == "no"
    before = list(heard.spoken)
    failed = {"type": "content", "content": text("User refused permission to run tool")}
    heard.send(update("tool_call_update", toolCallId="t1", status="failed", content=[failed]))
    assert heard.spoken == before


# -- "always" options and reminders (issue 16, items 4) -------------------------------------

ALL_OPTIONS = [
    *OPTIONS,
    {"optionId": "never", "name": "Always reject", "kind": "reject_always"},
]


def _ask(heard: Heard, options: list[dict[str, str]], key: str = "k") -> str:
    heard.engine.set_subscription("acp", "sub_test1")
    params = {
        "sessionId": "s1",
        "toolCall": {"toolCallId": f"t-{key}", "title": "npm test", "kind": "execute"},
        "options": options,
    }
    out = heard.adapter.permission_requested(key, params, heard.now)
    question = heard.take(out)[-1]
    assert question["type"] == "aaep:agent.awaiting.confirmation"
    # the output names the token it asked with, exactly as the question carries it
    assert out.asked == [question["reply_token"]]
    return str(question["reply_token"])


def _option_sent(heard: Heard, answer: UserAnswer) -> str | None:
    """What the agent receives: the engine's reply, typed as the runtime hands it to the
    ACP transport (runtime.answers.typed_answer), and the option the adapter picks."""
    outcome = heard.engine.answer(answer, heard.now)
    assert isinstance(outcome, ReplyReady), outcome
    assert decode_frame(json.dumps(outcome.to_wire())).kind == "reply"  # a valid AAEP reply
    typed = typed_answer(outcome, answer.scope)
    assert typed.reply_token == answer.reply_token and typed.decision is not None
    return heard.adapter.answer(typed.reply_token, typed.decision, typed.scope)


def test_always_answers_reach_the_agents_own_always_options() -> None:
    for decision, expected in (("accept", "always"), ("reject", "never")):
        heard = Heard()
        heard.open()
        token = _ask(heard, ALL_OPTIONS)
        answer = UserAnswer(token, decision=decision, scope="always")
        assert _option_sent(heard, answer) == expected
    heard = Heard()
    heard.open()
    token = _ask(heard, ALL_OPTIONS)
    # once stays once: never the remembered option
    assert _option_sent(heard, UserAnswer(token, decision="reject")) == "no"


def test_always_is_refused_when_the_agent_does_not_offer_it() -> None:
    heard = Heard()
    heard.open()
    token = _ask(heard, OPTIONS)  # allow always, allow once, reject once: no reject always
    refused = heard.engine.answer(UserAnswer(token, decision="reject", scope="always"), heard.now)
    assert isinstance(refused, Refusal) and refused.code == "always_not_offered"
    auto = UserAnswer(token, decision="reject", scope="always", decided_by="auto:policy")
    refused = heard.engine.answer(auto, heard.now)
    assert isinstance(refused, Refusal) and refused.code == "auto_always_forbidden"
    # the question is still open and answerable once
    assert _option_sent(heard, UserAnswer(token, decision="accept", scope="always")) == "always"


def test_a_reject_for_once_never_becomes_a_remembered_reject() -> None:
    adapter = AcpAdapter("Codex")
    adapter.session_opened("s1", CWD, 0.0)
    params = {
        "sessionId": "s1",
        "toolCall": {"toolCallId": "x", "title": "git push", "kind": "execute"},
        "options": [
            {"optionId": "once", "name": "Allow", "kind": "allow_once"},
            {"optionId": "never", "name": "Always reject", "kind": "reject_always"},
        ],
    }
    question = adapter.permission_requested("k", params, 0.0).events[-1]
    assert question["extensions"]["x-announcer"]["always"] == ["reject"]
    # None: the transport answers "cancelled", which the agent does not remember
    assert adapter.answer(question["reply_token"], "reject") is None


def _reminders(heard: Heard) -> list[str]:
    return [s for s in heard.spoken if s.startswith("Still waiting for your answer")]


def test_a_question_without_a_deadline_is_reminded_at_the_users_interval() -> None:
    heard = Heard(question_reminder_seconds=30)
    heard.open()
    start = heard.now
    token = _ask(heard, ALL_OPTIONS)
    heard._run(heard.engine.tick(start + 20))
    assert _reminders(heard) == []
    assert heard.engine.next_wakeup() is not None
    heard._run(heard.engine.tick(start + 40))
    assert _reminders(heard) == [
        "Still waiting for your answer: Claude Code wants to run: npm test."
    ]
    heard._run(heard.engine.tick(start + 50))
    assert len(_reminders(heard)) == 1  # not again before the interval is over
    heard._run(heard.engine.tick(start + 75))
    assert len(_reminders(heard)) == 2
    heard.now = start + 80
    _option_sent(heard, UserAnswer(token, decision="reject"))
    heard._run(heard.engine.tick(start + 200))
    assert len(_reminders(heard)) == 2  # answered: no more reminders


def test_no_reminder_where_no_interface_can_answer() -> None:
    """``--ui none``: "Still waiting for your answer" would ask for what cannot come."""
    heard = Heard(question_reminder_seconds=30)
    heard.engine.set_answer_keys(NO_ANSWERING_UI_KEYS)
    heard.open()
    start = heard.now
    _ask(heard, ALL_OPTIONS)
    for step in range(1, 10):
        heard._run(heard.engine.tick(start + 40 * step))
    assert heard.engine.pending_prompts()
    assert _reminders(heard) == []


def test_reminders_are_off_at_zero_and_never_for_a_question_with_a_deadline() -> None:
    heard = Heard(question_reminder_seconds=0)
    heard.open()
    start = heard.now
    _ask(heard, ALL_OPTIONS)
    for step in range(1, 10):
        heard._run(heard.engine.tick(start + 100 * step))
    assert _reminders(heard) == []
    # a question with its own deadline has its time left said instead, never reminders
    heard = Heard(question_reminder_seconds=5)
    heard.open()
    start = heard.now
    params = {
        "sessionId": "s1",
        "toolCall": {"toolCallId": "t", "title": "npm test", "kind": "execute"},
        "options": ALL_OPTIONS,
    }
    question = heard.adapter.permission_requested("k", params, heard.now).events[-1]
    question["extensions"]["x-announcer"]["no_timeout"] = False
    question["timeout_seconds"] = 600
    heard._run(heard.engine.receive(json.dumps(question), "acp", heard.now))
    heard._run(heard.engine.tick(start + 100))
    assert heard.engine.pending_prompts()
    assert _reminders(heard) == []
