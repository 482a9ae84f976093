"""A user's own key gets an answer at once, even over a question (GUIDE, docs/speech.md).

The sans-I/O scheduler drives the ``paced`` backend on an injected clock (a voice at
400 words a minute): what the user hears, when it starts, and what is said again. A plan
approval's question takes about 13 s; pressing W two seconds in used to be answered only
after it.
"""

from __future__ import annotations

from announcer.engine.announcement import Announcement, Urgency
from announcer.engine.answer_guard import KeyGuard
from announcer.engine.scheduler import SpeechScheduler, estimated_seconds
from announcer.engine.settings import UserSettings
from announcer.engine.speech_commands import SpeechCommand
from announcer.speech.driver import SpeechDriver
from announcer.speech.paced import PacedBackend, PacedUtterance, SimulatedClock

WPM = 400
PLAN = "evt_plan"
#: about 13 s at 400 words a minute, like a plan approval read by steps
QUESTION = "Scripted Agent wants to run this plan. " + " ".join(
    f"Step {n}: change the parser so that the last line of every file is kept." for n in range(6)
)
KEYS = "Press A to accept, R to reject, W to hear the whole plan."
WHOLE_PLAN = "Fix the login bug. 1. Read auth.py. 2. Fix the token check. 3. Run the tests."


def question(text: str = QUESTION, event_id: str = PLAN) -> Announcement:
    return Announcement(
        text=text,
        urgency=Urgency.CRITICAL,
        interrupt=True,
        kind="agent.awaiting.confirmation",
        event_id=event_id,
        session_id="sess_plan",
    )


def keys_line(event_id: str = PLAN) -> Announcement:
    """Our sentence kept with the question (``say_after_question``)."""
    return Announcement(
        text=KEYS,
        urgency=Urgency.CRITICAL,
        interrupt=True,
        kind="system.ui",
        event_id=event_id,
        session_id="sess_plan",
        continues=True,
    )


def key_answer(
    text: str, event_id: str | None = None, urgency: Urgency = Urgency.CRITICAL
) -> Announcement:
    """What a UI says for the user's key (``session.speak(..., interrupt=True)``)."""
    return Announcement(
        text=text,
        urgency=urgency,
        interrupt=True,
        kind="system.ui",
        event_id=event_id,
        answers_key=True,
    )


class Voice:
    """The scheduler, a paced voice and the clock they share."""

    def __init__(self, settings: UserSettings | None = None) -> None:
        self.clock = SimulatedClock()
        self.scheduler = SpeechScheduler(settings or UserSettings(pace_wpm=WPM))
        self.backend = PacedBackend(self.clock, rate_wpm=WPM)
        self.driver = SpeechDriver(self.backend)

    def run(self, commands: list[SpeechCommand]) -> None:
        self.driver.run(commands, lambda uid: self.scheduler.on_done(uid, self.clock.now()))

    def submit(self, *announcements: Announcement) -> None:
        for announcement in announcements:
            self.run(self.scheduler.submit(announcement, self.clock.now()))

    def at(self, when: float) -> None:
        self.clock.advance_to(when)
        self.run([])

    def play_out(self, limit: float = 120.0) -> None:
        """Let every utterance end (bounded: ``limit`` simulated seconds in 0.1 s steps)."""
        start = self.clock.now()
        for step in range(1, int(limit * 10) + 1):
            if self.scheduler.speaking is None and not self.scheduler.queued():
                return
            self.clock.advance_to(start + step * 0.1)
            self.run([])
        raise AssertionError("speech never ended")

    @property
    def heard(self) -> list[PacedUtterance]:
        return list(self.backend.utterances)

    def whole(self) -> list[str]:
        """What was said through, in order."""
        return [u.announcement.text for u in self.heard if not u.stopped]

    def started(self, announcement: Announcement) -> float:
        return next(u.started for u in self.heard if u.announcement is announcement)


