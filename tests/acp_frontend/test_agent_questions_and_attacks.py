"""``announcer agent`` over pipes: the agent's own questions, and a hostile agent.

The plain UI on pipes, real agent processes: tests/acp_frontend/sdk_agent.py asks its
own questions (``elicitation/create``) and logs the response it receives;
tests/acp_frontend/hostile_agent.py sends what a broken or malicious agent may send.
What the user hears is the jsonl record; what the agent receives is its log.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from tests.acp_frontend.test_agent_command import AgentRun

HOSTILE = ["-m", "tests.acp_frontend.hostile_agent"]


def received(agent: AgentRun) -> list[dict[str, object]]:
    """What the agent logged it received (it writes once its request is answered)."""
    path = agent.folder / "elicitation.txt"
    deadline = time.monotonic() + 30
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_claudes_question_is_one_key_and_the_answer_reaches_the_agent(asked) -> None:  # type: ignore[no-untyped-def]
    """Issue 30 item 3: one line sends the choice; no "Other" question, no review."""
    agent = asked(
        "elicit claude",
        "Choose a number from 1 to 2, or type your own answer: Scripted Agent asks: Which database",
    )
    agent.answer("2")
    agent.wait_for("Sent: Postgres: A server.")  # the words picked, not a value
    agent.wait_for("Thank you for answering.")
    assert received(agent) == [{"action": "accept", "content": {"question_0": "Postgres"}}]
    assert agent.quit() == 0
    heard = " ".join(agent.heard())
    assert "Scripted Agent asks: Which database should the app use?" in heard
    assert "AskUserQuestion" not in heard  # the tool is announced once, as the question
    assert "failed" not in heard
    assert "Question 2 of 2" not in heard and "Send to Scripted Agent" not in heard
    assert "Leave it empty" not in heard
    # issue 30 item 3: the ways out are not read as numbered choices (typed as words)
    assert "Decline to answer" not in heard and "Cancel the question" not in heard


def test_claudes_question_answered_in_words_is_its_other_answer(asked) -> None:  # type: ignore[no-untyped-def]
    agent = asked("elicit claude", "Choose a number from 1 to 2")
    agent.answer("needs WAL mode")
    agent.wait_for("Thank you for answering.")
    assert received(agent) == [
        {"action": "accept", "content": {"question_0_custom": "needs WAL mode"}}
    ]
    assert agent.quit() == 0


def test_decline_reaches_the_agent_and_nothing_is_answered_for_the_user(asked) -> None:  # type: ignore[no-untyped-def]
    agent = asked("elicit codex", "Choose a number from 1 to 3:")  # Red, Blue, Other
    assert "Decline to answer" not in " ".join(agent.heard())  # not a numbered choice
    agent.type(":help")  # says how to leave the form (issue 30 item 3)
    agent.wait_for("Type decline to decline to answer, or cancel to cancel the question.")
    agent.answer("decline")  # Decline to answer, typed as a word
    agent.wait_for("Thank you for answering.")
    assert received(agent) == [{"action": "decline"}]
    assert agent.quit() == 0


def test_cancelling_the_turn_answers_the_open_question_cancel(asked) -> None:  # type: ignore[no-untyped-def]
    agent = asked("elicit number", "Type a number:")
    agent.type(":cancel")
    agent.wait_for("You stopped the turn, so the question was withdrawn.")
    assert received(agent) == [{"action": "cancel"}]
    assert agent.quit() == 0


def test_a_number_out_of_range_is_asked_again_never_sent(asked) -> None:  # type: ignore[no-untyped-def]
    agent = asked("elicit number", "Type a number:")
    agent.answer("9")
    agent.wait_for("9 is out of range. A number from 1 to 5.")
    agent.answer("3")
    agent.wait_for("Choose a number from 1 to 2")  # Verbose logs: yes, no (decline, cancel)
    agent.answer("1")
    agent.wait_for("Send to Scripted Agent: Retries: 3; Verbose logs: Yes?")
    agent.answer("1")
    agent.wait_for("Thank you for answering.")
    assert received(agent) == [{"action": "accept", "content": {"retries": 3, "verbose": True}}]
    assert agent.quit() == 0


def test_a_plan_approval_reads_the_plan_names_each_option_and_asks_which_always(asked) -> None:  # type: ignore[no-untyped-def]
    agent = asked("exitplan", "Accept or reject: Scripted Agent wants to run: Ready to code?")
    heard = " ".join(agent.heard())
    assert "The plan has 3 steps: 1. Read auth.py. 2. Fix the token check. 3. Run the tests." in (
        heard
    )
    assert "Accept: Yes, manually approve edits; Reject: No, keep planning;" in heard
    assert "Always: Yes, clear context and use auto mode or Yes, and use auto mode" in heard
    agent.answer("always")
    agent.wait_for("Type c then Enter to confirm")  # an always answer takes two keys
    agent.type("c")
    agent.wait_for("Choose a number from 1 to 2:")  # several always options: which one?
    # Nothing went to the agent yet: "Sent" is said only for what was sent (issue 31, 2)
    assert not any("Sent: accept" in line for line in agent.seen), agent.seen
    assert any("Nothing sent yet: choose which always answer." in line for line in agent.seen)
    agent.answer("2")
    agent.wait_for("Plan answered.")
    assert (agent.folder / "choices.txt").read_text().split() == ["auto"]  # never the first
    assert agent.quit() == 0
    assert not any(t.startswith("Sent: accept") for t in agent.heard())


def test_a_plan_whose_last_step_destroys_is_high_risk_and_every_step_is_reachable(asked) -> None:  # type: ignore[no-untyped-def]
    """Issue 29, item 13: a plan ending in ``rm -rf ~`` was approved as medium risk with one
    key, and its ninth step and later were only printed."""
    agent = asked(
        "exitplan-danger", "Accept or reject: Scripted Agent wants to run: Ready to code?"
    )
    heard = " ".join(agent.heard())
    assert "Dangerous in the plan: step 12: rm -rf ~." in heard
    assert "The plan has 12 steps: 1. Read auth.py." in heard
    assert "8. Tidy module 8. And 4 more steps." in heard
    agent.answer("a")  # high risk: one key does not allow it
    agent.wait_for("Type c then Enter to confirm")
    agent.type("w")  # every step by speech, the twelfth too
    agent.wait_for("  | 12. Clean up with `rm -rf ~`")
    deadline = time.monotonic() + 30
    while not any("11. Tidy module 11. 12. Clean up with rm -rf" in t for t in agent.heard()):
        assert time.monotonic() < deadline, agent.heard()[-3:]
        time.sleep(0.1)
    agent.answer_until("r", "Sent: reject.")
    agent.wait_for("Plan answered.")
    assert (agent.folder / "choices.txt").read_text().split() == ["plan"]
    assert agent.quit() == 0


def test_a_plan_that_comes_after_its_question_is_read_and_asked_again(run) -> None:  # type: ignore[no-untyped-def]
    """claude-agent-acp sends the plan in a tool_call_update that, under load, follows the
    request_permission: the open question is asked again with the plan, and only the
    question that read the plan is answered; the agent receives one answer."""
    agent = run()
    agent.type("exitplan-late")
    agent.wait_for("sent its plan: the question again, with it.")
    agent.wait_for("  | 2. Fix the token check")  # the plan, shown with the new question
    line = agent.wait_for("Accept or reject: Scripted Agent wants to run: Ready to code?")
    agent.answer_until("r", "Sent: reject.")
    agent.wait_for("Plan answered.")
    assert (agent.folder / "choices.txt").read_text().split() == ["plan"]
    assert agent.quit() == 0
    heard = agent.heard()
    asked = [t for t in heard if t.startswith("Confirmation needed.")]
    assert "The plan has 2 steps: 1. Read auth.py. 2. Fix the token check." in asked[-1], line


def test_forty_options_are_all_reachable_and_two_keeps_are_told_apart(asked) -> None:  # type: ignore[no-untyped-def]
    """Issue 29, item 11: options past the 29th were dropped without a word, and two
    options reading "Keep" (the second sends delete-all) could not be told apart."""
    agent = asked("elicit keep", "Choose a number from 1 to 28:")
    heard = " ".join(agent.heard())
    assert "40 choices, in 2 pages; page 1: choices 1 to 27." in heard
    assert "1: Keep (1 of 2 with this name, it sends keep)" in heard
    assert "2: Keep (2 of 2 with this name, it sends delete-all)" in heard
    agent.answer("28")  # More choices (page 2)
    agent.wait_for("page 2: choices 28 to 40.")
    agent.wait_for("Choose a number from 1 to 14:")  # 13 options, earlier (decline, cancel)
    agent.answer("13")  # the fortieth option
    agent.wait_for("Thank you for answering.")
    assert received(agent) == [{"action": "accept", "content": {"backups": "k40"}}]
    assert agent.quit() == 0


def test_a_form_sent_after_its_turn_ended_is_never_shown_and_answered_cancel(run) -> None:  # type: ignore[no-untyped-def]
    """Issue 29, item 12: as a permission request after its turn is answered cancelled,
    so is an elicitation; it is never shown nor answerable, and the drop is counted."""
    agent = run()
    agent.type("late-elicit")
    agent.wait_for("Scripted Agent finished the turn.")
    (agent.folder / "go-late.txt").write_text("go\n")
    assert received(agent) == [{"action": "cancel"}]
    agent.type(":diagnostics")
    agent.wait_for("ACP elicitation after its turn ended; cancelled: 1")
    assert agent.quit() == 0
    assert not any("Codex needs your input" in line for line in agent.seen)
    assert "Codex needs your input" not in " ".join(agent.heard())


def test_a_secret_answer_reaches_the_agent_and_is_never_said(asked) -> None:  # type: ignore[no-untyped-def]
    agent = asked("elicit secret", "or type your own answer:")
    agent.answer("hunter2-secret")
    agent.wait_for("Sent: your answer, not read back.")
    agent.wait_for("Deploy token: given, not read back?")
    agent.answer("1")
    agent.wait_for("Thank you for answering.")
    assert received(agent) == [{"action": "accept", "content": {"token": "hunter2-secret"}}]
    assert agent.quit() == 0
    assert "hunter2" not in " ".join(agent.heard())
    assert not any("hunter2" in line for line in agent.seen)


def test_a_hostile_agent_cannot_crash_flood_or_fool_announcer(tmp_path: Path) -> None:
    agent = AgentRun(tmp_path, agent=[sys.executable, *HOSTILE])
    title = "[@click=app.quit]Evil[/] [b]bold[/b]"
    agent.wait_for(f"{title} is ready.")  # its name is shown as written
    agent.type("go")
    agent.wait_for("Still here.")  # alive after every bad line, the giant one, the flood
    agent.wait_for(f"{title} finished the turn.")
    log = tmp_path / "work" / "hostile.jsonl"
    for _ in range(600):  # the late question comes 0.3 s after the turn's end
        if log.exists() and len(log.read_text().splitlines()) >= 2:
            break
        time.sleep(0.1)
    answers = {a["id"]: a for a in map(json.loads, log.read_text().splitlines())}
    # a request about a session announcer never opened is refused at once
    assert answers[900]["error"]["code"] == -32602
    # a question after the turn ended is answered cancelled, never shown or accepted
    assert answers[901]["result"] == {"outcome": {"outcome": "cancelled"}}
    agent.type(":diagnostics")
    agent.wait_for("a session announcer never opened; skipped: 501")
    agent.wait_for("ACP permission request after its turn ended; cancelled: 1")
    printed = "\n".join(agent.seen)
    assert "a line that is not JSON; skipped: 2" in printed
    assert "JSON that is not an object; skipped: 2" in printed
    assert "a line longer than 16777216 bytes; skipped: 1" in printed
    assert "a session/update without an update kind; skipped: 1" in printed
    assert "a message the SDK could not read (ValidationError); skipped: 1" in printed
    assert "a notification a client does not take; skipped: 1" in printed
    assert agent.quit() == 0
    assert agent.proc.stderr is not None
    errors = agent.proc.stderr.read()
    assert "Traceback" not in errors
    heard = " ".join(agent.heard())
    assert "ghost" not in heard
    assert "touch late.txt" not in heard
    assert heard.count("is ready.") == 1  # no session opened for the 500 ghosts


def peak_memory_mb(pid: int) -> float:
    """The most resident memory the process ever had (``VmHWM``), in megabytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM in /proc")


