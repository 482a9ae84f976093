"""What the user hears from real adapters' messages (issue 21, items 3, 4 and 7), sans-I/O.

The wire forms are those claude-agent-acp 0.101 and codex-acp 2.6 send: a delete as a
diff whose text is all gone, the reviewer's "Guardian Review" call, session notices, a
failed command with its exit code, a reject followed by the adapter's "cancelled" turn.
"""

from __future__ import annotations

from typing import Any

import pytest

from announcer.engine.prompts import UserAnswer
from announcer.engine.replies import ReplyReady
from tests.acp_frontend.sdk_agent import SETTINGS
from tests.acp_frontend.test_acp_mapping import CWD, OPTIONS, Heard, update


def confirmation(heard: Heard) -> dict[str, Any]:
    return [e for e in heard.events if e["type"] == "aaep:agent.awaiting.confirmation"][-1]


def ask(heard: Heard, call: dict[str, Any], **params: Any) -> dict[str, Any]:
    out = heard.adapter.permission_requested(
        "k1", {"sessionId": "s1", "toolCall": call, "options": OPTIONS, **params}, heard.now
    )
    heard.take(out)
    return confirmation(heard)


def test_a_delete_is_said_as_a_delete_high_risk_and_irreversible() -> None:
    heard = Heard()
    heard.open()
    diff = {"type": "diff", "path": f"{CWD}/old_notes.txt", "oldText": "note\n", "newText": "",
            "_meta": {"kind": "delete"}}  # fmt: skip
    heard.send(update("tool_call", toolCallId="p1", title="Edit files", kind="edit",
                      status="pending", content=[diff]))  # fmt: skip
    event = ask(heard, {"toolCallId": "p1", "title": "Edit files", "kind": "edit"})
    assert event["risk_level"] == "high"
    assert event["irreversible"] is True
    assert event["consequence"] == "It deletes old_notes.txt."  # "cannot be undone": the engine's
    heard.send(update("tool_call_update", toolCallId="p1", status="completed", content=[diff]))
    assert "Deletes old_notes.txt." in heard.said()
    assert "changes" not in heard.said()


def test_a_reject_is_the_users_own_never_a_failure_or_a_cancel() -> None:
    heard = Heard()
    heard.open()
    heard.engine.set_subscription("acp", "sub_test1")
    event = ask(heard, {"toolCallId": "c1", "title": "rm notes.txt", "kind": "execute"})
    outcome = heard.engine.answer(UserAnswer(event["reply_token"], decision="reject"), heard.now)
    assert isinstance(outcome, ReplyReady)
    assert heard.adapter.answer(event["reply_token"], "reject") == "no"
    heard.take(heard.adapter.answer_said(heard.now))
    heard.send(update("tool_call_update", toolCallId="c1", status="failed",
                      content=[{"type": "content", "content": {"type": "text",
                               "text": "The user doesn't want to proceed"}}]))  # fmt: skip
    heard.take(heard.adapter.turn_ended("s1", "cancelled", heard.now))
    said = heard.said()
    assert "You rejected: rm notes.txt." in said
    # "You rejected: ..." named it; not again, where a long command would be cut (31, 13)
    assert "Claude Code stopped the turn after you rejected it." in said
    assert "failed" not in said.lower()
    assert "you cancelled it" not in said


def test_after_a_cancel_an_unreported_call_may_still_be_running() -> None:
    heard = Heard()
    heard.open()
    heard.send(update("tool_call", toolCallId="s31", title="sleep 31", kind="execute",
                      status="in_progress"))  # fmt: skip
    heard.adapter.turn_cancelled("s1")
    heard.take(heard.adapter.turn_ended("s1", "cancelled", heard.now))
    said = heard.said()
    # the point first and short: a status line is never cut mid-thought (issue 31, 13)
    assert "The command sleep 31 may still be running." in said, said
    assert "ended with the turn" not in said
    assert "you cancelled it" in said


