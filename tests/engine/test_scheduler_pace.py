"""The scheduler's rules for speech at the pace of a real voice (issue 14, item 4).

Each test drives the sans-I/O scheduler with the times a voice at 180 words a
minute would take, and checks what the user hears, in order.
"""

from __future__ import annotations

import pytest

from announcer.engine.announcement import Announcement, Urgency
from announcer.engine.pipeline import Engine
from announcer.engine.prompts import UserAnswer
from announcer.engine.replies import ReplyReady
from announcer.engine.scheduler import SpeechScheduler
from announcer.engine.settings import UserSettings
from announcer.engine.speech_commands import Cancel, Speak, SpeechCommand
from announcer.speech.driver import SpeechDriver
from announcer.speech.paced import PacedBackend, SimulatedClock

from .aaep import confirmation, frame

WEATHER = "sess_weather"
TRIP = "sess_trip"


def news(text: str, session: str | None = TRIP, kind: str = "agent.tool.completed", **kw: object):  # type: ignore[no-untyped-def]
    return Announcement(text=text, session_id=session, kind=kind, **kw)  # type: ignore[arg-type]


def critical(
    text: str, session: str | None, kind: str, event_id: str | None = None
) -> Announcement:
    return Announcement(
        text=text,
        urgency=Urgency.CRITICAL,
        interrupt=True,
        session_id=session,
        kind=kind,
        event_id=event_id,
    )


def reply(text: str) -> Announcement:
    """The UI's answer to the user's own key."""
    return Announcement(text=text, kind="system.ui")


class Listener:
    """Plays the scheduler's commands like a voice: each utterance ends when told."""

    def __init__(self, scheduler: SpeechScheduler) -> None:
        self.scheduler = scheduler
        self.heard: list[str] = []
        self.cancelled: list[str] = []

    def take(self, commands: list[SpeechCommand]) -> list[SpeechCommand]:
        for command in commands:
            if isinstance(command, Speak):
                self.heard.append(command.announcement.text)
            elif isinstance(command, Cancel):
                self.cancelled.append(command.reason)
        return commands

    def submit(self, announcement: Announcement, now: float) -> list[SpeechCommand]:
        commands = self.take(self.scheduler.submit(announcement, now))
        wake = self.scheduler.next_wakeup()
        if announcement.urgency is Urgency.CRITICAL and wake is not None and wake <= now + 0.45:
            # Critical news cuts in at the end of the word being said (issue 30 item 4).
            commands += self.take(self.scheduler.tick(wake))
        return commands

    def finish(self, now: float) -> list[SpeechCommand]:
        current = self.scheduler.speaking_id
        assert current is not None
        return self.take(self.scheduler.on_done(current, now))

    def play_out(self, now: float, step: float = 3.0) -> float:
        while self.scheduler.speaking_id is not None:
            now += step
            self.finish(now)
        return now


def test_a_critical_error_cuts_in_at_once_and_its_sessions_news_follows() -> None:
    """Issue 30 item 4 (§2.2.9): the error is heard within half a second, even before its
    session's start (issue 14 a's order gives way to "at once"); the start follows it,
    and the other session's result it cut off is said again whole."""
    listener = Listener(SpeechScheduler())
    listener.submit(news("Booked. Reference LYO 4821."), 0.0)
    listener.submit(
        news("New session: checking the weather.", WEATHER, "agent.session.started"), 0.5
    )
    listener.submit(news("Looking up the weather in Lyon.", WEATHER, "agent.tool.invoked"), 1.0)
    listener.submit(
        critical("Error. The weather service did not answer.", WEATHER, "agent.session.errored"),
        1.5,
    )
    listener.play_out(1.5)
    assert listener.cancelled == ["barge-in"]
    assert listener.heard == [
        "Booked. Reference LYO 4821.",
        "Error. The weather service did not answer.",
        "Booked. Reference LYO 4821.",
        "New session: checking the weather.",
        "Looking up the weather in Lyon.",
    ]


