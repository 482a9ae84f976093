"""Replay a session through the engine at the pace of a real voice, on a simulated clock.

Issue 14: with speech that finishes at once, a 21-second-late acknowledgement or a key
hint said after its question was withdrawn cannot be seen. Here the whole path runs as
in ``announcer listen``: frames into :class:`~announcer.engine.pipeline.Engine` through
the one :class:`~announcer.runtime.engine_host.EngineHost`, its commands through
:class:`~announcer.speech.driver.SpeechDriver` into the
:class:`~announcer.speech.paced.PacedBackend`, whose utterances last as long as they
would at the user's rate. Time is an asyncio loop's (:class:`SimulatedLoop` jumps to
the next timer), so a minute of speech replays in milliseconds.

Two sources: the built-in demo producer (:func:`run_demo`: the real
:class:`~announcer.producer.core.ProducerCore` playing a scenario, replies included) and
a recording (:func:`run_recording`: frames at their recorded times). A simulated user
(:class:`PacedUser`) answers each question a second after hearing it, as the Textual
dialogs would (their intro and keys said right after the question), and presses other
keys (a wrong digit, "where am I") while the agent talks.

:class:`PaceReport` measures what the user heard: delay from each event's arrival to
the start of its speech, utterances about a question that had already ended (stale),
utterances heard out of their session's event order, and the delay of the answers to
the user's own keys. Used by ``tests/speech/test_pace_end_to_end.py`` and
``benchmarks/pace.py``.
"""

from __future__ import annotations

import asyncio
import json
import selectors
import statistics
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from importlib import resources
from typing import Any, TextIO

from announcer.engine.announcement import Announcement, Urgency
from announcer.engine.answer_keys import UI_SPEAKS_KEYS
from announcer.engine.pipeline import Engine
from announcer.engine.prompts import PendingPrompt, UserAnswer
from announcer.engine.replies import ReplyReady
from announcer.engine.scheduler import (
    FOLDED_SUMMARY_KIND,
    PROMPT_KINDS,
    QUESTION_END_KINDS,
    SKIPPED_NEWS_REASONS,
    STATUS_KINDS,
    WORDS_KIND,
    SpeechScheduler,
)
from announcer.engine.settings import UserSettings
from announcer.engine.speech_commands import SpeechCommand
from announcer.producer.core import ProducerCore, ProducerOptions
from announcer.producer.scenario import load_scenario
from announcer.runtime.engine_host import EngineHost
from announcer.speech.driver import SpeechDriver
from announcer.speech.paced import LoopClock, PacedBackend, PacedUtterance

SOURCE = "paced"
# How long the simulated user takes to answer once the question has been heard.
REACTION_SECONDS = 1.0
# How often the simulated user presses a key that is not an answer while the agent talks.
IDLE_KEY_INTERVAL_SECONDS = 15.0
# A replay never runs past this much simulated time.
MAX_SIMULATED_SECONDS = 3_600.0
UI_KIND = "system.ui"
NEWS_SKIP_REASONS = SKIPPED_NEWS_REASONS