def test_a_failed_command_says_its_exit_code_and_first_error_line() -> None:
    heard = Heard()
    heard.open()
    heard.send(update("tool_call", toolCallId="b1", title="npm run build", kind="execute",
                      status="in_progress"))  # fmt: skip
    heard.send(update("tool_call_update", toolCallId="b1", status="failed",
                      rawOutput={"exitCode": 2, "stderr": "\nerror TS2304: Cannot find name 'x'.\n"
                                 "at src/app.ts:3"}))  # fmt: skip
    assert "The command npm run build failed, exit code 2: error TS2304: Cannot find name 'x'." in (
        heard.said()
    )


def test_the_agents_reason_is_part_of_the_question() -> None:
    heard = Heard()
    heard.open()
    event = ask(
        heard,
        {"toolCallId": "n1", "title": "curl https://pypi.org", "kind": "fetch",
         "_meta": {"justification": "Checks the newest version of httpx"}},
    )  # fmt: skip
    assert "Its reason: Checks the newest version of httpx" in event["consequence"]
    v2 = ask(heard, {"toolCallId": "n2", "title": "ls", "kind": "read"},
             description="Reason: Lists the folder")  # fmt: skip
    assert "Its reason: Lists the folder" in v2["consequence"]


def test_titles_are_relative_to_the_working_folder() -> None:
    heard = Heard()
    heard.open()
    heard.send(update("tool_call", toolCallId="r1", title=f"Read {CWD}/src/app.py", kind="read",
                      status="in_progress"))  # fmt: skip
    heard.take(heard.adapter.flush_running(heard.now + 1))  # no question came: it is said
    assert "Read src/app.py." in heard.said()
    assert CWD not in heard.said()


def test_an_agent_that_dies_stopped_unexpectedly() -> None:
    heard = Heard()
    heard.open()
    heard.take(heard.adapter.session_failed(None, "its process ended with status -9", heard.now))
    assert "Claude Code stopped unexpectedly: its process ended with status -9" in heard.said()


def test_settings_are_said_on_start_and_each_change_once() -> None:
    heard = Heard()
    heard.open()
    heard.take(
        heard.adapter.settings_known("s1", SETTINGS["modes"], SETTINGS["configOptions"], 0.0)
    )
    assert "Model: GPT-5. Approval: Auto review." in heard.said()
    changed = [dict(o) for o in SETTINGS["configOptions"]]
    changed[1] = {**changed[1], "currentValue": "ask"}
    heard.send(update("config_option_update", configOptions=changed))
    heard.send(update("config_option_update", configOptions=changed))  # no change: not said
    assert heard.said().count("Approval is now Ask before edits.") == 1
    assert heard.adapter.setting_plan("s1", "mode", "auto review") == ("config", "approval", "auto")
    assert heard.adapter.setting_plan("s1", "model", "GPT-5 MINI") == (
        "config", "model", "gpt-5-mini",
    )  # fmt: skip
    assert heard.adapter.setting_plan("s1", "model", "") == (
        "Model: GPT-5. Choices: GPT-5, GPT-5 mini."
    )


def test_mode_plan_reaches_codexs_collaboration_mode() -> None:
    """codex-acp 2.6.0: "Plan" is not one of its modes but its collaboration mode (where
    its request_user_input works); ``:mode plan`` sets that option."""
    heard = Heard()
    heard.open()
    collaboration = {"id": "collaboration_mode", "name": "Collaboration mode",
                     "category": "collaboration_mode", "type": "select",
                     "currentValue": "default", "options": [
                         {"value": "default", "name": "Default"},
                         {"value": "plan", "name": "Plan"}]}  # fmt: skip
    options = [*SETTINGS["configOptions"], collaboration]
    heard.take(heard.adapter.settings_known("s1", SETTINGS["modes"], options, 0.0))
    assert heard.adapter.setting_plan("s1", "mode", "plan") == (
        "config", "collaboration_mode", "plan",
    )  # fmt: skip
    assert heard.adapter.setting_plan("s1", "mode", "ask before edits") == (
        "config", "approval", "ask",
    )  # the mode option first  # fmt: skip
    refused = heard.adapter.setting_plan("s1", "mode", "gpt-5")  # never a model by :mode
    assert isinstance(refused, str) and "offers no such choice: gpt-5" in refused


