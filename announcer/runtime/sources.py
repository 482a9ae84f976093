"""Each source the session runs: a :class:`SourceLink`, and the supervisor that keeps it.

A source (an AAEP producer, an agent, a recorded file) is in exactly one
:class:`~announcer.engine.subscription.LinkState` at a time, in place of the set of
booleans it once was; :attr:`SourceLink.connected`, :attr:`SourceLink.finished` and
:attr:`SourceLink.failed` are read from it.

:class:`SourceSupervisor` runs each link (Subscribers' Guide §9): it connects, shakes
hands (Level 3, chapter 5), reads frames into the inbound queue, and reconnects with
backoff and jitter when the connection breaks (§8.7); it says what happened. The
session owns it and hands it its callbacks; this module never imports the session.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, Protocol

from announcer.engine.announcement import Urgency
from announcer.engine.pipeline import Engine
from announcer.engine.reconnect import Notice, ReconnectPolicy, Retry
from announcer.engine.settings import UserSettings
from announcer.engine.subscription import (
    Accepted,
    After,
    HandshakeAnswer,
    LinkState,
    Next,
    after_message,
    after_request,
    agreement_news,
    read_answer,
    settings_changed,
)
from announcer.i18n.translate import catalog_language
from announcer.runtime.backpressure import BATCH_SECONDS, InboundQueue, Skipped
from announcer.runtime.capabilities import capabilities_from_settings, subscription_request
from announcer.runtime.engine_host import EngineHost
from announcer.runtime.failures import connection_failure
from announcer.transports import Transport, TransportError, TransportRefused

log = logging.getLogger("announcer.runtime")

# §6.3.1 requires subscription_id on every reply; a producer that never answered the
# handshake (Level 1/2, like the public reference producers) gave none. Each such
# connection gets a generated stand-in of the right shape (``sub_local`` + 16 hex
# digits, valid against the official reply schema), sent on the wire as is
# (docs/protocol.md). UNNEGOTIATED is the prefix that marks one.
UNNEGOTIATED = "sub_local"


#: one input line -> AAEP event dicts; may carry ``finish() -> events`` for the stream's end
FrameAdapter = Callable[[str], list[dict[str, Any]]]


def standin_subscription_id() -> str:
    return f"{UNNEGOTIATED}{secrets.token_hex(8)}"


@dataclass(eq=False)
class SourceLink:
    """One source: its transport, where its connection stands, what it negotiated."""

    source: str
    transport: Transport
    link_state: LinkState = LinkState.CONNECTING
    # when it first counted as up (delivered or stayed open): a later connection may resume
    first_up_at: float | None = None
    subscription_id: str | None = None
    requested: dict[str, Any] | None = None
    honoured: dict[str, Any] | None = None
    producer_name: str | None = None
    # the stand-in subscription id for a producer without the handshake (§6.3.1)
    standin_id: str = ""
    # this source's own format adapter: sessions and tool calls never mix across sources
    adapter: FrameAdapter | None = None
    # frames of this source waiting for the processor; its reader pauses at the limit
    queued: int = 0
    # how many of those could be skipped in a flood (news, not questions)
    queued_news: int = 0
    room: asyncio.Event | None = None
    # (urgent, producer_id) -> the count of frames skipped since its sentence was queued
    skipping: dict[tuple[bool, str], Skipped] = field(default_factory=dict)
    # when to retry and what to say about it (announcer.engine.reconnect)
    policy: ReconnectPolicy | None = None
    settle_timer: asyncio.TimerHandle | None = None
    last_rejection: str | None = None
    # producer-supplied URLs on another origin already told to the user (SSE manifest)
    refusals_said: int = 0
    # §10 T4, §5.6: the negotiated max_events_per_second, as a token bucket (tokens, at);
    # events beyond it are counted and logged (never dropped for it)
    rate_budget: tuple[float, float] | None = None
    rate_overruns: int = 0
    rate_logged_at: float | None = None

    @property
    def name(self) -> str:
        return self.producer_name or self.transport.description

    @property
    def connected(self) -> bool:
        return self.link_state is LinkState.OPEN

    @property
    def finished(self) -> bool:
        """Nothing more will come from it: it ended, or we stopped trying."""
        return self.link_state in (LinkState.FINISHED, LinkState.GIVEN_UP)

    @property
    def failed(self) -> bool:
        return self.link_state is LinkState.GIVEN_UP

    @property
    def closed_by_producer(self) -> bool:
        """§5.8: the producer sent subscription.close; the next connection shakes hands anew."""
        return self.link_state is LinkState.CLOSED_BY_PRODUCER

    def went_down(self) -> None:
        """The connection broke: lost if it had been up, else still connecting (retrying).

        A subscription the producer closed stays so until a new handshake.
        """
        if self.link_state is LinkState.CLOSED_BY_PRODUCER or self.finished:
            return
        self.link_state = LinkState.LOST if self.first_up_at is not None else LinkState.CONNECTING


class SaySystem(Protocol):
    """The session's own sentence about a connection (sanitised, in the user's language)."""

    def __call__(
        self,
        text: str,
        *,
        urgency: Urgency = Urgency.NORMAL,
        interrupt: bool = False,
        kind: str = "system.connection",
        event_id: str | None = None,
    ) -> None: ...


class SourceSupervisor:
    """Connects, shakes hands, reads and reconnects every :class:`SourceLink`.

    The session's callbacks: ``say`` our sentence, ``t`` translate it,
    ``status_changed`` and ``sync_prompts`` tell the UIs, ``spawn`` a background task,
    ``handle_frame`` one frame now (what a lost source sent last). ``lost_tokens``
    (reply token -> why nothing can be sent) is the session's, shared.
    """

    def __init__(
        self,
        links: list[SourceLink],
        engine: Engine,
        host: EngineHost,
        inbound: InboundQueue,
        *,
        settings: Callable[[], UserSettings],
        can_reply: bool,
        handshake_timeout: float,
        clock: Callable[[], float],
        wake: asyncio.Event,
        stopping: asyncio.Event,
        say: SaySystem,
        t: Callable[[str], str],
        status_changed: Callable[[], None],
        sync_prompts: Callable[[], None],
        spawn: Callable[[Coroutine[Any, Any, Any]], None],
        handle_frame: Callable[[SourceLink, str], None],
        lost_tokens: dict[str, str],
    ) -> None:
        self.links = links
        self.engine = engine
        self.host = host
        self.inbound = inbound
        self._settings = settings
        self.can_reply = can_reply
        self.handshake_timeout = handshake_timeout
        self.clock = clock
        self._wake = wake
        self._stopping = stopping
        self._say = say
        self._t = t
        self._status_changed = status_changed
        self._sync_prompts = sync_prompts
        self._spawn = spawn
        self._handle_frame = handle_frame
        self._lost_tokens = lost_tokens
        self._loop: asyncio.AbstractEventLoop | None = None
        #: makes each source's :class:`ReconnectPolicy` from the session's clock; a test
        #: whose subject is not the back-off or the settle time gives one with a smaller
        #: ``first`` (the first retry's ceiling) or ``settle_seconds``
        self.new_policy: Callable[[Callable[[], float]], ReconnectPolicy] = ReconnectPolicy

    @property
    def settings(self) -> UserSettings:
        return self._settings()

    def start(self, loop: asyncio.AbstractEventLoop) -> list[asyncio.Task[Any]]:
        """A supervisor task for every link, on ``loop``."""
        self._loop = loop
        return [asyncio.ensure_future(self.supervise(link)) for link in self.links]

    async def renegotiate(self, state: SourceLink) -> None:
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
            self._say(
                self._t("Could not change settings with {name}: {reason}").format(
                    name=state.name, reason=exc
                )
            )
            return
        if answer is not None:
            self.handle_handshake_message(state, read_answer(answer))

    async def shutdown(self) -> None:
        """§5.8: say goodbye to every producer we shook hands with, all at once."""
        await asyncio.gather(*(self._goodbye(state) for state in self.links))

    async def _goodbye(self, state: SourceLink) -> None:
        self._cancel_settle(state)
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
        if not state.finished:
            state.link_state = LinkState.FINISHED  # we closed it: nothing more will come
        with contextlib.suppress(Exception):
            await asyncio.wait_for(state.transport.close("subscriber_shutdown"), 5)

    async def _sleep_or_stop(self, seconds: float) -> bool:
        """Sleep; True when asked to stop meanwhile."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stopping.wait(), seconds)
        return self._stopping.is_set()

    async def supervise(self, state: SourceLink) -> None:
        policy = state.policy = self.new_policy(self.clock)
        transport = state.transport
        while not self._stopping.is_set():
            try:
                await transport.connect()
                resumed = (
                    state.first_up_at is not None
                    and not state.closed_by_producer
                    and await transport.resume()
                )
                if not resumed:
                    request = subscription_request(self.settings, can_reply=self.can_reply)
                    state.requested = request["capabilities"]
                    outcome = await transport.handshake(request, self.handshake_timeout)
                    retry = self._after_handshake(state, outcome.answer)
                    if state.closed_by_producer:  # a fresh subscription, under way
                        state.link_state = LinkState.CONNECTING
                    if retry is not None:
                        await transport.close("rejected")
                        if retry < 0:
                            return
                        # the producer's delay, but never less than our backoff: a
                        # producer that keeps rejecting with 0 seconds is no hot loop
                        delay = max(retry, policy.failed().delay)
                        if await self._sleep_or_stop(delay):
                            return
                        continue
                    early = outcome.early_frames
                else:
                    early = []
                if transport.signals_open:
                    # SSE: the handshake was a POST; the stream is open only once it answers.
                    transport.on_open = lambda: self._opened(state)
                else:
                    self._opened(state)
                for raw in early:
                    self._delivered(state)
                    self.inbound.enqueue(state, raw)
                read = 0
                since = time.perf_counter()
                async for raw in transport.frames():
                    if not policy.up:
                        self._delivered(state)
                    self.inbound.enqueue(state, raw)
                    read += 1
                    if self.inbound.full(state):
                        await self.inbound.wait_for_room(state)
                    elif read % 32 == 0 and time.perf_counter() - since > BATCH_SECONDS:
                        # Buffered frames never starve the loop; reading gets the same
                        # turns as processing, so a flood is skipped rather than queued.
                        await asyncio.sleep(0)
                        since = time.perf_counter()
                if transport.finite:
                    self.inbound.finish_adapter(state)
                    state.link_state = LinkState.FINISHED
                    self._status_changed()
                    self._wake.set()
                    return
                raise TransportError("the producer closed the connection")
            except TransportRefused as exc:  # plaintext off loopback, a hook socket in use,
                self._cancel_settle(state)  # a command that cannot start: retrying cannot help
                self._give_up(state, str(exc))
                return
            except TransportError as exc:
                self._cancel_settle(state)
                if self._stopping.is_set():
                    return
                finite = transport.finite
                failure = policy.failed()
                # a finite source (a recording, an agent process) is never retried, so it
                # is not said to be: "Giving up on …" alone tells what happened
                self._lost(state, str(exc), None if finite else failure)
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(transport.close("reconnecting"), 5)
                if finite:
                    self._give_up(state, str(exc))
                    return
                if await self._sleep_or_stop(failure.delay):
                    return
            except Exception as exc:  # nothing a producer sends may crash us
                log.exception("source %s failed", state.source)
                self._cancel_settle(state)
                if self._stopping.is_set():
                    return
                failure = policy.failed()
                self._lost(state, f"unexpected error: {exc}", failure)
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(transport.close("reconnecting"), 5)
                if await self._sleep_or_stop(failure.delay):
                    return

    def _language(self) -> str:
        return catalog_language(self.settings.languages)

    def _after_handshake(self, state: SourceLink, answer: HandshakeAnswer | None) -> float | None:
        """Apply the handshake answer; a delay to retry after, -1 to give up, None to go on.

        What the answer means, and what the user hears, is the core's
        (:func:`announcer.engine.subscription.after_request`).
        """
        step = after_request(answer, name=state.name, language=self._language())
        if step.next is Next.GIVE_UP:
            self._give_up(state, step.say, announce_as_is=True)
            return -1.0
        if step.next is Next.RETRY:
            if step.reason != state.last_rejection:  # once, not at every retry
                state.last_rejection = step.reason
                self._say(step.say)
            return step.retry_after
        if step.accepted is not None:
            self._accepted(state, step.accepted)
            return None
        # §9.3.3: no answer (Level 1/2): defaults apply, under a stand-in subscription id
        state.subscription_id = None
        state.honoured = None
        if not state.standin_id:
            state.standin_id = standin_subscription_id()
            log.info("%s did not answer the handshake; defaults apply", state.source)
        self.engine.set_subscription(state.source, state.standin_id)
        return None

    def _accepted(self, state: SourceLink, accepted: Accepted) -> None:
        state.subscription_id = accepted.subscription_id
        if state.subscription_id:
            self.engine.set_subscription(state.source, state.subscription_id)
        if accepted.names_producer:
            state.producer_name = accepted.producer_name
        previous = state.honoured
        state.honoured = dict(accepted.honoured)
        news = agreement_news(
            state.requested or {},
            state.honoured,
            previous,
            name=state.name,
            language=self._language(),
        )
        if news:
            self._say(news)

    def handle_handshake_message(self, state: SourceLink, answer: HandshakeAnswer) -> None:
        """A handshake message on an open subscription: a renegotiation's answer or a
        close (the core decides: :func:`announcer.engine.subscription.after_message`)."""
        step = after_message(
            answer,
            name=state.name,
            language=self._language(),
            subscription_id=state.subscription_id,
        )
        if step.after is After.SETTINGS_CHANGED and step.accepted is not None:
            self._accepted(state, step.accepted)
            self._say(settings_changed(state.name, self._language()), urgency=Urgency.BACKGROUND)
        elif step.after is After.CLOSED_BY_PRODUCER:
            self._closed_by_producer(state, step.say)
        elif step.after is After.NOT_OURS:
            # §5.8.1: it names another subscription; ours stays open. Logged, visible in
            # :diagnostics, never honoured (nothing is dropped in silence).
            self.engine.diagnostics.record_drop(
                "subscription.close_not_ours",
                "a subscription.close naming another subscription; ours stays open",
                section="§5.8.1",
                source=state.source,
                now=self.clock(),
            )
        elif step.after is After.ENDED:
            # §5.7: a rejected renegotiation ends the subscription; start a fresh one.
            self._say(step.say)
            state.subscription_id = None
            self._spawn(state.transport.close("renegotiation rejected"))

    def _closed_by_producer(self, state: SourceLink, said: str) -> None:
        """§5.8, §5.8.2: the producer ended the subscription and applies its defaults.

        Open questions from it are void (the user hears which default the agent
        applies); the status says so; the transport is closed and the supervisor
        reconnects with backoff and a fresh ``subscription.request`` (§8.7, B.2.5),
        never resuming the closed subscription. ``said`` is the core's sentence.
        """
        if not state.connected and state.closed_by_producer:
            return
        reason = self._t("the agent closed the subscription and applied its default.")
        for prompt in self.engine.pending_prompts():
            if prompt.source_id == state.source:
                self._lost_tokens[prompt.reply_token] = reason
        self.host.subscription_closed(state.source)
        state.link_state = LinkState.CLOSED_BY_PRODUCER
        state.subscription_id = None
        self._say(said, urgency=Urgency.CRITICAL)
        self._sync_prompts()
        self._spawn(state.transport.close("subscription closed by the producer"))

    def _opened(self, state: SourceLink) -> None:
        """The stream is open; it counts as up once it delivers or stays open a moment."""
        state.link_state = LinkState.OPEN
        # The engine forgot the subscription when the connection dropped; a resumed
        # SSE stream keeps it; a producer without the handshake gets a stand-in.
        if not state.standin_id:
            state.standin_id = standin_subscription_id()
        self.engine.set_subscription(state.source, state.subscription_id or state.standin_id)
        policy = state.policy
        if policy is not None:
            policy.opened()
            self._cancel_settle(state)
            if self._loop is not None:
                state.settle_timer = self._loop.call_later(
                    policy.settle_seconds, self._settled, state
                )
        self._status_changed()

    def _delivered(self, state: SourceLink) -> None:
        if state.policy is not None and not state.policy.up:
            self._cancel_settle(state)
            self._announce_connection(state, state.policy.delivered())

    def _settled(self, state: SourceLink) -> None:
        state.settle_timer = None
        if state.policy is not None:
            self._announce_connection(state, state.policy.settled())

    def _cancel_settle(self, state: SourceLink) -> None:
        if state.settle_timer is not None:
            state.settle_timer.cancel()
            state.settle_timer = None

    def _announce_connection(self, state: SourceLink, notice: Notice | None) -> None:
        policy = state.policy
        if policy is not None and policy.up and self._loop is not None:
            # whether it holds, checked once it has been up long enough (flapping)
            self._loop.call_later(policy.healthy_seconds + 0.05, self._holding, state)
        if notice is Notice.RECONNECTED or notice is Notice.HOLDS:
            self._say(self._t("Reconnected to {name}.").format(name=state.name))
        elif notice is Notice.CONNECTED:
            self._say(
                self._t("Connected to {name}.").format(name=state.name), urgency=Urgency.BACKGROUND
            )
        if notice is not None:
            self._say_refused_origins(state)
            state.last_rejection = None
            if state.first_up_at is None:
                state.first_up_at = self.clock()
            self._status_changed()

    def _holding(self, state: SourceLink) -> None:
        if state.policy is not None and not self._stopping.is_set():
            notice = state.policy.holding()
            if notice is not None:
                self._announce_connection(state, notice)

    def _say_refused_origins(self, state: SourceLink) -> None:
        """§10: a producer that points announcer at another origin is refused; the user
        hears it once per new refusal, since it may be an attempt to take the token."""
        refused = state.transport.refused_urls
        if refused <= state.refusals_said:
            return
        state.refusals_said = refused
        self._say(
            self._t(
                "{name} pointed announcer at another address. It was refused: your token and "
                "answers go only to the address you gave."
            ).format(name=state.name),
            kind="system.security",
        )

    def _lost(self, state: SourceLink, reason: str, retry: Retry | None = None) -> None:
        # What the source sent before it went (a subscription.close, a last question) is
        # handled first, so its meaning is not lost to "connection lost".
        for raw in self.inbound.take_source(state):
            with contextlib.suppress(Exception):
                if isinstance(raw, Skipped):
                    self.inbound.say_skipped(state, raw)
                else:
                    self._handle_frame(state, raw)
        state.went_down()
        log.info("%s: %s", state.source, reason)  # the full text, errno and all, for the log
        reason = connection_failure(reason, catalog_language(self.settings.languages))
        notice = retry.notice if retry is not None else None
        if state.closed_by_producer and notice is Notice.LOST:
            notice = None  # already said: "{name} closed the subscription ... Reconnecting."
        if notice is Notice.LOST:
            self._say(
                self._t("Connection to {name} lost: {reason}. Reconnecting.").format(
                    name=state.name, reason=reason
                ),
                urgency=Urgency.CRITICAL,
            )
        elif notice is Notice.CANNOT_CONNECT and retry is not None and retry.accepted:
            # it accepted the connection and hung up: it can be reached (issue 29, item 15)
            self._say(
                self._hung_up(state.name, reason) + " " + self._t("Retrying."),
                urgency=Urgency.CRITICAL,
            )
        elif notice is Notice.CANNOT_CONNECT:
            self._say(
                self._t("Cannot connect to {name}: {reason}. Retrying.").format(
                    name=state.name, reason=reason
                ),
                urgency=Urgency.CRITICAL,
            )
        elif notice is Notice.FLAPPING:
            self._say(
                self._t("{name} keeps dropping the connection; still trying.").format(
                    name=state.name
                ),
                urgency=Urgency.CRITICAL,
            )
        elif notice is Notice.STILL_FAILING and retry is not None and retry.accepted:
            self._say(
                self._t(
                    "{name} accepted {count} connections and closed each of them; still "
                    "trying. To stop, quit announcer (Control+Q, or :quit in the line "
                    "interface)."
                ).format(name=state.name, count=retry.accepted),
                urgency=Urgency.NORMAL,
            )
        elif notice is Notice.STILL_FAILING:
            self._say(
                self._t(
                    "Still trying to reach {name}: {reason}. To stop, quit announcer "
                    "(Control+Q, or :quit in the line interface)."
                ).format(name=state.name, reason=reason),
                urgency=Urgency.NORMAL,
            )
        elif retry is not None:  # a finite source is not retried: _give_up says why
            log.info("%s: %s (retrying)", state.source, reason)
        # §5.8.2/§8.2.5: the producer applies its default to what we could not answer.
        reason = self._t("the connection was lost; the producer applies its default.")
        for prompt in self.engine.pending_prompts():
            if prompt.source_id == state.source:
                self._lost_tokens[prompt.reply_token] = reason
        self.host.source_closed(state.source)
        self._sync_prompts()
        self._status_changed()

    def _hung_up(self, name: str, reason: str) -> str:
        """ "X accepted the connection, then closed it." with the cause when it says more."""
        if reason == self._t("it closed the connection"):
            return self._t("{name} accepted the connection, then closed it.").format(name=name)
        return self._t("{name} accepted the connection, then closed it: {reason}.").format(
            name=name, reason=reason
        )

    def _give_up(self, state: SourceLink, reason: str, *, announce_as_is: bool = False) -> None:
        state.link_state = LinkState.GIVEN_UP
        if not announce_as_is:
            log.info("%s: giving up: %s", state.source, reason)  # the full text for the log
            reason = connection_failure(reason, catalog_language(self.settings.languages))
        self._say(
            reason
            if announce_as_is
            else self._t("Giving up on {name}: {reason}").format(name=state.name, reason=reason),
            urgency=Urgency.CRITICAL,
        )
        self._status_changed()
        self._wake.set()