def test_a_question_comes_after_its_short_lead_up() -> None:
    """Issue 14 b, bounded (issue 30): "Found three trains…" and "I suggest the 9:04
    train." are what the question is about, well within the lead-in time: heard before
    it, in order, and nothing of its own session is cut off for it."""
    listener = Listener(SpeechScheduler(max_delay_seconds=10.0))
    listener.submit(news("Thinking about the trip.", kind="agent.state.changed"), 0.0)
    listener.submit(news("Found three trains; the 9:04 is cheapest at 39 euros."), 0.5)
    listener.submit(news("I suggest the 9:04 train.", kind="agent.output.streaming"), 1.0)
    listener.submit(
        critical("Confirmation needed. Book the 9:04 train?", TRIP, "agent.awaiting.confirmation"),
        1.2,
    )
    assert listener.cancelled == []
    listener.play_out(1.2)
    assert listener.heard == [
        "Thinking about the trip.",
        "Found three trains; the 9:04 is cheapest at 39 euros.",
        "I suggest the 9:04 train.",
        "Confirmation needed. Book the 9:04 train?",
    ]


def test_a_question_cuts_off_another_session_and_its_lead_up_goes_first() -> None:
    """Issue 30 item 4 and issue 14 b: the question cuts off another session's news at a
    word boundary; its own session's result and words before it go first (the tool's
    start their result says is moot: counted, not named); what it cut off follows."""
    scheduler = SpeechScheduler(max_delay_seconds=3.0)
    listener = Listener(scheduler)
    listener.submit(news("Speaking.", session="sess_other"), 0.0)
    listener.submit(news("Found three trains; the 9:04 is cheapest at 39 euros."), 0.5)
    listener.submit(news("Searching for seats.", kind="agent.tool.invoked"), 0.7)
    listener.submit(news("I suggest the 9:04 train.", kind="agent.output.streaming"), 1.0)
    listener.submit(critical("Book the 9:04 train?", TRIP, "agent.awaiting.confirmation"), 1.2)
    assert listener.cancelled == ["barge-in"]
    listener.play_out(1.2)
    assert listener.heard[:5] == [
        "Speaking.",
        "Found three trains; the 9:04 is cheapest at 39 euros.",
        "I suggest the 9:04 train.",
        "Book the 9:04 train?",
        "Speaking.",
    ]
    assert scheduler.drops["skipped before critical news"] == 1


def test_a_question_does_not_wait_for_a_long_lead_up_of_status() -> None:
    """A question waits for at most its lead-in time. Of its source's six pending results
    (about 22 s) the newest, one sentence, goes before it; the others are summarised by
    kind after it; none is lost."""
    listener = Listener(SpeechScheduler(max_lead_in_seconds=5.0, max_delay_seconds=6.0))
    listener.submit(news("Speaking now.", session="sess_other"), 0.0)
    for index in range(6):  # about 3.6 seconds each at 180 words a minute
        listener.submit(news(f"Result {index} is here with ten words in it, all of them."), 0.1)
    listener.submit(critical("Question. Which one?", TRIP, "agent.awaiting.clarification"), 0.2)
    listener.play_out(0.2)
    assert listener.heard == [
        "Speaking now.",
        "Result 5 is here with ten words in it, all of them.",
        "Question. Which one?",
        "Speaking now.",  # cut off by the question, said again whole
        # A source keeps its newest result; the others are summarised by kind.
        "5 more: 5 tool calls.",
    ]


def test_a_question_waits_for_at_most_its_lead_in_time() -> None:
    """The bound on issue 14 b's lead-up (issue 30 item 4): the agent's words before a
    question go first only within ``max_lead_in_seconds``; the rest follow it, in
    order, never dropped, and the question starts within that time."""
    scheduler = SpeechScheduler(max_lead_in_seconds=4.0, max_delay_seconds=1.0)
    listener = Listener(scheduler)
    listener.submit(news("Speaking.", session="sess_other"), 0.0)
    sentences = [f"Sentence {n} of what the agent wrote before it asked." for n in range(5)]
    for sentence in sentences:  # about 3 s each at 180 words a minute
        listener.submit(news(sentence, kind="agent.output.streaming"), 0.1)
    question = critical("Question. Which one?", TRIP, "agent.awaiting.clarification")
    question.event_id = "evt_which"
    listener.submit(question, 0.2)
    listener.play_out(0.2)
    assert listener.heard[:3] == ["Speaking.", sentences[0], "Question. Which one?"]
    started = scheduler.question_started_at("evt_which")
    assert started is not None and started - 0.2 <= 0.45 + 4.0
    # The rest of the agent's words, in order, after it (and what it cut off).
    rest = [text for text in listener.heard[3:] if text.startswith("Sentence")]
    assert rest == sentences[1:]