def test_the_reviewer_decides_in_its_own_name() -> None:
    heard = Heard()
    heard.open()
    for call, status, verdict in (("g1", "completed", "Approved"), ("g2", "failed", "Denied")):
        text = f"Status: {verdict}\nAction: shell rm {call}.txt\nRationale: tidy"
        heard.send(update("tool_call", toolCallId=f"guardian_assessment:{call}",
                          title="Guardian Review", kind="think", status="in_progress"))  # fmt: skip
        heard.send(update("tool_call_update", toolCallId=f"guardian_assessment:{call}",
                          status=status, content=[{"type": "content",
                          "content": {"type": "text", "text": text}}]))  # fmt: skip
    said = heard.said()
    assert "Claude Code's reviewer allowed: rm g1.txt." in said
    assert "Claude Code's reviewer denied: rm g2.txt." in said
    assert "Guardian Review" not in said


def test_notices_are_said_by_severity() -> None:
    heard = Heard()
    heard.open()
    for severity in ("error", "warning", "info"):
        heard.send(update("notice", severity=severity, title=f"{severity} title"))
    said = heard.said()
    assert "Error from Claude Code: Error title." in said
    assert "Warning from Claude Code: Warning title." in said
    errors = [e for e in heard.events if "Error from" in str(e.get("summary_normal"))]
    assert errors[0]["urgency"] == "critical"


def test_a_login_is_named_from_the_agents_auth_methods() -> None:
    heard = Heard()
    methods = [{"id": "a", "name": "Claude Subscription", "type": "terminal",
                "args": ["--cli", "auth", "login"]}]  # fmt: skip
    said = heard.adapter.login_hint(methods, ["claude-agent-acp"])
    assert said == (
        "Claude Code needs you to log in: for Claude Subscription, run in a terminal: "
        "claude-agent-acp --cli auth login."
    )


def test_a_titled_call_is_not_said_before_its_question_when_silent_updates_come_between() -> None:
    heard = Heard()
    heard.open()
    heard.send(update("tool_call", toolCallId="t9", title="rm -rf build", kind="execute",
                      status="pending"))  # fmt: skip
    heard.send(update("usage_update", used=10, size=100))  # seen with claude-agent-acp 0.101
    heard.send(update("available_commands_update", availableCommands=[]))
    ask(heard, {"toolCallId": "t9", "title": "rm -rf build", "kind": "execute"})
    types = [e["type"] for e in heard.events]
    assert "aaep:agent.tool.invoked" not in types  # announced once, as the question


def test_paths_are_relative_even_when_an_update_came_before_the_session_was_opened() -> None:
    heard = Heard()
    heard.send(update("available_commands_update", availableCommands=[]))  # before session/new
    heard.take(heard.adapter.session_opened("s1", CWD, heard.now))
    heard.take(heard.adapter.prompt_sent("s1", heard.now))
    event = ask(heard, {"toolCallId": "p2", "title": "Edit", "kind": "edit",
                        "locations": [{"path": f"{CWD}/build"}]})  # fmt: skip
    assert "It touches build." in event["consequence"]
    assert CWD not in event["consequence"]


def test_a_mode_that_is_also_a_config_option_is_said_once() -> None:
    heard = Heard()
    heard.open()
    heard.take(
        heard.adapter.settings_known("s1", SETTINGS["modes"], SETTINGS["configOptions"], 0.0)
    )
    changed = [dict(o) for o in SETTINGS["configOptions"]]
    changed[1] = {**changed[1], "currentValue": "ask"}
    heard.send(update("current_mode_update", currentModeId="ask"))
    heard.send(update("config_option_update", configOptions=changed))
    said = heard.said()
    assert said.count("Ask before edits") == 1


