"""The live session: transports in, pipeline and speech out, replies back on the source.

One :class:`LiveSession` runs every source the user named (Subscribers' Guide
§9). Each source has a supervisor that connects, shakes hands (Level 3,
chapter 5), reads frames, and reconnects with backoff and jitter when the
connection breaks. Frames go through bounded queues to one processor, so a
slow speech backend or UI never makes a socket reader fall behind; critical
events have their own queue and are never dropped. User interfaces are
pluggable listeners (``announcement_made``, ``prompt_opened``,
``prompt_voided``, ``status_changed``) and answer through :meth:`answer`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from announcer.engine.announcement import Announcement, Urgency
from announcer.engine.prompts import PendingPrompt, UserAnswer
from announcer.engine.settings import UserSettings
from announcer.engine.speech_commands import Cancel, Speak, SpeechCommand
from announcer.protocol import decode_frame
from announcer.runtime.backoff import Backoff
from announcer.runtime.capabilities import (
    capabilities_from_settings,
    honoured_differences,
    subscription_request,
)
from announcer.runtime.pipeline import Pipeline, load_pipeline
from announcer.runtime.replies import ReplyBook, event_field
from announcer.transports import (
    InsecureTransportRefused,
    Transport,
    TransportError,
    TransportOptions,
    open_transport,
)

log = logging.getLogger("announcer.runtime")

MAX_QUEUED_FRAMES = 2000
SEEN_EVENT_IDS = 4096
TICK_SECONDS = 0.25
DONE_GRACE_SECONDS = 2.0
_TERMINAL = {
    "aaep:agent.session.completed",
    "aaep:agent.session.errored",
    "aaep:agent.session.cancelled",
}
_REJECTION_WORDS = {
    "version_unsupported": "it does not support this version of the protocol",
    "manifest_signature_required": "it has no signed manifest",
    "capabilities_incompatible": "it cannot serve the settings asked for",
    "rate_limit": "it has too many listeners right now",
    "authentication_required": "it needs a token (use --token-env or --token-file)",
    "authorization_denied": "the token was not accepted",
    "transport_unavailable": "it does not serve this kind of connection",
    "unknown": "it gave no reason",
}


@dataclass(frozen=True, slots=True)
class SessionStatus:
    """What "where am I" speaks and a status line shows."""

    connection: str = "not connected"
    producers: tuple[str, ...] = ()
    session_state: str = "idle"
    pending_prompts: int = 0


@dataclass(frozen=True, slots=True)
class AnswerOutcome:
    """Whether an answer went out; ``message`` is a sentence for the user."""

    sent: bool
    message: str = ""


class SessionListener(Protocol):
    def announcement_made(self, announcement: Announcement) -> None: ...

    def prompt_opened(self, prompt: PendingPrompt) -> None: ...

    def prompt_voided(self, reply_token: str, reason: str) -> None: ...

    def status_changed(self, status: SessionStatus) -> None: ...


FrameAdapter = Callable[[str], list[dict[str, Any]]]


@dataclass(eq=False)
class SourceState:
    source: str
    transport: Transport
    connected: bool = False
    ever_connected: bool = False
    lost_announced: bool = False
    level1_announced: bool = False
    finished: bool = False
    failed: bool = False
    subscription_id: str | None = None
    requested: dict[str, Any] | None = None
    honoured: dict[str, Any] | None = None
    producer_name: str | None = None
    seen: OrderedDict[str, None] = field(default_factory=OrderedDict)
    open_sessions: set[str] = field(default_factory=set)
    ended_sessions: int = 0

    @property
    def name(self) -> str:
        return self.producer_name or self.transport.description


class LiveSession:
    def __init__(
        self,
        sources: list[str],
        settings: UserSettings,
        options: TransportOptions | None = None,
        *,
        driver: Any = None,
        pipeline: Pipeline | None = None,
        handshake_timeout: float = 5.0,
        exit_when_done: bool = False,
        adapter: FrameAdapter | None = None,
        transports: list[Transport] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.settings = settings
        self.options = options or TransportOptions()
        self.driver = driver
        self.pipeline = pipeline or load_pipeline(settings)
        self.handshake_timeout = handshake_timeout
        self.exit_when_done = exit_when_done
        self.adapter = adapter
        self.clock = clock
        self.book = ReplyBook()
        self.listeners: list[SessionListener] = []
        made = transports or [open_transport(s, self.options) for s in sources]
        self.states = [SourceState(t.source_id, t) for t in made]
        # One queue in arrival order (prompts and the events that void them must not swap);
        # when full, the oldest non-critical frame goes, a critical one never (§5.6.2).
        self._inbound: deque[tuple[SourceState, str, bool]] = deque()
        self.dropped: dict[str, int] = {}
        self._wake = asyncio.Event()
        self._stopping = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._system_ids = 0
        self._last_frame_at = clock()
        self._session_state = "idle"
        self.last_announcement: Announcement | None = None
        self._tasks: list[asyncio.Task[Any]] = []

    # ---- the UI-facing interface ---------------------------------------------------

    def subscribe(self, listener: SessionListener) -> None:
        self.listeners.append(listener)
        for prompt in self.book.pending():
            listener.prompt_opened(prompt)

    def now(self) -> float:
        return self.clock()

    @property
    def status(self) -> SessionStatus:
        connected = [s for s in self.states if s.connected]
        if not connected:
            text = "not connected"
        elif len(connected) == len(self.states):
            text = "connected"
        else:
            text = f"connected to {len(connected)} of {len(self.states)}"
        return SessionStatus(
            connection=text,
            producers=tuple(s.name for s in self.states),
            session_state=self._session_state,
            pending_prompts=len(self.book.pending()),
        )

    def speak(self, text: str, urgency: Urgency = Urgency.NORMAL, interrupt: bool = False) -> None:
        self._system(text, urgency=urgency, interrupt=interrupt, kind="system.ui")

    def stop_speech(self) -> None:
        if self.driver is not None:
            self.driver.execute([Cancel(None, "user")])

    def repeat_last(self) -> None:
        if self.last_announcement is not None:
            self._say(self.last_announcement)

    def update_settings(self, settings: UserSettings) -> None:
        """Apply at once and renegotiate with every producer that shook hands (§5.7)."""
        self.settings = settings
        self.pipeline.update_settings(settings)
        for state in self.states:
            if state.connected and state.subscription_id:
                self._spawn(self._renegotiate(state))

    async def _renegotiate(self, state: SourceState) -> None:
        capabilities = capabilities_from_settings(self.settings)
        message = {
            "type": "subscription.renegotiate",
            "subscription_id": state.subscription_id,
            "capabilities": capabilities,
        }
        state.requested = capabilities
        try:
            answer = await state.transport.send(message)
        except TransportError as exc:
            self._system(f"Could not change settings with {state.name}: {exc}")
            return
        if answer is not None:
            self._handle_handshake_message(state, answer)

    def answer(self, answer: UserAnswer) -> AnswerOutcome:
        """Check the answer now and send it in the background (for UIs on other threads)."""
        loop = self._loop
        if loop is None:
            return AnswerOutcome(False, "Not running.")
        future = asyncio.run_coroutine_threadsafe(self.answer_async(answer), loop)
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            return AnswerOutcome(True, "Sending.")
        return future.result(timeout=30)

    async def answer_async(self, answer: UserAnswer) -> AnswerOutcome:
        decision = self.book.answer(answer, self.clock())
        if decision.message is None:
            if (
                decision.prompt is not None
                and self.book.prompts[answer.reply_token].state == "void"
            ):
                self._notify_void(decision.prompt, decision.refusal)
            return AnswerOutcome(False, decision.refusal)
        prompt = decision.prompt
        assert prompt is not None
        state = next((s for s in self.states if s.source == prompt.source_id), None)
        if state is None or not state.connected:
            reason = "the connection it came from is lost; the producer applies its default."
            self.book.prompts[prompt.reply_token].state = "void"
            self._notify_void(prompt, reason)
            return AnswerOutcome(False, f"Nothing was sent: {reason}")
        try:
            response = await state.transport.send(decision.message)
        except TransportError as exc:
            self.book.prompts[prompt.reply_token].state = "void"
            reason = f"the reply could not be delivered ({exc}); the producer applies its default."
            self._notify_void(prompt, reason)
            return AnswerOutcome(False, f"Nothing was sent: {reason}")
        if response is not None:
            self._handle_handshake_message(state, response)
        self._status_changed()
        what = decision.message.get("decision") or _spoken_response(decision.message["response"])
        return AnswerOutcome(True, f"Sent: {what}.")

    # ---- running -----------------------------------------------------------------

    def stop(self) -> None:
        self._stopping.set()
        self._wake.set()

    async def run(self) -> int:
        """Run until stopped, or until every source is done with ``exit_when_done``."""
        self._loop = asyncio.get_running_loop()
        if self.driver is not None and hasattr(self.driver, "_notify"):
            loop = self._loop
            self.driver._notify = lambda: loop.call_soon_threadsafe(self._wake.set)
        for state in self.states:
            self._tasks.append(asyncio.ensure_future(self._supervise(state)))
        processor = asyncio.ensure_future(self._process())
        ticker = asyncio.ensure_future(self._ticker())
        try:
            await self._stopping.wait()
        finally:
            await self._shutdown()
            for task in (processor, ticker, *self._tasks):
                task.cancel()
            for task in (processor, ticker, *self._tasks):
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        failed = [s for s in self.states if s.failed]
        return 1 if failed and len(failed) == len(self.states) else 0

    def _spawn(self, coroutine: Any) -> None:
        task = asyncio.ensure_future(coroutine)
        self._tasks.append(task)

    async def _shutdown(self) -> None:
        """§5.8: say goodbye to every producer we shook hands with."""
        for state in self.states:
            if state.connected and state.subscription_id:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(
                        state.transport.send(
                            {
                                "type": "subscription.close",
                                "subscription_id": state.subscription_id,
                                "reason_code": "subscriber_shutdown",
                                "reason_message": "The listener is closing.",
                            }
                        ),
                        3,
                    )
            state.connected = False
            with contextlib.suppress(Exception):
                await asyncio.wait_for(state.transport.close("subscriber_shutdown"), 5)

    async def _sleep_or_stop(self, seconds: float) -> bool:
        """Sleep; True when asked to stop meanwhile."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stopping.wait(), seconds)
        return self._stopping.is_set()

    async def _supervise(self, state: SourceState) -> None:
        backoff = Backoff()
        transport = state.transport
        while not self._stopping.is_set():
            try:
                await transport.connect()
                resume = getattr(transport, "resume", None)
                resumed = state.ever_connected and resume is not None and await resume()
                if not resumed:
                    request = subscription_request(self.settings)
                    state.requested = request["capabilities"]
                    outcome = await transport.handshake(request, self.handshake_timeout)
                    retry = self._after_handshake(state, outcome.response)
                    if retry is not None:
                        await transport.close("rejected")
                        if retry < 0 or await self._sleep_or_stop(retry):
                            return
                        continue
                    early = outcome.early_frames
                else:
                    early = []
                self._connected(state)
                backoff.reset()
                for raw in early:
                    self._enqueue(state, raw)
                async for raw in transport.frames():
                    self._enqueue(state, raw)
                if getattr(transport, "finite", False):
                    state.finished = True
                    state.connected = False
                    self._status_changed()
                    self._wake.set()
                    return
                raise TransportError("the producer closed the connection")
            except InsecureTransportRefused as exc:
                self._give_up(state, str(exc))
                return
            except TransportError as exc:
                if self._stopping.is_set():
                    return
                self._lost(state, str(exc))
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(transport.close("reconnecting"), 5)
                if getattr(transport, "finite", False):
                    self._give_up(state, str(exc))
                    return
                if await self._sleep_or_stop(backoff.next_delay()):
                    return
            except Exception as exc:  # nothing a producer sends may crash us
                log.exception("source %s failed", state.source)
                if self._stopping.is_set():
                    return
                self._lost(state, f"unexpected error: {exc}")
                if await self._sleep_or_stop(backoff.next_delay()):
                    return

    def _after_handshake(self, state: SourceState, response: dict[str, Any] | None) -> float | None:
        """Apply the handshake answer; a delay to retry after, -1 to give up, None to go on."""
        if response is None:
            state.subscription_id = None
            state.honoured = None
            if not state.level1_announced:
                state.level1_announced = True
                log.info("%s did not answer the handshake; defaults apply", state.source)
            return None
        if response.get("type") == "subscription.rejected":
            code = str(response.get("reason_code", "unknown"))
            words = _REJECTION_WORDS.get(code, "it gave no reason")
            retry_after = response.get("retry_after_seconds")
            detail = response.get("reason_message")
            sentence = f"{state.name} refused the subscription: {words}."
            if isinstance(detail, str) and detail.strip():
                sentence += f" It said: {detail.strip()}"
            if isinstance(retry_after, int | float) and retry_after >= 0:
                self._system(f"{sentence} Trying again in {retry_after:g} seconds.")
                return float(retry_after)
            self._give_up(state, sentence, announce_as_is=True)
            return -1.0
        if response.get("type") == "subscription.accepted":
            self._accepted(state, response)
            return None
        self._give_up(state, f"{state.name} answered the subscription with something unexpected.")
        return -1.0

    def _accepted(self, state: SourceState, response: dict[str, Any]) -> None:
        state.subscription_id = str(response.get("subscription_id") or "") or None
        producer = response.get("producer")
        if isinstance(producer, dict):
            state.producer_name = producer.get("agent_name") or producer.get("agent_id")
        honoured = response.get("honored_capabilities")
        previous = state.honoured
        state.honoured = honoured if isinstance(honoured, dict) else {}
        if state.honoured != previous:
            notes = honoured_differences(state.requested or {}, state.honoured)
            if notes:
                self._system(f"{state.name} agreed, but {'; '.join(notes)}.")

    def _handle_handshake_message(self, state: SourceState, message: dict[str, Any]) -> None:
        kind = message.get("type")
        if kind == "subscription.accepted":
            self._accepted(state, message)
            self._system(f"Settings changed with {state.name}.", urgency=Urgency.BACKGROUND)
        elif kind == "subscription.rejected":
            # §5.7: a rejected renegotiation ends the subscription; start a fresh one.
            code = str(message.get("reason_code", "unknown"))
            self._system(
                f"{state.name} refused the new settings: {_REJECTION_WORDS.get(code, code)}."
            )
            state.subscription_id = None
            self._spawn(state.transport.close("renegotiation rejected"))

    def _connected(self, state: SourceState) -> None:
        state.connected = True
        if state.lost_announced:
            self._system(f"Reconnected to {state.name}.", urgency=Urgency.NORMAL)
        elif not state.ever_connected:
            self._system(f"Connected to {state.name}.", urgency=Urgency.BACKGROUND)
        state.ever_connected = True
        state.lost_announced = False
        self._status_changed()

    def _lost(self, state: SourceState, reason: str) -> None:
        was_connected = state.connected
        state.connected = False
        if not state.lost_announced:
            state.lost_announced = True
            if was_connected or state.ever_connected:
                self._system(
                    f"Connection to {state.name} lost: {reason}. Reconnecting.",
                    urgency=Urgency.CRITICAL,
                )
            else:
                self._system(
                    f"Cannot connect to {state.name}: {reason}. Retrying.",
                    urgency=Urgency.CRITICAL,
                )
        # §5.8.2/§8.2.5: the producer applies its default to what we could not answer.
        for prompt in self.book.void_where(
            "the connection was lost; the producer applies its default.", source_id=state.source
        ):
            self._notify_void(prompt, "the connection was lost; the producer applies its default.")
        self._status_changed()

    def _give_up(self, state: SourceState, reason: str, *, announce_as_is: bool = False) -> None:
        state.failed = True
        state.finished = True
        state.connected = False
        self._system(
            reason if announce_as_is else f"Giving up on {state.name}: {reason}",
            urgency=Urgency.CRITICAL,
        )
        self._status_changed()
        self._wake.set()

    # ---- inbound frames ---------------------------------------------------------------

    def _enqueue(self, state: SourceState, raw: str) -> None:
        """Never blocks: critical frames always queue, others drop oldest when full."""
        frames = [raw]
        if self.adapter is not None:
            try:
                frames = [json.dumps(event, ensure_ascii=False) for event in self.adapter(raw)]
            except Exception as exc:
                self._count_drop(f"the format adapter refused a line ({exc})")
                return
        for frame in frames:
            # A cheap over-approximation: anything that might be critical is kept.
            critical = '"critical"' in frame or '"subscription.' in frame
            if len(self._inbound) >= MAX_QUEUED_FRAMES:
                victim = next((item for item in self._inbound if not item[2]), None)
                if victim is not None:
                    self._inbound.remove(victim)
                    self._count_drop("queue full: the oldest non-critical frame was dropped")
                elif not critical:
                    self._count_drop("queue full of critical frames: a non-critical frame dropped")
                    continue
            self._inbound.append((state, frame, critical))
        self._wake.set()

    def _count_drop(self, reason: str) -> None:
        self.dropped[reason] = self.dropped.get(reason, 0) + 1
        log.warning("dropped: %s (%d so far)", reason, self.dropped[reason])

    async def _process(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            self._drain_speech()
            budget = 200  # yield now and then so timers and the UI keep running
            while self._inbound and budget:
                budget -= 1
                state, raw, _critical = self._inbound.popleft()
                try:
                    self._handle_frame(state, raw)
                except Exception:
                    log.exception("a frame from %s could not be handled", state.source)
                    self._count_drop("a frame could not be handled")
            if self._inbound:
                self._wake.set()
                await asyncio.sleep(0)
            self._check_done()

    def _handle_frame(self, state: SourceState, raw: str) -> None:
        now = self.clock()
        self._last_frame_at = now
        if len(raw.encode("utf-8")) > self.options.max_frame_bytes:
            self._count_drop("frame over the size limit")
            return
        result = decode_frame(raw)
        data = result.raw
        kind = result.type or ""
        if kind.startswith("subscription.") and isinstance(data, dict):
            self._handle_handshake_message(state, data)
            return
        if not result.ok or data is None:
            errors = [d for d in result.diagnostics if d.severity == "error"]
            reason = str(errors[0]) if errors else "not an AAEP message"
            self._count_drop(f"invalid frame from {state.name}: {reason}")
            if kind.startswith("aaep:agent.awaiting."):
                # Never let a question vanish silently: the producer is waiting on it.
                self._system(
                    f"{state.name} asked a question that breaks the protocol, so it cannot "
                    f"be answered here; the producer will apply its default. ({reason})",
                    urgency=Urgency.CRITICAL,
                )
            return
        event_id = data.get("event_id")
        if isinstance(event_id, str):
            if event_id in state.seen:
                self._count_drop("duplicate event_id (§8.2.4)")
                return
            state.seen[event_id] = None
            if len(state.seen) > SEEN_EVENT_IDS:
                state.seen.popitem(last=False)
        session_id = str(data.get("session_id", ""))
        self._track_session(state, kind, data, session_id)
        self._run(self.pipeline.receive(raw, state.source, now))
        if kind in ("aaep:agent.awaiting.confirmation", "aaep:agent.awaiting.clarification"):
            prompt = self.book.open(
                data,
                model=result.message,
                source_id=state.source,
                subscription_id=state.subscription_id,
                producer_name=state.producer_name,
                now=now,
            )
            if prompt is not None:
                for listener in list(self.listeners):
                    listener.prompt_opened(prompt)
                self._status_changed()
                if prompt.kind == "confirmation" and self.settings.reply_policy == "auto_reject":
                    self._spawn(self._auto_reject(prompt))

    async def _auto_reject(self, prompt: PendingPrompt) -> None:
        outcome = await self.answer_async(
            UserAnswer(prompt.reply_token, decision="reject", decided_by="auto:configured_policy")
        )
        self._system(
            f"Rejected automatically (--auto-reject): {outcome.message}", urgency=Urgency.NORMAL
        )

    def _track_session(
        self, state: SourceState, kind: str, data: dict[str, Any], session_id: str
    ) -> None:
        if kind == "aaep:agent.session.started":
            state.open_sessions.add(session_id)
            self._session_state = "working"
        elif kind in _TERMINAL:
            state.open_sessions.discard(session_id)
            state.ended_sessions += 1
            self._session_state = "idle"
            for prompt in self.book.void_where(
                "the session ended.", source_id=state.source, session_id=session_id
            ):
                self._notify_void(prompt, "the session ended.")
        elif kind == "aaep:agent.state.changed":
            self._session_state = str(data.get("to_state", self._session_state))
            if data.get("from_state") == "awaiting_input":
                # §6.8: the producer moved on; an unanswered prompt of this session is void.
                reason = "the agent no longer needs an answer."
                for prompt in self.book.void_where(
                    reason, source_id=state.source, session_id=session_id
                ):
                    self._notify_void(prompt, reason)
        self._status_changed()

    # ---- speech and listeners -------------------------------------------------------------

    def _run(self, commands: list[SpeechCommand]) -> None:
        pending = list(commands)
        rounds = 0
        while pending and rounds < 1000:
            rounds += 1
            follow: list[SpeechCommand] = []
            for command in pending:
                if isinstance(command, Speak):
                    self.last_announcement = command.announcement
                    self._tell(command.announcement)
                    if self.driver is None:
                        follow.extend(
                            self.pipeline.on_speech_done(command.utterance_id, self.clock())
                        )
                    else:
                        self.driver.execute([command])
                elif isinstance(command, Cancel) and self.driver is not None:
                    self.driver.execute([command])
            pending = follow
        self._drain_speech()

    def _drain_speech(self) -> None:
        if self.driver is None:
            return
        for utterance_id in self.driver.take_completed():
            if utterance_id < 0:
                continue  # our own system messages
            self._run(self.pipeline.on_speech_done(utterance_id, self.clock()))

    def _tell(self, announcement: Announcement) -> None:
        for listener in list(self.listeners):
            try:
                listener.announcement_made(announcement)
            except Exception:
                log.exception("a listener failed")

    def _say(self, announcement: Announcement) -> None:
        self._tell(announcement)
        if self.driver is not None:
            self._system_ids -= 1
            self.driver.execute([Speak(self._system_ids, announcement)])

    def _system(
        self,
        text: str,
        *,
        urgency: Urgency = Urgency.NORMAL,
        interrupt: bool = False,
        kind: str = "system.connection",
    ) -> None:
        self._say(
            Announcement(
                text=text,
                language="en",
                urgency=urgency,
                interrupt=interrupt or urgency is Urgency.CRITICAL,
                kind=kind,
            )
        )

    def _notify_void(self, prompt: PendingPrompt, reason: str) -> None:
        what = _prompt_title(prompt)
        self._system(f"The question {what} is void: {reason}", urgency=Urgency.CRITICAL)
        for listener in list(self.listeners):
            listener.prompt_voided(prompt.reply_token, reason)
        self._status_changed()

    def _status_changed(self) -> None:
        status = self.status
        for listener in list(self.listeners):
            with contextlib.suppress(Exception):
                listener.status_changed(status)

    async def _ticker(self) -> None:
        while True:
            await asyncio.sleep(TICK_SECONDS)
            now = self.clock()
            self._run(self.pipeline.tick(now))
            for prompt in self.book.expired(now):
                self._notify_void(
                    prompt, "the time to answer ran out; the producer applies its default."
                )
            self._check_done()

    def _check_done(self) -> None:
        if self._stopping.is_set() or self._inbound:
            return
        if self.driver is not None and self.driver.backend.is_speaking():
            return
        if all(s.finished for s in self.states):
            self.stop()  # every source ended or was given up: nothing more will come
            return
        if not self.exit_when_done or self.book.pending():
            return
        for state in self.states:
            if state.finished:
                continue
            if state.open_sessions or state.ended_sessions == 0:
                return
        if all(s.finished for s in self.states) or (
            self.clock() - self._last_frame_at >= DONE_GRACE_SECONDS
        ):
            self.stop()


def _prompt_title(prompt: PendingPrompt) -> str:
    text = event_field(prompt.event, "action") or event_field(prompt.event, "question")
    return f'"{text}"' if text else "from the agent"


def _spoken_response(response: Any) -> str:
    if isinstance(response, bool):
        return "yes" if response else "no"
    return str(response)