def test_a_result_and_a_plan_step_go_before_the_question_that_cut_in() -> None:
    """Issue 14 b, bounded: the question cuts off another session; its own source's
    result and latest plan step, short, are its lead-up and go before it, in order."""
    listener = Listener(SpeechScheduler())
    listener.submit(news("Speaking now.", session="sess_other"), 0.0)
    listener.submit(news("Done."), 0.1)
    step = news("Step 3 of 4: compare the fares.", kind="agent.progress.updated")
    listener.submit(step, 0.2)
    listener.submit(critical("Book it?", TRIP, "agent.awaiting.confirmation"), 0.3)
    listener.play_out(0.3)
    assert listener.heard == ["Speaking now.", "Done.", step.text, "Book it?", "Speaking now."]


def test_a_lead_up_whose_question_is_withdrawn_goes_back_in_line() -> None:
    scheduler = SpeechScheduler()
    listener = Listener(scheduler)
    listener.submit(critical("Another question.", "sess_x", "agent.awaiting.confirmation"), 0.0)
    listener.submit(news("Found three trains."), 0.1)
    listener.submit(
        critical("Book it?", TRIP, "agent.awaiting.confirmation", event_id="evt_book"), 0.2
    )
    listener.take(scheduler.withdraw("evt_book", 0.5))
    assert [a.text for a in scheduler.queued_announcements()] == ["Found three trains."]
    assert scheduler.queued(Urgency.CRITICAL) == 0


def test_nothing_about_an_answered_question_is_said_after_it() -> None:
    """Issue 14 c: no key hints or time left once the question is answered."""
    scheduler = SpeechScheduler()
    listener = Listener(scheduler)
    question = critical("Book the train? Within 2 minutes.", TRIP, "agent.awaiting.confirmation")
    question.event_id = "evt_q"
    listener.submit(question, 0.0)
    keys = Announcement(
        "Press A to accept, or R to reject.",
        urgency=Urgency.CRITICAL,
        event_id="evt_q",
        session_id=TRIP,
        kind="system.ui",
        continues=True,
    )
    listener.submit(keys, 0.1)
    listener.take(scheduler.question_ended("evt_q", 1.0))
    assert listener.cancelled == ["question answered"]
    assert scheduler.queued() == 0 and scheduler.speaking is None
    # Said later about it (a late "time left", the dialog's keys): dropped, and counted.
    listener.submit(keys, 1.5)
    assert listener.heard == ["Book the train? Within 2 minutes."]
    assert scheduler.drops["question answered"] == 2
    assert scheduler.drops["question ended"] == 1
    # Why it ended may still be said.
    notice = Announcement("Time is up.", event_id="evt_q", kind="system.prompt_expired")
    listener.submit(notice, 2.0)
    assert listener.heard[-1] == "Time is up."


def test_the_dialogs_keys_are_not_said_after_the_question_is_withdrawn() -> None:
    """Issue 14 c: "Press A to accept" came 10 s after the question was withdrawn."""
    scheduler = SpeechScheduler()
    listener = Listener(scheduler)
    listener.submit(news("Working.", session="sess_other"), 0.0)
    listener.submit(critical("Other question.", "sess_other", "agent.awaiting.confirmation"), 0.1)
    question = critical("Add insurance?", TRIP, "agent.awaiting.confirmation", event_id="evt_i")
    listener.submit(question, 0.2)
    intro = Announcement("Press A to accept.", event_id="evt_i", kind="system.ui", continues=True)
    listener.submit(intro, 0.3)
    voided = Announcement("No answer needed any more: Add insurance?", event_id="evt_i")
    voided.kind = "system.prompt_voided"
    listener.take(scheduler.withdraw("evt_i", 4.0, voided))
    listener.play_out(4.0)
    assert "Press A to accept." not in listener.heard
    assert "Add insurance?" not in listener.heard
    assert listener.heard[-1] == "No answer needed any more: Add insurance?"