def test_a_plan_sent_before_its_approval_is_read_in_the_question() -> None:
    heard = Heard()
    heard.open()
    plan = "## Fix login\n\n1. Read auth.py\n2. Fix the token check\n"
    heard.send(update("tool_call", toolCallId="x1", title="Approve Plan", kind="switch_mode",
                      status="pending", rawInput={}))  # fmt: skip
    heard.send(update("tool_call_update", toolCallId="x1", rawInput={"plan": plan}))
    options = [
        {"optionId": "d", "name": "Yes, manually approve edits", "kind": "allow_once"},
        {"optionId": "a", "name": "Yes, and use auto mode", "kind": "allow_always"},
        {"optionId": "b", "name": "Yes, and bypass permissions", "kind": "allow_always"},
        {"optionId": "r", "name": "No, keep planning", "kind": "reject_once"},
    ]
    out = heard.adapter.permission_requested("k9", {"sessionId": "s1", "options": options,
        "toolCall": {"toolCallId": "x1", "title": "Approve Plan", "kind": "switch_mode"}},
        heard.now)  # fmt: skip
    heard.take(out)
    event = confirmation(heard)
    assert event["consequence"].startswith(
        "The plan has 2 steps: 1. Read auth.py. 2. Fix the token check."
    )
    assert (
        "Accept: Yes, manually approve edits; Reject: No, keep planning;" in (event["consequence"])
    )
    assert heard.adapter.always_choices(event["reply_token"]) == [
        ("a", "Yes, and use auto mode"), ("b", "Yes, and bypass permissions"),
    ]  # fmt: skip


def test_a_plan_after_its_question_asks_it_again_and_the_old_token_answers_nothing() -> None:
    heard = Heard()
    heard.open()
    options = [
        {"optionId": "d", "name": "Yes, manually approve edits", "kind": "allow_once"},
        {"optionId": "r", "name": "No, keep planning", "kind": "reject_once"},
    ]
    call = {"toolCallId": "x4", "title": "Approve Plan", "kind": "switch_mode"}
    heard.take(heard.adapter.permission_requested(
        "k4", {"sessionId": "s1", "options": options, "toolCall": call}, heard.now))  # fmt: skip
    first = confirmation(heard)
    assert "The plan has" not in first["consequence"]
    heard.send(update("tool_call_update", toolCallId="x4", rawInput={"plan": "1. Read auth.py\n"}))
    second = confirmation(heard)
    assert second["reply_token"] != first["reply_token"]
    assert second["consequence"].startswith("The plan has 1 step: 1. Read auth.py.")
    assert heard.adapter.take_asked_again() == [(first["reply_token"], second["reply_token"])]
    assert heard.adapter.take_asked_again() == []
    assert heard.adapter.answer(first["reply_token"], "accept") is None  # answers nothing
    assert heard.adapter.answer(second["reply_token"], "reject") == "r"
    # the same plan again changes nothing: asked once with it
    heard.send(update("tool_call_update", toolCallId="x4", rawInput={"plan": "1. Read auth.py\n"}))
    assert heard.adapter.take_asked_again() == []


@pytest.mark.parametrize(
    ("language", "one", "two"),
    [
        ("en", "The plan has 1 step: 1.", "The plan has 2 steps: 1."),
        ("es", "El plan tiene 1 paso: 1.", "El plan tiene 2 pasos: 1."),
        ("ar", "للخطة خطوة واحدة: 1.", "للخطة خطوتان: 1."),
    ],
)
def test_the_plans_step_count_is_a_proper_plural(language: str, one: str, two: str) -> None:
    said = []
    for plan in ("1. Read auth.py\n", "1. Read auth.py\n2. Fix the token check\n"):
        heard = Heard()
        heard.adapter.set_language(language)
        heard.open()
        call = {"toolCallId": "x5", "title": "Approve Plan", "kind": "switch_mode",
                "rawInput": {"plan": plan}}  # fmt: skip
        params = {"sessionId": "s1", "options": OPTIONS, "toolCall": call}
        heard.take(heard.adapter.permission_requested("k5", params, heard.now))
        said.append(confirmation(heard)["consequence"])
    assert said[0].startswith(one), said[0]
    assert said[1].startswith(two), said[1]


