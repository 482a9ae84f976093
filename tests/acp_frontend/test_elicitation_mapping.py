"""ACP ``elicitation/create`` -> AAEP clarifications -> the user's answers -> the agent's response.

Sans-I/O: the params are the wire form real adapters send (Claude's AskUserQuestion with
its "Other" field, Codex's request_user_input, numbers with bounds, several choices, an
address); every question goes through the real decoder and engine, and every answer
through the engine's reply check, as in the running program.
"""

from __future__ import annotations

import json
from typing import Any

from announcer.engine.prompts import UserAnswer
from announcer.engine.replies import ReplyReady
from tests.acp_frontend.sdk_agent import ELICITATIONS
from tests.acp_frontend.test_acp_mapping import Heard


class Form:
    """One elicitation asked through the engine; answers go back as the UIs send them."""

    def __init__(self, kind: str | dict[str, Any], **settings: Any) -> None:
        self.heard = Heard(**settings)
        self.heard.open()
        self.heard.engine.set_subscription("acp", "sub_test1")
        params = ELICITATIONS[kind] if isinstance(kind, str) else kind
        self.heard.take(
            self.heard.adapter.elicitation_requested("r1", {**params, "sessionId": "s1"}, 0.0)
        )
        self.result: dict[str, Any] | None = None

    @property
    def question(self) -> dict[str, Any]:
        return [e for e in self.heard.events if e["type"] == "aaep:agent.awaiting.clarification"][
            -1
        ]

    def choice(self, label: str) -> str:
        """The value of the choice the user hears as ``label`` (what a key sends)."""
        return next(c["value"] for c in self.question["choices"] if c["label"].startswith(label))

    def answer(self, response: object) -> None:
        question = self.question
        outcome = self.heard.engine.answer(
            UserAnswer(question["reply_token"], response=response, event_id=question["event_id"]),
            self.heard.now,
        )
        assert isinstance(outcome, ReplyReady), outcome
        wire = outcome.to_wire()
        out, result = self.heard.adapter.elicitation_answered(
            wire["reply_token"], wire["response"], self.heard.now
        )
        self.heard.take(out)
        self.result = result


def test_claude_ask_user_question_is_asked_reviewed_and_its_answer_reaches_the_agent() -> None:
    form = Form("claude")
    said = form.heard.said()
    assert "Scripted" not in said  # the adapter's own name: Claude Code in this test
    assert "Claude Code asks: Which database should the app use?" in said
    assert "SQLite: One file" in said and "Postgres: A server" in said
    assert "The agent waits for your answer." in said  # no deadline is made up
    form.answer(form.choice("Postgres"))
    assert form.result is None
    assert "Question 2 of 2: Other." in form.heard.said()
    form.answer("needs WAL mode")  # typed words, not a choice
    assert form.result is None
    assert "Send to Claude Code: Database: Postgres; Other: needs WAL mode?" in form.heard.said()
    form.answer(form.choice("Send these answers"))
    assert form.result == {
        "action": "accept",
        "content": {"question_0": "Postgres", "question_0_custom": "needs WAL mode"},
    }


def test_an_optional_field_left_empty_is_left_out_of_the_content() -> None:
    form = Form("claude")
    form.answer(form.choice("SQLite"))
    form.answer(form.choice("Leave it empty"))
    assert "Other: left empty" in form.heard.said()
    form.answer(form.choice("Send these answers"))
    assert form.result == {"action": "accept", "content": {"question_0": "SQLite"}}


def test_decline_and_cancel_reach_the_agent_as_the_user_chose() -> None:
    declined = Form("codex")
    declined.answer(declined.choice("Decline to answer"))
    assert declined.result == {"action": "decline"}
    cancelled = Form("codex")
    cancelled.answer(cancelled.choice("Cancel the question"))
    assert cancelled.result == {"action": "cancel"}


