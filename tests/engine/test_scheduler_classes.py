"""Issue 20: three classes of speech, each with its own rule, on an injected clock.

* The agent's words: never skipped, reordered or cut mid-sentence; faster (within the
  user's ``max_rate_factor``) when they pile up.
* Questions: a critical one cuts in at once (issue 30 item 4, test_critical_at_once.py);
  pending status gives way to them; one withdrawn before it was heard is still said, in
  its place, at its urgency.
* Status news: per source "current, then most recent"; a tool's, a plan's or a session's
  final state is always said; what is folded is summarised by kind; nothing older than
  10 s is read as news.

Each test plays the scheduler like a voice: an utterance ends after the time it takes at
the user's rate (``estimated_seconds``), on a clock the test moves.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from hypothesis import given, settings
from hypothesis import strategies as st

from announcer.engine.announcement import Announcement, Urgency
from announcer.engine.pipeline import Engine
from announcer.engine.policy_topics import frame_fold_category
from announcer.engine.scheduler import (
    SpeechScheduler,
    estimated_seconds,
    folded_summary_text,
)
from announcer.engine.settings import UserSettings
from announcer.engine.speech_commands import Cancel, Speak, SpeechCommand

from .aaep import frame

WORDS = "agent.output.streaming"
QUESTION = "agent.awaiting.confirmation"


def words(text: str, session: str = "s1") -> Announcement:
    return Announcement(text, session_id=session, kind=WORDS, event_id=f"w:{text}")


def status(
    text: str, kind: str = "agent.tool.invoked", session: str = "s1", topic: str | None = None
) -> Announcement:
    return Announcement(text, session_id=session, kind=kind, topic=topic, event_id=f"n:{text}")


def question(text: str, session: str = "s1", event_id: str = "q1") -> Announcement:
    return Announcement(
        text,
        urgency=Urgency.CRITICAL,
        interrupt=True,
        session_id=session,
        kind=QUESTION,
        event_id=event_id,
    )


@dataclass
class Heard:
    """One utterance as the user heard it."""

    announcement: Announcement
    started: float
    ended: float | None = None


@dataclass
class Voice:
    """Plays the scheduler's commands: an utterance lasts its estimated time."""

    scheduler: SpeechScheduler
    now: float = 0.0
    heard: list[Heard] = field(default_factory=list)
    cancels: list[str] = field(default_factory=list)
    _ends: dict[int, float] = field(default_factory=dict)

    def take(self, commands: list[SpeechCommand]) -> None:
        for command in commands:
            if isinstance(command, Speak):
                announcement = command.announcement
                wpm = round(self.scheduler.settings.pace_wpm * announcement.rate_factor)
                self._ends[command.utterance_id] = self.now + estimated_seconds(
                    announcement.text, wpm
                )
                self.heard.append(Heard(announcement, self.now))
            elif isinstance(command, Cancel):
                self.cancels.append(command.reason)
                if self.heard:
                    self.heard[-1].ended = self.now

    def submit(self, announcement: Announcement, at: float) -> None:
        self.run_until(at)
        self.take(self.scheduler.submit(announcement, at))

    def run_until(self, moment: float) -> None:
        """Let each utterance end at its time, and the scheduler act when it asks to (a
        critical cut at a word boundary), up to ``moment``."""
        for _ in range(100_000):
            current = self.scheduler.speaking_id
            wake = self.scheduler.next_wakeup()
            end = self._ends[current] if current is not None else None
            if wake is not None and wake <= moment and (end is None or wake < end):
                self.now = max(self.now, wake)
                self.take(self.scheduler.tick(self.now))
                continue
            if current is None or end is None or end > moment:
                break
            self.now = self._ends[current]
            self.heard[-1].ended = self.now
            self.take(self.scheduler.on_done(current, self.now))
        self.now = max(self.now, moment)

    def play_out(self) -> None:
        self.run_until(10_000.0)

    def texts(self) -> list[str]:
        return [h.announcement.text for h in self.heard]


