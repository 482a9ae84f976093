"""The whole path at the pace of a real voice (issue 14, item 4).

The demo producer (``ProducerCore`` playing ``tour``) and the bundled recordings run
through the engine, the speech driver and the ``paced`` backend on a simulated
clock: each utterance lasts as long as it would at 180 or 350 words a minute, and a
simulated user answers each question a second after hearing it, presses a wrong
key first, and asks "where am I" while the agent talks. The checks are on what the
user heard, in order.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from announcer.engine.settings import UserSettings
from tests.engine.aaep import chunk, confirmation, frame
from tests.support.pace_replay import (
    PaceReport,
    acp_session_frames,
    agent_session_frames,
    bundled_recording,
    busy_recording,
    recorded_frames,
    run_demo,
    run_recording,
)

RATES = (180, 350)
# A real agent's turn recorded in the lab (tests/lab/test_pace_plan_lab.py), its ACP messages
LAB_SESSION = Path(__file__).parents[2] / "benchmarks" / "data" / "lab_plan_session.jsonl"


def set_of_first(report: PaceReport) -> list[str]:
    """Each event's speech once (an utterance cut off by a key is said again)."""
    seen: set[tuple[str | None, str]] = set()
    texts = []
    for utterance in report.heard:
        key = (utterance.announcement.event_id, utterance.announcement.text)
        if key not in seen:
            seen.add(key)
            texts.append(utterance.announcement.text)
    return texts


def index_of(report: PaceReport, start: str) -> int:
    texts = report.texts()
    return next(i for i, text in enumerate(texts) if text.startswith(start))


@pytest.fixture(scope="module", params=RATES)
def demo(request: pytest.FixtureRequest) -> PaceReport:
    return run_demo(UserSettings(pace_wpm=request.param))


def test_the_demo_is_heard_in_each_sessions_order_with_nothing_stale(demo: PaceReport) -> None:
    assert demo.stale == []
    assert demo.out_of_order == []


def test_in_the_demo_urgent_news_is_heard_at_once_and_the_trip_ends_in_order(
    demo: PaceReport,
) -> None:
    """Issue 30 items 4 and 5: every critical event starts within half a second of
    arriving (less other urgent speech, answers to keys, and what its own session says
    first by rule); "Trip planned." comes before the weather session's start (ordinary
    news of a later session), though after that session's error (urgent)."""
    assert demo.critical_delays and max(demo.critical_delays) <= 0.5
    ended = index_of(demo, "Trip planned. Session complete.")
    assert ended < index_of(demo, "New session: checking the weather")


def test_in_the_demo_the_booking_result_comes_before_the_next_question(
    demo: PaceReport,
) -> None:
    """Issue 30's listener: "Booked. Reference LYO 4821." (the result of the user's own
    approval) and "Found three trains…" (which the first question went before) are heard
    before the next question; nothing is put off twice."""
    next_question = index_of(demo, "Question. What name should the hotel booking use?")
    assert index_of(demo, "Booked. Reference LYO 4821.") < next_question
    assert index_of(demo, "Found three trains") < next_question


def test_in_the_demo_the_withdrawn_question_leaves_no_keys_behind(demo: PaceReport) -> None:
    """Issue 14 c: "Press A to accept" came 10 s after the question was withdrawn."""
    heard = demo.heard
    voided = [u for u in heard if u.announcement.kind == "system.prompt_voided"]
    assert voided, "the tour withdraws its insurance question after 4 seconds"
    about_questions = [u for u in heard if u.announcement.event_id in demo.ended]
    for utterance in about_questions:
        announcement = utterance.announcement
        if announcement.kind.startswith("system.prompt_"):
            continue  # why it ended
        # The question, its keys and its time left: only before the question ended.
        assert utterance.started <= demo.ended[announcement.event_id or ""], announcement.text
    keys = [u for u in about_questions if u.announcement.text.endswith("or R to reject.")]
    assert keys, "the dialog's keys were heard for the questions still open"


def test_in_the_demo_the_answers_to_keys_come_at_once(demo: PaceReport) -> None:
    """Issue 14 d: an acknowledgement came 21 s late, a refusal 43 s late."""
    assert len(demo.reply_delays) >= 10  # a wrong key and "Sent." per question, and more
    # At once, or after at most the rest of a short message being read.
    assert max(demo.reply_delays) <= 4.0