def test_a_required_choice_offers_no_empty_answer_and_sends_at_once() -> None:
    form = Form("codex")
    labels = [c["label"] for c in form.question["choices"]]
    assert labels == ["Red", "Blue", "Other", "Decline to answer", "Cancel the question"]
    form.answer(form.choice("Blue"))
    assert form.result == {"action": "accept", "content": {"colour": "Blue"}}


def test_numbers_keep_their_bounds_and_booleans_are_yes_or_no() -> None:
    form = Form("number")
    assert "A number from 1 to 5. Whole numbers only." in form.heard.said()
    assert form.question["accepted_response_kinds"] == ["numeric"]
    form.answer(9)  # out of range: asked again with the reason, never sent
    assert form.result is None
    assert "9 is out of range. A number from 1 to 5." in form.heard.said()
    form.answer(2.5)  # not whole
    assert form.result is None
    form.answer(3)
    form.answer(form.choice("Yes"))
    assert "Send to Claude Code: Retries: 3; Verbose logs: Yes?" in form.heard.said()
    form.answer(form.choice("Send these answers"))
    assert form.result == {"action": "accept", "content": {"retries": 3, "verbose": True}}


def test_answer_again_starts_the_form_over_and_the_review_can_decline() -> None:
    form = Form("number")
    form.answer(4)
    form.answer(form.choice("No"))
    form.answer(form.choice("Answer again"))
    form.answer(2)
    form.answer(form.choice("Yes"))
    form.answer(form.choice("Decline to answer"))
    assert form.result == {"action": "decline"}


def test_several_choices_are_typed_as_numbers() -> None:
    form = Form("multi")
    assert "1: Lint; 2: Types; 3: Tests" in form.heard.said()
    form.answer("3 x")  # not a choice number: asked again
    assert form.result is None
    assert "Please type the numbers of your choices, like 1 3." in form.heard.said()
    form.answer("3, 1")
    form.answer(form.choice("Send these answers"))
    assert form.result == {"action": "accept", "content": {"checks": ["tests", "lint"]}}


def test_an_address_is_read_out_with_its_host_and_never_opened() -> None:
    form = Form("url")
    said = form.heard.said()
    # shown whole; the speech clean-up reads an address by its host, which is said twice
    assert "https://auth.example.com/connect?id=oauth-1" in form.question["question"]
    assert "The address is on auth.example.com. announcer does not open it." in said
    assert "Please authorize access to your repositories." in said
    assert "Careful" not in said
    form.answer(form.choice("I will open it myself"))
    assert form.result == {"action": "accept"}


def test_a_lookalike_host_is_flagged() -> None:
    form = Form(
        {"mode": "url", "elicitationId": "x", "url": "https://xn--gthub-2ua.com/", "message": ""}
    )
    assert "Careful: the host name uses unusual characters." in form.heard.said()


def test_a_hostile_form_is_bounded_and_still_asked() -> None:
    properties = {f"f{i}": {"type": "string", "title": f"Field {i}"} for i in range(500)}
    properties["weird"] = "not a schema"
    form = Form({"mode": "form", "message": "x" * 100_000, "requestedSchema": {
        "type": "object", "properties": properties}})  # fmt: skip
    question = form.question
    assert len(question["question"]) <= 16384
    assert "It asked for 481 more answers, which are left empty." in question["question"]
    assert question["question"].endswith("Question 1 of 20: Field 0.")


def test_a_form_with_nothing_to_fill_in_is_still_said_and_sent_only_if_confirmed() -> None:
    form = Form({"mode": "form", "message": "Ready to deploy?", "requestedSchema": "broken"})
    assert "Claude Code asks: Ready to deploy?" in form.heard.said()
    form.answer(form.choice("Decline to answer"))
    assert form.result == {"action": "decline"}


