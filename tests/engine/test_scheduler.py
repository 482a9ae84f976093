"""The speech scheduler: priorities, barge-in, bounds and staleness."""

from __future__ import annotations

from announcer.engine.announcement import Announcement, Urgency
from announcer.engine.scheduler import SpeechScheduler, estimated_seconds
from announcer.engine.settings import UserSettings
from announcer.engine.speech_commands import Cancel, Speak, SpeechCommand


def say(text: str, urgency: Urgency = Urgency.NORMAL, **kwargs: object) -> Announcement:
    return Announcement(text=text, urgency=urgency, **kwargs)  # type: ignore[arg-type]


def texts(commands: list[SpeechCommand]) -> list[str]:
    return [
        c.announcement.text if isinstance(c, Speak) else f"<cancel {c.reason}>" for c in commands
    ]


def finish(scheduler: SpeechScheduler, now: float) -> list[SpeechCommand]:
    current = scheduler.speaking_id
    assert current is not None
    return scheduler.on_done(current, now)


def critical_cut(scheduler: SpeechScheduler, announcement: Announcement, now: float) -> list[str]:
    """Submit critical news; it cuts in at the end of the word being said (issue 30 item
    4), within half a second: what the backend is told then."""
    commands = scheduler.submit(announcement, now)
    boundary = scheduler.next_wakeup()
    if boundary is not None and boundary <= now + 0.45:
        commands += scheduler.tick(boundary)
    return texts(commands)


def test_normal_speech_takes_turns() -> None:
    scheduler = SpeechScheduler()
    assert texts(scheduler.submit(say("one"), 0.0)) == ["one"]
    assert scheduler.submit(say("two"), 0.1) == []
    assert scheduler.submit(say("three"), 0.2) == []
    assert texts(finish(scheduler, 1.0)) == ["two"]
    assert texts(finish(scheduler, 2.0)) == ["three"]
    assert finish(scheduler, 3.0) == []
    assert scheduler.speaking is None


def test_critical_barges_in_and_interrupted_speech_resumes() -> None:
    scheduler = SpeechScheduler(UserSettings(after_interrupt="resume"))
    scheduler.submit(say("checking balance"), 0.0)
    scheduler.submit(say("queued note"), 0.1)
    commands = scheduler.submit(say("Confirm transfer?", Urgency.CRITICAL), 0.2)
    assert commands == []  # "balance" is being said: cut off when it ends
    boundary = scheduler.next_wakeup()
    assert boundary is not None and 0.2 < boundary <= 0.65
    commands = scheduler.tick(boundary)
    assert isinstance(commands[0], Cancel) and commands[0].reason == "barge-in"
    assert isinstance(commands[1], Speak)
    assert commands[1].announcement.text == "Confirm transfer?"
    assert commands[1].announcement.interrupt is True
    assert texts(finish(scheduler, 1.0)) == ["checking balance"]
    assert texts(finish(scheduler, 2.0)) == ["queued note"]
    assert scheduler.interruptions == 1


def test_after_interrupt_drop_forgets_lower_urgency_speech_and_counts_it() -> None:
    scheduler = SpeechScheduler(UserSettings(after_interrupt="drop"))
    scheduler.submit(say("checking balance"), 0.0)
    scheduler.submit(say("queued note"), 0.1)
    scheduler.submit(say("thinking", Urgency.BACKGROUND), 0.1)
    texts_now = critical_cut(scheduler, say("Error!", Urgency.CRITICAL), 0.2)
    assert texts_now == ["<cancel barge-in>", "Error!"]
    assert finish(scheduler, 1.0) == []
    assert scheduler.drops == {"interrupted": 1, "dropped after interrupt": 2}
    assert [record.reason for record in scheduler.drop_log] == [
        "interrupted",
        "dropped after interrupt",
        "dropped after interrupt",
    ]