# -- the agent's words ------------------------------------------------------------------


def test_the_agents_words_are_never_dropped_however_many_pile_up() -> None:
    voice = Voice(SpeechScheduler())
    sentences = [f"Sentence {n} of a long answer, with a few more words in it." for n in range(40)]
    for index, text in enumerate(sentences):
        voice.submit(words(text), index * 0.05)
        voice.submit(status(f"Tool {index}.", session="s2"), index * 0.05)
    voice.play_out()
    said = [t for t in voice.texts() if t.startswith("Sentence")]
    assert said == sentences  # every one, in order, once
    assert voice.scheduler.drops.get("stale", 0) == 0
    assert not any("skipped" in text for text in voice.texts())


def test_piled_up_words_are_said_faster_within_the_users_maximum() -> None:
    for limit in (1.5, 1.2):
        voice = Voice(SpeechScheduler(UserSettings(max_rate_factor=limit)))
        for index in range(12):
            voice.submit(words(f"Sentence {index} has exactly ten words in it, no more."), 0.0)
        voice.play_out()
        factors = [h.announcement.rate_factor for h in voice.heard]
        assert factors[0] == 1.0  # nothing waited yet: the user's own rate
        assert max(factors) == limit
        assert factors[-1] == 1.0  # caught up


def test_a_critical_question_cuts_in_over_another_source_after_its_own_words() -> None:
    """Issue 30 item 4 with issue 14 b's lead-up, bounded: a critical question cuts off
    another source at a word boundary, and its own source's words that came before it
    (what it is about, well within the lead-in time) are said first."""
    voice = Voice(SpeechScheduler())
    voice.submit(status("Speaking.", session="s2"), 0.0)
    voice.submit(words("I'll update two files."), 0.2)
    voice.submit(question("Allow the edit?"), 0.3)
    voice.play_out()
    assert voice.texts() == ["Speaking.", "I'll update two files.", "Allow the edit?", "Speaking."]


# -- status news -----------------------------------------------------------------------


def test_status_is_current_then_most_recent_and_folded_by_kind() -> None:
    voice = Voice(SpeechScheduler())
    voice.submit(status("Speaking.", session="s0"), 0.0)
    voice.submit(status("Editing a.py.", topic="edit"), 0.1)
    voice.submit(status("Editing b.py.", topic="edit"), 0.2)
    voice.submit(status("Running ls.", topic="command"), 0.3)
    voice.submit(status("Thinking.", kind="agent.state.changed"), 0.4)
    voice.submit(status("Running pytest.", topic="command"), 0.5)
    voice.play_out()
    assert voice.texts() == [
        "Speaking.",
        "3 more: 2 edits and 1 command.",  # the state change is counted, not named
        "Running pytest.",
    ]
    assert voice.scheduler.drops == {"superseded by newer news": 4}


def test_a_tools_result_and_a_sessions_end_are_always_said() -> None:
    voice = Voice(SpeechScheduler())
    voice.submit(status("Speaking.", session="s0"), 0.0)
    voice.submit(status("Running tests.", topic="command"), 0.1)
    voice.submit(status("Tests failed.", kind="agent.tool.completed", topic="failed"), 0.2)
    voice.submit(status("Thinking.", kind="agent.state.changed"), 0.3)
    voice.submit(status("Done.", kind="agent.session.completed"), 0.4)
    voice.play_out()
    # The start is said by its result; the state change by the end.
    assert voice.texts() == ["Speaking.", "Tests failed.", "Done."]


def test_status_older_than_ten_seconds_is_not_read_as_news() -> None:
    voice = Voice(SpeechScheduler())
    # Another source's long answer keeps the voice busy; status waits between sentences.
    voice.submit(words(" ".join(["word"] * 60), "s2"), 0.0)  # 20 s at 180 wpm
    voice.submit(status("Searching the web."), 0.5)
    voice.submit(status("Found it.", kind="agent.tool.completed"), 0.6)
    voice.submit(status("Now thinking.", kind="agent.state.changed", session="s3"), 0.7)
    voice.play_out()
    texts = voice.texts()
    assert "Now thinking." not in texts  # 20 s old when the voice was free
    assert "Found it." in texts  # a tool's final state, however late
    assert voice.scheduler.drops["stale"] == 1