def test_w_cuts_a_long_question_at_once_and_its_rest_is_not_read_again() -> None:
    voice = Voice()
    voice.submit(question(), keys_line())
    assert estimated_seconds(QUESTION, WPM) > 12.0
    voice.at(2.0)
    w = key_answer(WHOLE_PLAN, PLAN)
    voice.submit(w)
    # At the key press, not after the question's 13 s.
    assert voice.started(w) == 2.0
    assert voice.heard[0].announcement.text == QUESTION and voice.heard[0].stopped
    voice.play_out()
    # The plan whole, then the keys line that had not been said; the question not again.
    assert voice.whole() == [WHOLE_PLAN, KEYS]
    assert voice.scheduler.drops == {"said by the user's key": 1}
    # It began to be heard at its own start: the keys arm from there.
    assert voice.scheduler.question_started_at(PLAN) == 0.0


def test_a_key_cuts_another_sources_critical_news_which_is_then_said_again_whole() -> None:
    voice = Voice()
    news = Announcement(
        text="Build failed in the deploy session: the tests could not reach the database.",
        urgency=Urgency.CRITICAL,
        interrupt=True,
        kind="agent.session.errored",
        session_id="sess_deploy",
    )
    voice.submit(news, question(event_id="evt_other"))
    voice.at(1.0)
    where = key_answer("Main screen. 1 question waiting.")
    voice.submit(where)
    assert voice.started(where) == 1.0
    assert voice.heard[0].stopped
    voice.play_out()
    # Nothing lost or folded: the news whole, in its place (before the waiting question).
    assert voice.whole() == [where.text, news.text, QUESTION]
    assert not voice.scheduler.drops


def test_a_key_that_cuts_a_question_it_is_not_about_has_the_question_read_again_whole() -> None:
    voice = Voice()
    voice.submit(question(), keys_line())
    voice.at(3.0)
    refusal = key_answer("9 is not an answer here.")
    voice.submit(refusal)
    assert voice.started(refusal) == 3.0
    voice.play_out()
    assert voice.whole() == [refusal.text, QUESTION, KEYS]
    assert not voice.scheduler.drops


def test_two_answers_to_keys_never_cut_each_other_off() -> None:
    voice = Voice()
    first = key_answer(WHOLE_PLAN)
    second = key_answer("Main screen. 1 question waiting.")
    voice.submit(first)
    voice.at(0.5)
    voice.submit(second)
    assert not any(u.stopped for u in voice.heard)
    voice.play_out()
    assert voice.whole() == [WHOLE_PLAN, second.text]
    assert voice.started(second) > 0.5  # after the first was said through


def test_the_agents_words_cut_by_a_key_are_said_again_whole() -> None:
    voice = Voice(UserSettings(pace_wpm=WPM, after_interrupt="drop"))
    sentences = [
        "The parser now keeps the last line of a file that has no final newline.",
        "The strict flag is checked before any file is opened.",
    ]
    for sentence in sentences:
        voice.submit(
            Announcement(text=sentence, kind="agent.output.streaming", session_id="sess_plan")
        )
    voice.at(1.0)
    w = key_answer(WHOLE_PLAN, PLAN)
    voice.submit(w)
    assert voice.started(w) == 1.0
    voice.play_out()
    assert voice.whole() == [WHOLE_PLAN, *sentences]
    assert not voice.scheduler.drops


def test_do_not_interrupt_still_lets_a_critical_key_answer_cut_in() -> None:
    """docs/configuration.md: with ``do_not_interrupt`` only critical speech interrupts."""
    voice = Voice(UserSettings(pace_wpm=WPM, do_not_interrupt=True))
    voice.submit(question(), keys_line())
    voice.at(2.0)
    w = key_answer(WHOLE_PLAN, PLAN)
    voice.submit(w)
    assert voice.started(w) == 2.0
    voice.at(2.5)
    quiet = key_answer("Main screen.", urgency=Urgency.NORMAL)
    voice.submit(quiet)  # a normal one waits its turn, first in line
    voice.play_out()
    assert voice.whole() == [WHOLE_PLAN, KEYS, "Main screen."]


