"""No unexplained silence (issue 33, item 3): a long silent tool run is broken by one
short "Still working: ..., N seconds." with a quiet earcon; never over a question.

The whole path of ``announcer agent``: the ACP mapping's events into the engine through
the one EngineHost, speech through the driver into the paced backend, whose utterances
last as long as at the user's rate, on a simulated clock (never wall time).
"""

from __future__ import annotations

import json
import re
from itertools import pairwise
from typing import Any

from announcer.engine.earcons import Earcon
from announcer.engine.pipeline import Engine
from announcer.engine.prompts import UserAnswer
from announcer.engine.replies import ReplyReady
from announcer.engine.settings import UserSettings
from announcer.engine.speech_commands import Speak
from announcer.formats.acp import AcpAdapter
from announcer.formats.acp_tools import RUNNING_QUIET_SECONDS
from tests.support.pace_replay import PaceReport, run_recording

ORIGIN = 1_800_000_000.0
STILL = re.compile(r"^Still working: npm test, (\d+) seconds\.$")


def _update(kind: str, /, **fields: Any) -> dict[str, Any]:
    return {"sessionId": "s1", "update": {"sessionUpdate": kind, **fields}}


def _turn(tool_seconds: float) -> list[tuple[float, dict[str, Any]]]:
    """An ACP turn: a command that runs ``tool_seconds`` in silence, then the turn's end."""
    adapter = AcpAdapter("Claude Code", "claude-code")
    frames: list[tuple[float, dict[str, Any]]] = []

    def take(at: float, output: Any) -> None:
        assert not output.diagnostics, output.diagnostics
        frames.extend((at, event) for event in output.events)

    take(0.0, adapter.session_opened("s1", "/home/ada/project", ORIGIN))
    take(0.1, adapter.prompt_sent("s1", ORIGIN + 0.1))
    call = {"toolCallId": "t1", "title": "npm test", "kind": "execute"}
    take(1.0, adapter.update(_update("tool_call", status="in_progress", **call), ORIGIN + 1))
    # the transport's timer: a running call no question claimed is said
    quiet = 1.0 + RUNNING_QUIET_SECONDS
    take(quiet, adapter.flush_running(ORIGIN + quiet))
    end = 1.0 + tool_seconds
    done = _update("tool_call_update", toolCallId="t1", status="completed")
    take(end, adapter.update(done, ORIGIN + end))
    take(end + 0.5, adapter.turn_ended("s1", "end_turn", ORIGIN + end + 0.5))
    return frames


def _still(report: PaceReport) -> list[Any]:
    return [u for u in report.heard if u.announcement.kind == "system.still_working"]


def test_a_60_second_silent_tool_run_is_broken_by_one_short_still_working() -> None:
    report = run_recording(_turn(60.0), UserSettings(pace_wpm=180), idle_keys=False)
    (notice,) = _still(report)
    match = STILL.match(notice.announcement.text)
    assert match, notice.announcement.text
    assert notice.announcement.earcon == Earcon.STILL_WORKING
    # after 30 s in which nothing at all was said, counted from the end of the last words
    before = [u for u in report.heard if u.started < notice.started]
    last_end = max((u.ended or u.started + u.seconds) for u in before)
    assert notice.started - last_end >= 30.0 - 1e-6
    assert notice.started - last_end < 31.0
    # the seconds said are the command's, from its start
    assert abs(int(match.group(1)) - (notice.started - 1.0)) <= 2
    # and the turn's end still follows
    assert report.texts()[-1] == "Claude Code finished the turn."


def test_the_interval_is_a_setting_and_zero_turns_it_off() -> None:
    assert _still(run_recording(_turn(20.0), UserSettings(), idle_keys=False)) == []
    every_ten = run_recording(_turn(60.0), UserSettings(silence_notice_seconds=10), idle_keys=False)
    said = _still(every_ten)
    # 60 s of silence: a notice after 10 s, the next 20 s after it (each next one in the
    # same silence waits twice as long), the third would come 40 s later, past the end.
    assert len(said) == 2, [u.announcement.text for u in said]
    starts = [u.started for u in said]
    assert all(later - earlier >= 20.0 for earlier, later in pairwise(starts))
    off = run_recording(_turn(60.0), UserSettings(silence_notice_seconds=0), idle_keys=False)
    assert _still(off) == []
    assert UserSettings().silence_notice_seconds == 30.0