def test_the_answer_to_a_key_is_said_at_once_cutting_off_normal_speech() -> None:
    """Issue 14 d: pressing 2 in a list was acknowledged 21 s later."""
    scheduler = SpeechScheduler()
    listener = Listener(scheduler)
    listener.submit(news("A long result that takes a while to say."), 0.0)
    for index in range(8):
        listener.submit(news(f"Queued news {index}."), 0.1)
    listener.submit(reply("2: Hotel Presqu'île."), 0.5)
    assert listener.heard[-1] == "2: Hotel Presqu'île."
    assert listener.cancelled == ["user key"]
    # What it cut off is said again after it, from the start.
    listener.finish(1.5)
    assert listener.heard[-1] == "A long result that takes a while to say."


def test_the_answer_to_a_key_waits_only_for_the_critical_message_being_heard() -> None:
    scheduler = SpeechScheduler()
    listener = Listener(scheduler)
    listener.submit(critical("Confirmation needed.", TRIP, "agent.awaiting.confirmation"), 0.0)
    listener.submit(critical("Error elsewhere.", "sess_x", "agent.session.errored"), 0.1)
    listener.submit(reply("9 is not a choice."), 0.2)
    assert listener.cancelled == []
    listener.finish(2.0)
    assert listener.heard[-1] == "9 is not a choice."  # before the queued critical speech
    listener.finish(3.0)
    assert listener.heard[-1] == "Error elsewhere."


def test_do_not_interrupt_puts_the_answer_first_in_line_without_cutting_off() -> None:
    scheduler = SpeechScheduler(UserSettings(do_not_interrupt=True))
    listener = Listener(scheduler)
    listener.submit(news("Speaking."), 0.0)
    listener.submit(news("Queued."), 0.1)
    listener.submit(reply("Sent."), 0.2)
    assert listener.cancelled == []
    listener.finish(1.0)
    assert listener.heard[-1] == "Sent."


def test_when_speech_falls_behind_older_news_is_skipped_and_said_so() -> None:
    """Issue 14 e: the delay stays bounded; the user hears how much was skipped.

    A result every half second, each taking about 2.3 s to say at 180 words a
    minute, played by the paced backend on a simulated clock.
    """
    clock = SimulatedClock()
    scheduler = SpeechScheduler()
    backend = PacedBackend(clock, rate_wpm=180)
    driver = SpeechDriver(backend)
    arrived: dict[str, float] = {}

    def run(commands: list[SpeechCommand]) -> None:
        driver.run(commands, lambda uid: scheduler.on_done(uid, clock.now()))

    for step in range(1200):  # 60 seconds in twentieths
        clock.advance_to(step * 0.05)
        run([])  # what the voice finished meanwhile
        if step % 10 == 0 and step < 400:
            text = f"Result number {step // 10} came back fine."
            arrived[text] = clock.now()
            run(scheduler.submit(news(text), clock.now()))
    heard = [u.announcement.text for u in backend.utterances]
    print([(round(u.started, 1), u.announcement.text[:20], u.stopped) for u in backend.utterances])
    delays = [
        u.started - arrived[u.announcement.text]
        for u in backend.utterances
        if u.announcement.text in arrived
    ]
    # Issue 20: a source keeps its newest results; the rest is summarised by kind.
    assert any(text.endswith("tool calls.") for text in heard)
    assert not any("skipped" in text for text in heard)
    # Never more than the two results kept, one in progress and one summary.
    assert max(delays) <= 4 * 2.5
    assert heard[-1] == "Result number 39 came back fine."
    assert scheduler.drops["superseded by newer news"] > 20