def test_the_whole_plan_is_in_the_questions_detailed_summary() -> None:
    heard = Heard(verbosity="detailed")
    heard.open()
    steps = "\n".join(f"{i}. Step number {i}" for i in range(1, 13))
    out = heard.adapter.permission_requested("k8", {"sessionId": "s1", "options": OPTIONS,
        "toolCall": {"toolCallId": "x2", "title": "Approve Plan", "kind": "switch_mode",
                     "rawInput": {"plan": steps}}}, heard.now)  # fmt: skip
    heard.take(out)
    event = confirmation(heard)
    # by steps: the first eight, and how many more (W and the detailed reading say them)
    assert "8. Step number 8. And 4 more steps." in event["consequence"]
    assert "12. Step number 12" in event["summary_detailed"]  # whole, for the detailed reading


def _plan_question(plan: str) -> dict[str, Any]:
    heard = Heard()
    heard.open()
    out = heard.adapter.permission_requested("k9", {"sessionId": "s1", "options": OPTIONS,
        "toolCall": {"toolCallId": "x9", "title": "Approve Plan", "kind": "switch_mode",
                     "rawInput": {"plan": plan}}}, heard.now)  # fmt: skip
    heard.take(out)
    return confirmation(heard)


def test_every_step_of_a_plan_is_risk_checked_and_a_plan_not_kept_whole_is_high_risk() -> None:
    """Issue 29, item 13: a plan whose step past the eighth deletes the home folder was
    medium risk (one key); a note under it, and a plan longer than a question keeps,
    are not read in full either."""
    calm = _plan_question("1. Read auth.py\n2. Fix the token check\n")
    assert calm["risk_level"] == "medium"
    steps = "".join(f"{n}. Tidy module {n}\n" for n in range(1, 12))
    event = _plan_question(steps + "12. Then `git push --force origin main`\n")
    assert event["risk_level"] == "high"
    assert "Dangerous in the plan: step 12: git push --force origin main." in event["consequence"]
    noted = _plan_question("1. Read auth.py\n\nAfterwards run rm -rf /srv/data to tidy.\n")
    assert noted["risk_level"] == "high" and noted["irreversible"] is True
    assert "Dangerous in the plan: its notes: rm -rf /srv/data" in noted["consequence"]
    huge = _plan_question("".join(f"{n}. Read part {n} of the notes\n" for n in range(1, 1500)))
    assert huge["risk_level"] == "high"
    assert "only the first 16000 are shown and read" in huge["consequence"]


def test_a_plan_approval_keeps_the_whole_plan_and_names_the_key_that_reads_it() -> None:
    """By steps at normal verbosity, whole on a key (issue 21, item 5): the question
    keeps the plan as the agent wrote it, and its keys end with the one that reads it."""
    from announcer.engine.answer_guard import plan_for_display, plan_for_speech, plan_of

    heard = Heard()
    heard.open()
    plan = "## Fix login\n\nWhy: tokens expire.\n\n- Read `auth.py`\n- Clear `dist/*`\n" + (
        "\n".join(f"{i}. Step number {i}" for i in range(3, 13))
    )
    out = heard.adapter.permission_requested("k7", {"sessionId": "s1", "options": OPTIONS,
        "toolCall": {"toolCallId": "x3", "title": "Approve Plan", "kind": "switch_mode",
                     "rawInput": {"plan": plan}}}, heard.now)  # fmt: skip
    heard.take(out)
    event = confirmation(heard)
    assert plan_of(event) == plan
    assert "W reads the whole plan." in heard.said()
    whole = plan_for_speech(plan)
    assert whole.startswith("Fix login. Why: tokens expire. Read auth.py. Clear dist/ star.")
    assert whole.endswith("11. Step number 11. 12. Step number 12.")
    assert plan_for_display(plan)[:3] == ["## Fix login", "Why: tokens expire.", "- Read `auth.py`"]
    # a question about a command has no plan, and says no plan key
    assert plan_of({"extensions": {}}) is None