def test_critical_never_cuts_off_critical_but_goes_before_normal() -> None:
    scheduler = SpeechScheduler()
    scheduler.submit(say("first alarm", Urgency.CRITICAL), 0.0)
    scheduler.submit(say("normal news"), 0.1)
    assert scheduler.submit(say("second alarm", Urgency.CRITICAL), 0.2) == []
    assert texts(finish(scheduler, 1.0)) == ["second alarm"]
    assert texts(finish(scheduler, 2.0)) == ["normal news"]


def test_do_not_interrupt_defers_normal_interruptions_but_not_critical() -> None:
    scheduler = SpeechScheduler(UserSettings(do_not_interrupt=True))
    scheduler.submit(say("long story"), 0.0)
    assert scheduler.submit(say("urgent-ish", interrupt=True), 0.1) == []
    assert critical_cut(scheduler, say("alarm", Urgency.CRITICAL), 0.2) == [
        "<cancel barge-in>",
        "alarm",
    ]
    polite = SpeechScheduler(UserSettings(do_not_interrupt=False))
    polite.submit(say("long story"), 0.0)
    assert texts(polite.submit(say("urgent-ish", interrupt=True), 0.1)) == [
        "<cancel barge-in>",
        "urgent-ish",
    ]


def test_background_is_dropped_first_when_the_queue_is_full() -> None:
    scheduler = SpeechScheduler(max_queue=3)
    scheduler.submit(say("speaking"), 0.0)
    scheduler.submit(say("bg1", Urgency.BACKGROUND), 0.1)
    scheduler.submit(say("n1"), 0.1)
    scheduler.submit(say("bg2", Urgency.BACKGROUND), 0.1)
    scheduler.submit(say("n2"), 0.1)
    assert scheduler.drops == {"queue full": 1}
    scheduler.submit(say("n3"), 0.1)
    assert scheduler.drops == {"queue full": 2}
    assert [a.text for a in scheduler.queued_announcements()] == ["n1", "n2", "n3"]
    scheduler.submit(say("n4"), 0.1)
    # With no background left, the oldest normal item goes and is summarised later.
    assert [a.text for a in scheduler.queued_announcements()] == ["n2", "n3", "n4"]
    # Issue 20: what was folded is summarised by kind, never as a bare count.
    assert texts(finish(scheduler, 0.5)) == ["1 more: 1 update."]
    assert texts(finish(scheduler, 0.6)) == ["n2"]


def test_stale_news_is_summarised_not_read() -> None:
    scheduler = SpeechScheduler(stale_after_seconds=30.0)
    scheduler.submit(say("speaking"), 0.0)
    for index in range(3):
        scheduler.submit(say(f"old {index}"), 1.0)
    scheduler.submit(say("fresh"), 50.0)
    assert texts(finish(scheduler, 60.0)) == ["3 more: 3 updates."]
    assert texts(finish(scheduler, 61.0)) == ["fresh"]
    assert scheduler.drops == {"stale": 3}


def test_queued_status_is_bounded_per_source_not_by_its_length() -> None:
    """Issue 20 (was: bounded by seconds of queued speech): a source keeps only its newest
    pending status, so the queue holds one line per source; the folded ones are summarised."""
    settings = UserSettings(pace_wpm=120)
    scheduler = SpeechScheduler(settings, max_queued_speech_seconds=10.0)
    scheduler.submit(say("speaking"), 0.0)
    ten_words = " ".join(["word"] * 10)  # five seconds at 120 words a minute
    assert estimated_seconds(ten_words, 120) > 5.0
    for session in ("a", "b"):
        for index in range(3):
            scheduler.submit(
                Announcement(f"{ten_words} {index}", kind="agent.tool.invoked", session_id=session),
                0.0,
            )
    assert [a.text[-1] for a in scheduler.queued_announcements()] == ["2", "2"]
    assert scheduler.drops == {"superseded by newer news": 4}
    # One summary counts what both sources folded (not one per source).
    assert texts(finish(scheduler, 1.0)) == ["4 more: 4 tool calls."]