def test_chatter_is_skipped_once_newer_news_of_its_session_waits() -> None:
    listener = Listener(SpeechScheduler())
    listener.submit(news("Speaking."), 0.0)
    listener.submit(news("Thinking.", kind="agent.state.changed"), 0.1)
    listener.submit(news("Searching trains.", kind="agent.tool.invoked"), 0.2)
    listener.submit(news("Found three trains."), 0.3)
    listener.play_out(0.0, step=1.0)
    # Not worth a "2 more updates skipped." of its own; counted, and in the next summary.
    assert listener.heard == ["Speaking.", "Found three trains."]
    assert listener.scheduler.drops["superseded by newer news"] == 2


def test_background_news_is_said_before_its_sessions_later_news_or_not_at_all() -> None:
    def background(text: str, kind: str = "agent.tool.completed") -> Announcement:
        return news(text, kind=kind, urgency=Urgency.BACKGROUND)

    booking = "agent.state.changed"  # a state change never folds a tool's result
    listener = Listener(SpeechScheduler())
    listener.submit(news("Speaking."), 0.0)
    listener.submit(background("Draft saved."), 0.1)
    listener.submit(news("Booking the train.", kind=booking), 0.2)
    listener.finish(1.0)
    assert listener.heard[-1] == "Draft saved."  # still fresh: said first, in order
    listener.play_out(1.0)
    assert listener.heard == ["Speaking.", "Draft saved.", "Booking the train."]
    late = Listener(SpeechScheduler())
    late.submit(news("Speaking."), 0.0)
    late.submit(background("Draft saved."), 0.1)
    late.submit(news("Booking the train.", kind=booking), 0.2)
    late.play_out(5.0)
    # Issue 20: a tool's result is a final state, always said, in its source's order.
    assert late.heard == ["Speaking.", "Draft saved.", "Booking the train."]
    # Only its source's newer result folds it ("current, then most recent"): said by kind,
    # or as itself when it is the one folded (shorter than its count, and fresh).
    newer = Listener(SpeechScheduler())
    newer.submit(news("Speaking."), 0.0)
    newer.submit(background("Draft saved."), 0.1)
    newer.submit(news("Found three trains."), 0.2)
    newer.play_out(1.0)
    assert newer.heard == ["Speaking.", "Draft saved.", "Found three trains."]
    assert newer.scheduler.drops == {"superseded by newer news": 1}
    more = Listener(SpeechScheduler())
    more.submit(news("Speaking."), 0.0)
    more.submit(background("Draft saved."), 0.1)
    more.submit(news("Draft saved again."), 0.15)
    more.submit(news("Found three trains."), 0.2)
    more.play_out(1.0)
    assert more.heard == ["Speaking.", "2 more: 2 tool calls.", "Found three trains."]
    chatter = Listener(SpeechScheduler())
    chatter.submit(news("Speaking."), 0.0)
    chatter.submit(background("Halfway.", kind="agent.progress.updated"), 0.1)
    chatter.submit(news("Found three trains."), 0.2)
    chatter.play_out(1.0)
    # Issue 20: a plan's latest step is never dropped (only a newer step supersedes it).
    assert chatter.heard == ["Speaking.", "Halfway.", "Found three trains."]
    chatter = Listener(SpeechScheduler())
    chatter.submit(news("Speaking."), 0.0)
    chatter.submit(background("Thinking.", kind="agent.state.changed"), 0.1)
    chatter.submit(news("Found three trains."), 0.2)
    chatter.play_out(1.0)
    # A state change is superseded by its session's newer news, at once.
    assert chatter.heard == ["Speaking.", "Found three trains."]
    assert chatter.scheduler.drops["superseded by newer news"] == 1
    # Who asked for every detail (high cognitive load) hears it, while it is fresh.
    detail = Listener(SpeechScheduler(UserSettings(cognitive_load="high")))
    detail.submit(news("Speaking."), 0.0)
    detail.submit(background("Halfway.", kind="agent.progress.updated"), 0.1)
    detail.submit(news("Found three trains."), 0.2)
    detail.play_out(0.0, step=1.0)
    assert detail.heard == ["Speaking.", "Halfway.", "Found three trains."]