def test_a_running_call_the_agent_then_asks_about_is_announced_once_as_the_question() -> None:
    """codex-acp 2.6 starts a command (in_progress), then asks for its approval."""
    heard = Heard()
    heard.open()
    started = heard.now
    heard.send(update("tool_call", toolCallId="e1", title="rm -rf build", kind="execute",
                      status="in_progress"))  # fmt: skip
    assert heard.adapter.running_due()
    assert heard.adapter.flush_running(started + 0.1).events == []  # still quiet
    ask(heard, {"toolCallId": "e1", "title": "rm -rf build", "kind": "execute"})
    heard.take(heard.adapter.flush_running(heard.now + 5))
    types = [e["type"] for e in heard.events]
    assert "aaep:agent.tool.invoked" not in types
    assert not heard.adapter.running_due()


def test_a_command_the_reviewer_denied_is_not_said_again_as_a_failure() -> None:
    heard = Heard()
    heard.open()
    heard.send(update("tool_call", toolCallId="c7", title="rm -rf build", kind="execute",
                      status="in_progress"))  # fmt: skip
    text = "Status: Denied\nAction: shell /bin/bash -lc 'rm -rf build'"
    heard.send(update("tool_call", toolCallId="guardian_assessment:7", title="Guardian Review",
                      kind="think", status="in_progress"))  # fmt: skip
    verdict = [{"type": "content", "content": {"type": "text", "text": text}}]
    heard.send(update("tool_call_update", toolCallId="guardian_assessment:7", status="failed",
                      content=verdict))  # fmt: skip
    heard.send(update("tool_call_update", toolCallId="c7", status="failed"))
    said = heard.said()
    assert "Claude Code's reviewer denied: rm -rf build." in said  # as run, unwrapped
    assert "failed" not in said.lower()
    # it never ran, and that is said (issue 31, item 5), never as the user's answer
    assert "The command rm -rf build did not run: Claude Code's reviewer denied it." in said


def test_a_path_is_said_once_and_the_working_folder_not_at_all() -> None:
    """Issue 31, item 12: "Read src/app.py in src/app.py."; opencode's "in ."; a command's
    paths only as it names them ("rm -rf build/ dist/" is not "It touches build.")."""
    heard = Heard()
    heard.open()
    heard.send(update("tool_call", toolCallId="r2", title=f"Read {CWD}/src/app.py", kind="read",
                      status="in_progress", locations=[{"path": f"{CWD}/src/app.py"}]))  # fmt: skip
    heard.send(update("tool_call", toolCallId="r3", title="List", kind="search",
                      status="in_progress", locations=[{"path": CWD}]))  # fmt: skip
    heard.take(heard.adapter.flush_running(heard.now + 1))
    said = heard.spoken
    assert "Read src/app.py." in said and "List." in said, said
    event = ask(heard, {"toolCallId": "r4", "title": "rm -rf build/ dist/", "kind": "execute",
                        "rawInput": {"command": "rm -rf build/ dist/"},
                        "locations": [{"path": f"{CWD}/build"}]})  # fmt: skip
    assert "It touches" not in event["consequence"], event["consequence"]


def test_codexs_working_folder_note_is_not_read_as_its_reason() -> None:
    heard = Heard()
    heard.open()
    event = ask(
        heard,
        {"toolCallId": "n3", "title": "touch made.txt", "kind": "execute",
         "rawInput": {"command": "touch made.txt"},
         "_meta": {"justification": f"[current working directory {CWD}] (Create made.txt)"}},
    )  # fmt: skip
    assert CWD not in event["consequence"] and "current working" not in event["consequence"]
    assert "Its reason: (Create made.txt)" in event["consequence"], event["consequence"]