def test_critical_is_never_dropped_however_full_the_queue() -> None:
    scheduler = SpeechScheduler(max_queue=2, stale_after_seconds=1.0)
    scheduler.submit(say("speaking", Urgency.CRITICAL), 0.0)
    for index in range(500):
        scheduler.submit(say(f"alarm {index}", Urgency.CRITICAL), 0.0)
        scheduler.submit(say(f"news {index}"), 0.0)
    assert scheduler.queued(Urgency.CRITICAL) == 500
    spoken = []
    now = 100.0
    while scheduler.speaking_id is not None:
        spoken += texts(finish(scheduler, now))
        now += 1
    assert [t for t in spoken if t.startswith("alarm")] == [f"alarm {i}" for i in range(500)]


def test_late_completion_of_a_cancelled_utterance_is_ignored() -> None:
    scheduler = SpeechScheduler()
    first = scheduler.submit(say("one"), 0.0)[0]
    assert isinstance(first, Speak)
    critical_cut(scheduler, say("alarm", Urgency.CRITICAL), 0.1)
    assert scheduler.on_done(first.utterance_id, 0.5) == []
    assert scheduler.speaking is not None and scheduler.speaking.text == "alarm"


def test_paced_mode_keeps_the_users_pace_with_instant_backends() -> None:
    scheduler = SpeechScheduler(UserSettings(pace_wpm=60), paced=True)
    scheduler.submit(say("one two three"), 0.0)  # about 3.25 seconds
    scheduler.submit(say("next"), 0.0)
    assert finish(scheduler, 0.0) == []
    wake = scheduler.next_wakeup()
    assert wake is not None and 3.0 < wake < 3.5
    assert scheduler.tick(1.0) == []
    assert texts(scheduler.tick(wake)) == ["next"]


def test_silence_stops_speech_and_clears_non_critical_queue() -> None:
    scheduler = SpeechScheduler()
    scheduler.submit(say("one"), 0.0)
    scheduler.submit(say("two"), 0.0)
    scheduler.submit(say("alarm", Urgency.CRITICAL), 0.0)
    scheduler.submit(say("three"), 0.0)
    scheduler.submit(say("second alarm", Urgency.CRITICAL), 0.0)
    commands = scheduler.silence(1.0)
    # "one" was resumed behind the alarm; all normal speech goes, the queued alarm stays.
    assert texts(commands) == ["<cancel silenced by user>", "second alarm"]
    assert scheduler.drops == {"silenced by user": 3}


def test_an_agents_start_news_is_not_said_again_after_the_users_message() -> None:
    """Issue 31 item 11: the message's echo cut off "is ready.", which was said again with
    the settings line after it, before the agent's answer. The agent's words, another
    session's start and a plan's step still are."""
    scheduler = SpeechScheduler()
    ready = say("Claude Agent is ready.", kind="agent.session.started", session_id="s1")
    settings = say(
        "Mode: Manual. Model: Default.",
        kind="agent.progress.updated",
        session_id="s1",
        start_line=True,
    )
    step = say("Step 1 of 2: Read.", kind="agent.progress.updated", session_id="s1")
    other = say("Codex is ready.", kind="agent.session.started", session_id="s2")
    assert texts(scheduler.submit(ready, 0.0)) == ["Claude Agent is ready."]
    for news in (settings, step, other):
        scheduler.submit(news, 0.1)
    echo = say("Sent to Claude Agent: hello", kind="system.ui")
    commands = scheduler.submit(echo, 0.5)
    assert texts(commands) == ["<cancel user key>", "Sent to Claude Agent: hello"]
    scheduler.user_wrote("s1", 0.5)
    heard = []
    now = 1.0
    while scheduler.speaking is not None:
        heard += texts(finish(scheduler, now))
        now += 1.0
    assert heard == ["Step 1 of 2: Read.", "Codex is ready."]
    moot = [r.kind for r in scheduler.drop_log if r.reason == "moot after the user's message"]
    assert "agent.session.started" in moot, list(scheduler.drop_log)