def early_key_cue(text: str = "Not yet.") -> Announcement:
    """What a UI says for a key pressed before its question armed (``session.say_cue``)."""
    return Announcement(
        text=text, urgency=Urgency.CRITICAL, interrupt=True, kind="system.ui", cue=True
    )


def test_the_early_keys_cue_follows_the_question_it_never_restarts_it() -> None:
    """The UIs' "Not yet." (``cue``): the question goes on (issue 20)."""
    voice = Voice()
    voice.submit(question(), keys_line())
    voice.at(2.0)
    cue = early_key_cue()
    voice.submit(cue)
    voice.play_out()
    assert voice.whole() == [QUESTION, KEYS, "Not yet."]
    assert not any(u.stopped for u in voice.heard)


def test_an_early_keys_cue_waits_for_its_unread_question_to_begin() -> None:
    """Issue 30 item 8: the question is on screen but waits behind the agent's words; a
    key pressed then got "Not yet." before the question itself was read. The cue now
    follows the question's start (here, after the question and its keys line)."""
    voice = Voice()
    words = Announcement(
        text="I checked the parser and found the bug in the last line handling of each file.",
        kind="agent.output.streaming",
        session_id="sess_other",
    )
    voice.submit(words)
    voice.at(0.5)
    ask = question("Scripted Agent wants to run: touch made.txt?")
    voice.submit(ask, keys_line())
    voice.at(1.0)  # the question waits, unread, behind the words
    assert not any(u.announcement is ask for u in voice.heard)
    cue = early_key_cue()
    voice.submit(cue)
    voice.play_out()
    assert voice.whole() == [words.text, ask.text, KEYS, "Not yet."]
    assert voice.started(cue) > voice.started(ask)
    assert not any(u.stopped for u in voice.heard)
    assert not voice.scheduler.drops


#: a status line of the question's own session, longer than the cue's 2 s interval
MODE = (
    "Mode: Manual. Model: Default (recommended). Effort: Default. Fast mode: Off. Ultracode: Off."
)


def test_a_key_pressed_on_and_on_never_keeps_the_question_waiting() -> None:
    """Found in the lab under load: the agent's status line was being read when its
    question came, and the user kept pressing A (every 0.25 s). Each "Not yet." cut the
    status line off, which was then said again ahead of the question, and the next cue
    cut it again: the question was never read, so its keys never armed. The cue now
    cuts nothing off: the status line is said once, then the cue, then the question."""
    voice = Voice()
    guard = KeyGuard(arming_seconds=1.0, pace_wpm=WPM)
    status = Announcement(
        text=MODE, kind="agent.state.changed", event_id="evt_mode", session_id="sess_plan"
    )
    assert estimated_seconds(MODE, WPM) > 2.0  # longer than the cue's interval
    voice.submit(status)
    voice.at(0.05)
    ask = question("Scripted Agent wants to run: touch made.txt?")
    voice.submit(ask, keys_line())
    guard.present(PLAN, 0.05)
    now, sent_at, cues = 0.05, None, 0
    while sent_at is None and now < 30.0:  # bounded: 120 presses of simulated time
        now += 0.25
        voice.at(now)
        started = next((u.started for u in voice.heard if u.announcement is ask), None)
        if started is not None:
            guard.speech_started(PLAN, started, ask.text)
        verdict = guard.press(PLAN, "accept", now, key="a")
        if verdict.sends:
            sent_at = now
        elif verdict.message:
            cues += 1
            voice.submit(early_key_cue(verdict.message))
    assert sent_at is not None, [(u.announcement.text[:20], u.stopped) for u in voice.heard]
    voice.play_out()
    # The status line said once, whole; the question began right after it, and one cue
    # after the question began (issue 30 item 8: never before it; a second cue while one
    # still waits is not said: counted, it would only delay more).
    assert [u.stopped for u in voice.heard if u.announcement is status] == [False]
    assert [u.announcement.text for u in voice.heard].count("Not yet.") == 1
    assert voice.scheduler.drops == {"an early key's cue already waits": cues - 1}
    assert voice.started(ask) < estimated_seconds(MODE, WPM) + 0.3
    cue_started = next(u.started for u in voice.heard if u.announcement.text == "Not yet.")
    assert cue_started > voice.started(ask)
    assert not any(u.stopped for u in voice.heard)
    assert cues >= 1


