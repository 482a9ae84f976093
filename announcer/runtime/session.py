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
import secrets
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from announcer.engine.announcement import Announcement, Urgency
from announcer.engine.answer_keys import AnswerKeys
from announcer.engine.pipeline import Engine
from announcer.engine.prompts import PendingPrompt, UserAnswer
from announcer.engine.replies import ReplyReady
from announcer.engine.settings import UserSettings
from announcer.engine.speech_commands import Cancel, Speak, SpeechCommand
from announcer.i18n.translate import catalog_language, translator
from announcer.runtime.backoff import Backoff
from announcer.runtime.capabilities import (
    capabilities_from_settings,
    honoured_differences,
    subscription_request,
)
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
# Once every source has ended, queued speech may take this long to finish before exit
# (a backend that never reports the end of an utterance must not keep us forever).
DRAIN_SECONDS = 120.0
# §6.3.1 requires subscription_id on every reply; a producer that never answered the
# handshake (Level 1/2, like the public reference producers) gave none. Each such
# connection gets a generated stand-in of the right shape (``sub_local`` + 16 hex
# digits, valid against the official reply schema), sent on the wire as is
# (docs/protocol.md). UNNEGOTIATED is the prefix that marks one.
UNNEGOTIATED = "sub_local"


def standin_subscription_id() -> str:
    return f"{UNNEGOTIATED}{secrets.token_hex(8)}"