def test_the_answering_ui_learns_when_a_question_began_to_be_heard() -> None:
    scheduler = SpeechScheduler()
    listener = Listener(scheduler)
    listener.take(scheduler.submit(news("Speaking now, at length.", session="sess_other"), 0.0))
    question = critical("Book it?", TRIP, "agent.awaiting.confirmation", event_id="evt_b")
    # Issue 30 item 4: it starts at the end of the word being said, not in its middle.
    assert listener.take(scheduler.submit(question, 0.4)) == []
    assert scheduler.question_started_at("evt_b") is None
    boundary = scheduler.next_wakeup()
    assert boundary is not None and 0.4 < boundary <= 0.85
    listener.take(scheduler.tick(boundary))
    assert listener.heard[-1] == "Book it?"
    assert scheduler.question_started_at("evt_b") == boundary
    assert scheduler.question_started_at("evt_never") is None


# -- through the engine -----------------------------------------------------------------


def test_an_answer_cuts_off_its_question_and_the_engine_hands_over_the_cancel() -> None:
    engine = Engine()
    commands = engine.receive(confirmation("rpl_pace1"), "c", 0.0)
    engine.set_subscription("c", "sub_1")
    assert isinstance(commands[0], Speak)
    prompt = engine.pending_prompts()[0]
    assert engine.question_started_at(prompt) == 0.0
    outcome = engine.answer(UserAnswer("rpl_pace1", decision="reject"), 2.0)
    assert isinstance(outcome, ReplyReady)
    after = engine.take_speech()
    assert isinstance(after[0], Cancel) and after[0].reason == "question answered"
    assert engine.take_speech() == []


def test_a_timed_out_question_is_not_read_on_after_its_time_is_up() -> None:
    engine = Engine()
    engine.receive(
        frame("agent.tool.invoked", session="sess_o", tool="t", summary_normal="Hi."), "c", 0.0
    )
    engine.receive(confirmation("rpl_pace2", timeout_seconds=1), "c", 0.1)
    commands = engine.tick(1.2)
    reasons = [c.reason for c in commands if isinstance(c, Cancel)]
    spoken = [c.announcement.kind for c in commands if isinstance(c, Speak)]
    # Issue 20: the question waited for the end of "Hi.", so nothing is cut off; what was
    # queued of it is dropped as timed out, and why it ended is said next.
    assert reasons == []
    assert spoken == []
    queued = [a.kind for a in engine.scheduler.queued_announcements()]
    assert queued == ["system.prompt_expired"]
    assert engine.scheduler.drops["question timed out"] == 1


def test_a_voice_that_never_finishes_never_holds_back_its_sessions_question() -> None:
    scheduler = SpeechScheduler()
    listener = Listener(scheduler)
    listener.take(scheduler.submit(news("Session started.", kind="agent.session.started"), 0.0))
    listener.take(
        scheduler.submit(critical("Confirmation needed.", TRIP, "agent.awaiting.confirmation"), 0.1)
    )
    assert listener.cancelled == []  # its own session's start is its lead-up...
    wake = scheduler.next_wakeup()
    assert wake is not None and wake < 5.0
    assert scheduler.tick(wake - 0.01) == []
    listener.take(scheduler.tick(wake))  # ...but a stuck voice is cut off when overdue
    assert listener.cancelled == ["overdue"]
    assert listener.heard[-1] == "Confirmation needed."


def test_critical_news_that_would_wait_anyway_cuts_nothing_off() -> None:
    listener = Listener(SpeechScheduler())
    listener.submit(news("Found three trains."), 0.0)
    listener.submit(critical("Book it?", TRIP, "agent.awaiting.confirmation"), 0.1)
    # Its own lead-up is not cut; another session's error waits behind the question, so
    # cutting the lead-up would gain it nothing.
    listener.submit(critical("Error. No weather.", WEATHER, "agent.session.errored"), 0.2)
    assert listener.cancelled == []
    listener.play_out(0.2)
    assert listener.heard == ["Found three trains.", "Book it?", "Error. No weather."]