def test_an_early_keys_waiting_cue_is_not_said_after_a_later_keys_answer() -> None:
    """A high-risk question: A pressed while it is read gets "Not yet." (it waits, cutting
    nothing); once the question was heard, A gets its confirm step at once. The waiting
    cue used to follow it: "Accept …? Type c to confirm. Not yet." told the user the
    second key would not work. A later key's answer replaces a waiting cue (counted)."""
    voice = Voice()
    ask = question("Scripted Agent wants to run: rm -rf build. High risk. This cannot be undone.")
    voice.submit(ask, keys_line())
    voice.at(1.0)
    voice.submit(early_key_cue())  # A, before the question was heard: waits behind it
    voice.at(2.0)
    step = key_answer("Accept: rm -rf build? Type c then Enter to confirm.")
    voice.submit(step)  # A again, now heard: the confirm step, at once
    assert voice.started(step) == 2.0
    voice.play_out()
    said = [u.announcement.text for u in voice.heard]
    assert "Not yet." not in said, said
    assert voice.scheduler.drops["a later key's answer replaced the cue"] == 1
    # The same once the accept itself was sent: no "Not yet." after "Sent: accept.".
    voice = Voice()
    voice.submit(ask, keys_line())
    voice.at(0.5)
    voice.submit(early_key_cue())
    voice.at(1.5)
    voice.submit(key_answer("Sent: accept."))
    voice.play_out()
    said = [u.announcement.text for u in voice.heard]
    assert "Sent: accept." in said and "Not yet." not in said, said


def test_an_early_keys_waiting_cue_is_not_said_once_its_question_is_answered() -> None:
    """A pressed just before the question armed: its "Not yet." waits behind the question
    (it cuts nothing off). The next A answers; the engine ends the question, cutting its
    reading, and the waiting cue used to be said next: "Not yet." right after the key
    that answered, before "Sent: accept.". The question's end drops it (counted)."""
    voice = Voice()
    voice.submit(question(), keys_line())
    voice.at(0.3)
    voice.submit(early_key_cue())
    voice.at(1.2)
    voice.run(voice.scheduler.question_ended(PLAN, voice.clock.now()))  # the answer went
    voice.submit(key_answer("Sent: accept."))
    voice.play_out()
    said = [u.announcement.text for u in voice.heard]
    assert said == [QUESTION, "Sent: accept."], said
    assert voice.scheduler.drops["the question it was about ended"] == 1


def test_a_cue_being_said_is_not_cut_by_a_later_keys_answer_which_follows_it() -> None:
    """The cue already being said is heard out (it is short and answers a key), and the
    later key's answer follows it: the order the keys were pressed in."""
    voice = Voice()
    voice.submit(early_key_cue())
    voice.at(0.1)
    voice.submit(key_answer("Sent: reject."))
    voice.play_out()
    assert voice.whole() == ["Not yet.", "Sent: reject."]


def test_a_wrong_key_pressed_on_and_on_piles_up_no_refusals_before_the_question() -> None:
    """A wrong key every quarter second for 8 s while a question is read: each refusal
    is the answer to a key (the first cuts the question off), but one said and one
    waiting is enough. They used to queue one each press (8 s of presses, 43 s of
    refusals), the question behind them all; now it is said again whole soon after the
    last press."""
    refusal = "Type A to accept or R to reject, then press Enter."
    voice = Voice()
    ask = question("Scripted Agent wants to run: rm -rf build. High risk. This cannot be undone.")
    voice.submit(ask, keys_line())
    now = 0.5
    for _ in range(32):  # bounded: 8 s of simulated presses
        voice.at(now)
        voice.submit(key_answer(refusal))
        now += 0.25
    last_press = now - 0.25
    voice.play_out()
    said = [u.announcement.text for u in voice.heard]
    # About one per refusal's length while pressing, and one waiting when it stops.
    assert said.count(refusal) <= 8.0 / estimated_seconds(refusal, WPM) + 2, said
    assert voice.scheduler.drops["the same answer to a key already waits"] >= 20
    # The question, said again whole after the refusals, within two refusals' time.
    again = [u for u in voice.heard if u.announcement is ask][-1]
    assert not again.stopped
    assert again.started <= last_press + 2 * estimated_seconds(refusal, WPM) + 0.01