def test_never_over_a_question_and_again_once_it_is_answered() -> None:
    """A command runs; a second one is asked about and the question stays open 90 s: that
    silence is the user's turn, not unexplained (the question's own reminders, a setting
    of their own, say it waits). Once it is answered and the first command still runs in
    silence, "Still working" is said."""
    engine = Engine(UserSettings(question_reminder_seconds=0))
    engine.trust_extension("acp")
    engine.set_subscription("acp", "sub_test1")
    adapter = AcpAdapter("Claude Code", "claude-code")
    heard: list[str] = []
    times: list[float] = []
    now = ORIGIN

    def run(commands: list[Any]) -> None:
        pending = list(commands)
        while pending:
            command = pending.pop(0)
            if isinstance(command, Speak):
                heard.append(command.announcement.text)
                times.append(now)
                pending += engine.on_speech_done(command.utterance_id, now)

    def take(output: Any) -> None:
        for event in output.events:
            run(engine.receive(json.dumps(event), "acp", now))

    take(adapter.session_opened("s1", "/home/ada/project", now))
    take(adapter.prompt_sent("s1", now))
    call = {"toolCallId": "t1", "title": "npm test", "kind": "execute"}
    take(adapter.update(_update("tool_call", status="in_progress", **call), now))
    now += RUNNING_QUIET_SECONDS
    take(adapter.flush_running(now))
    params = {
        "sessionId": "s1",
        "toolCall": {"toolCallId": "t2", "title": "git push", "kind": "execute"},
        "options": [
            {"optionId": "once", "name": "Allow", "kind": "allow_once"},
            {"optionId": "no", "name": "Reject", "kind": "reject_once"},
        ],
    }
    question = adapter.permission_requested("k1", params, now).events[-1]
    run(engine.receive(json.dumps(question), "acp", now))
    asked = now
    while now < asked + 90:
        now += 5
        run(engine.tick(now))
    assert engine.pending_prompts()
    assert not any(text.startswith("Still working") for text in heard)
    outcome = engine.answer(UserAnswer(question["reply_token"], decision="reject"), now)
    assert isinstance(outcome, ReplyReady), outcome
    run(engine.take_speech())
    answered = now
    while now < answered + 40:
        now += 1
        run(engine.tick(now))
    still = [(t, text) for t, text in zip(times, heard, strict=True) if "Still working" in text]
    # the silence counts from the answer: 30 s after it, the command that still runs
    assert [text for _, text in still] == ["Still working: npm test, 2 minutes."], heard
    assert still[0][0] - answered == 30.0


def test_with_several_agents_working_the_one_that_runs_it_is_named() -> None:
    engine = Engine(UserSettings())
    heard: list[str] = []
    now = ORIGIN

    def run(commands: list[Any]) -> None:
        pending = list(commands)
        while pending:
            command = pending.pop(0)
            if isinstance(command, Speak):
                heard.append(command.announcement.text)
                pending += engine.on_speech_done(command.utterance_id, now)

    for source, name, title in (
        ("acp:claude", "Claude Code", "npm test"),
        ("acp:codex", "Codex", "cargo build"),
    ):
        engine.trust_extension(source)
        adapter = AcpAdapter(name, name.lower().replace(" ", "-"))
        call = {"toolCallId": "t1", "title": title, "kind": "execute"}
        for output in (
            adapter.session_opened("s1", "/home/ada/project", now),
            adapter.prompt_sent("s1", now),
            adapter.update(_update("tool_call", status="in_progress", **call), now),
            adapter.flush_running(now + RUNNING_QUIET_SECONDS),
        ):
            for event in output.events:
                run(engine.receive(json.dumps(event), source, now))
        now += 1
    while now < ORIGIN + 40:
        now += 1
        run(engine.tick(now))
    assert [t for t in heard if t.startswith("Still working")] == [
        "Still working: Codex, cargo build, 30 seconds."
    ]


def test_each_notice_in_one_silence_waits_twice_as_long_and_real_speech_starts_over() -> None:
    """The back-off, sans-I/O on the session clock: 30 s, then 60 more, then 120 more;
    the notice's own speech does not end the silence, anything else heard does."""
    from announcer.engine.silence import SilenceWatch
    from announcer.engine.tracker_records import SessionState

    watch = SilenceWatch()
    working = SessionState("s1", "acp", "agent", "Agent", 0.0, 0.0, agent_state="executing")
    watch.session_seen(working, 0.0)
    assert watch.due(30.0) == 30.0
    watch.notified(30.0)
    watch.heard(31.5, ours=True)  # the notice itself was being said
    assert watch.due(30.0) == 31.5 + 60.0
    watch.notified(91.5)
    assert watch.due(30.0) == 91.5 + 120.0
    watch.heard(100.0)  # the agent said something: a new silence, the first interval again
    assert watch.due(30.0) == 130.0