def test_a_plans_latest_step_and_its_completion_are_said() -> None:
    voice = Voice(SpeechScheduler())
    progress = "agent.progress.updated"
    voice.submit(words(" ".join(["word"] * 60), "s2"), 0.0)
    for step in range(1, 5):
        voice.submit(status(f"Step {step} of 4.", kind=progress, topic="plan"), step * 0.5)
    voice.submit(status("Editing a.py.", topic="edit"), 2.2)
    voice.submit(status("All 4 steps done.", kind=progress, topic="plan_done"), 2.4)
    voice.play_out()
    texts = voice.texts()
    # Each step gave way to the next, the tool call to the plan; the plan's end is said.
    assert texts[1:] == ["1 more: 1 edit.", "All 4 steps done."]
    steps = Voice(SpeechScheduler())
    steps.submit(words(" ".join(["word"] * 60), "s2"), 0.0)
    steps.submit(status("Step 3 of 4.", kind=progress, topic="plan"), 0.5)
    steps.submit(status("Editing a.py.", topic="edit"), 0.6)
    steps.submit(status("Thinking.", kind="agent.state.changed"), 15.0)
    steps.play_out()
    # The latest step is never dropped: not by other news, nor for its age.
    assert steps.texts()[1:] == ["1 more: 1 edit.", "Step 3 of 4.", "Thinking."]


def test_folded_news_of_several_sources_is_summarised_in_one_line() -> None:
    """Issue 20: when several agents work at once, one summary counts what each folded,
    so no source's own news waits behind the other sources' summaries."""
    voice = Voice(SpeechScheduler())
    voice.submit(status("Speaking.", session="s0"), 0.0)
    voice.submit(status("Editing the parser module in src.", topic="edit", session="a"), 0.1)
    voice.submit(status("Running ls.", topic="command", session="a"), 0.2)
    voice.submit(status("Editing the lexer module in src.", topic="edit", session="b"), 0.3)
    voice.submit(status("Running pwd.", topic="command", session="b"), 0.4)
    voice.play_out()
    assert voice.texts() == ["Speaking.", "2 more: 2 edits.", "Running ls.", "Running pwd."]
    assert voice.scheduler.drops == {"superseded by newer news": 2}


def test_status_waits_for_its_own_sources_words_not_for_others() -> None:
    voice = Voice(SpeechScheduler())
    voice.submit(words("First sentence of agent one.", "a"), 0.0)
    voice.submit(words("Second sentence of agent one.", "a"), 0.1)
    voice.submit(status("Agent one edits a file.", session="a"), 0.2)
    voice.submit(status("Agent two runs a command.", session="b"), 0.3)
    voice.play_out()
    texts = voice.texts()
    # Agent two's news goes at the next sentence boundary; agent one's after its words.
    assert texts == [
        "First sentence of agent one.",
        "Agent two runs a command.",
        "Second sentence of agent one.",
        "Agent one edits a file.",
    ]


def test_a_summary_is_in_the_listeners_language() -> None:
    voice = Voice(SpeechScheduler(UserSettings(languages=["fr"])))
    voice.submit(status("Speaking.", session="s0"), 0.0)
    for index in range(3):
        voice.submit(status(f"Edit {index}.", topic="edit"), 0.1)
    voice.play_out()
    assert voice.texts()[1] == "2 de plus : 2 modifications."


def result(text: str, session: str, language: str = "en") -> Announcement:
    return Announcement(
        text,
        language=language,
        session_id=session,
        kind="agent.tool.completed",
        event_id=f"r:{session}",
    )


SAID_TOGETHER = "said with other agents' same news"