def test_a_late_update_of_an_untitled_call_says_nothing() -> None:
    """Issue 31, item 13: a tool update after the turn (its call already closed) was heard
    as "A other step."."""
    heard = Heard()
    heard.open()
    heard.take(heard.adapter.turn_ended("s1", "end_turn", heard.now))
    heard.send(update("tool_call_update", toolCallId="late1", status="completed"))
    assert "other step" not in heard.said() and "A step" not in heard.said(), heard.said()


def test_a_file_name_with_a_hidden_character_is_said_to_have_one() -> None:
    """Issue 31, item 15: "résumé-ملخص-\u202etxt.exe" (a right-to-left override makes an .exe
    look like a .txt) was written with the override silently taken out."""
    name = "résumé-ملخص-\u202etxt.exe"
    heard = Heard()
    heard.open()
    event = ask(heard, {"toolCallId": "w1", "title": f"Write {name}", "kind": "edit",
                        "locations": [{"path": f"{CWD}/{name}"}]})  # fmt: skip
    assert "It had 2 hidden characters, taken out here." in event["consequence"], event
    assert event["risk_level"] == "high"
    heard.send(update("tool_call", toolCallId="w2", title=f"Read {name}", kind="read",
                      status="in_progress"))  # fmt: skip
    heard.take(heard.adapter.flush_running(heard.now + 1))
    assert any("It had 1 hidden character, taken out here." in t for t in heard.spoken), heard


def test_a_path_outside_the_working_folder_is_said_from_home_once() -> None:
    """Issue 31, item 12: "Write <home>/.claude/plans/x.md in <home>/.claude/plans/x.md",
    the home folder spelled out twice."""
    plan = "/home/ada/.claude/plans/graceful-tickling-badger.md"
    heard = Heard()
    heard.open()
    heard.send(update("tool_call", toolCallId="p9", title=f"Write {plan}", kind="edit",
                      status="in_progress", locations=[{"path": plan}]))  # fmt: skip
    heard.take(heard.adapter.flush_running(heard.now + 1))
    said = [t for t in heard.spoken if "graceful" in t]
    assert said and "Write ~/.claude/plans/graceful-tickling-badger.md" in said[0], said
    assert "/home/ada" not in said[0] and said[0].count("graceful") == 1, said


def test_compactions_are_said_once_per_status_and_a_full_context_once_until_it_has_room() -> None:
    """Issue 33, item 3: ACP ``compaction_update`` and the context window's use."""
    heard = Heard()
    heard.open()
    heard.send(update("compaction_update", compactionId="a", status="in_progress"))
    heard.send(update("compaction_update", compactionId="a", status="in_progress"))  # again
    heard.send(update("compaction_update", compactionId="a", status="failed", error="Too big"))
    heard.send(update("compaction_update", compactionId="b", status="cancelled"))
    heard.send(update("compaction_update", compactionId="c", status="completed"))
    for used in (150, 185, 195, 120, 182):  # of 200: 90% and past said once, until below 80%
        heard.send(update("usage_update", used=used, size=200))
    said = [s for s in heard.spoken if "ompact" in s or "context" in s]
    assert said == [
        "Claude Code is compacting the conversation…",
        "Compacting the conversation failed. Too big.",
        "Compacting the conversation was cancelled.",
        "Conversation compacted.",
        "Claude Code's context is 92% full.",
        "Claude Code's context is 91% full.",
    ]


def test_a_subagent_is_said_when_it_starts_and_when_it_ends() -> None:
    heard = Heard()
    heard.open()
    meta = {"claudeCode": {"toolName": "Task"}}
    heard.send(update("tool_call", toolCallId="s", title="Find the bug", kind="think",
                      status="in_progress", _meta=meta))  # fmt: skip
    heard.take(heard.adapter.flush_running(heard.now + 1))
    heard.send(update("tool_call_update", toolCallId="s", status="completed", _meta=meta))
    assert [s for s in heard.spoken if "ubagent" in s] == [
        "Subagent started: Find the bug.",
        "Subagent finished: Find the bug.",
    ]