def test_a_question_too_big_to_read_is_refused_in_words_and_with_an_error(run) -> None:  # type: ignore[no-untyped-def]
    """Issue 29 item 6: a 16.6 MB form (under the 16 MiB line limit) took 670 MB and froze
    the keys for seconds. It is refused before it is read: the user hears so, the agent
    gets a JSON-RPC error, and the next question is asked and answered as usual."""
    agent = run()
    agent.type("elicit huge")
    agent.wait_for("Scripted Agent asked a question too big to read")
    agent.wait_for("My question was refused, so I go on without it.")
    [refused] = received(agent)
    error = refused["error"]
    assert isinstance(error, dict)
    assert error["code"] == -32602
    assert "at most 262144 bytes" in str(error["message"])
    peak = peak_memory_mb(agent.proc.pid)
    # the next question, right behind it, works as ever
    agent.type("elicit codex")
    agent.wait_for("Choose a number from 1 to 3:")
    agent.answer("decline")  # Decline to answer
    agent.wait_for("Thank you for answering.")
    assert received(agent)[1:] == [{"action": "decline"}]
    agent.type(":diagnostics")
    agent.wait_for("a question (elicitation/create) over 262144 bytes; skipped: 1")
    assert agent.quit() == 0
    heard = agent.heard()
    assert sum("too big to read" in text for text in heard) == 1, heard
    assert "Field number" not in " ".join(heard)  # nothing of the form was read
    # the form was never parsed: far from the 670 MB its models took
    assert peak < 250, peak