def test_in_the_demo_every_question_is_heard_and_answered(demo: PaceReport) -> None:
    texts = demo.texts()
    assert sum(text == "Sent." for text in texts) == 5  # 1 confirmation, 4 clarifications
    assert texts.index("Sent.") > index_of(demo, "Confirmation needed. Book the 9:04 train")


@pytest.mark.parametrize("wpm", RATES)
def test_a_busy_recording_is_heard_in_order_with_a_bounded_delay(wpm: int) -> None:
    """Issue 14 e and 20: six sessions at once; older status folds, the words are all said."""
    report = run_recording(busy_recording(), UserSettings(pace_wpm=wpm))
    assert report.stale == []
    assert report.out_of_order == []
    # What was folded is said by kind, never as a bare "N more updates skipped".
    assert not any("skipped" in text for text in report.texts())
    classes = report.classes()
    assert classes["words"] == {**classes["words"], "sentences": 18, "dropped": 0}  # type: ignore[dict-item]
    assert report.unheard == 0  # everything was heard or counted in a summary
    # "done" is never skipped, however late: each of the three transfers is heard to end.
    assert sum(t.startswith("All done.") for t in set_of_first(report)) == 3
    # No count of waiting questions after every question had ended.
    last_ended = max(report.ended.values())
    assert not [
        u
        for u in report.heard
        if u.announcement.kind == "system.prompts_waiting" and u.started > last_ended
    ]
    # Issue 30 item 4: each error is said at once (no longer after its session's start,
    # issue 14 a); every session's start is still heard.
    texts = report.texts()
    assert sum(t.startswith("Harbor Bank Assistant is exporting") for t in set(texts)) >= 1
    assert sum(t.startswith("Error.") for t in texts) == 3
    # Issue 20: each class by its rule. Questions start at the next sentence boundary
    # (and after their own source's earlier words); the words are never dropped. Status
    # here waits behind five questions withdrawn unheard, each said whole at critical
    # (time given way by rule): the 3 s target holds at 350 words a minute; at
    # 180 benchmarks/pace.py reports how near it is (a regression bound here).
    # Issue 30 item 4: status now waits behind about 60 s of urgent speech said at once
    # (five questions withdrawn unheard, three errors) instead of going before it as its
    # lead-up: a regression bound here, benchmarks/listen.py reports the listener's view.
    assert classes["questions"]["p95_s"] <= 1.0  # type: ignore[index]
    assert classes["status"]["p95_s"] <= (16.0 if wpm == 180 else 11.0)  # type: ignore[index]
    assert classes["status"]["p50_s"] <= 1.0  # type: ignore[index]


@pytest.mark.parametrize("wpm", RATES)
def test_the_bundled_recording_keeps_order_and_never_reads_a_void_question(wpm: int) -> None:
    report = run_recording(recorded_frames(bundled_recording()), UserSettings(pace_wpm=wpm))
    assert report.stale == []
    assert report.out_of_order == []
    # Issue 30 item 4: the export's error is said at once, its session's start after it
    # (fitted to a status line at 180 words a minute, issue 20).
    assert report.critical_delays and max(report.critical_delays) <= 0.5
    statement_started = index_of(report, "Harbor Bank Assistant is exporting your May statement")
    assert statement_started > index_of(report, "Error.")


SCENARIOS = sorted(
    (Path(__file__).parents[1] / "producer" / "scenarios").glob("*.json"), key=lambda p: p.name
)


@pytest.mark.parametrize("wpm", RATES)
@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda path: path.stem)
def test_every_test_scenario_keeps_order_and_says_nothing_stale(scenario: Path, wpm: int) -> None:
    report = run_demo(UserSettings(pace_wpm=wpm), scenario=str(scenario))
    assert report.heard, "something was said"
    assert report.stale == []
    assert report.out_of_order == []


# -- issue 20: the three classes of speech, end to end -----------------------------------

FIXTURES = Path("/work/shared/aaep/fixtures")
REFERENCE_RUN = FIXTURES / "captured-minimal-producer-confirmation-run.jsonl"


def _records(
    frames: list[tuple[float, dict[str, object]]], settings: UserSettings
) -> tuple[PaceReport, list[dict[str, object]]]:
    """The replay, and the jsonl speech record of what the user heard."""
    stream = io.StringIO()
    report = run_recording(frames, settings, record=stream)
    records = [json.loads(line) for line in stream.getvalue().splitlines()]
    return report, [r for r in records if r["action"] == "speak"]