def test_prompt_suggestions_are_kept_in_both_forms_and_an_empty_list_clears_them() -> None:
    """Issue 33, item 5: ``prompt_suggestions_update`` and claude-agent-acp 0.101's
    ``session_info_update._meta.promptSuggestions``; neither is spoken nor dropped."""
    heard = Heard()
    heard.open()
    heard.send(update("prompt_suggestions_update", suggestions=[{"text": "Run the tests"}]))
    assert heard.adapter.suggestions("s1") == ["Run the tests"]
    meta = {"promptSuggestions": {"suggestions": [{"text": "Commit\x07 the fix"}, {"text": ""}]}}
    heard.send(update("session_info_update", _meta=meta))
    assert heard.adapter.suggestions("s1") == ["Commit the fix"]
    heard.send(update("session_info_update", _meta={"promptSuggestions": {"suggestions": []}}))
    assert heard.adapter.suggestions("s1") == []
    # not news: nothing said (and Heard.take fails on any diagnostic, so none was dropped)
    assert not any("Commit" in line or "Run the tests" in line for line in heard.said())


def _suggest(*prompts: str) -> dict[str, Any]:
    """ACP's own ``prompt_suggestions_update`` (unstable, schema 1.32): each suggestion a
    prompt of content blocks, as ``session/prompt`` takes."""
    return update(
        "prompt_suggestions_update",
        suggestions=[{"prompt": [{"type": "text", "text": p}]} for p in prompts],
    )


@pytest.mark.parametrize("verbosity", ["terse", "normal", "detailed"])
def test_suggested_prompts_are_said_after_the_turn_at_detailed_verbosity_only(
    verbosity: str,
) -> None:
    """Issue 33, item 5: ACP's ``{"prompt": [ContentBlock]}`` form read (a resource link
    by its address), kept at every verbosity, said once after the turn's end at detailed
    verbosity, never during the turn; the same list again is not said again."""
    heard = Heard(verbosity=verbosity)
    heard.open()
    link = {"type": "resource_link", "name": "app.py", "uri": "file:///home/ada/app.py"}
    heard.send(
        update(
            "prompt_suggestions_update",
            suggestions=[
                {"prompt": [{"type": "text", "text": "Run the tests"}]},
                {"prompt": [{"type": "text", "text": "Explain"}, link]},
            ],
        )
    )
    assert heard.adapter.suggestions("s1") == [
        "Run the tests",
        "Explain file:///home/ada/app.py",
    ]
    assert not any("suggests" in line for line in heard.spoken)  # the turn still runs
    heard.take(heard.adapter.turn_ended("s1", "end_turn", heard.now))
    said = [line for line in heard.spoken if "suggests" in line]
    if verbosity == "detailed":
        assert heard.spoken[-2] == "Claude Code finished the turn."
        assert said == ["Claude Code suggests 2 prompts; the first: Run the tests."]
    else:
        assert said == []
        assert heard.engine.policy.suppressed["detailed verbosity only"] == 1
    before = len(heard.spoken)
    heard.send(_suggest("Run the tests", "Explain file:///home/ada/app.py"))
    assert len(heard.spoken) == before  # nothing new to say


def test_a_suggestion_after_the_turns_end_is_said_at_once_and_an_empty_list_says_nothing() -> None:
    """The adapters predict after the turn is over (claude-agent-acp after the CLI's
    result, codex-acp once the turn completed): said when it comes."""
    heard = Heard(verbosity="detailed")
    heard.open()
    heard.take(heard.adapter.turn_ended("s1", "end_turn", heard.now))
    meta = {"promptSuggestions": {"suggestions": [{"text": "Commit the fix"}]}}
    heard.send(update("session_info_update", _meta=meta))
    assert heard.spoken[-1] == "Claude Code suggests: Commit the fix."
    heard.send(_suggest())
    assert heard.spoken[-1] == "Claude Code suggests: Commit the fix."
    assert heard.adapter.suggestions("s1") == []
