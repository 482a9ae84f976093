"""The Engine end to end with real AAEP frames: policy, tracking, prompts, replies."""

from __future__ import annotations

import json

import pytest

from announcer.engine.announcement import Urgency
from announcer.engine.pipeline import Engine
from announcer.engine.prompts import UserAnswer
from announcer.engine.replies import Refusal, ReplyReady
from announcer.engine.settings import EventFilters, UserSettings
from announcer.engine.speech_commands import Cancel, Speak, SpeechCommand
from tests.engine.aaep import chunk, clarification, confirmation, frame, started
from tests.shared_data import SHARED as SHARED_ROOT

FIXTURES = SHARED_ROOT / "aaep/fixtures"
SUB = json.dumps(
    {
        "type": "subscription.accepted",
        "subscription_id": "sub_test1",
        "aaep_version": "1.0.0",
        "producer": {"agent_id": "harbor-bank-assistant"},
        "honored_capabilities": {},
    }
)


class Listener:
    """Executes commands like an instant backend and remembers what was said."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.said: list[str] = []
        self.spoken: list[Speak] = []
        self.cancels: list[Cancel] = []

    def run(self, commands: list[SpeechCommand], now: float) -> None:
        pending = list(commands)
        while pending:
            command = pending.pop(0)
            if isinstance(command, Cancel):
                self.cancels.append(command)
                continue
            self.spoken.append(command)
            self.said.append(command.announcement.text)
            pending += self.engine.on_speech_done(command.utterance_id, now)

    def feed(self, *frames: str, now: float = 0.0, source: str = "conn1") -> list[str]:
        before = len(self.said)
        for raw in frames:
            self.run(self.engine.receive(raw, source, now), now)
        return self.said[before:]


def listen(settings: UserSettings | None = None) -> Listener:
    return Listener(Engine(settings or UserSettings()))


TOOL = {"tool": "fetch_balance", "tool_call_id": "call_1"}
SUMMARIES = {
    "summary_terse": "Checking.",
    "summary_normal": "Checking your balance.",
    "summary_detailed": "Checking the balance of checking account 7821.",
}


@pytest.mark.parametrize(
    ("verbosity", "expected"),
    [
        ("terse", "Checking."),
        ("normal", "Checking your balance."),
        ("detailed", "Checking the balance of checking account 7821."),
    ],
)
def test_verbosity_picks_the_matching_summary(verbosity: str, expected: str) -> None:
    listener = listen(UserSettings(verbosity=verbosity))  # type: ignore[arg-type]
    assert listener.feed(frame("agent.tool.invoked", **TOOL, **SUMMARIES)) == [expected]


def test_missing_levels_fall_back_to_the_nearest() -> None:
    detailed = listen(UserSettings(verbosity="detailed"))
    assert detailed.feed(
        frame("agent.tool.invoked", **TOOL, summary_normal="Checking your balance.")
    ) == ["Checking your balance."]
    terse = listen(UserSettings(verbosity="terse"))
    assert terse.feed(
        frame("agent.progress.updated", progress={"percent": 40}, summary_normal="Forty percent.")
    ) == ["Forty percent."]


def test_generated_phrases_use_the_event_fields() -> None:
    listener = listen(UserSettings(verbosity="detailed"))
    said = listener.feed(
        frame("agent.state.changed", from_state="idle", to_state="calling_tool"),
        frame(
            "agent.progress.updated",
            progress={"percent": 62.5, "step": 3, "total_steps": 5, "description": "Projecting"},
        ),
        frame(
            "agent.tool.completed", tool="send_email", status="error", error_message="SMTP down."
        ),
        frame(
            "agent.handoff.requested",
            urgency="critical",
            reason="Needs a person.",
            target_kind="human",
        ),
        frame("agent.session.cancelled", cancelled_by="timeout", summary_normal="Stopped early."),
    )
    assert said == [
        "Calling a tool.",
        "62% done. Step 3 of 5. Projecting",
        "Send email failed. SMTP down.",
        "Handing off to a person. Needs a person.",
        "Cancelled: it took too long. Stopped early.",
    ]


def test_percentages_follow_the_users_language() -> None:
    listener = listen(UserSettings(languages=["fr"]))
    assert listener.feed(frame("agent.progress.updated", progress={"percent": 60})) == [
        "60\xa0% terminé."
    ]


def test_a_language_variant_is_preferred_when_it_matches_the_user() -> None:
    listener = listen(UserSettings(languages=["yo"]))
    listener.feed(
        frame(
            "agent.tool.invoked",
            **TOOL,
            summary_normal="Checking your balance.",
            summary_normal_yo="Ń ṣàyẹ̀wò iye owó rẹ.",
            language="yo",
        )
    )
    announcement = listener.spoken[-1].announcement
    assert announcement.text == "Ń ṣàyẹ̀wò iye owó rẹ."
    assert announcement.language == "yo"


def test_errors_carry_the_remediation_hint_and_endings_sound_different() -> None:
    listener = listen()
    said = listener.feed(
        frame(
            "agent.session.errored",
            session="sess_a",
            urgency="critical",
            error_category="transient",
            summary_normal="The bank did not answer.",
            remediation_hint="Try again in a minute.",
        ),
        frame("agent.session.completed", session="sess_b", summary_normal="Plan ready to review."),
        frame(
            "agent.session.cancelled",
            session="sess_c",
            cancelled_by="user",
            summary_normal="Plan generation stopped.",
        ),
        frame(
            "agent.session.errored",
            session="sess_d",
            urgency="critical",
            error_category="requires_user",
            summary_normal="Sign-in expired.",
        ),
    )
    assert said == [
        "Error. The bank did not answer. Try again in a minute.",
        "Finished. Plan ready to review.",
        "Cancelled at your request. Plan generation stopped.",
        "Error. Sign-in expired.",
    ]
    earcons = [speak.announcement.earcon for speak in listener.spoken]
    assert earcons == ["errored", "completed", "cancelled", "errored"]


def test_a_confirmation_says_action_consequence_risk_reversibility_timeout_and_keys() -> None:
    listener = listen()
    said = listener.feed(confirmation(timeout_seconds=90))
    assert said == [
        "Confirmation needed. Transfer $500.00 from checking to savings. The money moves at once. "
        "High risk. This cannot be undone. If you do not answer within 1 minute and 30 seconds, "
        "it will be rejected. Accept A Enter, reject R."
    ]
    announcement = listener.spoken[0].announcement
    assert announcement.urgency is Urgency.CRITICAL and announcement.interrupt


def test_producer_parts_without_a_final_stop_are_spoken_as_separate_sentences() -> None:
    listener = listen()
    said = listener.feed(
        confirmation(
            action="Add travel insurance for 12 euros",
            consequence="12 euros added to the total",
            timeout_seconds=60,
        )
    )
    assert said[0].startswith(
        "Confirmation needed. Add travel insurance for 12 euros. 12 euros added to the total. "
    )


def test_a_clarification_lists_its_choices() -> None:
    listener = listen()
    assert listener.feed(clarification()) == [
        "Question. Which account? Choices: 1: Savings; 2: Checking. Answer within 2 minutes. "
        "Choose with the arrows or digits 1 to 9, then press Enter."
    ]
    yes_no = listen().feed(
        clarification(
            "rpl_yn1", accepted_response_kinds=["yes_no"], choices=None, timeout_seconds=300
        )
    )
    assert yes_no == [
        "Question. Which account? Answer within 5 minutes. Press Y for yes or N for no."
    ]


def test_unknown_types_say_summary_normal_or_nothing() -> None:
    listener = listen()
    foreign = frame("agent.session.started", summary_normal="x")
    data = json.loads(foreign)
    data["type"] = "https://acme.example/aaep/report.ready"
    with_summary = json.dumps(data)
    data.pop("summary_normal")
    data["event_id"] = "evt_other1"
    without = json.dumps(data)
    assert listener.feed(with_summary, without) == ["x"]


def test_low_cognitive_load_keeps_only_critical_and_final_results() -> None:
    listener = listen(UserSettings(cognitive_load="low"))
    said = listener.feed(
        started(),
        frame("agent.state.changed", urgency="background", from_state="idle", to_state="thinking"),
        frame("agent.progress.updated", progress={"percent": 50}),
        frame("agent.tool.invoked", **TOOL, **SUMMARIES),
        chunk("First sentence. Second", 0),
        chunk(" sentence.", 22, complete=True, hint="completion"),
        confirmation(),
        frame("agent.session.completed", summary_terse="Done.", summary_normal="All done now."),
    )
    assert said[0] == "First sentence. Second sentence."
    assert said[1].startswith("Confirmation needed.")
    assert said[2].startswith("No answer needed any more:")
    assert said[3] == "Done."
    assert listener.engine.policy.suppressed["low cognitive load"] == 4


def test_high_cognitive_load_announces_state_changes_in_detail_without_cycle_suppression() -> None:
    states = [
        frame(
            "agent.state.changed",
            from_state=a,
            to_state=b,
            summary_normal=f"{b} now.",
            summary_detailed=f"Now {b}, because the plan needs it.",
        )
        for a, b in [("idle", "thinking"), ("thinking", "deciding"), ("deciding", "thinking")]
    ]
    high = listen(UserSettings(cognitive_load="high"))
    assert high.feed(*states) == [
        "Now thinking, because the plan needs it.",
        "Now deciding, because the plan needs it.",
        "Now thinking, because the plan needs it.",
    ]


def test_short_idle_thinking_deciding_cycles_are_quieted_but_other_states_are_not() -> None:
    listener = listen()
    said = []
    for now, (a, b) in enumerate(
        [
            ("idle", "thinking"),
            ("thinking", "deciding"),
            ("deciding", "thinking"),
            ("thinking", "calling_tool"),
            ("calling_tool", "thinking"),
        ]
    ):
        said += listener.feed(frame("agent.state.changed", from_state=a, to_state=b), now=now * 0.5)
    # Only idle/thinking/deciding flickers are quieted; leaving a tool is news.
    assert said == ["Thinking.", "Calling a tool.", "Thinking."]
    assert listener.engine.policy.suppressed["short state cycle"] == 2


def test_filters_and_mutes_never_hide_critical_events() -> None:
    settings = UserSettings(
        filters=EventFilters(include=["aaep:agent.*"], exclude=["aaep:agent.tool.*"]),
        muted_producers=["noisy-bot"],
    )
    listener = listen(settings)
    noisy = {"agent_id": "noisy-bot"}
    said = listener.feed(
        frame("agent.tool.invoked", **TOOL, **SUMMARIES),
        frame(
            "agent.state.changed",
            from_state="idle",
            to_state="thinking",
            producer=noisy,
            session="sess_n",
        ),
        confirmation(producer=noisy, session="sess_n"),
        frame("agent.session.completed", summary_normal="All done."),
    )
    assert len(said) == 2
    assert said[0].startswith("Confirmation needed.")
    assert said[1] == "All done."
    assert listener.engine.policy.suppressed == {"excluded by filter": 1, "producer muted": 1}


def test_critical_interrupts_another_sessions_normal_speech_with_a_cancel() -> None:
    engine = Engine()
    first = engine.receive(
        frame("agent.tool.invoked", session="sess_other", **TOOL, **SUMMARIES), "c", 0.0
    )
    assert isinstance(first[0], Speak)
    commands = engine.receive(
        frame(
            "agent.session.errored",
            urgency="critical",
            error_category="permanent",
            summary_normal="The export failed.",
        ),
        "c",
        0.1,
    )
    # Issue 30 item 4: at the end of the word being said, within half a second.
    wake = engine.next_wakeup()
    assert commands == [] and wake is not None and wake <= 0.55
    commands = engine.tick(wake)
    assert isinstance(commands[0], Cancel)
    assert (
        isinstance(commands[1], Speak) and commands[1].announcement.kind == "agent.session.errored"
    )


def test_a_question_cuts_in_at_the_next_word_boundary() -> None:
    """Issue 30 item 4 (changed from issue 20's sentence boundary): a critical question
    cuts off another session's status line at the end of its word, within half a second."""
    engine = Engine()
    first = engine.receive(
        frame("agent.tool.invoked", session="sess_other", **TOOL, **SUMMARIES), "c", 0.0
    )
    assert isinstance(first[0], Speak)
    engine.receive(
        frame(
            "agent.state.changed",
            session="sess_third",
            from_state="idle",
            to_state="thinking",
            summary_normal="Thinking it over.",
        ),
        "c",
        0.05,
    )
    assert engine.receive(confirmation(), "c", 0.1) == []
    wake = engine.next_wakeup()
    assert wake is not None and wake <= 0.55
    after = engine.tick(wake)
    assert isinstance(after[0], Cancel) and isinstance(after[1], Speak)
    assert after[1].announcement.kind == "agent.awaiting.confirmation"


def test_a_question_lets_its_own_sessions_short_lead_up_end() -> None:
    """Issue 14 b, bounded (issue 30): "Checking your balance" is what the question is
    about; it ends well within the lead-in time, so the question waits for it (no cut)
    and starts at once after it."""
    engine = Engine()
    first = engine.receive(frame("agent.tool.invoked", **TOOL, **SUMMARIES), "c", 0.0)
    assert isinstance(first[0], Speak)
    assert engine.receive(confirmation(), "c", 0.1) == []
    wake = engine.next_wakeup()
    # No cut is due at a word boundary (only the overdue guard for a silent voice, later).
    assert wake is not None and wake > 0.55
    after = engine.on_speech_done(first[0].utterance_id, 1.5)
    assert isinstance(after[0], Speak)
    assert after[0].announcement.kind == "agent.awaiting.confirmation"


def test_duplicates_are_dropped_and_logged() -> None:
    listener = listen()
    raw = frame("agent.tool.invoked", **TOOL, **SUMMARIES, event_id="evt_dup1")
    assert listener.feed(raw, raw) == ["Checking your balance."]
    assert listener.engine.tracker.duplicates == 1
    assert "duplicate_event" in listener.engine.diagnostics.counts()


def test_out_of_order_events_are_reordered_and_gaps_reported() -> None:
    listener = listen()
    said = listener.feed(
        started(sequence=0),
        frame(
            "agent.tool.completed",
            tool="fetch_balance",
            status="success",
            summary_normal="Got it.",
            sequence=2,
        ),
        frame("agent.tool.invoked", tool="fetch_balance", summary_normal="Checking.", sequence=1),
    )
    assert said == ["The assistant is moving money for you.", "Checking.", "Got it."]
    engine = listener.engine
    listener.feed(
        frame("agent.state.changed", from_state="idle", to_state="writing_output", sequence=5),
        now=1.0,
    )
    wake = engine.next_wakeup()
    assert wake is not None
    listener.run(engine.tick(wake), wake)
    assert listener.said[-1] == "Writing the answer."
    assert "sequence_gap" in engine.diagnostics.counts()


def test_a_critical_event_is_not_held_back_by_a_gap() -> None:
    listener = listen()
    listener.feed(started(sequence=0))
    said = listener.feed(confirmation(sequence=4))
    assert said and said[0].startswith("Confirmation needed.")


def test_cancelled_session_voids_its_prompt_and_answers_are_refused() -> None:
    listener = listen()
    listener.feed(SUB, started(), confirmation("rpl_void1"))
    said = listener.feed(
        frame("agent.session.cancelled", cancelled_by="producer", summary_normal="Stopped.")
    )
    assert said[0] == "No answer needed any more: Transfer $500.00 from checking to savings."
    assert listener.engine.pending_prompts() == []
    outcome = listener.engine.answer(UserAnswer("rpl_void1", decision="accept"), 1.0)
    assert isinstance(outcome, Refusal) and outcome.code == "voided"


def test_leaving_awaiting_input_voids_the_prompt() -> None:
    listener = listen()
    listener.feed(SUB, started(), clarification("rpl_clar9"))
    assert [p.reply_token for p in listener.engine.pending_prompts()] == ["rpl_clar9"]
    listener.feed(frame("agent.state.changed", from_state="awaiting_input", to_state="thinking"))
    assert listener.engine.pending_prompts() == []
    outcome = listener.engine.answer(UserAnswer("rpl_clar9", response="sav"), 1.0)
    assert isinstance(outcome, Refusal) and outcome.code == "voided"


@pytest.mark.parametrize(
    ("left_at", "heard"),
    [
        (5.0, "No answer needed any more: Transfer $500.00 from"),
        (9.5, "Time is up; the agent rejected: Transfer $500.00 from checking to savings."),
        (12.0, "Time is up; the agent rejected: Transfer $500.00 from checking to savings."),
    ],
)
def test_a_question_left_at_its_deadline_is_said_to_have_timed_out(
    left_at: float, heard: str
) -> None:
    """§6.4/§6.8: a producer whose own timer beat our tick leaves ``awaiting_input`` at
    the deadline; that is a timeout, not "no answer needed"."""
    listener = listen()
    listener.feed(SUB, started(), confirmation("rpl_due1", timeout_seconds=10), now=0.0)
    said = listener.feed(
        frame(
            "agent.state.changed",
            from_state="awaiting_input",
            to_state="thinking",
            at=left_at,
        ),
        now=left_at,
    )
    assert said[0].startswith(heard), said
    assert listener.engine.pending_prompts() == []
    assert not [text for text in listener.said if "Time is up" in text and text != said[0]]


def test_an_answer_becomes_a_reply_echoing_the_token_once() -> None:
    listener = listen()
    token = "rpl_4f8a2e7d9c1b6a3fZZ"
    listener.feed(SUB, started(), confirmation(token))
    outcome = listener.engine.answer(
        UserAnswer(token, decision="accept", decided_by="user:folake"), 5.0
    )
    assert isinstance(outcome, ReplyReady)
    wire = outcome.to_wire()
    assert wire["type"] == "confirmation.reply"
    assert wire["reply_token"] == token
    assert wire["decision"] == "accept"
    assert wire["subscription_id"] == "sub_test1"
    assert json.dumps(wire).count(token) == 1
    again = listener.engine.answer(UserAnswer(token, decision="reject"), 6.0)
    assert isinstance(again, Refusal) and again.code == "already_answered"


def test_an_answer_after_the_timeout_is_refused_and_the_user_is_told() -> None:
    listener = listen()
    listener.feed(SUB, started(), confirmation("rpl_late1", timeout_seconds=30))
    engine = listener.engine
    assert engine.next_wakeup() == 30.0
    listener.run(engine.tick(30.0), 30.0)
    assert (
        listener.said[-1]
        == "Time is up; the agent rejected: Transfer $500.00 from checking to savings."
    )
    outcome = engine.answer(UserAnswer("rpl_late1", decision="accept"), 31.0)
    assert isinstance(outcome, Refusal) and outcome.code == "expired"


def test_auto_reject_only_ever_rejects() -> None:
    listener = listen(UserSettings(reply_policy="auto_reject"))
    said = listener.feed(SUB, started(), confirmation("rpl_auto1"), clarification("rpl_auto2"))
    assert "Rejected automatically, as your settings ask." in said
    outgoing = listener.engine.take_outgoing()
    assert [o.to_wire()["decision"] for o in outgoing] == ["reject"]
    assert outgoing[0].to_wire()["decided_by"] == "auto:configured_policy"
    # The clarification still waits for the user.
    assert [p.reply_token for p in listener.engine.pending_prompts()] == ["rpl_auto2"]


def test_nothing_automatic_can_accept() -> None:
    listener = listen()
    listener.feed(SUB, started(), confirmation("rpl_noauto"))
    outcome = listener.engine.answer(
        UserAnswer("rpl_noauto", decision="accept", decided_by="auto:script"), 1.0
    )
    assert isinstance(outcome, Refusal) and outcome.code == "auto_accept_forbidden"
    assert listener.engine.pending_prompts()


def test_clarification_answers_are_checked_against_the_question() -> None:
    listener = listen()
    listener.feed(SUB, started(), clarification("rpl_choice"))
    engine = listener.engine
    wrong = engine.answer(UserAnswer("rpl_choice", response="brokerage"), 1.0)
    assert isinstance(wrong, Refusal) and wrong.code == "invalid_response"
    right = engine.answer(UserAnswer("rpl_choice", response="sav"), 1.0)
    assert isinstance(right, ReplyReady)
    assert right.to_wire()["response"] == "sav"


def test_without_a_subscription_no_reply_can_be_built() -> None:
    listener = listen()
    listener.feed(started(), confirmation("rpl_nosub"))
    outcome = listener.engine.answer(UserAnswer("rpl_nosub", decision="reject"), 1.0)
    assert isinstance(outcome, Refusal) and outcome.code == "no_subscription"


def test_streaming_is_spoken_sentence_by_sentence() -> None:
    listener = listen()
    said = listener.feed(
        chunk("Transferred $500 succ", 0, hint="word"),
        chunk("essfully. New bal", 21, hint="word"),
    )
    assert said == ["Transferred $500 successfully."]
    assert listener.feed(chunk("ance: $12,000.", 38, complete=True, hint="completion")) == [
        "New balance: $12,000."
    ]


def test_a_declared_sentence_boundary_is_released_at_once() -> None:
    listener = listen()
    assert listener.feed(chunk("Your plan is ready", 0, hint="sentence")) == ["Your plan is ready"]


def test_none_chunks_wait_for_a_boundary_and_are_not_cut_at_ours() -> None:
    """§4.3.3: "none" chunks are never announced directly (issue 22 item 8)."""
    listener = listen()
    assert listener.feed(chunk("Dr. Smith paid. ", 0), chunk("The bank closed.", 16)) == []
    wake = listener.engine.next_wakeup()
    if wake is not None:  # a stall does not release them either
        listener.run(listener.engine.tick(wake + 5), wake + 5)
    assert listener.said == []
    said = listener.feed(chunk(" Done.", 32, complete=True, hint="completion"))
    assert " ".join(said) == "Dr. Smith paid. The bank closed. Done."


def test_a_stalled_stream_is_released_on_tick() -> None:
    listener = listen()
    assert listener.feed(chunk("The transfer is done.", 0, hint="word")) == []
    wake = listener.engine.next_wakeup()
    assert wake is not None
    listener.run(listener.engine.tick(wake), wake)
    assert listener.said == ["The transfer is done."]


def test_chunks_after_complete_get_a_diagnostic_and_are_still_spoken() -> None:
    listener = listen()
    said = listener.feed(
        chunk("Done.", 0, complete=True, hint="completion"),
        chunk("Oh, one more thing.", 5, complete=True, hint="completion"),
    )
    assert said == ["Done.", "Oh, one more thing."]
    assert "chunk_after_complete" in listener.engine.diagnostics.counts()


def test_contradictory_producers_get_diagnostics_and_sensible_speech() -> None:
    listener = listen()
    said = listener.feed(
        started(),
        started(summary_normal="Starting again."),
        frame("agent.tool.completed", tool="ghost_tool", status="success"),
    )
    assert said == [
        "The assistant is moving money for you.",
        "Starting again.",
        "Ghost tool finished.",
    ]
    counts = listener.engine.diagnostics.counts()
    assert "second_session_started" in counts and "tool_not_invoked" in counts


def test_a_huge_summary_is_shortened_for_speech() -> None:
    listener = listen(UserSettings(verbosity="detailed"))
    said = listener.feed(
        frame(
            "agent.tool.invoked",
            **TOOL,
            summary_normal="Working.",
            summary_detailed="word " * 3000,
        )
    )
    assert len(said[0]) < 1_600
    assert said[0].endswith("(shortened, full text in the transcript)")


def test_a_status_line_fits_the_time_of_the_users_rate() -> None:
    """Issue 20: at normal verbosity about 8 words at 180 wpm, 14 at 300."""
    for wpm, words in ((180, 8), (300, 14)):
        listener = listen(UserSettings(pace_wpm=wpm))
        said = listener.feed(frame("agent.tool.invoked", **TOOL, summary_normal="word " * 3000))
        assert len(said[0].split()) == words
        assert said[0].endswith("…")


def test_ten_thousand_confirmations_in_a_second_stay_bounded() -> None:
    """Issue 12 (3): questions are presented in the order they came; the rest are counted."""
    engine = Engine()
    engine.receive(SUB, "c", 0.0)
    for index in range(10_000):
        engine.receive(
            confirmation(f"rpl_flood{index:05d}", session=f"sess_f{index}"), "c", index / 10_000
        )
    pending = engine.pending_prompts()
    assert len(pending) == 2_000  # bounded; the newest 8,000 were set aside, counted
    assert pending[0].reply_token == "rpl_flood00000"  # the first heard stays first
    assert engine.book.overflowed == 8_000 == engine.status().questions_set_aside
    presented = engine.presented_prompt()
    assert presented is not None and presented.reply_token == "rpl_flood00000"
    # One question is read; the others are one waiting count and one set-aside count.
    texts = [a.text for a in engine.scheduler.queued_announcements()]
    assert len(texts) <= 3, texts
    assert any("Questions waiting after this one: 1999" in t for t in texts)
    assert any("8000 newer ones were set aside" in t for t in texts)
    refused = engine.answer(UserAnswer("rpl_flood09999", decision="reject"), 1.0)
    assert isinstance(refused, Refusal) and refused.code == "superseded"
    assert engine.diagnostics.counts().get("prompt.set_aside") == 8_000


def test_invalid_frames_are_logged_and_urgent_ones_mentioned() -> None:
    listener = listen()
    assert listener.feed("{not json", b"\xff\xfe", "[]") == []
    bad = json.loads(confirmation())
    bad["event_id"] = "not-an-id"
    said = listener.feed(json.dumps(bad))
    # §10.1.3: a question is never dropped in silence (no reply_token would be readable
    # here without a subscription, so it is announced, not opened).
    # issue 22 item 5: its words are kept, with consequence, risk and deadline.
    assert said == [
        "Unreadable question from Harbor Bank Assistant; it cannot be answered here: "
        "Transfer $500.00 from checking to savings. The money moves at once. High risk. "
        "This cannot be undone. If you do not answer within 5 minutes, it will be rejected."
    ]
    assert listener.engine.invalid_frames == 4
    assert listener.engine.diagnostics.dropped == 4


def test_interleaved_sessions_from_two_producers() -> None:
    listener = listen()
    other = {"agent_id": "mail-agent", "agent_name": "Mail Agent"}
    listener.feed(
        SUB,
        started(session="sess_x"),
        started(session="sess_x", producer=other, summary_normal="Mail agent starting."),
        confirmation("rpl_bank1", session="sess_x"),
        confirmation("rpl_mail1", session="sess_x", producer=other),
        source="bank",
    )
    listener.feed(SUB, source="mail")
    engine = listener.engine
    assert {s.session_id for s in engine.sessions()} == {"sess_x"}
    assert len(engine.pending_prompts()) == 2
    listener.feed(
        frame("agent.session.completed", session="sess_x", summary_normal="Bank done."),
        source="bank",
    )
    # Only the bank connection's session ended; both prompts came from it here.
    assert engine.pending_prompts() == []


@pytest.mark.parametrize(
    "name",
    ["captured-minimal-producer-run.jsonl", "captured-minimal-producer-confirmation-run.jsonl"],
)
def test_captured_reference_producer_runs_play_through(name: str) -> None:
    listener = listen()
    lines = (FIXTURES / name).read_text().splitlines()
    for index, line in enumerate(lines):
        listener.feed(line, now=index * 0.5)
    engine = listener.engine
    assert engine.invalid_frames == 0
    assert listener.said, "something was said"
    assert any(
        entry.announcement.kind == "agent.session.completed" for entry in engine.transcript()
    ) or any(entry.announcement.kind.startswith("agent.session.") for entry in engine.transcript())


def test_update_settings_takes_effect_at_once() -> None:
    listener = listen()
    listener.engine.update_settings(UserSettings(verbosity="terse"))
    assert listener.feed(frame("agent.tool.invoked", **TOOL, **SUMMARIES)) == ["Checking."]
    status = listener.engine.status()
    assert status.events == 1 and status.frames == 1


def test_a_streamed_code_block_is_announced_as_a_phrase() -> None:
    listener = listen()
    text = "Here is the script:\n```python\nimport os\nprint(os.getcwd())\n```\nRun it today."
    said: list[str] = []
    position = 0
    for index in range(0, len(text), 7):
        piece = text[index : index + 7]
        said += listener.feed(chunk(piece, position))
        position += len(piece)
    said += listener.feed(chunk("", position, complete=True, hint="completion"))
    assert said == ["Here is the script: code block, 2 lines, Python.", "Run it today."]


def test_the_rate_limit_drops_normal_events_but_never_critical_ones() -> None:
    listener = listen(UserSettings(max_events_per_second=2))
    frames = [frame("agent.tool.invoked", tool="t", summary_normal=f"Call {i}.") for i in range(5)]
    said = listener.feed(*frames, confirmation("rpl_rate1"), now=0.0)
    assert said[:2] == ["Call 0.", "Call 1."]
    assert said[2].startswith("Confirmation needed.")
    assert listener.engine.policy.suppressed["rate limit"] == 3


def test_closed_sessions_and_old_event_ids_expire() -> None:
    listener = listen()
    listener.feed(
        started(session="sess_old"),
        frame("agent.session.completed", session="sess_old", summary_normal="Done."),
    )
    engine = listener.engine
    assert len(engine.sessions()) == 1
    engine.tick(10_000.0)
    assert engine.sessions() == []


def test_session_and_seen_id_memory_is_bounded() -> None:
    engine = Engine()
    engine.tracker.sessions_limit = 50
    engine.tracker.seen_ids_limit = 500
    for index in range(2_000):
        engine.receive(
            frame(
                "agent.state.changed",
                session=f"sess_m{index}",
                from_state="idle",
                to_state="thinking",
            ),
            "c",
            index * 0.01,
        )
    assert len(engine.sessions()) <= 50
    assert len(engine.tracker._seen) <= 500


def test_a_withdrawn_question_is_not_read_out_or_is_cut_off() -> None:
    engine = Engine()
    engine.receive(SUB, "c", 0.0)
    first = engine.receive(confirmation("rpl_w1", session="sess_w1"), "c", 0.0)
    assert isinstance(first[0], Speak)
    # A second confirmation waits behind the first: counted, not read over it.
    engine.receive(confirmation("rpl_w2", session="sess_w2"), "c", 0.1)
    queued = [a.kind for a in engine.scheduler.queued_announcements()]
    assert queued == ["system.prompts_waiting"]
    cancelled = frame(
        "agent.session.cancelled",
        session="sess_w2",
        cancelled_by="producer",
        summary_normal="Stopped.",
    )
    engine.receive(cancelled, "c", 0.2)
    assert [p.reply_token for p in engine.pending_prompts()] == ["rpl_w1"]
    queued = [a.kind for a in engine.scheduler.queued_announcements()]
    assert "agent.awaiting.confirmation" not in queued
    # The one being spoken is cut off when its own session ends.
    commands = engine.receive(
        frame(
            "agent.session.cancelled",
            session="sess_w1",
            cancelled_by="user",
            summary_normal="Stopped.",
        ),
        "c",
        0.3,
    )
    assert isinstance(commands[0], Cancel) and commands[0].reason == "withdrawn by producer"
    assert isinstance(commands[1], Speak)
    assert commands[1].announcement.text.startswith("No answer needed any more")


@pytest.mark.parametrize(
    ("summary", "expected"),
    [
        ("Codex finished.", "Codex finished."),
        ("Codex finished the turn.", "Codex finished the turn."),
        ("The transfer is complete.", "The transfer is complete."),
        ("Plan ready to review.", "Finished. Plan ready to review."),
        # A negated completion word says the opposite: keep our own lead.
        ("Could not finish the export.", "Finished. Could not finish the export."),
        ("The upload was not completed.", "Finished. The upload was not completed."),
        (
            "Codex session ended, after 2 minutes.",
            "Finished. Codex session ended, after 2 minutes.",
        ),
    ],
)
def test_completion_is_not_announced_twice(summary: str, expected: str) -> None:
    listener = listen()
    said = listener.feed(frame("agent.session.completed", summary_normal=summary))
    assert said == [expected]


def test_cancellation_is_not_announced_twice() -> None:
    listener = listen()
    said = listener.feed(
        frame("agent.session.cancelled", cancelled_by="user", summary_normal="You cancelled it."),
        frame(
            "agent.session.cancelled",
            session="sess_other",
            cancelled_by="user",
            summary_normal="Nothing was cancelled yet; the export stopped early.",
        ),
    )
    assert said == [
        "You cancelled it.",
        "Cancelled at your request. Nothing was cancelled yet; the export stopped early.",
    ]


def test_a_reused_reply_token_leaves_no_question_answerable() -> None:
    """§6.2.2, as StreamChecker judges it: a second prompt with the same token is an
    error, and a reply to that token would be ambiguous, so neither prompt is answered."""
    from announcer.protocol.decode import decode_frame
    from announcer.protocol.stream import StreamChecker

    first = confirmation("rpl_twice1")
    second = confirmation("rpl_twice1", action="Delete the savings account.")
    checker = StreamChecker()
    verdicts = [checker.feed(decode_frame(raw).event) for raw in (started(), first, second)]
    assert [d.code for d in verdicts[2]] == ["reply_token.reused"]

    listener = listen()
    listener.feed(SUB, started(), first)
    assert [p.reply_token for p in listener.engine.pending_prompts()] == ["rpl_twice1"]
    said = listener.feed(second)
    assert said == [
        "The agent reused its reply token, so no answer can be sent to: "
        "Transfer $500.00 from checking to savings.",
        "The agent reused an old reply token, so this question cannot be answered: "
        "Delete the savings account.",
    ]
    assert listener.spoken[-1].announcement.urgency is Urgency.CRITICAL
    assert listener.engine.pending_prompts() == []
    outcome = listener.engine.answer(UserAnswer("rpl_twice1", decision="accept"), 1.0)
    assert isinstance(outcome, Refusal) and outcome.code == "reused"
    assert "reply_token.reused" in listener.engine.diagnostics.counts()


def test_a_token_reused_after_its_answer_is_refused_and_a_redelivery_is_not_a_reuse() -> None:
    listener = listen()
    listener.feed(SUB, started(), confirmation("rpl_once1", event_id="evt_ask1"))
    answered = listener.engine.answer(UserAnswer("rpl_once1", decision="reject"), 1.0)
    assert isinstance(answered, ReplyReady)
    said = listener.feed(confirmation("rpl_once1", action="Close the account."))
    assert said == [
        "The agent reused an old reply token, so this question cannot be answered: "
        "Close the account."
    ]
    assert listener.engine.pending_prompts() == []
    again = listener.engine.answer(UserAnswer("rpl_once1", decision="accept"), 2.0)
    assert isinstance(again, Refusal) and again.code == "reused"

    # The same prompt delivered twice (same event_id) stays one answerable question.
    fresh = listen()
    ask = confirmation("rpl_same1", event_id="evt_same1")
    fresh.feed(SUB, started(), ask, ask)
    assert [p.reply_token for p in fresh.engine.pending_prompts()] == ["rpl_same1"]
    outcome = fresh.engine.answer(UserAnswer("rpl_same1", decision="reject"), 1.0)
    assert isinstance(outcome, ReplyReady)


@pytest.mark.parametrize("load", ["medium", "high"])
@pytest.mark.parametrize("verbosity", ["terse", "normal", "detailed"])
def test_no_state_is_silenced_for_good_at_any_verbosity(load: str, verbosity: str) -> None:
    """§4.2.1: whatever the verbosity, at medium and high cognitive load every state, each
    spec state and one no spec names, is said when the agent moves to it and stays a
    while (only quick idle/thinking/deciding flickers are quieted). Low load silences
    every non-critical state change today (issue 30 item 6); docs/protocol.md says so."""
    listener = listen(UserSettings(verbosity=verbosity, cognitive_load=load))  # type: ignore[arg-type]
    states = ["thinking", "calling_tool", "awaiting_input", "writing_output", "deciding"]
    states += ["reticulating_splines", "idle"]
    heard_for: dict[str, list[str]] = {}
    previous = "idle"
    for step, state in enumerate(states):
        heard_for[state] = listener.feed(
            frame("agent.state.changed", from_state=previous, to_state=state), now=step * 30.0
        )
        previous = state
    silent = [state for state, said in heard_for.items() if not said]
    assert silent == [], heard_for