def test_a_tool_about_to_ask_is_announced_once_as_the_question() -> None:
    heard = Heard()
    heard.open()
    heard.send(
        {"sessionId": "s1", "update": {"sessionUpdate": "tool_call", "toolCallId": "ask-1",
         "title": "AskUserQuestion", "kind": "other", "status": "pending"}}
    )  # fmt: skip
    heard.take(
        heard.adapter.elicitation_requested(
            "r1", {**ELICITATIONS["claude"], "sessionId": "s1"}, heard.now
        )
    )
    types = [e["type"] for e in heard.events]
    assert "aaep:agent.tool.invoked" not in types
    assert types.count("aaep:agent.awaiting.clarification") == 1


def test_a_withdrawn_form_is_said_once_and_takes_no_answer() -> None:
    form = Form("codex")
    token = form.question["reply_token"]
    out = form.heard.adapter.permission_withdrawn(token, "The agent stopped.", form.heard.now)
    form.heard.take(out)
    assert form.heard.adapter.forms == {}
    assert form.heard.adapter.elicitation_answered(token, "opt-0", form.heard.now)[1] is None
    assert json.dumps(form.heard.events).count("The agent stopped.") == 1


def test_a_secret_answer_is_never_read_back() -> None:
    params = {"mode": "form", "message": "Codex needs your input to continue.",
              "requestedSchema": {"type": "object", "properties": {
                  "token": {"type": "string", "title": "Deploy token",
                            "_meta": {"codex": {"isSecret": True}}}},
                  "required": ["token"]}}  # fmt: skip
    form = Form(params)
    assert form.question["extensions"]["x-announcer"]["secret"] is True
    form.answer("hunter2-secret")
    assert "hunter2" not in form.heard.said()
    assert "Deploy token: given, not read back" in form.heard.said()
    form.answer(form.choice("Send these answers"))
    assert form.result == {"action": "accept", "content": {"token": "hunter2-secret"}}


def _choice_schema(options: list[dict[str, str]]) -> dict[str, Any]:
    return {"mode": "form", "message": "Which one?", "requestedSchema": {
        "type": "object", "properties": {"pick": {"type": "string", "title": "Pick",
        "oneOf": options}}, "required": ["pick"]}}  # fmt: skip


def test_every_option_past_the_29th_is_reachable_by_pages_and_the_count_is_said() -> None:
    """Issue 29, item 11: 40 options were cut to 29 without a word."""
    options = [{"const": f"v{i}", "title": f"Option {i}"} for i in range(1, 41)]
    form = Form(_choice_schema(options))
    question = form.question
    assert len(question["choices"]) <= 32
    assert "40 choices, in 2 pages; page 1: choices 1 to 27." in question["question"]
    assert "Option 28" not in json.dumps(question["choices"])
    form.answer(form.choice("More choices"))
    question = form.question
    assert "page 2: choices 28 to 40." in question["question"]
    assert [c["label"] for c in question["choices"]][:2] == ["Option 28", "Option 29"]
    form.answer(form.choice("Option 40"))
    assert form.result == {"action": "accept", "content": {"pick": "v40"}}


def test_options_past_the_bound_are_counted_and_said() -> None:
    options = [{"const": f"v{i}", "title": f"Option {i}"} for i in range(1, 601)]
    form = Form(_choice_schema(options))
    assert "It offered 100 more choices, which are left out." in form.question["question"]


def test_two_options_that_read_the_same_are_told_apart_by_place_and_value() -> None:
    """Issue 29, item 11: "Keep" and "Keep" (one sends delete-all) sounded the same."""
    options = [{"const": "keep", "title": "Keep"}, {"const": "delete-all", "title": "keep "},
               {"const": "other", "title": "Other"}]  # fmt: skip
    form = Form(_choice_schema(options))
    labels = [c["label"] for c in form.question["choices"]]
    assert labels[:3] == [
        "Keep (1 of 2 with this name, it sends keep)",
        "keep (2 of 2 with this name, it sends delete-all)",
        "Other",
    ]
    said = form.heard.said()
    assert "2: keep (2 of 2 with this name, it sends delete-all)" in said
    form.answer(form.choice("keep (2 of 2"))
    assert form.result == {"action": "accept", "content": {"pick": "delete-all"}}