class _InstantSelector(selectors.BaseSelector):
    """Never waits: when nothing is ready, the loop's clock jumps by the timeout."""

    def __init__(self, loop: SimulatedLoop) -> None:
        self._inner = selectors.DefaultSelector()
        self._loop = loop

    def register(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        return self._inner.register(fileobj, events, data)

    def unregister(self, fileobj: Any) -> selectors.SelectorKey:
        return self._inner.unregister(fileobj)

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        ready = self._inner.select(0)
        if not ready:
            if timeout is None:
                raise RuntimeError("the simulated loop has nothing left to wait for")
            self._loop.advance(timeout)
        return ready

    def close(self) -> None:
        self._inner.close()

    def get_map(self) -> Any:
        return self._inner.get_map()


class SimulatedLoop(asyncio.SelectorEventLoop):
    """An asyncio loop on simulated time: sleeping costs nothing, order is kept."""

    def __init__(self) -> None:
        self._simulated = 0.0
        super().__init__(selector=_InstantSelector(self))

    def time(self) -> float:
        return self._simulated

    def advance(self, seconds: float) -> None:
        if seconds > 0:
            self._simulated += seconds
        if self._simulated > MAX_SIMULATED_SECONDS:
            raise RuntimeError("the simulated replay ran past its time limit")


def run_simulated(main: Callable[[], Any]) -> Any:
    """Run coroutine function ``main`` on a fresh :class:`SimulatedLoop`."""
    loop = SimulatedLoop()
    try:
        return loop.run_until_complete(main())
    finally:
        loop.close()


@dataclass(slots=True)
class PaceReport:
    """What the user heard, measured."""

    delays: list[float] = field(default_factory=list)
    reply_delays: list[float] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    out_of_order: list[str] = field(default_factory=list)
    heard: list[PacedUtterance] = field(default_factory=list)
    # When each question ended (answered, withdrawn, timed out), by its event id.
    ended: dict[str, float] = field(default_factory=dict)
    skipped_summaries: int = 0
    # Speech still waiting when the replay stopped: neither heard nor said to be skipped.
    unheard: int = 0
    # News the scheduler let go unheard, by reason (skipped as late, superseded, ...).
    skipped: dict[str, int] = field(default_factory=dict)

    def percentile(self, fraction: float, values: list[float] | None = None) -> float:
        data = sorted(self.delays if values is None else values)
        if not data:
            return 0.0
        if len(data) == 1:
            return data[0]
        return statistics.quantiles(data, n=100, method="inclusive")[round(fraction * 100) - 1]

    def summary(self) -> dict[str, float | int]:
        return {
            "p50_s": round(self.percentile(0.50), 2),
            "p95_s": round(self.percentile(0.95), 2),
            "max_s": round(max(self.delays, default=0.0), 2),
            "spoken_events": len(self.delays),
            "stale": len(self.stale),
            "out_of_order": len(self.out_of_order),
            "reply_max_s": round(max(self.reply_delays, default=0.0), 2),
            "skipped_news": sum(
                count for reason, count in self.skipped.items() if reason in NEWS_SKIP_REASONS
            ),
            "skipped_said": self.skipped_summaries,
            "unheard": self.unheard,
        }

    def texts(self) -> list[str]:
        return [utterance.announcement.text for utterance in self.heard]

    # -- issue 20: each class of speech by its own rule ---------------------------------

    status_delays: list[float] = field(default_factory=list)
    # Status news folded into a summary: from when it could be said to the summary's start
    # (or to the start of its source's newer news that said it, for a tool's start).
    folded_delays: list[float] = field(default_factory=list)
    question_delays: list[float] = field(default_factory=list)
    # From a question's arrival to its start, whatever was before it (for comparison).
    question_waits: list[float] = field(default_factory=list)
    # Issue 30 item 4: from a critical event's arrival to its start, less the time spent
    # meanwhile on other critical speech (and what it says first by rule), answers to the
    # user's keys and its own session's earlier news that goes first by rule (what critical
    # news already went before once, the result of the user's own decision).
    critical_delays: list[float] = field(default_factory=list)
    words_gaps: list[float] = field(default_factory=list)
    words_sentences: int = 0
    words_dropped: int = 0
    stale_news: list[str] = field(default_factory=list)

    def classes(self) -> dict[str, object]:
        """Each class of speech measured by its own rule (issue 20)."""

        def p(fraction: float, values: list[float]) -> float:
            return round(self.percentile(fraction, values), 2)

        every_status = self.status_delays + self.folded_delays
        return {
            "status": {
                "p50_s": p(0.50, every_status),
                "p95_s": p(0.95, every_status),
                "max_s": round(max(every_status, default=0.0), 2),
                "said": len(self.status_delays),
                "folded": len(self.folded_delays),
            },
            "questions": {
                "p95_s": p(0.95, self.question_delays),
                "max_s": round(max(self.question_delays, default=0.0), 2),
                "from_arrival_max_s": round(max(self.question_waits, default=0.0), 2),
                "said": len(self.question_delays),
            },
            "words": {
                "sentences": self.words_sentences,
                "dropped": self.words_dropped,
                "gap_p95_s": p(0.95, self.words_gaps),
                "gap_max_s": round(max(self.words_gaps, default=0.0), 2),
            },
            "critical": {
                "p95_s": p(0.95, self.critical_delays),
                "max_s": round(max(self.critical_delays, default=0.0), 2),
                "said": len(self.critical_delays),
            },
            "stale": len(self.stale_news),
            "out_of_order": len(self.out_of_order),
        }


class PacedRun:
    """The engine, a speech driver and a paced backend on one clock; records arrivals."""

    def __init__(
        self,
        settings: UserSettings,
        loop: asyncio.AbstractEventLoop,
        *,
        scheduler: SpeechScheduler | None = None,
        record: TextIO | None = None,
    ) -> None:
        self.loop = loop
        self.clock = LoopClock(loop)
        self.engine = Engine(settings, scheduler=scheduler)
        # The Textual dialogs say the keys themselves, right after the question.
        self.engine.set_answer_keys(UI_SPEAKS_KEYS)
        # ``record``: the jsonl speech record, what the user heard (docs/architecture.md).
        self.backend = PacedBackend(
            self.clock, rate_wpm=settings.rate_wpm or settings.pace_wpm, stream=record
        )
        self.backend.start()
        self.driver = SpeechDriver(self.backend)
        self.arrivals: dict[str, float] = {}
        self.arrival_index: dict[str, int] = {}
        self.arrival_kind: dict[str, tuple[object, str]] = {}
        self.prompt_ended: dict[str, float] = {}
        self.replies: list[tuple[float, Announcement]] = []
        self._open: dict[str, PendingPrompt] = {}
        self.on_change: Callable[[], None] | None = None
        # What reached the scheduler, and what it let go unheard (issue 20's measures).
        self.submitted: list[tuple[float, Announcement]] = []
        self.skipped_news: list[tuple[float, Announcement]] = []
        scheduler_submit = self.engine.scheduler.submit

        def submit(announcement: Announcement, now: float) -> list[SpeechCommand]:
            self.submitted.append((now, announcement))
            return scheduler_submit(announcement, now)

        self.engine.scheduler.submit = submit  # type: ignore[method-assign]
        self.engine.scheduler.on_skip = lambda announcement: self.skipped_news.append(
            (self.now(), announcement)
        )
        self.host = EngineHost(self.engine, self.driver, self.now, after_step=self._sync)
        self.host.keep_ticking(
            loop, loop_clock=True
        )  # a timer at the engine's next moment, drains on the loop

    def now(self) -> float:
        return self.loop.time()

    # -- inputs ------------------------------------------------------------------------

    def receive(self, frame: dict[str, Any]) -> None:
        event_id = frame.get("event_id")
        if isinstance(event_id, str) and event_id not in self.arrivals:
            self.arrivals[event_id] = self.now()
            self.arrival_index[event_id] = len(self.arrival_index)
            self.arrival_kind[event_id] = (frame.get("session_id"), str(frame.get("type")))
        self.host.receive(frame, SOURCE)

    def say_reply(self, text: str, urgency: Urgency = Urgency.NORMAL) -> None:
        """The UI answers the user's own key (an acknowledgement or a refusal), marked as
        the UIs mark it (``session.speak(..., interrupt=True)``): said at once."""
        announcement = Announcement(text, "en", urgency, kind=UI_KIND, answers_key=True)
        self.replies.append((self.now(), announcement))
        self.host.say(announcement)

    def say_after_question(self, prompt: PendingPrompt, text: str) -> None:
        """The dialog's intro and keys, kept with its question (as the Textual UI does)."""
        announcement = Announcement(
            text,
            "en",
            Urgency.CRITICAL,
            event_id=prompt.event_id,
            session_id=prompt.session_id,
            kind=UI_KIND,
            continues=True,
        )
        self.host.say(announcement)

    def answer(self, answer: UserAnswer) -> ReplyReady | None:
        outcome = self.host.answer(answer)
        return outcome if isinstance(outcome, ReplyReady) else None

    # -- plumbing ------------------------------------------------------------------------

    def _sync(self) -> None:
        pending = {prompt.reply_token: prompt for prompt in self.engine.pending_prompts()}
        for token, prompt in list(self._open.items()):
            if token not in pending:
                self.prompt_ended.setdefault(prompt.event_id, self.now())
                del self._open[token]
        for token, prompt in pending.items():
            self._open.setdefault(token, prompt)
        if self.on_change is not None:
            self.on_change()

    def open_prompts(self) -> list[PendingPrompt]:
        return list(self._open.values())

    def idle(self) -> bool:
        return not self.backend.is_speaking() and self.engine.scheduler.queued() == 0

    # -- measuring ---------------------------------------------------------------------

    def report(self) -> PaceReport:
        report = PaceReport(
            heard=list(self.backend.utterances),
            ended=dict(self.prompt_ended),
            unheard=self.engine.scheduler.queued(),
            skipped=dict(self.engine.scheduler.drops),
        )
        first_start: dict[str, float] = {}
        last_index: dict[str, int] = {}
        for utterance in report.heard:
            announcement = utterance.announcement
            event_id = announcement.event_id
            if announcement.kind == "system.skipped":
                report.skipped_summaries += 1
            if event_id is None:
                continue
            ended = self.prompt_ended.get(event_id)
            if (
                ended is not None
                and utterance.started > ended
                and announcement.kind not in QUESTION_END_KINDS
            ):
                report.stale.append(f"{utterance.started:.1f}s: {announcement.text[:60]}")
            if announcement.kind.startswith("system.") or event_id in first_start:
                continue  # our own words about an event; or an utterance said again
            # One line can say the same final state of several sources ("3 agents: ..."):
            # each of their events is heard here, in its own session's order.
            for said_id in (event_id, *announcement.said_for):
                if said_id in first_start:
                    continue
                first_start[said_id] = utterance.started
                if said_id in self.arrivals:
                    report.delays.append(utterance.started - self.arrivals[said_id])
                index = self.arrival_index.get(said_id)
                session = (
                    announcement.session_id
                    if said_id == event_id
                    else self.arrival_kind.get(said_id, (None, ""))[0]
                )
                if index is None or not isinstance(session, str):
                    continue
                # Issue 30 item 4: critical news (a question, an error) is said at once,
                # so its session's earlier news said after it is in its place; against
                # anything else (the agent's words, status) the order of events holds.
                if announcement.urgency is Urgency.CRITICAL:
                    continue
                before = last_index.get(session, -1)
                if index < before:
                    report.out_of_order.append(
                        f"{utterance.started:.1f}s: {announcement.text[:60]}"
                    )
                last_index[session] = max(index, before)
        self._measure_classes(report)
        for asked_at, reply in self.replies:
            started = next(
                (u.started for u in report.heard if u.announcement is reply),
                None,
            )
            if started is not None:
                report.reply_delays.append(started - asked_at)
        return report

    def _measure_classes(self, report: PaceReport) -> None:
        """Issue 20's measures, each class by its own rule.

        A piece of news is "ready" when it arrives, or later when its source's earlier
        words, questions and urgent news (heard before it) end, since order within a source
        comes first. Status news is measured from ready to the start of its speech, or of
        the summary it was folded into, less the time spent meanwhile on questions, urgent
        news (and another source's lead-up to it, docs/speech.md) and answers to the user's
        keys (status gives way to them by rule); a question from ready (after its
        session's lead-up, which goes first by rule), or from the end of the utterance in
        progress when it arrived, to its
        start, less the time spent on answers to the user's keys; the agent's words by the
        gap before each sentence after the previous sentence of its session ended (or
        after it arrived).
        """
        heard = report.heard
        ends = [u.ended if u.ended is not None else u.started + u.seconds for u in heard]
        first: dict[str, int] = {}
        for index, utterance in enumerate(heard):
            event_id = utterance.announcement.event_id
            if event_id is not None and not utterance.announcement.kind.startswith("system."):
                first.setdefault(event_id, index)

        def ready(
            event_id: str, session: str | None, before: float, *, lead_up: bool = False
        ) -> float:
            """When it could first be said; ``lead_up``: a question, which lets its
            session's earlier news go first too (its lead-up, docs/speech.md)."""
            arrived = self.arrivals.get(event_id, before)
            order = self.arrival_index.get(event_id, -1)
            moment = arrived
            for index, utterance in enumerate(heard):
                other = utterance.announcement
                if utterance.started >= before:
                    break
                if (
                    other.session_id == session
                    and other.event_id is not None
                    # What must come first in a source's order: its words, its questions
                    # and urgent news (its older status folds instead of holding it back).
                    and (
                        other.kind == WORDS_KIND
                        or other.urgency is Urgency.CRITICAL
                        or (lead_up and other.kind in STATUS_KINDS)
                    )
                    and self.arrival_index.get(other.event_id, order) < order
                ):
                    moment = max(moment, ends[index])
            return min(moment, before)

        def is_key_reply(announcement: Announcement) -> bool:
            return announcement.kind == UI_KIND and announcement.event_id is None

        def urgent(announcement: Announcement) -> bool:
            return announcement.urgency is Urgency.CRITICAL or (
                announcement.kind in QUESTION_END_KINDS
            )

        # The lead-up to urgent news: its source's earlier news, said while the urgent news
        # waited for it (issue 14 a, b: a source's order holds, urgent news included).
        lead_up: set[int] = set()
        for index, utterance in enumerate(heard):
            mine = utterance.announcement
            if mine.session_id is None or urgent(mine) or is_key_reply(mine):
                continue
            for later in heard[index + 1 :]:
                other = later.announcement
                if is_key_reply(other):
                    continue
                if other.session_id != mine.session_id:
                    break
                if urgent(other):
                    waiting_since = self.arrivals.get(other.event_id or "", later.started)
                    if waiting_since <= utterance.started:
                        lead_up.add(index)
                    break

        def given_way(since: float, until: float, session: str | None = None) -> float:
            """Time spent on questions (and why one ended), urgent news and answers to the
            user's keys (which go first by rule) between ``since`` and ``until``; and on
            other sources' lead-ups to their urgent news."""
            total = 0.0
            for index, utterance in enumerate(heard):
                other = utterance.announcement
                if (
                    urgent(other)
                    or is_key_reply(other)
                    or (index in lead_up and other.session_id != session)
                ):
                    total += max(0.0, min(ends[index], until) - max(utterance.started, since))
            return total

        def status_delay(event_id: str, session: str | None, started: float) -> float:
            since = ready(event_id, session, started)
            return max(0.0, started - since - given_way(since, started, session))

        stale_after = 10.0
        for event_id, index in first.items():
            utterance = heard[index]
            announcement = utterance.announcement
            if event_id not in self.arrivals:
                continue
            if announcement.kind in STATUS_KINDS:
                # The same final state of other sources said in this line counts for each
                # of them, from when each could be said in its own session's order.
                for said_id in (event_id, *announcement.said_for):
                    if said_id != event_id and (said_id in first or said_id not in self.arrivals):
                        continue
                    session = (
                        announcement.session_id
                        if said_id == event_id
                        else self.arrival_kind[said_id][0]
                    )
                    delay = status_delay(
                        said_id, session if isinstance(session, str) else None, utterance.started
                    )
                    report.status_delays.append(delay)
                    if delay > stale_after:
                        report.stale_news.append(
                            f"{utterance.started:.1f}s: {announcement.text[:60]}"
                        )
            elif announcement.kind in PROMPT_KINDS:
                arrived = self.arrivals[event_id]
                speaking_end = max(
                    (ends[i] for i, u in enumerate(heard) if u.started <= arrived < ends[i]),
                    default=arrived,
                )
                start = max(
                    speaking_end,
                    ready(event_id, announcement.session_id, utterance.started, lead_up=True),
                )
                # The answers to the user's own keys go first by rule, questions or not;
                # so do questions (and why one ended) and urgent news that came first: a
                # question starts at the next boundary after them.
                went_first = given_way(start, utterance.started, announcement.session_id)
                report.question_delays.append(max(0.0, utterance.started - start - went_first))
                report.question_waits.append(utterance.started - arrived)
        for event_id, index in first.items():
            utterance = heard[index]
            announcement = utterance.announcement
            if announcement.urgency is not Urgency.CRITICAL or event_id not in self.arrivals:
                continue
            arrived = self.arrivals[event_id]
            position = self.arrival_index.get(event_id, -1)
            waited = 0.0
            for other_index, other in enumerate(heard[:index]):
                said = other.announcement
                overlap = min(ends[other_index], utterance.started) - max(other.started, arrived)
                if overlap <= 0:
                    continue
                if (
                    said.urgency is Urgency.CRITICAL
                    or is_key_reply(said)
                    or other_index in lead_up  # what other urgent news says first by rule
                    or (
                        said.session_id == announcement.session_id
                        and self.arrival_index.get(said.event_id or "", position) < position
                    )
                ):
                    waited += overlap
            report.critical_delays.append(max(0.0, utterance.started - arrived - waited))
        for dropped_at, announcement in self.skipped_news:
            event_id = announcement.event_id
            if announcement.kind not in STATUS_KINDS or event_id is None:
                continue
            if announcement.continues or event_id in first:
                continue
            # Said by its summary, or by the newer news of its source that folded it (a
            # tool's result, a newer step, the question it gave way to).
            said = next(
                (
                    u.started
                    for u in heard
                    if u.started >= dropped_at
                    and (
                        u.announcement.session_id == announcement.session_id
                        # a line that says its source's final state with other sources'
                        or any(
                            self.arrival_kind.get(other, (None, ""))[0] == announcement.session_id
                            for other in u.announcement.said_for
                        )
                    )
                    and (
                        u.announcement.kind == FOLDED_SUMMARY_KIND
                        or u.announcement.kind in STATUS_KINDS
                        or u.announcement.kind in PROMPT_KINDS
                        # a question withdrawn before it was heard, said in its place
                        or u.announcement.kind in QUESTION_END_KINDS
                    )
                ),
                None,
            )
            if said is None:
                continue
            report.folded_delays.append(status_delay(event_id, announcement.session_id, said))
        words = [a for _, a in self.submitted if a.kind == WORDS_KIND and not a.continues]
        report.words_sentences = len(words)
        said_words = [u for u in heard if u.announcement.kind == WORDS_KIND]
        spoken = {(u.announcement.session_id, u.announcement.text) for u in said_words}
        report.words_dropped = sum((a.session_id, a.text) not in spoken for a in words)
        submitted_at = {
            (a.session_id, a.text): moment for moment, a in self.submitted if a.kind == WORDS_KIND
        }
        # Events by arrival, to tell one answer from the next: other news of the session
        # between two sentences (a tool, a question) starts a new answer.
        order = sorted(self.arrival_index, key=self.arrival_index.__getitem__)
        last: dict[str | None, tuple[float, int]] = {}
        for index, utterance in enumerate(heard):
            announcement = utterance.announcement
            if announcement.kind != WORDS_KIND:
                continue
            session = announcement.session_id
            position = self.arrival_index.get(announcement.event_id or "", -1)
            previous = last.get(session)
            arrived = submitted_at.get((session, announcement.text), utterance.started)
            if previous is not None and previous[1] <= position:
                between = order[previous[1] + 1 : position]
                same_answer = not any(
                    self.arrival_kind[other][0] == session
                    and not self.arrival_kind[other][1].endswith("output.streaming")
                    for other in between
                )
                if same_answer:
                    report.words_gaps.append(
                        max(0.0, utterance.started - max(previous[0], arrived))
                    )
            last[session] = (ends[index], max(position, previous[1] if previous else -1))


class PacedUser:
    """A person at the keyboard: answers each question a second after hearing it.

    While the agent talks, now and then presses a key that is not an answer and
    expects to hear why at once. ``answers`` picks the answer to a prompt.
    """

    def __init__(
        self,
        run: PacedRun,
        *,
        send: Callable[[ReplyReady], object] | None = None,
        idle_keys: bool = True,
    ) -> None:
        self.run = run
        self.send = send
        self.idle_keys = idle_keys
        self._introduced: set[str] = set()
        self._scheduled: set[str] = set()
        self._next_idle_key = IDLE_KEY_INTERVAL_SECONDS
        run.on_change = self._look

    def _look(self) -> None:
        run = self.run
        now = run.now()
        speaking = run.engine.scheduler.speaking
        presented = run.engine.presented_prompt()
        for prompt in run.open_prompts():
            if prompt.event_id not in self._introduced and prompt is presented:
                # The dialog opens with the question being presented (one at a time, as
                # the Textual UI does) and says who asks and its keys.
                self._introduced.add(prompt.event_id)
                intro = (
                    "Press A to accept, or R to reject."
                    if prompt.kind == "confirmation"
                    else "Type your answer and press Enter."
                )
                run.loop.call_soon(run.say_after_question, prompt, f"Asked by the agent. {intro}")
            heard = run.engine.question_started_at(prompt) is not None and (
                speaking is None or speaking.event_id != prompt.event_id
            )
            if heard and prompt.reply_token not in self._scheduled:
                self._scheduled.add(prompt.reply_token)
                run.loop.call_at(now + REACTION_SECONDS, self._answer, prompt)
        if self.idle_keys and now >= self._next_idle_key:
            self._next_idle_key = now + IDLE_KEY_INTERVAL_SECONDS
            if speaking is not None and speaking.urgency is not Urgency.CRITICAL:
                run.loop.call_soon(run.say_reply, "Where am I: the agent is working.")

    def _answer(self, prompt: PendingPrompt) -> None:
        run = self.run
        if prompt.reply_token not in {p.reply_token for p in run.engine.pending_prompts()}:
            return
        # First a slip of the finger: a key that is not an answer, refused at once.
        run.say_reply("9 is not a choice.", Urgency.CRITICAL)
        reply = run.answer(answer_for(prompt))
        if reply is None:
            return
        run.say_reply("Sent.", Urgency.CRITICAL)
        if self.send is not None:
            self.send(reply)


def answer_for(prompt: PendingPrompt) -> UserAnswer:
    """The simulated user's answer: accept; else the first choice, yes, 2 or "Alex"
    (also the listener of benchmarks/listen.py)."""
    event: Any = prompt.event
    if prompt.kind == "confirmation":
        return UserAnswer(prompt.reply_token, decision="accept")
    kinds = list(getattr(event, "accepted_response_kinds", None) or ["freetext"])
    choices = list(getattr(event, "choices", None) or [])
    if "multiple_choice" in kinds and choices:
        return UserAnswer(prompt.reply_token, response=choices[0].value)
    if "yes_no" in kinds:
        return UserAnswer(prompt.reply_token, response=True)
    if "numeric" in kinds:
        return UserAnswer(prompt.reply_token, response=2)
    return UserAnswer(prompt.reply_token, response="Alex")


async def _play_out(run: PacedRun, settle_seconds: float = 600.0) -> None:
    """Wait until nothing is said or queued any more (or ``settle_seconds`` pass).

    Simulated time costs nothing: wait long enough for a busy session's backlog to be
    heard or summarised (a 60 s bound once cut a 180 wpm replay off with 31 messages
    still waiting, so its "updates skipped" summary was never reached).
    """
    deadline = run.now() + settle_seconds
    while run.now() < deadline:
        await asyncio.sleep(0.25)
        if run.idle() and not run.engine.outputs.next_wakeup():
            await asyncio.sleep(1.0)
            if run.idle():
                return


def run_demo(
    settings: UserSettings,
    *,
    scenario: str = "tour",
    scheduler_factory: Callable[[UserSettings], SpeechScheduler] | None = None,
    idle_keys: bool = True,
) -> PaceReport:
    """The demo producer plays ``scenario``; a simulated user answers by ear."""

    async def main() -> PaceReport:
        loop = asyncio.get_running_loop()
        scheduler = scheduler_factory(settings) if scheduler_factory else None
        run = PacedRun(settings, loop, scheduler=scheduler)
        core = ProducerCore(load_scenario(scenario), ProducerOptions())
        request = {
            "type": "subscription.request",
            "aaep_version": "1.0.0",
            "capabilities": {
                "languages": ["en"],
                "preferred_verbosity": "normal",
                "supports_confirmation_reply": True,
                "supports_clarification_reply": True,
            },
        }
        accepted, sub = core.subscribe(request)
        assert sub is not None, accepted
        run.engine.set_subscription(SOURCE, accepted["subscription_id"])
        PacedUser(run, send=lambda reply: core.handle(sub, reply.to_wire()), idle_keys=idle_keys)

        async def follow() -> None:
            async for message in sub.follow(from_start=True):
                run.receive(message)

        follower = loop.create_task(follow())
        try:
            await asyncio.wait_for(core.finished.wait(), MAX_SIMULATED_SECONDS / 2)
            await _play_out(run)
        finally:
            follower.cancel()
            await core.stop()
        return run.report()

    result: PaceReport = run_simulated(main)
    return result


def recorded_frames(lines: Iterable[str]) -> list[tuple[float, dict[str, Any]]]:
    """Frames of a JSON Lines recording with their times, from the first ``timestamp``."""
    frames: list[tuple[float, dict[str, Any]]] = []
    origin: float | None = None
    last = 0.0
    for line in lines:
        if not line.strip():
            continue
        frame = json.loads(line)
        stamp = frame.get("timestamp")
        if isinstance(stamp, str):
            moment = datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
            origin = moment if origin is None else origin
            last = max(last, moment - origin)
        frames.append((last, frame))
    return frames


def bundled_recording(name: str = "banking_session.jsonl") -> list[str]:
    return (resources.files("announcer.data") / name).read_text(encoding="utf-8").splitlines()


def busy_recording(
    copies: int = 3, offset_seconds: float = 2.0
) -> list[tuple[float, dict[str, Any]]]:
    """Several agents at once: the bundled banking recording, ``copies`` times over,
    each copy with its own session, event ids and reply tokens, ``offset_seconds`` apart."""
    base = recorded_frames(bundled_recording())
    frames: list[tuple[float, dict[str, Any]]] = []
    for copy in range(copies):
        for moment, frame in base:
            text = json.dumps(frame)
            for key in ("session_id", "event_id", "reply_token"):
                value = frame.get(key)
                if isinstance(value, str):
                    text = text.replace(value, f"{value}{copy}")
            frames.append((moment + copy * offset_seconds, json.loads(text)))
    frames.sort(key=lambda item: item[0])
    return frames


def run_recording(
    frames: list[tuple[float, dict[str, Any]]],
    settings: UserSettings,
    *,
    scheduler_factory: Callable[[UserSettings], SpeechScheduler] | None = None,
    idle_keys: bool = True,
    record: TextIO | None = None,
) -> PaceReport:
    """Frames at their recorded times; the simulated user answers (nobody receives it).

    ``record`` receives the jsonl speech record of what was said.
    """

    async def main() -> PaceReport:
        loop = asyncio.get_running_loop()
        scheduler = scheduler_factory(settings) if scheduler_factory else None
        run = PacedRun(settings, loop, scheduler=scheduler, record=record)
        PacedUser(run, idle_keys=idle_keys)
        start = loop.time()
        for moment, frame in frames:
            delay = start + moment - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            run.receive(frame)
        await _play_out(run)
        return run.report()

    result: PaceReport = run_simulated(main)
    return result


# -- a coding agent's turn, through the real ACP mapping (issue 20) --------------------

AGENT_ANSWER = """I'll update two files and then run the tests.

## What I changed

Three things changed:

1. The parser now keeps the last line of a file that has no final newline.
2. The `--strict` flag is checked before any file is opened, so a typo fails fast.
3. Error messages name the file and the line, as in `app.py:12`.

The tests pass: 214 passed and 3 skipped in 9.4 seconds. The skipped ones need a network \
and were skipped before this change too. I did not touch the public API, so nothing that \
imports the package needs to change. One thing to check by hand: the changelog entry I \
wrote is under "Unreleased", and you may want a version number there. If you would rather \
keep the old behaviour for files without a final newline, the change is one line in \
`parser.py` and I can revert it. Shall I push the branch so you can open a pull request?
"""
AGENT_PLAN = ("Edit the parser", "Check the flag early", "Run the tests", "Write the summary")
# How fast a real agent streams its answer: a few characters every few tens of milliseconds.
_CHUNK_CHARS = 12
_CHUNK_SECONDS = 0.04


def agent_session_frames(
    origin: float = 1_800_000_000.0,
) -> list[tuple[float, dict[str, Any]]]:
    """A coding agent's turn as AAEP frames with their times: a plan, several tools, a long
    markdown answer streamed at an agent's speed, a permission question, the plan done.

    The ACP ``session/update`` messages are scripted (shaped as in the ACP schema) and go
    through announcer's own ACP mapping (:class:`~announcer.formats.acp.AcpAdapter`), as
    in ``announcer agent``.
    """
    from announcer.formats.acp import AcpAdapter

    adapter = AcpAdapter("Coding Agent", "coding-agent")
    frames: list[tuple[float, dict[str, Any]]] = []
    session = "acp_s1"

    def take(at: float, output: Any) -> None:
        frames.extend((at, event) for event in output.events)

    def update(at: float, what: str, **fields: Any) -> None:
        params = {"sessionId": session, "update": {"sessionUpdate": what, **fields}}
        take(at, adapter.update(params, origin + at))

    def plan(at: float, done: int) -> None:
        entries = [
            {
                "content": step,
                "priority": "medium",
                "status": "completed" if i < done else "in_progress" if i == done else "pending",
            }
            for i, step in enumerate(AGENT_PLAN)
        ]
        update(at, "plan", entries=entries)

    def say(at: float, text: str) -> float:
        for start in range(0, len(text), _CHUNK_CHARS):
            chunk = text[start : start + _CHUNK_CHARS]
            update(at, "agent_message_chunk", content={"type": "text", "text": chunk})
            at += _CHUNK_SECONDS
        return at

    def tool(at: float, call: str, title: str, kind: str, seconds: float) -> float:
        update(at, "tool_call", toolCallId=call, title=title, kind=kind, status="in_progress")
        update(at + seconds, "tool_call_update", toolCallId=call, status="completed")
        return at + seconds + 0.1

    take(0.0, adapter.session_opened(session, "/home/dev/project", origin))
    take(0.05, adapter.prompt_sent(session, origin + 0.05))
    plan(0.4, 0)
    at = say(0.6, AGENT_ANSWER.split("\n", 1)[0] + "\n\n")
    at = tool(at, "t1", "Edit src/parser.py", "edit", 0.4)
    plan(at, 1)
    at = tool(at + 0.1, "t2", "Edit src/cli.py", "edit", 0.4)
    at = tool(at, "t3", "Read tests/test_parser.py", "read", 0.2)
    plan(at, 2)
    at = tool(at + 0.1, "t4", "uv run pytest -q", "execute", 3.0)
    plan(at, 3)
    at = say(at + 0.2, AGENT_ANSWER.split("\n", 1)[1])
    params = {
        "sessionId": session,
        "toolCall": {"toolCallId": "t5", "title": "git push origin fix-parser", "kind": "execute"},
        "options": [
            {"optionId": "once", "name": "Allow", "kind": "allow_once"},
            {"optionId": "no", "name": "Reject", "kind": "reject_once"},
        ],
    }
    take(at + 0.3, adapter.permission_requested("push", params, origin + at + 0.3))
    # The user answers; the agent pushes, finishes its plan and ends the turn.
    at += 20.0
    at = tool(at, "t5", "git push origin fix-parser", "execute", 1.5)
    plan(at, len(AGENT_PLAN))
    at = say(at + 0.1, "Pushed. The branch is ready for review.")
    take(at + 0.2, adapter.turn_ended(session, "end_turn", origin + at + 0.2))
    frames.sort(key=lambda item: item[0])
    return frames


def acp_session_frames(
    lines: Iterable[str], origin: float = 1_800_000_000.0
) -> list[tuple[float, dict[str, Any]]]:
    """A recorded ACP agent's turn as AAEP frames with their times.

    ``lines``: what the agent said, one ``{"t": seconds, "message": JSON-RPC}`` a line, as
    ``tests/lab/acp_tee.py`` records it. Its ``session/update`` notifications,
    ``session/request_permission`` requests and the prompt's ``stopReason`` go through
    announcer's own ACP mapping, as in ``announcer agent``.
    """
    from announcer.formats.acp import AcpAdapter

    adapter = AcpAdapter("Claude Agent", "claude-agent")
    records = [json.loads(line) for line in lines if line.strip()]
    if not records:
        return []
    start = float(records[0]["t"]) - 0.1
    session = next(
        str(r["message"]["params"]["sessionId"])
        for r in records
        if isinstance(r["message"].get("params"), dict) and "sessionId" in r["message"]["params"]
    )
    frames: list[tuple[float, dict[str, Any]]] = []

    def take(at: float, output: Any) -> None:
        frames.extend((at, event) for event in output.events)

    take(0.0, adapter.session_opened(session, "/home/dev/project", origin))
    take(0.05, adapter.prompt_sent(session, origin + 0.05))
    for record in records:
        at = max(0.05, float(record["t"]) - start)
        message = record["message"]
        method = message.get("method")
        if method == "session/update":
            take(at, adapter.update(message["params"], origin + at))
        elif method == "session/request_permission":
            request = str(message.get("id"))
            take(at, adapter.permission_requested(request, message["params"], origin + at))
        elif isinstance(message.get("result"), dict) and "stopReason" in message["result"]:
            reason = message["result"]["stopReason"]
            take(at, adapter.turn_ended(session, reason, origin + at))
    frames.sort(key=lambda item: item[0])
    return frames