def test_a_question_cut_off_by_a_refusal_is_not_heard_until_said_through_again() -> None:
    """A high-risk question cut off half a second in by a wrong key's refusal, the wrong
    key pressed for 8 s: its reading's time passes, yet it was never heard. The guard
    used to let the accept through (its confirm step) on time alone; now the speech
    engine's word (``question_cut``) holds it until the question is said through again."""
    refusal = "Type A to accept or R to reject, then press Enter."
    voice = Voice()
    guard = KeyGuard(arming_seconds=1.0, pace_wpm=WPM)
    text = "Scripted Agent wants to run: rm -rf build. High risk. This cannot be undone."
    ask = question(text)
    voice.submit(ask, keys_line())
    guard.present(PLAN, 0.0)
    guard.speech_started(PLAN, 0.0, text)
    now = 0.5
    for _ in range(32):  # bounded: 8 s of simulated presses
        voice.at(now)
        voice.submit(key_answer(refusal))
        now += 0.25
    assert now > guard.heard_at() + 3.0  # the reading's time is long past
    scheduler = voice.scheduler

    def accept(at: float) -> str:
        cut_off = scheduler.question_cut(PLAN)
        verdict = guard.press(
            PLAN, "accept", at, two_keys=True, key="a", must_be_heard=True, cut_off=cut_off
        )
        return verdict.kind if verdict.kind != "refused" else verdict.code

    assert accept(now) == "not_heard"
    again = None
    while again is None or again.ended is None:  # bounded by the question's reading
        assert now < 60.0
        now += 0.25
        voice.at(now)
        again = next((u for u in voice.heard[1:] if u.announcement is ask), None)
        if again is not None and again.ended is None:
            assert accept(now) == "not_heard"  # being said again: not yet through
    assert not again.stopped
    assert accept(now) == "confirm_step"  # said through again: the accept goes on


def test_the_question_counts_as_heard_once_ws_answer_is_said_through() -> None:
    """A high-risk accept needs the question heard; W's reading of it counts, not more."""
    guard = KeyGuard(arming_seconds=1.0, pace_wpm=WPM)
    guard.present("tok", 0.0)
    guard.speech_started("tok", 0.0, QUESTION)
    long_end = guard.heard_at()
    assert long_end is not None and long_end > 10.0
    guard.speech_started("tok", 2.0, WHOLE_PLAN, whole=True)
    heard = guard.heard_at()
    assert heard is not None and 2.0 < heard < long_end
    early = guard.press("tok", "accept", heard - 0.1, two_keys=True, must_be_heard=True)
    assert early.kind == "refused" and early.code == "not_heard"
    step = guard.press("tok", "accept", heard + 0.1, two_keys=True, must_be_heard=True)
    assert step.kind == "confirm_step"
    # Speech about the question that is not its whole (a keys line) never shortens it.
    other = KeyGuard(arming_seconds=1.0, pace_wpm=WPM)
    other.present("tok", 0.0)
    other.speech_started("tok", 0.0, QUESTION)
    other.speech_started("tok", 2.0, KEYS)
    assert other.heard_at() == long_end


def test_a_keys_answer_about_a_question_that_ended_while_it_waited_is_not_said() -> None:
    voice = Voice()
    first = key_answer("Main screen. 1 question waiting.")
    voice.submit(first)
    voice.at(0.5)
    w = key_answer(WHOLE_PLAN, PLAN)
    voice.submit(w)  # waits for the first key's answer
    voice.run(voice.scheduler.question_ended(PLAN, voice.clock.now()))
    voice.play_out()
    assert voice.whole() == [first.text]
    assert voice.scheduler.drops == {"question answered": 1}
