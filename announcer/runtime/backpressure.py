"""The inbound queue: every source's frames in arrival order, bounded, and what it drops.

Frames go in arrival order through one queue to one processor (prompts and the events
that void them must not swap). In a flood, news beyond ``SOURCE_QUEUE_LIMIT`` waiting
frames of a source is skipped as it arrives and said as a count where it was
(questions, lifecycle events and streamed text never are), so the reader keeps up with
any producer; at ``SOURCE_QUEUE_HARD_LIMIT`` the reader pauses and the transport's flow
control slows the producer. Every frame dropped here is counted in the engine's
diagnostics with its reason. The session owns the queue and hands it its callbacks; this
module never imports the session.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import jiter

from announcer.engine.announcement import Announcement, Urgency
from announcer.engine.policy_topics import frame_fold_category
from announcer.engine.scheduler import folded_summary_text
from announcer.engine.skipped_news import SkippedNewsStore
from announcer.engine.text_hygiene import clean_for_speech
from announcer.i18n.format import format_integer
from announcer.i18n.translate import translator
from announcer.protocol.decode import DecodeResult
from announcer.protocol.diagnostics import Diagnostic
from announcer.protocol.events import short_type_of
from announcer.protocol.log import DiagnosticsLog

log = logging.getLogger("announcer.runtime")

# Frames of news (not questions, not lifecycle) one source may have waiting for the
# processor; beyond it such frames are skipped as they arrive and said as counts.
SOURCE_QUEUE_LIMIT = 1000
# All frames one source may have waiting; beyond it its reader pauses (flow control).
SOURCE_QUEUE_HARD_LIMIT = 4 * SOURCE_QUEUE_LIMIT
# The reader resumes once its backlog is down to this many.
SOURCE_QUEUE_RESUME = SOURCE_QUEUE_LIMIT // 2
# Never skipped in a flood: questions, what ends or starts a session, handoffs, and
# streamed text (a chunk skipped would garble a sentence); they wait their turn.
_NEVER_SKIPPED = frozenset(
    {
        "agent.awaiting.confirmation",
        "agent.awaiting.clarification",
        "agent.session.started",
        "agent.session.completed",
        "agent.session.errored",
        "agent.session.cancelled",
        "agent.handoff.requested",
        "agent.output.streaming",
    }
)
# The processor hands the loop back after this long (keys stay answered in a flood); the
# reader does too. With the WebSocket parser's own turn (transports.websocket) a turn of
# the loop stays under about 10 ms of CPU in a flood, so a key waits at most two of them.
BATCH_SECONDS = 0.002
# ... or after this many frames, however slow the machine is.
BATCH_FRAMES = 200
# A producer over its agreed rate (§10 T4) is logged at most this often (each counted).
RATE_LOG_SECONDS = 10.0


@dataclass(eq=False)
class Skipped:
    """Frames of one producer skipped in a flood, said as one count where they were."""

    urgent: bool
    producer_id: str
    name: str
    count: int = 0
    kinds: Counter[str] = field(default_factory=Counter)  # "2 edits, 1 command" (issue 20)


class QueuedSource(Protocol):
    """What the queue keeps on each source (``runtime.sources.SourceLink``)."""

    source: str
    adapter: Any
    honoured: dict[str, Any] | None
    queued: int
    queued_news: int
    room: asyncio.Event | None
    skipping: dict[tuple[bool, str], Skipped]
    rate_budget: tuple[float, float] | None
    rate_overruns: int
    rate_logged_at: float | None


#: a frame as a transport read it (JSON text), or an event a mapping of ours built
Frame = str | dict[str, Any]
Item = tuple[Any, Frame | Skipped, bool]


class InboundQueue:
    """One queue for every source, in arrival order; bounded per source by pausing its reader.

    ``wake`` is set whenever there is work; ``stopping`` ends the processor. ``say``
    speaks our own sentence (a count of skipped news), ``count_urgent`` hands a count
    of skipped urgent frames to the engine, ``language`` is the user's catalog language,
    ``verbosity`` the user's verbosity; ``show_skipped`` shows the UIs (not says) the
    words of what a flood skipped.
    """

    def __init__(
        self,
        diagnostics: DiagnosticsLog,
        clock: Callable[[], float],
        *,
        wake: asyncio.Event,
        stopping: asyncio.Event,
        say: Callable[[Announcement], None],
        count_urgent: Callable[[str, str, int, str], None],
        language: Callable[[], str],
        verbosity: Callable[[], str],
        show_skipped: Callable[[Announcement], None],
    ) -> None:
        self.items: deque[Item] = deque()
        self.diagnostics = diagnostics
        self.clock = clock
        self.wake = wake
        self.stopping = stopping
        self.say = say
        self.count_urgent = count_urgent
        self.language = language
        self.verbosity = verbosity
        self.show_skipped = show_skipped
        self.skipped_total = 0
        # the words of news skipped in a flood, shown where its count is said (bounded)
        self.skipped_news = SkippedNewsStore()
        self.dropped: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self.items)

    def enqueue(self, state: QueuedSource, raw: Frame) -> None:
        """Queue a frame in O(1), or skip it as part of a flood (counted, said, logged).

        Its class comes from the decoded fields (type, urgency, producer), never from
        the text. News beyond ``SOURCE_QUEUE_LIMIT`` waiting is skipped as it arrives, so
        the reader keeps up with any producer and a question sent after a flood is
        reached at once; questions and lifecycle events are never skipped, and
        :meth:`wait_for_room` bounds them.
        """
        if state.adapter is not None and isinstance(raw, str):
            try:
                events = state.adapter(raw)
            except Exception as exc:
                self.count_drop(
                    "adapter.refused", f"the format adapter refused a line ({exc})", state
                )
                return
            self._queue_events(state, events)
        else:
            news = news_of(raw) if isinstance(raw, str) else news_in(raw)
            if state.honoured and (news is None or not news[0]):
                self.check_rate(state)
            if news is None:
                self.items.append((state, raw, False))
            elif state.queued_news >= SOURCE_QUEUE_LIMIT:
                self._skip(state, news)
                return
            else:
                self.items.append((state, raw, True))
                state.queued_news += 1
            state.queued += 1
        self.wake.set()

    def _skip(self, state: QueuedSource, news: tuple[bool, str, str, dict[str, Any]]) -> None:
        urgent, producer_id, name, envelope = news
        run = state.skipping.get((urgent, producer_id))
        code = "critical.folded" if urgent else "flood.skipped"
        if run is None:
            run = state.skipping[(urgent, producer_id)] = Skipped(urgent, producer_id, name)
            self.items.append((state, run, False))  # its sentence comes in order
            state.queued += 1
            self.diagnostics.record_drop(
                code,
                f"skipped in a flood: {SOURCE_QUEUE_LIMIT} frames of news from this "
                "connection were already waiting; the rest of this run is counted and said",
                section="§2.2.9" if urgent else "§5.5",
                envelope=envelope,
                source=state.source,
                now=self.clock(),
            )
        else:
            self.diagnostics.count_drop(code)
        run.count += 1
        self.skipped_total += 1
        self.skipped_news.add(envelope, producer_id, self.verbosity())
        run.kinds[frame_fold_category(envelope)] += 1  # "2 edits, 1 command" (issue 20)

    def say_skipped(self, state: QueuedSource, run: Skipped) -> None:
        """ "40 more urgent messages from X" / "40 more: 38 edits, 2 commands.", in place."""
        if state.skipping.get((run.urgent, run.producer_id)) is run:
            del state.skipping[(run.urgent, run.producer_id)]
        self._show_skipped_words(run.producer_id)
        if run.urgent:  # one count per producer waits: the engine's, if it has one
            self.count_urgent(run.producer_id, run.name, run.count, state.source)
            return
        language = self.language()
        text = folded_summary_text(run.kinds, language)  # by kind, never a bare count
        self.say(
            Announcement(
                text=clean_for_speech(text, language),
                language=language,
                urgency=Urgency.NORMAL,
                interrupt=False,
                producer_id=run.producer_id,
                kind="system.skipped",
            )
        )

    def _show_skipped_words(self, producer_id: str) -> None:
        """The words of the frames a flood skipped: shown (transcript, History), not said."""
        kept, forgotten = self.skipped_news.take(producer_id)
        for words in kept:
            self.show_skipped(
                Announcement(
                    text=words.text,
                    language=words.language,
                    urgency=Urgency.CRITICAL if words.urgent else Urgency.NORMAL,
                    event_id=words.event_id,
                    session_id=words.session_id,
                    producer_id=producer_id,
                    kind=short_type_of(words.event_type) or "system.skipped",
                )
            )
        if forgotten:
            language = self.language()
            text = translator(language).gettext("Too many skipped to keep their words: {count}")
            self.show_skipped(
                Announcement(
                    text=text.format(count=format_integer(forgotten, language)),
                    language=language,
                    producer_id=producer_id,
                    kind="system.skipped",
                )
            )

    def full(self, state: QueuedSource) -> bool:
        """Whether this source's reader must pause (flow control slows the producer)."""
        return state.queued >= SOURCE_QUEUE_HARD_LIMIT

    async def wait_for_room(self, state: QueuedSource) -> None:
        """Pause this source's reader while too many of its frames wait (flow control)."""
        if state.queued < SOURCE_QUEUE_HARD_LIMIT or self.stopping.is_set():
            return
        if state.room is None:
            state.room = asyncio.Event()
        state.room.clear()
        stopping = asyncio.ensure_future(self.stopping.wait())
        room = asyncio.ensure_future(state.room.wait())
        try:
            await asyncio.wait((stopping, room), return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopping.cancel()
            room.cancel()

    def finish_adapter(self, state: QueuedSource) -> None:
        """End of a finite stream: a format adapter closes what it left open (outputs, tools)."""
        finish = getattr(state.adapter, "finish", None)
        if not callable(finish):
            return
        try:
            events = finish()
        except Exception as exc:
            self.count_drop(
                "adapter.finish", f"the format adapter could not finish the stream ({exc})", state
            )
            return
        self._queue_events(state, events)
        self.wake.set()

    def take_source(self, state: QueuedSource) -> list[Frame | Skipped]:
        """Take this source's waiting frames out of the queue, in order (it went away)."""
        mine = [item[1] for item in self.items if item[0] is state]
        if not mine:
            return []
        kept = [item for item in self.items if item[0] is not state]
        news = sum(1 for item in self.items if item[0] is state and item[2])
        self.items.clear()
        self.items.extend(kept)
        state.queued -= len(mine)
        state.queued_news -= news
        if state.room is not None:
            state.room.set()
        return mine

    def check_rate(self, state: QueuedSource) -> None:
        """§10 T4: log a producer that sends faster than the rate it agreed to honour.

        Bursts up to one second's worth are allowed (§5.6.2); critical events are exempt
        (§5.6.1(3)). Each overrun is counted; one diagnostic at most every
        ``RATE_LOG_SECONDS`` says how many, visible in ``:diagnostics`` without ``-v``.
        """
        rate = (state.honoured or {}).get("max_events_per_second")
        if not isinstance(rate, int | float) or isinstance(rate, bool) or rate <= 0:
            return
        now = self.clock()
        tokens, last = state.rate_budget or (float(rate), now)
        tokens = min(float(rate), tokens + (now - last) * rate)
        if tokens >= 1.0:
            state.rate_budget = (tokens - 1.0, now)
            return
        state.rate_budget = (tokens, now)
        state.rate_overruns += 1
        if state.rate_logged_at is not None and now - state.rate_logged_at < RATE_LOG_SECONDS:
            return
        state.rate_logged_at = now
        message = (
            f"the producer sends faster than the {rate} events a second it agreed to "
            f"(max_events_per_second); {state.rate_overruns} events over the rate so far"
        )
        self.diagnostics.record(
            DecodeResult(kind="event", message=None, diagnostics=[], raw={}),
            source=state.source,
            now=now,
            extra=[Diagnostic("rate.exceeded", "", "§10 T4", message, "warning")],
        )
        log.warning("%s: %s", state.source, message)

    def _queue_events(self, state: QueuedSource, events: list[Any]) -> None:
        """A format adapter's AAEP events, queued as the objects they are (the engine
        takes them as models, never as JSON text read again)."""
        for event in events:
            self.items.append((state, event, False))
        state.queued += len(events)

    def count_drop(self, code: str, reason: str, state: QueuedSource | None = None) -> None:
        """Every drop is counted and kept in the diagnostics the user can read."""
        self.dropped[reason] = self.dropped.get(reason, 0) + 1
        self.diagnostics.record_drop(
            code, reason, source=state.source if state else None, now=self.clock()
        )
        log.warning("dropped: %s (%d so far)", reason, self.dropped[reason])

    async def serve(
        self,
        handle_frame: Callable[[Any, Frame], None],
        *,
        on_wake: Callable[[], object],
        after_batch: Callable[[], None],
    ) -> None:
        """The one processor: frames in arrival order, a batch at a time, until stopping.

        ``on_wake`` runs first at every wake-up (finished speech is reported);
        ``after_batch`` after each batch (whether everything is done).
        """
        items = self.items
        wake = self.wake
        stopping = self.stopping
        while True:
            await wake.wait()
            wake.clear()
            on_wake()
            # Yield every few milliseconds so keys, timers and Ctrl-C are answered at once.
            budget = BATCH_FRAMES
            until = time.perf_counter() + BATCH_SECONDS
            while items and budget and not stopping.is_set():
                budget -= 1
                if budget % 8 == 0 and time.perf_counter() > until:
                    break
                state, raw, news = items.popleft()
                state.queued -= 1
                if news:
                    state.queued_news -= 1
                if state.room is not None and state.queued <= SOURCE_QUEUE_RESUME:
                    state.room.set()
                if isinstance(raw, Skipped):
                    self.say_skipped(state, raw)
                    continue
                try:
                    handle_frame(state, raw)
                except Exception:
                    log.exception("a frame from %s could not be handled", state.source)
                    self.count_drop("frame.unhandled", "a frame could not be handled", state)
            if stopping.is_set():
                return
            if items:
                wake.set()
                await asyncio.sleep(0)
            after_batch()


def news_of(raw: str) -> tuple[bool, str, str, dict[str, Any]] | None:
    """(urgent, producer id, producer name, the frame) for news a flood may skip, else None.

    Decoded with jiter (a few microseconds); urgency is the ``urgency`` field. Anything
    not plainly an event with a producer (handshake messages, replies, broken frames)
    is None: the engine reads it and reports what is wrong.
    """
    try:
        data = jiter.from_json(raw.encode(), allow_inf_nan=False, cache_mode="keys")
    except ValueError:
        return None
    if type(data) is not dict:
        return None
    return news_in(data)


def news_in(data: dict[str, Any]) -> tuple[bool, str, str, dict[str, Any]] | None:
    """:func:`news_of` for an event already an object (one a mapping of ours built)."""
    kind = data.get("type")
    producer = data.get("producer")
    if type(kind) is not str or type(producer) is not dict:
        return None
    short = short_type_of(kind)
    if short in _NEVER_SKIPPED or kind.startswith(("subscription.", "confirmation.")):
        return None
    if short == "agent.state.changed" and "awaiting_input" in (
        data.get("from_state"),
        data.get("to_state"),
    ):
        return None  # §6.8: leaving awaiting_input withdraws a question; never skipped
    producer_id = producer.get("agent_id")
    if type(producer_id) is not str or not producer_id:
        return None
    name = producer.get("agent_name")
    shown = name if type(name) is str and name.strip() else producer_id
    return data.get("urgency") == "critical", producer_id, shown, data
