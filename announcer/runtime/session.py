"""The live session: transports in, pipeline and speech out, replies back on the source.

One :class:`LiveSession` runs every source the user named (Subscribers' Guide
§9). Each source has a supervisor that connects, shakes hands (Level 3,
chapter 5), reads frames, and reconnects with backoff and jitter when the
connection breaks. Frames go in arrival order through one queue to one processor.
In a flood, news beyond ``SOURCE_QUEUE_LIMIT`` waiting frames of a source is skipped
as it arrives and said as a count where it was (questions, lifecycle events and
streamed text never are), so the reader keeps up with any producer; at
``SOURCE_QUEUE_HARD_LIMIT`` the reader pauses and the transport's flow control slows
the producer. The engine folds urgent speech beyond a small backlog into spoken
counts. Every frame dropped anywhere is counted in the engine's diagnostics with
its reason (:meth:`LiveSession.diagnostics_report`). User interfaces are
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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import jiter

from announcer.engine.announcement import Announcement, Urgency
from announcer.engine.answer_keys import AnswerKeys
from announcer.engine.pipeline import Engine
from announcer.engine.prompts import PendingPrompt, UserAnswer, is_secret
from announcer.engine.reconnect import Notice, ReconnectPolicy, Retry
from announcer.engine.replies import ReplyReady
from announcer.engine.settings import UserSettings
from announcer.engine.skipped_news import SkippedNewsStore
from announcer.engine.speakers import SpeakerNames
from announcer.engine.speech_commands import Cancel, Speak, SpeechCommand
from announcer.engine.text_hygiene import clean_for_speech
from announcer.i18n.format import format_integer
from announcer.i18n.translate import catalog_language, translator
from announcer.protocol.decode import DecodeResult
from announcer.protocol.diagnostics import Diagnostic
from announcer.protocol.events import short_type_of
from announcer.protocol.sanitise import clean_speech, text_field
from announcer.runtime.capabilities import (
    capabilities_from_settings,
    honoured_differences,
    subscription_request,
)
from announcer.runtime.diagnostics import DiagnosticsFile, attach_log_file, diagnostics_report
from announcer.runtime.failures import connection_failure
from announcer.transports import (
    Transport,
    TransportError,
    TransportOptions,
    TransportRefused,
    open_transport,
)
from announcer.transports.base import decode_handshake_answer

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
# Ctrl-C: saying goodbye to producers (§5.8) may take at most this long in all.
SHUTDOWN_SECONDS = 1.5
SEEN_EVENT_IDS = 4096
# A producer over its agreed rate (§10 T4) is logged at most this often (each counted).
RATE_LOG_SECONDS = 10.0
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
class Skipped:
    """Frames of one producer skipped in a flood, said as one count where they were."""

    urgent: bool
    producer_id: str
    name: str
    count: int = 0


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


class SpeechSwitchFailed(RuntimeError):
    """The speech backend the user chose could not start; the old one keeps speaking."""


class LiveSession:
    #: a change of ``settings.backend`` takes effect at once (the UI need not say "next start")
    applies_backend_live = True
    #: each utterance reaches the listeners (``announcement_made``) as it starts to play,
    #: so a UI knows when a question's first words were spoken (answer_guard arming)
    reports_speech_start = True

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
        diagnostics_file: Path | None = None,
        offer_again: bool = False,
    ) -> None:
        self.settings = settings
        # The demo: once every source is done, the UIs say so and offer to run it again
        # (their ``demo_over``); the session then runs until the user chooses.
        self.offer_again = offer_again
        self.again_requested = False
        self._over_told = False
        self.options = options or TransportOptions()
        self.driver = driver
        self.engine = engine or Engine(settings)
        # News skipped unheard to keep up (issue 14 e) is still shown by the UIs.
        self.engine.scheduler.on_skip = self._tell_skipped
        self.handshake_timeout = handshake_timeout
        self.exit_when_done = exit_when_done
        self.adapter_factory = adapter_factory
        self.backend_factory = backend_factory
        self.clock = clock
        # §5.3.1.4: without a way to answer (``--ui none`` and no ``--auto-reject``) we
        # say so, and producers apply their defaults at once instead of waiting.
        self.can_reply = can_reply
        self._known_prompts: dict[str, PendingPrompt] = {}
        self.prompt_taken = False  # whether the last message went (or waits to go) out
        self._answered: set[str] = set()
        self._lost_tokens: dict[str, str] = {}
        self.listeners: list[SessionListener] = []
        # ACP agents come ready-made (``announcer agent``, ``listen acp:NAME``); the other
        # sources are opened from their names. One engine hears them all.
        made = [*(transports or []), *(open_transport(s, self.options) for s in sources)]
        self.states = [
            SourceState(t.source_id, t, adapter=adapter_factory() if adapter_factory else None)
            for t in made
        ]
        for state in self.states:
            # issue 22 item 3: only sources announcer maps itself may use x-announcer
            if state.adapter is not None or getattr(state.transport, "maps_events", False):
                self.engine.trust_extension(state.source)
        # One queue in arrival order (prompts and the events that void them must not
        # swap); bounded per source by pausing that source's reader, never by dropping.
        self._inbound: deque[tuple[SourceState, str | Skipped, bool]] = deque()
        self.skipped_total = 0
        # the words of news skipped in a flood, shown where its count is said (bounded)
        self.skipped_news = SkippedNewsStore()
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
        # Where a message without @NAME goes (several agents): the one last addressed.
        self._prompt_target: Any = None
        # Several sources: whose words these are is said when the speaker changes (§9).
        self._speakers = SpeakerNames(self._t) if len(self.states) > 1 else None
        # every record of the engine's diagnostics also goes to this file (state dir)
        self.log_file: DiagnosticsFile | None = (
            attach_log_file(self.engine.diagnostics, diagnostics_file)
            if diagnostics_file is not None
            else None
        )

    # ---- the UI-facing interface ---------------------------------------------------

    def subscribe(self, listener: SessionListener) -> None:
        self.listeners.append(listener)
        offer_login = getattr(listener, "offer_login", None)
        if callable(offer_login):  # the interface runs an agent's terminal login (ACP)
            for agent in self.agents():
                if hasattr(agent, "offer_login"):
                    agent.offer_login = offer_login
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

    def speak(
        self,
        text: str,
        urgency: Urgency = Urgency.NORMAL,
        interrupt: bool = False,
        event_id: str | None = None,
    ) -> None:
        """A UI sentence; ``event_id`` names the question it is about, if any."""
        self._system(
            text, urgency=urgency, interrupt=interrupt, kind="system.ui", event_id=event_id
        )

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
                # our sentences quote producer fields (name, languages, reasons): sanitised
                text=clean_speech(text),
                language=catalog_language(self.settings.languages),
                urgency=Urgency.CRITICAL if urgency == "critical" else Urgency.NORMAL,
                event_id=prompt.event_id,
                session_id=prompt.session_id,
                producer_id=prompt.producer_id,
                kind="system.ui",
                continues=True,
            )
        )

    def diagnostics_report(self) -> list[str]:
        """Every drop so far, by reason, and the newest records: readable without ``-v``."""
        status = self.engine.status()
        return diagnostics_report(
            counts=self.engine.diagnostics.counts(),
            recent=self.engine.diagnostics.recent(),
            speech_drops=status.speech_drops,
            suppressed=status.suppressed,
            transport_drops=dict(self.options.dropped),
            log_file=self.log_file,
            _t=self._t,
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
        source_id, wire, what = checked
        self._spawn(self._deliver(source_id, wire, what))
        return AnswerOutcome(True, self._t("Sending: {what}.").format(what=what))

    async def answer_async(self, answer: UserAnswer) -> AnswerOutcome:
        """Turn the answer into a reply (the engine checks it) and send it where it came from."""
        checked = self._check_answer(answer)
        if isinstance(checked, AnswerOutcome):
            return checked
        return await self._deliver(*checked)

    def _check_answer(self, answer: UserAnswer) -> AnswerOutcome | tuple[str, dict[str, Any], str]:
        token = answer.reply_token
        if token in self._lost_tokens:
            return AnswerOutcome(False, self._nothing_sent(self._lost_tokens[token]))
        outcome = self.engine.answer(answer, self.clock())
        self._run(self.engine.take_speech())
        if isinstance(outcome, ReplyReady):
            self._answered.add(token)
        self._sync_prompts()
        self._run(self.engine.tick(self.clock()))  # the next waiting question, now
        if not isinstance(outcome, ReplyReady):
            return AnswerOutcome(False, outcome.message)
        wire = outcome.to_wire()
        event = outcome.prompt.event
        what = _what(wire, event)
        if is_secret(event) and not any(
            getattr(c, "value", None) == wire.get("response")
            for c in getattr(event, "choices", None) or []
        ):
            what = self._t("your answer, not read back")  # a secret is never said aloud
        return outcome.prompt.source_id, wire, what

    async def _deliver(
        self, source_id: str, wire: dict[str, Any], what: str | None = None
    ) -> AnswerOutcome:
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
        return AnswerOutcome(True, self._t("Sent: {what}.").format(what=what or _what(wire)))

    def _sync_prompts(self) -> None:
        """Tell the UIs about prompts the engine opened or closed since last time."""
        current = {p.reply_token: p for p in self.engine.pending_prompts()}
        changed = False
        for token, prompt in current.items():
            if token not in self._known_prompts:
                self._known_prompts[token] = prompt
                changed = True
                for listener in list(self.listeners):
                    listener.prompt_opened(prompt)
        for token in [t for t in self._known_prompts if t not in current]:
            changed = True
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
        if changed:  # not once per frame: a flood must not flood the UI too
            self._status_changed()

    async def _send_outgoing(self) -> None:
        """Replies the engine made on the user's standing order (``auto_reject`` only)."""
        for reply in self.engine.take_outgoing():
            wire = reply.to_wire()
            if wire.get("type") == "confirmation.reply" and wire.get("decision") != "reject":
                log.error("refused to send an automatic reply that is not a rejection")
                continue
            await self._deliver(reply.source_id, wire)

    # ---- talking to agents (ACP sources: ``announcer agent``, ``listen acp:NAME``) ------

    def agents(self) -> list[Any]:
        """The sources the user can type to, in the order named (AAEP producers take none)."""
        return [s.transport for s in self.states if callable(getattr(s.transport, "prompt", None))]

    @property
    def takes_prompts(self) -> bool:
        return bool(self.agents())

    def find_agent(self, name: str) -> Any:
        """The agent called ``name`` (its short name or title, any case, or a unique start)."""
        wanted = name.strip().lstrip("@").casefold()
        agents = self.agents()
        for agent in agents:
            if wanted in (_agent_name(agent).casefold(), str(agent.description).casefold()):
                return agent
        starting = [a for a in agents if _agent_name(a).casefold().startswith(wanted)]
        return starting[0] if wanted and len(starting) == 1 else None

    def prompt_target(self) -> Any:
        """Where a message without ``@NAME`` goes: the agent last addressed, else the first."""
        agents = self.agents()
        target = getattr(self, "_prompt_target", None)
        if target in agents:
            return target
        return agents[0] if agents else None

    def set_prompt_target(self, name: str) -> str | None:
        """``:to NAME``: later messages go to that agent; the sentence said back."""
        agents = self.agents()
        if not agents:
            return None
        agent = self.find_agent(name)
        if agent is None:
            said = self._no_such_agent(name)
        else:
            self._prompt_target = agent
            said = self._t("Messages now go to {agent}.").format(agent=agent.description)
        self.speak(said)
        return said

    def address_agent(self, name: str) -> str | None:
        """``@NAME`` or ``:to NAME`` with no message: switch to that agent; with no name
        (``@``, ``:to``, ``:agents``), say where messages go. The sentence said, or None
        when no agent runs here."""
        return self.set_prompt_target(name) if name else self.describe_agents()

    def describe_agents(self) -> str | None:
        """``:to`` alone or ``:agents``: where messages go and what each agent is doing."""
        agents = self.agents()
        if not agents:
            return None
        target = self.prompt_target()
        parts = [self._t("Messages go to {agent}.").format(agent=target.description)]
        if len(agents) > 1:
            states = "; ".join(f"{a.description}: {self._agent_state(a)}" for a in agents)
            parts.append(self._t("Agents: {list}.").format(list=states))
        said = " ".join(parts)
        self.speak(said)
        return said

    def _agent_state(self, agent: Any) -> str:
        if getattr(agent, "stopped", False):
            return self._t("stopped")
        if agent.busy:
            waiting = sum(
                1
                for p in self.engine.pending_prompts()
                if p.source_id == getattr(agent, "source_id", None)
            )
            if waiting:
                return self._t("waiting for your answer")
            return self._t("working")
        if not getattr(agent, "ready", True):
            return self._t("starting")
        return self._t("ready")

    def _no_such_agent(self, name: str) -> str:
        names = ", ".join(_agent_name(a) for a in self.agents())
        return self._t("No agent is called {name}. The agents are: {names}.").format(
            name=name.strip(), names=names
        )

    def send_prompt(
        self, text: str, target: str | None = None, *, stop_key: str = ""
    ) -> str | None:
        """Send the user's words to one agent; the sentence said back, or None with no agent.

        ``target`` (``@NAME``) picks the agent and makes it the one later messages go to;
        without it the message goes to :meth:`prompt_target`. Only that agent gets it.
        What was sent is said back briefly (its first words); ``stop_key`` names the key
        that stops a turn in the caller's interface (default: ``:cancel``).
        :attr:`prompt_taken` says whether the message went (or waits to go) out.
        """
        self.prompt_taken = False
        if not self.agents():
            return None
        agent = self.prompt_target() if target is None else self.find_agent(target)
        if agent is None:
            said = self._no_such_agent(target or "")
            self.speak(said)
            return said
        if target is not None:
            self._prompt_target = agent
        name = agent.description
        ready = getattr(agent, "ready", True)
        if getattr(agent, "stopped", False):
            said = self._t("{agent} has stopped; nothing was sent.").format(agent=name)
        elif agent.busy and stop_key:
            said = self._t("{agent} is still working. Press {key} to stop it.").format(
                agent=name, key=stop_key
            )
        elif agent.busy:
            said = self._t("{agent} is still working. Type :cancel to stop it.").format(agent=name)
        elif agent.prompt(text):
            self.prompt_taken = True
            said = (
                self._t("Sent to {agent}: {words}")
                if ready
                else self._t("{agent} is starting; your message goes as soon as it is ready.")
            ).format(agent=name, words=_first_words(text))
        else:
            said = self._t("{agent} is not ready for a message.").format(agent=name)
        self.speak(said)
        return said

    async def cancel_turn(self, target: str | None = None) -> str | None:
        """``session/cancel``: stop one agent's turn (``:cancel [NAME]``); the sentence said."""
        if not self.agents():
            return None
        agent = self.prompt_target() if target is None else self.find_agent(target)
        if agent is None:
            said = self._no_such_agent(target or "")
        elif await agent.cancel_turn():
            said = self._t("Stopping {agent}.").format(agent=agent.description)
        else:
            said = self._t("{agent} is not working on anything.").format(agent=agent.description)
        self.speak(said, interrupt=True)
        return said

    async def change_setting(self, kind: str, wanted: str) -> str | None:
        """``:mode [NAME]`` / ``:model [NAME]`` for the agent messages go to.

        With no name, the current value and the choices are said; a change is said from
        the agent's own answer. The sentence said here (a listing or a refusal), or None
        when no agent runs.
        """
        agent = self.prompt_target()
        if agent is None or not callable(getattr(agent, "change_setting", None)):
            return None
        said = str(await agent.change_setting(kind, wanted))
        if said:
            self.speak(said, interrupt=True)
        return said

    async def agent_sessions(self, choice: str = "") -> str | None:
        """``:sessions`` / ``:sessions N``: list or resume the target agent's sessions."""
        agent = self.prompt_target()
        if agent is None or not callable(getattr(agent, "sessions", None)):
            return None
        said = str(await agent.sessions(choice))
        if said:
            self.speak(said, interrupt=True)
        return said

    def agent_settings(self) -> list[tuple[str, str, str, bool]]:
        """The target agent's mode and config choices: (setting, value, label, current)."""
        agent = self.prompt_target()
        rows = getattr(agent, "setting_rows", None)
        return list(rows()) if callable(rows) else []

    def agent_commands(self, target: str | None = None) -> list[tuple[str, str]]:
        """An agent's slash commands, as it last listed them (the target's by default)."""
        agent = self.prompt_target() if target is None else self.find_agent(target)
        return list(agent.commands()) if agent is not None else []

    # ---- running -----------------------------------------------------------------

    def stop(self) -> None:
        self._stopping.set()
        self._wake.set()
        for state in self.states:
            if state.room is not None:
                state.room.set()

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
            # Goodbyes are bounded: Ctrl-C under any flood ends within a couple of seconds.
            with contextlib.suppress(TimeoutError, Exception):
                await asyncio.wait_for(self._shutdown(), SHUTDOWN_SECONDS)
            for task in (processor, ticker, *self._tasks):
                task.cancel()
            for task in (processor, ticker, *self._tasks):
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        failed = [s for s in self.states if s.failed]
        # an agent that stopped unexpectedly (ACP: its process died) fails the run too
        died = any(getattr(s.transport, "died", False) is True for s in self.states)
        return 1 if died or (failed and len(failed) == len(self.states)) else 0

    def _spawn(self, coroutine: Any) -> None:
        task = asyncio.ensure_future(coroutine)
        self._tasks.append(task)

    async def _shutdown(self) -> None:
        """§5.8: say goodbye to every producer we shook hands with, all at once."""
        await asyncio.gather(*(self._goodbye(state) for state in self.states))

    async def _goodbye(self, state: SourceState) -> None:
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
        state.connected = False
        with contextlib.suppress(Exception):
            await asyncio.wait_for(state.transport.close("subscriber_shutdown"), 5)

    async def _sleep_or_stop(self, seconds: float) -> bool:
        """Sleep; True when asked to stop meanwhile."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stopping.wait(), seconds)
        return self._stopping.is_set()

    async def _supervise(self, state: SourceState) -> None:
        policy = state.policy = ReconnectPolicy(self.clock)
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
                if getattr(transport, "signals_open", False):
                    # SSE: the handshake was a POST; the stream is open only once it answers.
                    transport.on_open = lambda: self._opened(state)  # type: ignore[attr-defined]
                else:
                    self._opened(state)
                for raw in early:
                    self._delivered(state)
                    self._enqueue(state, raw)
                read = 0
                since = time.perf_counter()
                async for raw in transport.frames():
                    if not policy.up:
                        self._delivered(state)
                    self._enqueue(state, raw)
                    read += 1
                    if state.queued >= SOURCE_QUEUE_HARD_LIMIT:
                        await self._wait_for_room(state)
                    elif read % 32 == 0 and time.perf_counter() - since > BATCH_SECONDS:
                        # Buffered frames never starve the loop; reading gets the same
                        # turns as processing, so a flood is skipped rather than queued.
                        await asyncio.sleep(0)
                        since = time.perf_counter()
                if getattr(transport, "finite", False):
                    self._finish_adapter(state)
                    state.finished = True
                    state.connected = False
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
                finite = getattr(transport, "finite", False)
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
            detail = text_field(response.get("reason_message"), limit=500)
            sentence = self._t("{name} refused the subscription: {why}.").format(
                name=state.name, why=self._t(words)
            )
            if detail:
                sentence += " " + self._t("It said: {detail}").format(detail=detail)
            if isinstance(retry_after, int | float) and retry_after >= 0:
                again = self._t("Trying again in {seconds} seconds.").format(
                    seconds=f"{retry_after:g}"
                )
                if sentence != state.last_rejection:  # once, not at every retry
                    state.last_rejection = sentence
                    self._system(f"{sentence} {again}")
                return float(min(retry_after, 24 * 3600))
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
            # Only a string is a name ({"x": 1} or 12345 is not), and it is sanitised.
            state.producer_name = text_field(producer.get("agent_name")) or text_field(
                producer.get("agent_id")
            )
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

    def _opened(self, state: SourceState) -> None:
        """The stream is open; it counts as up once it delivers or stays open a moment."""
        state.connected = True
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

    def _delivered(self, state: SourceState) -> None:
        if state.policy is not None and not state.policy.up:
            self._cancel_settle(state)
            self._announce_connection(state, state.policy.delivered())

    def _settled(self, state: SourceState) -> None:
        state.settle_timer = None
        if state.policy is not None:
            self._announce_connection(state, state.policy.settled())

    def _cancel_settle(self, state: SourceState) -> None:
        if state.settle_timer is not None:
            state.settle_timer.cancel()
            state.settle_timer = None

    def _announce_connection(self, state: SourceState, notice: Notice | None) -> None:
        policy = state.policy
        if policy is not None and policy.up and self._loop is not None:
            # whether it holds, checked once it has been up long enough (flapping)
            self._loop.call_later(policy.healthy_seconds + 0.05, self._holding, state)
        if notice is Notice.RECONNECTED or notice is Notice.HOLDS:
            self._system(self._t("Reconnected to {name}.").format(name=state.name))
        elif notice is Notice.CONNECTED:
            self._system(
                self._t("Connected to {name}.").format(name=state.name), urgency=Urgency.BACKGROUND
            )
        if notice is not None:
            self._say_refused_origins(state)
            state.last_rejection = None
            state.ever_connected = True
            state.lost_announced = False
            self._status_changed()

    def _holding(self, state: SourceState) -> None:
        if state.policy is not None and not self._stopping.is_set():
            notice = state.policy.holding()
            if notice is not None:
                self._announce_connection(state, notice)

    def _say_refused_origins(self, state: SourceState) -> None:
        """§10: a producer that points announcer at another origin is refused; the user
        hears it once per new refusal, since it may be an attempt to take the token."""
        refused = getattr(state.transport, "refused_urls", 0)
        if not isinstance(refused, int) or refused <= state.refusals_said:
            return
        state.refusals_said = refused
        self._system(
            self._t(
                "{name} pointed announcer at another address. It was refused: your token and "
                "answers go only to the address you gave."
            ).format(name=state.name),
            kind="system.security",
        )

    def _lost(self, state: SourceState, reason: str, retry: Retry | None = None) -> None:
        # What the source sent before it went (a subscription.close, a last question) is
        # handled first, so its meaning is not lost to "connection lost".
        mine = [item for item in self._inbound if item[0] is state]
        if mine:
            self._inbound = deque(item for item in self._inbound if item[0] is not state)
            for _state, raw, news in mine:
                state.queued -= 1
                if news:
                    state.queued_news -= 1
                with contextlib.suppress(Exception):
                    if isinstance(raw, Skipped):
                        self._say_skipped(state, raw)
                    else:
                        self._handle_frame(state, raw)
            if state.room is not None:
                state.room.set()
        state.connected = False
        log.info("%s: %s", state.source, reason)  # the full text, errno and all, for the log
        reason = connection_failure(reason, catalog_language(self.settings.languages))
        notice = retry.notice if retry is not None else None
        if state.closed_by_producer and notice is Notice.LOST:
            notice = None  # already said: "{name} closed the subscription ... Reconnecting."
        if notice is Notice.LOST:
            state.lost_announced = True
            self._system(
                self._t("Connection to {name} lost: {reason}. Reconnecting.").format(
                    name=state.name, reason=reason
                ),
                urgency=Urgency.CRITICAL,
            )
        elif notice is Notice.CANNOT_CONNECT:
            state.lost_announced = True
            self._system(
                self._t("Cannot connect to {name}: {reason}. Retrying.").format(
                    name=state.name, reason=reason
                ),
                urgency=Urgency.CRITICAL,
            )
        elif notice is Notice.FLAPPING:
            state.lost_announced = True
            self._system(
                self._t("{name} keeps dropping the connection; still trying.").format(
                    name=state.name
                ),
                urgency=Urgency.CRITICAL,
            )
        elif notice is Notice.STILL_FAILING:
            self._system(
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
        self._run(self.engine.source_closed(state.source, self.clock()))
        self._sync_prompts()
        self._status_changed()

    def _give_up(self, state: SourceState, reason: str, *, announce_as_is: bool = False) -> None:
        state.failed = True
        state.finished = True
        state.connected = False
        if not announce_as_is:
            log.info("%s: giving up: %s", state.source, reason)  # the full text for the log
            reason = connection_failure(reason, catalog_language(self.settings.languages))
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
        """Queue a frame in O(1), or skip it as part of a flood (counted, said, logged).

        Its class comes from the decoded fields (type, urgency, producer), never from
        the text. News beyond ``SOURCE_QUEUE_LIMIT`` waiting is skipped as it arrives, so
        the reader keeps up with any producer and a question sent after a flood is
        reached at once; questions and lifecycle events are never skipped, and
        :meth:`_wait_for_room` bounds them.
        """
        if state.adapter is not None:
            try:
                events = state.adapter(raw)
            except Exception as exc:
                self._count_drop(
                    "adapter.refused", f"the format adapter refused a line ({exc})", state
                )
                return
            for event in events:
                self._inbound.append((state, json.dumps(event, ensure_ascii=False), False))
            state.queued += len(events)
        else:
            news = _news_of(raw)
            if state.honoured and (news is None or not news[0]):
                self._check_rate(state)
            if news is None:
                self._inbound.append((state, raw, False))
            elif state.queued_news >= SOURCE_QUEUE_LIMIT:
                self._skip(state, news)
                return
            else:
                self._inbound.append((state, raw, True))
                state.queued_news += 1
            state.queued += 1
        self._wake.set()

    def _skip(self, state: SourceState, news: tuple[bool, str, str, dict[str, Any]]) -> None:
        urgent, producer_id, name, envelope = news
        run = state.skipping.get((urgent, producer_id))
        code = "critical.folded" if urgent else "flood.skipped"
        if run is None:
            run = state.skipping[(urgent, producer_id)] = Skipped(urgent, producer_id, name)
            self._inbound.append((state, run, False))  # its sentence comes in order
            state.queued += 1
            self.engine.diagnostics.record_drop(
                code,
                f"skipped in a flood: {SOURCE_QUEUE_LIMIT} frames of news from this "
                "connection were already waiting; the rest of this run is counted and said",
                section="§2.2.9" if urgent else "§5.5",
                envelope=envelope,
                source=state.source,
                now=self.clock(),
            )
        else:
            self.engine.diagnostics.count_drop(code)
        run.count += 1
        self.skipped_total += 1
        self.skipped_news.add(envelope, producer_id, self.settings.verbosity)

    def _say_skipped(self, state: SourceState, run: Skipped) -> None:
        """ "40 more urgent messages from X" / "40 more updates skipped", where they were."""
        if state.skipping.get((run.urgent, run.producer_id)) is run:
            del state.skipping[(run.urgent, run.producer_id)]
        self._show_skipped_words(run.producer_id)
        if run.urgent:  # one count per producer waits: the engine's, if it has one
            self._run(
                self.engine.count_skipped_urgent(
                    run.producer_id, run.name, run.count, state.source, self.clock()
                )
            )
            return
        language = catalog_language(self.settings.languages)
        tr = translator(language)
        count = format_integer(run.count, language)
        text = tr.ngettext(
            "{count} more update skipped.", "{count} more updates skipped.", run.count
        ).format(count=count)
        self._say(
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
            self._tell_skipped(
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
            language = catalog_language(self.settings.languages)
            text = translator(language).gettext("Too many skipped to keep their words: {count}")
            self._tell_skipped(
                Announcement(
                    text=text.format(count=format_integer(forgotten, language)),
                    language=language,
                    producer_id=producer_id,
                    kind="system.skipped",
                )
            )

    async def _wait_for_room(self, state: SourceState) -> None:
        """Pause this source's reader while too many of its frames wait (flow control)."""
        if state.queued < SOURCE_QUEUE_HARD_LIMIT or self._stopping.is_set():
            return
        if state.room is None:
            state.room = asyncio.Event()
        state.room.clear()
        stopping = asyncio.ensure_future(self._stopping.wait())
        room = asyncio.ensure_future(state.room.wait())
        try:
            await asyncio.wait((stopping, room), return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopping.cancel()
            room.cancel()

    def _finish_adapter(self, state: SourceState) -> None:
        """End of a finite stream: a format adapter closes what it left open (outputs, tools)."""
        finish = getattr(state.adapter, "finish", None)
        if not callable(finish):
            return
        try:
            events = finish()
        except Exception as exc:
            self._count_drop(
                "adapter.finish", f"the format adapter could not finish the stream ({exc})", state
            )
            return
        for event in events:
            self._inbound.append((state, json.dumps(event, ensure_ascii=False), False))
        state.queued += len(events)
        self._wake.set()

    def _check_rate(self, state: SourceState) -> None:
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
        self.engine.diagnostics.record(
            DecodeResult(kind="event", message=None, diagnostics=[], raw={}),
            source=state.source,
            now=now,
            extra=[Diagnostic("rate.exceeded", "", "§10 T4", message, "warning")],
        )
        log.warning("%s: %s", state.source, message)

    def _count_drop(self, code: str, reason: str, state: SourceState | None = None) -> None:
        """Every drop is counted and kept in the diagnostics the user can read."""
        self.dropped[reason] = self.dropped.get(reason, 0) + 1
        self.engine.diagnostics.record_drop(
            code, reason, source=state.source if state else None, now=self.clock()
        )
        log.warning("dropped: %s (%d so far)", reason, self.dropped[reason])

    async def _process(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            self._drain_speech()
            # Yield every few milliseconds so keys, timers and Ctrl-C are answered at once.
            budget = BATCH_FRAMES
            until = time.perf_counter() + BATCH_SECONDS
            stopping = self._stopping
            while self._inbound and budget and not stopping.is_set():
                budget -= 1
                if budget % 8 == 0 and time.perf_counter() > until:
                    break
                state, raw, news = self._inbound.popleft()
                state.queued -= 1
                if news:
                    state.queued_news -= 1
                if state.room is not None and state.queued <= SOURCE_QUEUE_RESUME:
                    state.room.set()
                if isinstance(raw, Skipped):
                    self._say_skipped(state, raw)
                    continue
                try:
                    self._handle_frame(state, raw)
                except Exception:
                    log.exception("a frame from %s could not be handled", state.source)
                    self._count_drop("frame.unhandled", "a frame could not be handled", state)
            if stopping.is_set():
                return
            if self._inbound:
                self._wake.set()
                await asyncio.sleep(0)
            self._check_done()

    def _handle_frame(self, state: SourceState, raw: str) -> None:
        """One frame: handshake answers are ours; everything else goes to the engine."""
        now = self.clock()
        self._last_frame_at = now
        limit = self.options.max_frame_bytes
        if len(raw) * 4 > limit and len(raw.encode("utf-8", "surrogatepass")) > limit:
            self._count_drop("limits.frame_bytes", "frame over the size limit", state)
            return
        if '"subscription.' in raw:
            # Handshake messages are read by the same decoder as events (duplicate keys,
            # depth and number limits included); one it cannot read goes to the engine,
            # which drops it with the reason like any invalid frame.
            data = decode_handshake_answer(raw)
            if data is not None:
                self._handle_handshake_message(state, data)
                self._run(self.engine.receive(data, state.source, now))
                return
        # The engine decodes and validates (§3.9), drops duplicates (§8.2.4), reorders
        # (§8.2.3), decides what to say and opens prompts; invalid frames are logged there.
        self._run(self.engine.receive(raw, state.source, now))
        self._sync_prompts()
        self._refresh_session_state()
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
                    if self._speakers is not None:
                        command = self._named(command)
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

    def _named(self, command: Speak) -> Speak:
        """With several sources, the speaker's name before their first words (engine.speakers)."""
        assert self._speakers is not None
        announcement = command.announcement
        producer = announcement.producer_id
        if producer is not None and producer not in self._speakers.names:
            self._speakers.learn(producer, self._producer_name(producer))
        named = self._speakers.name(announcement)

        return command if named is announcement else Speak(command.utterance_id, named)

    def _producer_name(self, producer_id: str) -> str:
        for agent in self.agents():
            adapter = getattr(agent, "adapter", None)
            if getattr(adapter, "agent_id", None) == producer_id:
                return str(agent.description)
        for session in self.engine.sessions():
            if session.producer_id == producer_id and session.producer_name:
                return clean_speech(session.producer_name)
        return producer_id

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

    def _tell_skipped(self, announcement: Announcement) -> None:
        for listener in list(self.listeners):
            skipped = getattr(listener, "announcement_skipped", None)
            if skipped is None:
                continue
            try:
                skipped(announcement)
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
        event_id: str | None = None,
    ) -> None:
        self._say(
            Announcement(
                # our sentences quote producer fields (name, languages, reasons): sanitised
                text=clean_speech(text),
                language=catalog_language(self.settings.languages),
                urgency=urgency,
                interrupt=interrupt or urgency is Urgency.CRITICAL,
                event_id=event_id,
                kind=kind,
            )
        )

    def _refresh_session_state(self) -> None:
        """The state "where am I" and the status line tell: that of the latest session.

        An open session reports its agent state (§4.2, ``thinking``, ``awaiting_input``);
        an ended one how it ended. English words; the UI translates them.
        """
        sessions = self.engine.sessions()
        if not sessions:
            return
        latest = max(sessions, key=lambda s: s.last_activity)
        word = latest.agent_state if latest.is_open else latest.lifecycle
        if word != self._session_state:
            self._session_state = word
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
            self._all_done()
            return
        if not self.exit_when_done or self.engine.pending_prompts():
            return
        status = self.engine.status()
        if status.events == 0 or status.open_sessions or status.queued or status.speaking:
            return
        if self.clock() - self._last_frame_at >= DONE_GRACE_SECONDS:
            self._all_done()

    def _all_done(self) -> None:
        """Nothing more will come: stop; or, for the demo, let the UIs say so (issue 14)."""
        if not self.offer_again:
            self.stop()
            return
        if self._over_told:
            return
        self._over_told = True
        told = False
        for listener in self.listeners:
            demo_over = getattr(listener, "demo_over", None)
            if callable(demo_over):
                demo_over()
                told = True
        if not told:
            self.stop()

    def speech_output(self) -> str:
        """The name of the output speech goes to now ("none" when there is none)."""
        backend = getattr(self.driver, "backend", None)
        if backend is None:
            return "none"
        return str(getattr(backend, "active_name", None) or getattr(backend, "name", "none"))

    def speech_notices(self) -> Any:
        """Notices about speech output held for the UI to show (``HeldNotices``), if any."""
        return getattr(getattr(self.driver, "backend", None), "notices", None)

    def request_again(self) -> None:
        """The user asked to run the demo again: this session ends, and its runner repeats."""
        self.again_requested = True
        self.stop()

    def is_quiet(self) -> bool:
        """Nothing is being said or waits to be said."""
        if self.driver is not None and self.driver.backend.is_speaking():
            return False
        return not self._speech_pending()


def _first_words(text: str, count: int = 8) -> str:
    """A message said back briefly: its first words, and an ellipsis if there is more."""
    words = text.split()
    return " ".join(words[:count]) + ("…" if len(words) > count else "")


def _agent_name(agent: Any) -> str:
    """The short name the user types after ``@``: the label given, else the agent's name."""
    return str(getattr(agent, "label", None) or agent.description)


def _create_backend(spec: str, settings: UserSettings) -> Any:
    from announcer.speech.registry import backend_from_spec

    backend = backend_from_spec(spec, settings)
    if backend is None:
        raise ValueError("'none' turns speech off; it is not a voice to switch to")
    return backend


def _what(wire: dict[str, Any], event: object = None) -> str:
    decision = wire.get("decision")
    if decision is not None:
        return str(decision)
    response = wire.get("response")
    # a choice is said by its label, the words the user picked, not its value
    for choice in getattr(event, "choices", None) or []:
        if isinstance(response, str) and getattr(choice, "value", None) == response:
            return clean_for_speech_label(str(getattr(choice, "label", response)))
    return _spoken_response(response)


def clean_for_speech_label(label: str) -> str:
    return " ".join(label.split())[:200]


def _spoken_response(response: Any) -> str:
    if isinstance(response, bool):
        return "yes" if response else "no"
    return str(response)


def _news_of(raw: str) -> tuple[bool, str, str, dict[str, Any]] | None:
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