def test_the_same_final_state_of_several_agents_is_said_once_with_their_count() -> None:
    """Issue 20: three agents end alike while the voice is busy. The listener hears one line
    with their count, at once, not the same sentence three times with the last agent's
    final state waiting behind the other two."""
    voice = Voice(SpeechScheduler())
    voice.submit(status("Speaking.", session="s0"), 0.0)
    for at, session in ((0.1, "a"), (0.2, "b"), (0.3, "c")):
        voice.submit(result("The transfer went through.", session), at)
    voice.play_out()
    assert voice.texts() == ["Speaking.", "3 agents: The transfer went through."]
    line = voice.heard[1].announcement
    assert (line.session_id, line.event_id, line.said_for) == ("a", "r:a", ("r:b", "r:c"))
    assert line.kind == "agent.tool.completed"
    assert voice.scheduler.drops == {SAID_TOGETHER: 2}  # counted, never in silence
    assert voice.scheduler.queued() == 0


def test_a_final_state_joins_another_only_at_its_own_sources_turn() -> None:
    """Order within a source holds: agent b's result waits for b's earlier words, and is
    joined (said with a's) only once nothing of b comes before it."""
    voice = Voice(SpeechScheduler())
    voice.submit(status("Speaking.", session="s0"), 0.0)
    voice.submit(words("Agent b is almost done.", "b"), 0.1)
    voice.submit(result("Tests passed.", "b"), 0.2)
    voice.submit(result("Tests passed.", "a"), 0.3)
    voice.play_out()
    assert voice.texts() == ["Speaking.", "Agent b is almost done.", "2 agents: Tests passed."]
    assert voice.heard[2].announcement.said_for == ("r:a",)
    # Held back by b's words, a's result is said alone first: b's then follows alone.
    early = Voice(SpeechScheduler())
    early.submit(status("Speaking.", session="s0"), 0.0)
    early.submit(result("Tests passed.", "a"), 0.1)
    early.submit(words("Agent b is almost done.", "b"), 0.2)
    early.submit(result("Tests passed.", "b"), 0.3)
    early.play_out()
    assert early.texts() == [
        "Speaking.",
        "Tests passed.",
        "Agent b is almost done.",
        "Tests passed.",
    ]
    assert SAID_TOGETHER not in early.scheduler.drops


def test_an_agents_later_news_ages_from_the_line_that_said_its_final_state() -> None:
    """Order within a source: agent b's news after its result could not be said before the
    line that said that result (with a's) ended, so it is not stale then, as it would not
    be had b's result been said alone."""
    voice = Voice(SpeechScheduler())
    voice.submit(words(" ".join(["word"] * 30), "s0"), 0.0)  # 10.25 s at 180 wpm
    voice.submit(result("Tests passed.", "a"), 0.1)
    voice.submit(result("Tests passed.", "b"), 0.2)
    voice.submit(status("Thinking about the next step.", "agent.state.changed", "b"), 0.3)
    voice.play_out()
    assert voice.texts()[1:] == ["2 agents: Tests passed.", "Thinking about the next step."]
    assert voice.heard[2].started > 10.3  # older than 10 s from its arrival, fresh in order
    assert "stale" not in voice.scheduler.drops