_CLOSED_WORDS = {
    "answered": "it was answered.",
    "voided": "the agent no longer needs an answer.",
    "expired": "the time to answer ran out; the producer applies its default.",
    "superseded": "too many questions were waiting.",
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


#: one input line -> AAEP event dicts; may carry ``finish() -> events`` for the stream's end
FrameAdapter = Callable[[str], list[dict[str, Any]]]
#: builds (not starts) a speech backend by name, for a live switch of ``settings.backend``
BackendFactory = Callable[[str, UserSettings], Any]
#: makes a fresh FrameAdapter for each source (adapters keep per-stream state)
AdapterFactory = Callable[[], FrameAdapter]


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
    # §5.8: the producer sent subscription.close; the next connection shakes hands anew
    closed_by_producer: bool = False
    # the stand-in subscription id for a producer without the handshake (§6.3.1)
    standin_id: str = ""
    # this source's own format adapter: sessions and tool calls never mix across sources
    adapter: FrameAdapter | None = None

    @property
    def name(self) -> str:
        return self.producer_name or self.transport.description


class SpeechSwitchFailed(RuntimeError):
    """The speech backend the user chose could not start; the old one keeps speaking."""


class LiveSession:
    #: a change of ``settings.backend`` takes effect at once (the UI need not say "next start")
    applies_backend_live = True

    def __init__(
        self,
        sources: list[str],
        settings: UserSettings,
        options: TransportOptions | None = None,
        *,
        driver: Any = None,
        engine: Engine | None = None,
        handshake_timeout: float = 5.0,
        exit_when_done: bool = False,
        adapter_factory: AdapterFactory | None = None,
        transports: list[Transport] | None = None,
        clock: Callable[[], float] = time.monotonic,
        backend_factory: BackendFactory | None = None,
        can_reply: bool = True,
    ) -> None:
        self.settings = settings
        self.options = options or TransportOptions()
        self.driver = driver
        self.engine = engine or Engine(settings)
        self.handshake_timeout = handshake_timeout
        self.exit_when_done = exit_when_done
        self.adapter_factory = adapter_factory
        self.backend_factory = backend_factory
        self.clock = clock
        # §5.3.1.4: without a way to answer (``--ui none`` and no ``--auto-reject``) we
        # say so, and producers apply their defaults at once instead of waiting.
        self.can_reply = can_reply
        self._known_prompts: dict[str, PendingPrompt] = {}
        self._answered: set[str] = set()
        self._lost_tokens: dict[str, str] = {}
        self.listeners: list[SessionListener] = []
        made = transports or [open_transport(s, self.options) for s in sources]
        self.states = [
            SourceState(t.source_id, t, adapter=adapter_factory() if adapter_factory else None)
            for t in made
        ]
        # One queue in arrival order (prompts and the events that void them must not swap);
        # when full, the oldest non-critical frame goes, a critical one never (§5.6.2).
        self._inbound: deque[tuple[SourceState, str, bool]] = deque()
        self.dropped: dict[str, int] = {}
        self._wake = asyncio.Event()
        self._stopping = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._last_frame_at = clock()
        self._drain_since: float | None = None
        self._session_state = "idle"
        self.last_announcement: Announcement | None = None
        # Every part of the last message (one split by language has several), for repeat.
        self._last_message: list[Announcement] = []
        self._tasks: list[asyncio.Task[Any]] = []

    # ---- the UI-facing interface ---------------------------------------------------

    def subscribe(self, listener: SessionListener) -> None:
        self.listeners.append(listener)
        for prompt in self.engine.pending_prompts():
            listener.prompt_opened(prompt)

    def now(self) -> float:
        return self.clock()

    def pending_prompts(self) -> list[PendingPrompt]:
        return self.engine.pending_prompts()

    @property
    def status(self) -> SessionStatus:
        connected = [s for s in self.states if s.connected]
        if not connected and any(s.closed_by_producer for s in self.states):
            text = "closed by the producer"
        elif not connected:
            text = "not connected"
        elif len(connected) == len(self.states):
            text = "connected"
        else:
            text = f"connected to {len(connected)} of {len(self.states)}"
        return SessionStatus(
            connection=text,
            producers=tuple(s.name for s in self.states),
            session_state=self._session_state,
            pending_prompts=len(self.engine.pending_prompts()),
        )

    def speak(self, text: str, urgency: Urgency = Urgency.NORMAL, interrupt: bool = False) -> None:
        self._system(text, urgency=urgency, interrupt=interrupt, kind="system.ui")

    def stop_speech(self) -> None:
        self._run(self.engine.silence(self.clock()))

    def repeat_last(self) -> None:
        """Say the last message again; a question still open is read anew (time left now)."""
        parts = list(self._last_message)
        if parts:
            for prompt in self.engine.pending_prompts():
                if prompt.event_id == parts[0].event_id:
                    self.present(prompt.reply_token)
                    return
        for part in parts:
            self._say(part)

    def presented_prompt(self) -> PendingPrompt | None:
        """The question being presented, the one answer keys are for (see the engine)."""
        return self.engine.presented_prompt()

    def present(self, reply_token: str) -> None:
        """Read an open question (again) with the time left now; it becomes the presented one."""
        self._run(self.engine.present(reply_token, self.clock()))

    def say_after_question(self, prompt: PendingPrompt, text: str) -> None:
        """Our own sentence about a question, said right after it and kept with it.

        Queued as a later part of the question's message (``continues``) at the
        question's urgency, so it neither interrupts the question nor is skipped
        as stale once the question has been heard.
        """
        urgency = getattr(prompt.event, "urgency", "critical")
        self._say(
            Announcement(
                text=text,
                language=catalog_language(self.settings.languages),
                urgency=Urgency.CRITICAL if urgency == "critical" else Urgency.NORMAL,
                event_id=prompt.event_id,
                session_id=prompt.session_id,
                producer_id=prompt.producer_id,
                kind="system.ui",
                continues=True,
            )
        )

    def set_answer_keys(self, answer_keys: AnswerKeys) -> None:
        """The UI that answers: the engine's questions name its keys (or none)."""
        self.engine.set_answer_keys(answer_keys)

    def update_settings(self, settings: UserSettings) -> None:
        """Apply at once and renegotiate with every producer that shook hands (§5.7).

        A new speech backend replaces the old one now; if it cannot start, nothing is
        changed and :class:`SpeechSwitchFailed` says why.
        """
        if self.driver is not None and settings.backend != self.settings.backend:
            self._switch_speech(settings)
        self.settings = settings
        self.engine.update_settings(settings)
        for state in self.states:
            if state.connected and state.subscription_id:
                self._spawn(self._renegotiate(state))

    def _switch_speech(self, settings: UserSettings) -> None:
        """Start the chosen backend, then retire the old one (its queue moves to the new)."""
        from announcer.speech.driver import SpeechDriver
        from announcer.speech.registry import user_voice

        factory = self.backend_factory or _create_backend
        try:
            backend = factory(settings.backend, settings)
            backend.start()
        except Exception as exc:
            raise SpeechSwitchFailed(
                self._t("the speech backend {name} could not start ({reason})").format(
                    name=settings.backend, reason=exc
                )
            ) from None
        old = self.driver
        self.driver = SpeechDriver(backend, user_voice(settings), getattr(old, "_notify", None))
        log.info("speech backend switched to %s", settings.backend)
        # what the old backend was saying is cut; the engine hears it ended and goes on
        with contextlib.suppress(Exception):
            old.backend.stop()
        ended = old.take_completed() + old.abandon()
        with contextlib.suppress(Exception):
            old.backend.close()
        for utterance_id in ended:
            self._run(self.engine.on_speech_done(utterance_id, self.clock()))

    async def _renegotiate(self, state: SourceState) -> None:
        capabilities = capabilities_from_settings(self.settings, can_reply=self.can_reply)
        message = {
            "type": "subscription.renegotiate",
            "subscription_id": state.subscription_id,
            "capabilities": capabilities,
        }
        state.requested = capabilities
        try:
            answer = await state.transport.send(message)
        except TransportError as exc:
            self._system(
                self._t("Could not change settings with {name}: {reason}").format(
                    name=state.name, reason=exc
                )
            )
            return
        if answer is not None:
            self._handle_handshake_message(state, answer)

    def answer(self, answer: UserAnswer) -> AnswerOutcome:
        """Check the answer now; send it in the background (a UI on this loop cannot wait).

        Every refusal is known at once; a delivery failure is announced when it happens.
        """
        checked = self._check_answer(answer)
        if isinstance(checked, AnswerOutcome):
            return checked
        source_id, wire = checked
        self._spawn(self._deliver(source_id, wire))
        return AnswerOutcome(True, self._t("Sending: {what}.").format(what=_what(wire)))

    async def answer_async(self, answer: UserAnswer) -> AnswerOutcome:
        """Turn the answer into a reply (the engine checks it) and send it where it came from."""
        checked = self._check_answer(answer)
        if isinstance(checked, AnswerOutcome):
            return checked
        return await self._deliver(*checked)

    def _check_answer(self, answer: UserAnswer) -> AnswerOutcome | tuple[str, dict[str, Any]]:
        token = answer.reply_token
        if token in self._lost_tokens:
            return AnswerOutcome(False, self._nothing_sent(self._lost_tokens[token]))
        outcome = self.engine.answer(answer, self.clock())
        if isinstance(outcome, ReplyReady):
            self._answered.add(token)
        self._sync_prompts()
        self._run(self.engine.tick(self.clock()))  # the next waiting question, now
        if not isinstance(outcome, ReplyReady):
            return AnswerOutcome(False, outcome.message)
        return outcome.prompt.source_id, outcome.to_wire()

    async def _deliver(self, source_id: str, wire: dict[str, Any]) -> AnswerOutcome:
        state = next((s for s in self.states if s.source == source_id), None)
        if state is None or not state.connected:
            reason = self._t(
                "the connection it came from is lost; the producer applies its default."
            )
            self._system(self._nothing_sent(reason), urgency=Urgency.CRITICAL)
            return AnswerOutcome(False, self._nothing_sent(reason))
        try:
            response = await state.transport.send(wire)
        except TransportError as exc:
            reason = self._t(
                "the reply could not be delivered ({problem}); the producer applies its default."
            ).format(problem=exc)
            self._system(self._nothing_sent(reason), urgency=Urgency.CRITICAL)
            return AnswerOutcome(False, self._nothing_sent(reason))
        if response is not None:
            self._handle_handshake_message(state, response)
        self._status_changed()
        return AnswerOutcome(True, self._t("Sent: {what}.").format(what=_what(wire)))

    def _sync_prompts(self) -> None:
        """Tell the UIs about prompts the engine opened or closed since last time."""
        current = {p.reply_token: p for p in self.engine.pending_prompts()}
        for token, prompt in current.items():
            if token not in self._known_prompts:
                self._known_prompts[token] = prompt
                for listener in list(self.listeners):
                    listener.prompt_opened(prompt)
        for token in [t for t in self._known_prompts if t not in current]:
            del self._known_prompts[token]
            if token in self._answered:
                self._answered.discard(token)
                for listener in list(self.listeners):
                    listener.prompt_voided(token, "answered")
                continue
            reason = self._lost_tokens.get(token) or self._t(
                _CLOSED_WORDS.get(str(self.engine.book.closed_reason(token)), "it was closed.")
            )
            for listener in list(self.listeners):
                listener.prompt_voided(token, reason)
        self._status_changed()

    async def _send_outgoing(self) -> None:
        """Replies the engine made on the user's standing order (``auto_reject`` only)."""
        for reply in self.engine.take_outgoing():
            wire = reply.to_wire()
            if wire.get("type") == "confirmation.reply" and wire.get("decision") != "reject":
                log.error("refused to send an automatic reply that is not a rejection")
                continue
            await self._deliver(reply.source_id, wire)

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
                resumed = (
                    state.ever_connected
                    and not state.closed_by_producer
                    and resume is not None
                    and await resume()
                )
                if not resumed:
                    request = subscription_request(self.settings, can_reply=self.can_reply)
                    state.requested = request["capabilities"]
                    outcome = await transport.handshake(request, self.handshake_timeout)
                    retry = self._after_handshake(state, outcome.response)
                    state.closed_by_producer = False
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
                    self._finish_adapter(state)
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
            if not state.standin_id:
                state.standin_id = standin_subscription_id()
            self.engine.set_subscription(state.source, state.standin_id)
            if not state.level1_announced:
                state.level1_announced = True
                log.info("%s did not answer the handshake; defaults apply", state.source)
            return None
        if response.get("type") == "subscription.rejected":
            code = str(response.get("reason_code", "unknown"))
            words = _REJECTION_WORDS.get(code, "it gave no reason")
            retry_after = response.get("retry_after_seconds")
            detail = response.get("reason_message")
            sentence = self._t("{name} refused the subscription: {why}.").format(
                name=state.name, why=self._t(words)
            )
            if isinstance(detail, str) and detail.strip():
                sentence += " " + self._t("It said: {detail}").format(detail=detail.strip())
            if isinstance(retry_after, int | float) and retry_after >= 0:
                again = self._t("Trying again in {seconds} seconds.").format(
                    seconds=f"{retry_after:g}"
                )
                self._system(f"{sentence} {again}")
                return float(retry_after)
            self._give_up(state, sentence, announce_as_is=True)
            return -1.0
        if response.get("type") == "subscription.accepted":
            self._accepted(state, response)
            return None
        self._give_up(
            state,
            self._t("{name} answered the subscription with something unexpected.").format(
                name=state.name
            ),
        )
        return -1.0

    def _accepted(self, state: SourceState, response: dict[str, Any]) -> None:
        state.subscription_id = str(response.get("subscription_id") or "") or None
        if state.subscription_id:
            self.engine.set_subscription(state.source, state.subscription_id)
        producer = response.get("producer")
        if isinstance(producer, dict):
            state.producer_name = producer.get("agent_name") or producer.get("agent_id")
        honoured = response.get("honored_capabilities")
        previous = state.honoured
        state.honoured = honoured if isinstance(honoured, dict) else {}
        if state.honoured != previous:
            notes = honoured_differences(state.requested or {}, state.honoured)
            if notes:
                self._system(
                    self._t("{name} agreed, but {notes}.").format(
                        name=state.name, notes="; ".join(self._t(n) for n in notes)
                    )
                )

    def _handle_handshake_message(self, state: SourceState, message: dict[str, Any]) -> None:
        kind = message.get("type")
        if kind == "subscription.accepted":
            self._accepted(state, message)
            self._system(
                self._t("Settings changed with {name}.").format(name=state.name),
                urgency=Urgency.BACKGROUND,
            )
        elif kind == "subscription.close":
            self._closed_by_producer(state, message)
        elif kind == "subscription.rejected":
            # §5.7: a rejected renegotiation ends the subscription; start a fresh one.
            code = str(message.get("reason_code", "unknown"))
            self._system(
                self._t("{name} refused the new settings: {why}.").format(
                    name=state.name, why=self._t(_REJECTION_WORDS.get(code, code))
                )
            )
            state.subscription_id = None
            self._spawn(state.transport.close("renegotiation rejected"))

    def _closed_by_producer(self, state: SourceState, message: dict[str, Any]) -> None:
        """§5.8, §5.8.2: the producer ended the subscription and applies its defaults.

        Open questions from it are void (the user hears which default the agent
        applies); the status says so; the transport is closed and the supervisor
        reconnects with backoff and a fresh ``subscription.request`` (§8.7, B.2.5),
        never resuming the closed subscription.
        """
        if not state.connected and state.closed_by_producer:
            return
        code = message.get("reason_code")
        why = code if isinstance(code, str) and code.strip() else "no reason given"
        reason = self._t("the agent closed the subscription and applied its default.")
        for prompt in self.engine.pending_prompts():
            if prompt.source_id == state.source:
                self._lost_tokens[prompt.reply_token] = reason
        self._run(self.engine.subscription_closed(state.source, self.clock()))
        state.closed_by_producer = True
        state.connected = False
        state.lost_announced = True
        state.subscription_id = None
        self._system(
            self._t("{name} closed the subscription ({reason}). Reconnecting.").format(
                name=state.name, reason=why[:80]
            ),
            urgency=Urgency.CRITICAL,
        )
        self._sync_prompts()
        self._spawn(state.transport.close("subscription closed by the producer"))

    def _connected(self, state: SourceState) -> None:
        state.connected = True
        # The engine forgot the subscription when the connection dropped; a resumed
        # SSE stream keeps it; a producer without the handshake gets a stand-in.
        if not state.standin_id:
            state.standin_id = standin_subscription_id()
        self.engine.set_subscription(state.source, state.subscription_id or state.standin_id)
        if state.lost_announced:
            self._system(self._t("Reconnected to {name}.").format(name=state.name))
        elif not state.ever_connected:
            self._system(
                self._t("Connected to {name}.").format(name=state.name), urgency=Urgency.BACKGROUND
            )
        state.ever_connected = True
        state.lost_announced = False
        self._status_changed()

    def _lost(self, state: SourceState, reason: str) -> None:
        # What the source sent before it went (a subscription.close, a last question) is
        # handled first, so its meaning is not lost to "connection lost".
        mine = [item for item in self._inbound if item[0] is state]
        if mine:
            for item in mine:
                self._inbound.remove(item)
            for _state, raw, _critical in mine:
                with contextlib.suppress(Exception):
                    self._handle_frame(state, raw)
        was_connected = state.connected
        state.connected = False
        if not state.lost_announced:
            state.lost_announced = True
            if was_connected or state.ever_connected:
                self._system(
                    self._t("Connection to {name} lost: {reason}. Reconnecting.").format(
                        name=state.name, reason=reason
                    ),
                    urgency=Urgency.CRITICAL,
                )
            else:
                self._system(
                    self._t("Cannot connect to {name}: {reason}. Retrying.").format(
                        name=state.name, reason=reason
                    ),
                    urgency=Urgency.CRITICAL,
                )
        # §5.8.2/§8.2.5: the producer applies its default to what we could not answer.
        reason = self._t("the connection was lost; the producer applies its default.")
        for prompt in self.engine.pending_prompts():
            if prompt.source_id == state.source:
                self._lost_tokens[prompt.reply_token] = reason
        self._run(self.engine.source_closed(state.source, self.clock()))
        self._sync_prompts()

    def _give_up(self, state: SourceState, reason: str, *, announce_as_is: bool = False) -> None:
        state.failed = True
        state.finished = True
        state.connected = False
        self._system(
            reason
            if announce_as_is
            else self._t("Giving up on {name}: {reason}").format(name=state.name, reason=reason),
            urgency=Urgency.CRITICAL,
        )
        self._status_changed()
        self._wake.set()

    # ---- inbound frames ---------------------------------------------------------------

    def _enqueue(self, state: SourceState, raw: str) -> None:
        """Never blocks: critical frames always queue, others drop oldest when full."""
        frames = [raw]
        if state.adapter is not None:
            try:
                frames = [json.dumps(event, ensure_ascii=False) for event in state.adapter(raw)]
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

    def _finish_adapter(self, state: SourceState) -> None:
        """End of a finite stream: a format adapter closes what it left open (outputs, tools)."""
        finish = getattr(state.adapter, "finish", None)
        if not callable(finish):
            return
        try:
            events = finish()
        except Exception as exc:
            self._count_drop(f"the format adapter could not finish the stream ({exc})")
            return
        for event in events:
            self._inbound.append((state, json.dumps(event, ensure_ascii=False), True))
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
        """One frame: handshake answers are ours; everything else goes to the engine."""
        now = self.clock()
        self._last_frame_at = now
        if len(raw.encode("utf-8")) > self.options.max_frame_bytes:
            self._count_drop("frame over the size limit")
            return
        if '"subscription.' in raw[:200] or '"subscription.' in raw:
            with contextlib.suppress(ValueError):
                data = json.loads(raw)
                if isinstance(data, dict) and str(data.get("type", "")).startswith("subscription."):
                    self._handle_handshake_message(state, data)
                    self._run(self.engine.receive(data, state.source, now))
                    return
        # The engine decodes and validates (§3.9), drops duplicates (§8.2.4), reorders
        # (§8.2.3), decides what to say and opens prompts; invalid frames are logged there.
        self._run(self.engine.receive(raw, state.source, now))
        self._sync_prompts()
        if self.settings.reply_policy == "auto_reject":
            self._spawn(self._send_outgoing())

    # ---- speech and listeners -------------------------------------------------------------

    def _run(self, commands: list[SpeechCommand]) -> None:
        pending = list(commands)
        rounds = 0
        while pending and rounds < 1000:
            rounds += 1
            follow: list[SpeechCommand] = []
            for command in pending:
                if isinstance(command, Speak):
                    announcement = command.announcement
                    self.last_announcement = announcement
                    if announcement.kind != "system.ui":  # the UI's own words are not news
                        if announcement.continues and self._last_message:
                            self._last_message.append(announcement)
                        else:
                            self._last_message = [announcement]
                    self._tell(command.announcement)
                    if self.driver is None:
                        follow.extend(
                            self.engine.on_speech_done(command.utterance_id, self.clock())
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
            self._run(self.engine.on_speech_done(utterance_id, self.clock()))

    def _tell(self, announcement: Announcement) -> None:
        for listener in list(self.listeners):
            try:
                listener.announcement_made(announcement)
            except Exception:
                log.exception("a listener failed")

    def _say(self, announcement: Announcement) -> None:
        """Our own messages share the engine's speech queue, so urgency orders them too."""
        self._run(self.engine.scheduler.submit(announcement, self.clock()))

    def _t(self, message: str) -> str:
        """Our own phrases go through the product's catalogs (announcer.i18n).

        They are not extracted into the catalogs yet (each shipped language needs its
        translations first), so for now they come out in English.
        """
        return translator(catalog_language(self.settings.languages)).gettext(message)

    def _nothing_sent(self, reason: str) -> str:
        return self._t("Nothing was sent: {reason}").format(reason=reason)

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
                language=catalog_language(self.settings.languages),
                urgency=urgency,
                interrupt=interrupt or urgency is Urgency.CRITICAL,
                kind=kind,
            )
        )

    def _status_changed(self) -> None:
        status = self.status
        for listener in list(self.listeners):
            with contextlib.suppress(Exception):
                listener.status_changed(status)

    async def _ticker(self) -> None:
        while True:
            await asyncio.sleep(TICK_SECONDS)
            now = self.clock()
            self._run(self.engine.tick(now))
            self._sync_prompts()
            self._check_done()

    def _speech_pending(self) -> bool:
        status = self.engine.status()
        return bool(status.queued or status.speaking)

    def _drain_started(self) -> float:
        """When the sources were first seen all finished (the drain's deadline counts from it)."""
        if self._drain_since is None:
            self._drain_since = self.clock()
        return self._drain_since

    def _check_done(self) -> None:
        if self._stopping.is_set() or self._inbound:
            return
        if self.driver is not None and self.driver.backend.is_speaking():
            return
        if all(s.finished for s in self.states):
            # Every source ended or was given up: nothing more will come. Let what is
            # queued be spoken first: between two utterances the backend is silent while
            # the engine still holds the next one (or has not heard the last one end).
            if self._speech_pending() and self.clock() - self._drain_started() < DRAIN_SECONDS:
                return
            self.stop()
            return
        if not self.exit_when_done or self.engine.pending_prompts():
            return
        status = self.engine.status()
        if status.events == 0 or status.open_sessions or status.queued or status.speaking:
            return
        if self.clock() - self._last_frame_at >= DONE_GRACE_SECONDS:
            self.stop()


def _create_backend(spec: str, settings: UserSettings) -> Any:
    from announcer.speech.backends import backend_from_spec

    backend = backend_from_spec(spec, settings)
    if backend is None:
        raise ValueError("'none' turns speech off; it is not a voice to switch to")
    return backend


def _what(wire: dict[str, Any]) -> str:
    decision = wire.get("decision")
    return str(decision) if decision is not None else _spoken_response(wire.get("response"))


def _spoken_response(response: Any) -> str:
    if isinstance(response, bool):
        return "yes" if response else "no"
    return str(response)