@pytest.mark.parametrize("wpm", (180, 300))
def test_a_coding_agents_long_answer_and_plan_are_heard_whole(wpm: int) -> None:
    """Every sentence of a 14-sentence markdown answer is in the speech record, in order,
    the intro before the tools it introduces, and the plan's completion is said."""
    report, spoken = _records(agent_session_frames(), UserSettings(pace_wpm=wpm))
    texts = [str(r["text"]) for r in spoken]
    classes = report.classes()
    assert classes["words"]["dropped"] == 0  # type: ignore[index]
    assert classes["words"]["sentences"] == 14  # type: ignore[index]
    assert report.out_of_order == []
    answer = [
        "I'll update two files and then run the tests.",
        "What I changed.",
        "Three things changed:",
        "1: The parser now keeps the last line of a file that has no final newline.",
        "2: The --strict flag is checked before any file is opened, so a typo fails fast.",
        "3: Error messages name the file and the line, as in app.py:12.",
        "The tests pass: 214 passed and 3 skipped in 9.4 seconds.",
        "Shall I push the branch so you can open a pull request?",
    ]
    said = [t for t in dict.fromkeys(texts) if t in answer]
    assert said == answer
    # The intro sentence comes before the first tool it introduces.
    first_tool = next(
        i for i, t in enumerate(texts) if t.startswith(("Edit", "Read", "Uv run")) or " more: " in t
    )
    assert texts.index(answer[0]) < first_tool
    # Issue 30 item 4: the question cuts in at once (no longer after the whole answer
    # that leads to it, 25 s of speech); the answer is still said whole, in order.
    assert report.critical_delays and max(report.critical_delays) <= 0.5
    asked = next(i for i, t in enumerate(texts) if t.startswith("Confirmation needed."))
    assert texts.index(answer[0]) < asked
    assert "All 4 steps done." in texts
    assert not any(" more updates skipped" in t or " more update skipped" in t for t in texts)


def _reference_run(
    verbosity: str, path: Path = REFERENCE_RUN
) -> tuple[PaceReport, list[dict[str, object]]]:
    frames = recorded_frames(path.read_text(encoding="utf-8").splitlines())
    return _records(frames, UserSettings(verbosity=verbosity))  # type: ignore[arg-type]


@pytest.mark.skipif(not REFERENCE_RUN.exists(), reason="the shared AAEP fixtures are not here")
@pytest.mark.parametrize(
    "recording", sorted(FIXTURES.glob("*.jsonl")) or [REFERENCE_RUN], ids=lambda p: p.stem
)
def test_every_recorded_run_says_different_words_at_terse_and_detailed(recording: Path) -> None:
    _, terse = _reference_run("terse", recording)
    _, detailed = _reference_run("detailed", recording)

    def lines(records: list[dict[str, object]]) -> list[str]:
        # What the agent's events said, once each (not the simulated user's own keys,
        # nor a line said again after a key cut it off).
        return list(dict.fromkeys(str(r["text"]) for r in records if r["event_id"] is not None))

    assert lines(terse) != lines(detailed)
    # Detailed says more: a line terse does not have.
    assert set(lines(detailed)) - set(lines(terse))


@pytest.mark.skipif(not REFERENCE_RUN.exists(), reason="the shared AAEP fixtures are not here")
def test_a_critical_question_withdrawn_unheard_is_said_at_critical_before_the_answer() -> None:
    """The recorded confirmation is voided before a voice could read it: it is still said,
    whole, at its urgency and in its place, before the agent's answer; never "No answer
    needed any more" about a question the user never heard."""
    _, spoken = _reference_run("normal")
    texts = [str(r["text"]) for r in spoken]
    withdrawn = next(i for i, t in enumerate(texts) if t.startswith("Withdrawn before you could"))
    assert spoken[withdrawn]["urgency"] == "critical"
    assert "Call send_email with arguments" in texts[withdrawn]
    assert withdrawn < texts.index("Here's what I found.")
    assert not any(t.startswith("No answer needed any more") for t in texts)