def test_only_the_same_words_in_the_listeners_language_are_said_together() -> None:
    voice = Voice(SpeechScheduler())
    voice.submit(status("Speaking.", session="s0"), 0.0)
    voice.submit(result("Tests passed.", "a"), 0.1)
    voice.submit(result("Tests failed.", "b"), 0.2)
    voice.submit(result("Tests passed.", "c", language="de"), 0.3)
    voice.submit(result("Tests passed.", "d", language="de"), 0.4)
    voice.play_out()
    # Different words are each said; the count is said in the listener's language (English
    # here), so the German agents' lines keep their own voice, one each.
    assert voice.texts() == [
        "Speaking.",
        "Tests passed.",
        "Tests failed.",
        "Tests passed.",
        "Tests passed.",
    ]
    french = Voice(SpeechScheduler(UserSettings(languages=["fr"])))
    french.submit(status("Parle.", session="s0"), 0.0)
    french.submit(result("Le virement est passé.", "a", language="fr"), 0.1)
    french.submit(result("Le virement est passé.", "b", language="fr-CA"), 0.2)
    french.play_out()
    # fr-CA is a different tag: the words must be the same in the same language.
    assert french.texts()[1:] == ["Le virement est passé.", "Le virement est passé."]
    french = Voice(SpeechScheduler(UserSettings(languages=["fr"])))
    french.submit(status("Parle.", session="s0"), 0.0)
    french.submit(result("Le virement est passé.", "a", language="fr"), 0.1)
    french.submit(result("Le virement est passé.", "b", language="fr"), 0.2)
    french.play_out()
    assert french.texts()[1:] == ["2 agents : Le virement est passé."]


# -- through the engine ------------------------------------------------------------------


def test_a_held_sentence_is_said_before_the_tool_call_that_follows_it() -> None:
    """Item 4: a finished sentence held 0.3 s for a pause no longer loses to a tool call."""
    engine = Engine()
    said: list[str] = []

    def take(commands: list[SpeechCommand]) -> None:
        said.extend(c.announcement.text for c in commands if isinstance(c, Speak))

    take(engine.receive(frame("agent.session.started", summary_normal="Started."), "c", 0.0))
    chunk = frame(
        "agent.output.streaming",
        chunk="I'll update two files. ",
        output_id="out_0001",
        position=0,
        complete=False,
    )
    take(engine.receive(chunk, "c", 0.1))
    tool = frame(
        "agent.tool.invoked", tool="edit", tool_call_id="call_0001", summary_normal="Calling edit."
    )
    take(engine.receive(tool, "c", 0.2))
    queued = [a.text for a in engine.scheduler.queued_announcements()]
    assert said + queued == ["Started.", "I'll update two files.", "Calling edit."]


# -- the property ------------------------------------------------------------------------

EVENT = st.tuples(
    st.sampled_from(["words", "question", "status", "result", "state", "plan"]),
    st.sampled_from(["a", "b", "c"]),
    st.floats(min_value=0.0, max_value=3.0),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(EVENT, min_size=1, max_size=40), st.sampled_from([180, 300, 450]))
def test_no_word_is_dropped_every_question_is_said_and_final_states_are_said(
    events: list[tuple[str, str, float]], wpm: int
) -> None:
    voice = Voice(SpeechScheduler(UserSettings(pace_wpm=wpm)))
    now = 0.0
    expected_words: list[str] = []
    questions: list[str] = []
    final: dict[str, str] = {}
    for index, (what, source, gap) in enumerate(events):
        now += gap
        if what == "words":
            text = f"Sentence {index} from {source}."
            expected_words.append(text)
            voice.submit(words(text, source), now)
        elif what == "question":
            text = f"Question {index}?"
            questions.append(text)
            voice.submit(question(text, source, event_id=f"q{index}"), now)
        elif what == "result":
            text = f"Result {index}."
            final[source] = text
            voice.submit(status(text, "agent.tool.completed", source, topic="failed"), now)
        elif what == "state":
            voice.submit(status(f"State {index}.", "agent.state.changed", source), now)
        elif what == "plan":
            voice.submit(status(f"Step {index}.", "agent.progress.updated", source, "plan"), now)
        else:
            voice.submit(status(f"Tool {index}.", "agent.tool.invoked", source), now)
    voice.play_out()
    texts = voice.texts()
    heard_words = [t for t in texts if t.startswith("Sentence")]
    # Every word, once each, in order per source.
    assert sorted(set(heard_words)) == sorted(expected_words)
    for source in "abc":
        mine = [t for t in expected_words if t.endswith(f"from {source}.")]
        assert [t for t in dict.fromkeys(heard_words) if t in mine] == mine
    assert all(q in texts for q in questions)
    assert all(result in texts for result in final.values())
    assert not any("skipped" in t for t in texts)
    assert voice.scheduler.queued() == 0