def test_the_agents_own_words_survive_when_old_news_and_chatter_are_skipped_together() -> None:
    listener = Listener(SpeechScheduler(max_delay_seconds=2.5))
    listener.submit(news("Speaking."), 0.0)
    listener.submit(news("Old result.", kind="agent.tool.completed"), 0.1)
    listener.submit(news("Running shell.", kind="agent.tool.invoked"), 2.0)
    listener.submit(news("Ready to apply the diff.", kind="agent.output.streaming"), 2.1)
    listener.submit(news("Finished the turn."), 2.2)
    listener.finish(3.0)
    listener.play_out(3.0)
    # Issue 20: a tool's result is a final state, said however late; the words too. Status
    # due before its source's waiting words keeps its place there: newer status after
    # the words does not fold it (order within a source).
    assert listener.heard == [
        "Speaking.",
        "Old result.",
        "Running shell.",
        "Ready to apply the diff.",
        "Finished the turn.",
    ]
    assert not listener.scheduler.drops
    # With no words between them, the newer status folds the older one.
    folded = Listener(SpeechScheduler(max_delay_seconds=2.5))
    folded.submit(news("Speaking."), 0.0)
    folded.submit(news("Running shell.", kind="agent.tool.invoked"), 2.0)
    folded.submit(news("Finished the turn."), 2.2)
    folded.play_out(3.0)
    assert folded.heard == ["Speaking.", "Finished the turn."]
    assert folded.scheduler.drops == {"superseded by newer news": 1}


def test_why_a_question_ended_and_a_sessions_end_are_said_however_far_behind() -> None:
    """Rule e skips old news and says so, but never a question's withdrawal (a question
    never vanishes in silence) nor "done" (its earcon is what the listener waits for):
    not for too much queued speech, nor after a minute's wait behind urgent speech."""
    listener = Listener(SpeechScheduler())
    listener.submit(critical("Error one.", "sess_a", "agent.session.errored"), 0.0)
    voided = news("No answer needed any more: transfer the money.", kind="system.prompt_voided")
    listener.submit(voided, 0.1)
    for number in range(12):  # half a minute of results: over the queued-speech budget
        listener.submit(news(f"Result number {number} came back fine, with details."), 0.2)
    done = news("All done. The money is in your savings.", kind="agent.session.completed")
    listener.submit(done, 0.3)
    listener.submit(news("Found the statement.", session="sess_b"), 0.4)
    # A minute of urgent speech from another session before the normal lane's turn.
    now = 0.0
    for second in range(1, 70):
        now = float(second)
        if second % 5 == 0:
            listener.submit(critical(f"Alert {second}.", "sess_c", "agent.state.changed"), now)
        if listener.scheduler.speaking_id is not None:
            listener.finish(now)
    listener.play_out(now)
    heard = listener.heard
    assert "11 more: 11 tool calls." in heard
    assert voided.text in heard
    assert done.text in heard
    drops = listener.scheduler.drops
    # Every result is heard or folded and counted: a source keeps its newest result
    # (a tool's final state), however late (issue 20).
    # (one cut off by an alert is said again whole: counted once)
    results_heard = len({text for text in heard if text.startswith("Result number")})
    assert results_heard == 1
    assert sum(drops.values()) + results_heard == 12


def test_why_a_question_being_heard_ended_is_said_however_late() -> None:
    scheduler = SpeechScheduler(max_delay_seconds=3.0)
    listener = Listener(scheduler)
    question = critical("Which hotel?", TRIP, "agent.awaiting.clarification", event_id="evt_q")
    listener.submit(question, 0.0)
    listener.submit(news("Found a cheaper hotel.", session=WEATHER), 0.1)
    voided = news("No answer needed any more: Which hotel?", kind="system.prompt_voided")
    voided.event_id = "evt_q"
    listener.take(scheduler.withdraw("evt_q", 0.5, voided))
    # It was being read: cut off, and why it ended said at once.
    assert listener.heard[-1] == voided.text