@pytest.mark.parametrize("wpm", RATES)
def test_a_real_agents_recorded_plan_tools_question_and_long_answer_at_pace(wpm: int) -> None:
    """Issue 20: claude-agent-acp's recorded turn (a plan, a read, a command it asked about,
    the plan done, a long markdown answer) through announcer's ACP mapping and the paced
    backend: every sentence of the answer is in the jsonl speech record, in order, once."""
    from tests.lab.plan_scenario import PLAN_SENTENCES

    record = io.StringIO()
    frames = acp_session_frames(LAB_SESSION.read_text(encoding="utf-8").splitlines())
    report = run_recording(frames, UserSettings(pace_wpm=wpm), record=record)
    spoken = [
        str(line["text"])
        for line in map(json.loads, record.getvalue().splitlines())
        if line["action"] == "speak"
    ]
    answer = [t for t in spoken if any(t.startswith(s[:-1]) for s in PLAN_SENTENCES)]
    ordered = [next(s for s in PLAN_SENTENCES if t.startswith(s[:-1])) for t in answer]
    # Each in order (one a key cut off is said again whole, right after the key's answer).
    assert list(dict.fromkeys(ordered)) == PLAN_SENTENCES
    assert ordered == sorted(ordered, key=PLAN_SENTENCES.index)
    assert any(t.startswith("Confirmation needed.") for t in spoken), spoken
    assert any(t.startswith("All 3 steps done") for t in spoken), spoken
    assert not any("skipped" in t for t in spoken)
    classes = report.classes()
    assert classes["words"]["dropped"] == 0  # type: ignore[index]
    assert classes["stale"] == 0 and classes["out_of_order"] == 0
    assert classes["questions"]["p95_s"] <= 1.0  # type: ignore[index]
    assert classes["status"]["p95_s"] <= 3.0  # type: ignore[index]


def _speech_record(
    frames: list[tuple[float, dict[str, object]]], wpm: int
) -> list[dict[str, object]]:
    stream = io.StringIO()
    run_recording(frames, UserSettings(pace_wpm=wpm), record=stream)
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def _asked(records: list[dict[str, object]]) -> int:
    return next(
        i
        for i, r in enumerate(records)
        if r["action"] == "speak" and str(r["text"]).startswith("Confirmation needed.")
    )


@pytest.mark.parametrize("wpm", (180, 300))
def test_a_question_follows_its_own_lead_up_within_the_lead_in_time(wpm: int) -> None:
    """Issue 14 b bounded by issue 30: in the jsonl speech record the agent's sentences
    that came before its permission question (what it is about) are heard first, none cut
    off; the question starts within the lead-in time (10 s) and half a second."""
    frames = agent_session_frames()
    arrived = next(t for t, f in frames if str(f["type"]).endswith("awaiting.confirmation"))
    records = _speech_record(frames, wpm)
    asked = _asked(records)
    assert records[asked]["urgency"] == "critical"
    started = float(records[asked]["t"])  # type: ignore[arg-type]
    assert arrived <= started <= arrived + 10.0 + 0.5
    between = [
        r
        for r in records[:asked]
        if float(r["t"]) >= arrived  # type: ignore[arg-type]
    ]
    assert not [r for r in between if r["action"] == "cancel"]
    # What went before it in that time is its lead-up: its own agent's words and news.
    session = records[asked]["session_id"]
    assert between and all(r["session_id"] == session for r in between)


@pytest.mark.parametrize("wpm", (180, 300))
def test_a_critical_question_cuts_in_within_half_a_second_in_the_speech_record(wpm: int) -> None:
    """Issue 30 item 4, end to end through the paced backend: another agent's long answer
    is being said when the permission question arrives; in the jsonl speech record it is
    cancelled, the question starts within 0.5 s of its arrival (its own session had
    nothing waiting), and the cancelled sentence is said again whole afterwards."""
    talk = (
        "Meanwhile the other agent explains at some length what it found in the logs "
        "of the nightly build, and why it matters to the release."
    )
    arrived = 1.0
    frames = [
        (
            0.0,
            json.loads(frame("agent.session.started", session="sess_talk", summary_normal="Go.")),
        ),
        (0.2, json.loads(chunk(talk, 0, complete=True, hint="sentence", session="sess_talk"))),
        (arrived, json.loads(confirmation(session="sess_ask"))),
    ]
    records = _speech_record(frames, wpm)
    asked = _asked(records)
    assert records[asked]["urgency"] == "critical" and records[asked]["interrupt"] is True
    started = float(records[asked]["t"])  # type: ignore[arg-type]
    assert arrived <= started <= arrived + 0.5
    cancelled = records[asked - 1]
    assert cancelled["action"] == "cancel"
    assert "Meanwhile the other agent" in str(cancelled["text"])
    # The sentence it cut off is said again whole after it (never dropped).
    said_after = [str(r["text"]) for r in records[asked + 1 :] if r["action"] == "speak"]
    assert cancelled["text"] in said_after