SAME_END = st.tuples(
    st.sampled_from(["words", "question", "result", "state", "end"]),
    st.sampled_from(["a", "b", "c", "d"]),
    st.floats(min_value=0.0, max_value=2.0),
    st.sampled_from(["Tests passed.", "Build failed."]),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(SAME_END, min_size=1, max_size=40), st.sampled_from([180, 300]))
def test_each_sources_final_state_is_heard_when_agents_end_alike(
    events: list[tuple[str, str, float, str]], wpm: int
) -> None:
    """Whatever the interleaving, each result and session end is heard: as itself, or in
    one line with the same words of other agents ("2 agents: Tests passed."), which names
    its event, is counted right, and comes after everything its source said before it."""
    voice = Voice(SpeechScheduler(UserSettings(pace_wpm=wpm)))
    now = 0.0
    finals: dict[str, tuple[str, str]] = {}  # event id -> (source, words)
    arrival: dict[str, int] = {}
    expected_words: list[str] = []
    for index, (what, source, gap, text) in enumerate(events):
        now += gap
        event_id = f"e{index}"
        arrival[event_id] = index
        if what == "words":
            expected_words.append(f"Sentence {index} from {source}.")
            announcement = words(expected_words[-1], source)
            announcement.event_id = event_id
        elif what == "question":
            announcement = question(f"Question {index}?", source, event_id=event_id)
        elif what == "state":
            announcement = status(f"State {index}.", "agent.state.changed", source)
            announcement.event_id = event_id
        else:
            kind = "agent.tool.completed" if what == "result" else "agent.session.completed"
            announcement = Announcement(text, session_id=source, kind=kind, event_id=event_id)
            finals[event_id] = (source, text)
        voice.submit(announcement, now)
    voice.play_out()
    heard_at: dict[str, int] = {}
    for position, heard in enumerate(voice.heard):
        line = heard.announcement
        for event_id in (line.event_id, *line.said_for):
            if event_id is not None:
                heard_at.setdefault(event_id, position)
        if line.said_for:
            count = len(line.said_for) + 1
            assert line.text == f"{count} agents: {finals[line.event_id or ''][1]}"
            sources = {finals[e][0] for e in (line.event_id or "", *line.said_for)}
            assert len(sources) == count  # one per agent
            assert all(finals[e][1] == finals[line.event_id or ""][1] for e in line.said_for)
    said = {e: p for e, p in heard_at.items() if e in finals}
    # A tool's result is said by its source's newer result at most; a session's end always.
    last_result: dict[str, str] = {}
    for event_id, (source, _) in finals.items():
        if event_id.startswith("e") and events[arrival[event_id]][0] == "result":
            last_result[source] = event_id
        else:
            assert event_id in said
    assert all(event_id in said for event_id in last_result.values())
    # Order within a source: a final state is heard after its source's earlier words.
    for event_id, position in said.items():
        source = finals[event_id][0]
        for other, other_position in heard_at.items():
            what, other_source = events[arrival[other]][:2]
            if what == "words" and other_source == source and arrival[other] < arrival[event_id]:
                assert other_position < position
    heard_words = [h.announcement.text for h in voice.heard if h.announcement.kind == WORDS]
    assert sorted(set(heard_words)) == sorted(expected_words)
    assert voice.scheduler.queued() == 0


def test_an_aaep_plan_at_its_end_is_said_as_all_steps_done() -> None:
    """Issue 20: progress at 100 percent with its step count says the plan is done, every
    step reaches the scheduler (no more "progress too frequent"), in the user's language."""
    for language, expected in (("en", "All 4 steps done."), ("de", "Alle 4 Schritte erledigt.")):
        engine = Engine(UserSettings(languages=[language]))
        said: list[str] = []
        for step, at in ((3, 0.0), (4, 0.5)):
            progress = {"step": step, "total_steps": 4}
            commands = engine.receive(frame("agent.progress.updated", progress=progress), "c", at)
            said += [c.announcement.text for c in commands if isinstance(c, Speak)]
        done = {"percent": 100, "step": 4, "total_steps": 4}
        engine.receive(frame("agent.progress.updated", progress=done), "c", 1.0)
        queued = [a.text for a in engine.scheduler.queued_announcements()]
        assert engine.policy.suppressed.get("progress too frequent", 0) == 0
        assert (said + queued)[-1] == expected