def test_a_still_open_reminder_is_not_said_after_its_question_ended() -> None:
    """Issue 20: "your question is still open" after the question was withdrawn or answered
    would be false; it goes with the question (shown, not said)."""
    scheduler = SpeechScheduler()
    listener = Listener(scheduler)
    question = critical("Transfer $500?", TRIP, "agent.awaiting.confirmation", event_id="evt_q")
    listener.submit(question, 0.0)
    still_open = news(
        "The agent went on working; your question is still open.", kind="system.prompt_still_open"
    )
    listener.submit(still_open, 1.0)
    listener.submit(news("The transfer went through."), 1.1)
    listener.take(scheduler.question_ended("evt_q", 2.0))
    listener.play_out(2.0)
    assert still_open.text not in listener.heard
    assert listener.heard[-1] == "The transfer went through."
    assert scheduler.drops["question ended"] >= 1


@pytest.mark.parametrize("after_interrupt", ["resume", "drop"])
def test_where_am_i_mid_sentence_is_answered_at_once_and_the_sentence_said_again(
    after_interrupt: str,
) -> None:
    """Issue 20: the user's own key ("Where am I", F3) is answered at once, even mid-way
    through the agent's sentence; that sentence is then said again from its start, whatever
    ``after_interrupt`` says, so the agent's words are never dropped."""
    clock = SimulatedClock()
    scheduler = SpeechScheduler(UserSettings(after_interrupt=after_interrupt))  # type: ignore[arg-type]
    backend = PacedBackend(clock, rate_wpm=180)
    driver = SpeechDriver(backend)

    def run(commands: list[SpeechCommand]) -> None:
        driver.run(commands, lambda uid: scheduler.on_done(uid, clock.now()))

    sentences = [
        "The parser now keeps the last line of a file that has no final newline.",
        "The strict flag is checked before any file is opened.",
        "Error messages name the file and the line.",
    ]
    for sentence in sentences:
        run(scheduler.submit(news(sentence, kind="agent.output.streaming"), clock.now()))
    clock.advance_to(2.0)  # half-way through the first sentence (about 4.7 s long)
    run([])
    where = reply("Main screen. The agent is working.")
    run(scheduler.submit(where, clock.now()))
    for step in range(1, 400):
        clock.advance_to(2.0 + step * 0.1)
        run([])
    heard = backend.utterances
    # The answer started at the key press, cutting the sentence off.
    answer = next(u for u in heard if u.announcement is where)
    assert answer.started == 2.0
    assert heard[0].stopped and heard[0].announcement.text == sentences[0]
    # Then every sentence is heard whole, in order, the cut one again from its start.
    whole = [u.announcement.text for u in heard if not u.stopped and u.announcement is not where]
    assert whole == sentences
    assert not scheduler.drops


def test_a_keys_answer_cutting_off_the_questions_keys_line_never_reads_the_question_again() -> None:
    """Seen beside stress-ng in the Textual app: the question was heard, its keys line
    ("Accept A Enter, reject R.", part of the same message) was being said, and the
    user's A got its confirm step ("Enter.", the answer to a key, said at once). The cut
    keys line was resumed with the whole message, so the question was read a second
    time. Only the keys line is said again; the question, heard through, is not."""
    scheduler = SpeechScheduler()
    listener = Listener(scheduler)
    question = critical("Run rm -rf build?", TRIP, "agent.awaiting.confirmation", "evt_q")
    keys = Announcement(
        "Accept A Enter, reject R.",
        urgency=Urgency.CRITICAL,
        event_id="evt_q",
        session_id=TRIP,
        kind="system.ui",
        continues=True,
    )
    listener.submit(question, 0.0)
    listener.submit(keys, 0.0)
    listener.finish(2.0)  # the question said through; its keys line begins
    assert listener.heard == ["Run rm -rf build?", "Accept A Enter, reject R."]
    step = Announcement(
        "Enter.", urgency=Urgency.CRITICAL, interrupt=True, kind="system.ui", answers_key=True
    )
    listener.submit(step, 2.3)
    assert listener.heard[-1] == "Enter." and listener.cancelled == ["user key"]
    listener.play_out(2.3)
    assert listener.heard.count("Run rm -rf build?") == 1, listener.heard
    assert listener.heard[-1] == "Accept A Enter, reject R."  # ours, short: said again