def test_a_runaway_stream_of_words_keeps_memory_bounded_and_says_so() -> None:
    """Past MAX_QUEUED_SENTENCES (about 50 minutes of speech) the oldest waiting sentence
    goes, counted and shown: never silently, and never below that bound."""
    from announcer.engine.scheduler import MAX_QUEUED_SENTENCES

    scheduler = SpeechScheduler()
    shown: list[str] = []
    scheduler.on_skip = lambda announcement: shown.append(announcement.text)
    for index in range(MAX_QUEUED_SENTENCES + 3):
        scheduler.submit(words(f"Sentence {index}."), 0.0)
    assert scheduler.queued() == MAX_QUEUED_SENTENCES
    assert scheduler.drops == {"too much queued speech": 2}
    assert shown == ["Sentence 1.", "Sentence 2."]  # the first is being said


# -- the reader's flood guard (runtime/session.py) ---------------------------------------


def test_news_skipped_unread_in_a_flood_is_counted_by_kind() -> None:
    """Issue 20: "3 more: 2 edits and 1 command.", never "3 more updates skipped", from
    the envelope alone (a skipped frame is never validated)."""

    def envelope(kind: str, **fields: object) -> dict[str, object]:
        return {"type": f"aaep:{kind}", "producer": {"agent_id": "flooder"}, **fields}

    frames = [
        envelope("agent.tool.invoked", tool="Edit"),
        envelope("agent.tool.completed", tool="mcp__files__write"),
        envelope("agent.tool.invoked", tool="bash"),
        envelope("agent.state.changed"),
    ]
    counts = Counter(map(frame_fold_category, frames))
    assert folded_summary_text(counts, "en") == "3 more: 2 edits and 1 command."
    assert folded_summary_text(counts, "fr") == "3 de plus : 2 modifications et 1 commande."
    # A flood of state changes alone is still said by kind.
    states = Counter(map(frame_fold_category, frames[3:] * 2))
    assert folded_summary_text(states, "en") == "2 more: 2 state changes."
    assert frame_fold_category({"type": "aaep:agent.progress.updated"}) == "plan"
    assert frame_fold_category({"type": 7}) == "update"


def test_a_summary_cut_off_by_the_answer_to_a_key_is_not_said_again() -> None:
    """Issue 31 item 11: "1 more: 1 file read." was said, cut off by the answer to the
    user's key (a message's echo), and said again whole right after it."""
    voice = Voice(SpeechScheduler())
    voice.submit(words(" ".join(["word"] * 30), "s2"), 0.0)
    voice.submit(status("Reading the notes file in docs.", topic="read"), 0.1)
    voice.submit(status("Thinking.", kind="agent.state.changed"), 0.2)
    voice.run_until(voice.now + 1.0)
    for _ in range(400):  # until the summary starts
        if voice.heard and "more:" in voice.heard[-1].announcement.text:
            break
        voice.run_until(voice.now + 0.05)
    assert voice.texts()[-1] == "1 more: 1 file read."
    voice.submit(Announcement("Sent to Claude Agent: hello", kind="system.ui"), voice.now + 0.2)
    assert voice.cancels == ["user key"]
    voice.submit(status("Editing the lexer.", topic="edit"), voice.now + 3.0)
    voice.play_out()
    assert voice.texts()[1:] == [
        "1 more: 1 file read.",
        "Sent to Claude Agent: hello",
        "Editing the lexer.",
    ]
    assert voice.scheduler.drops["interrupted"] == 1
