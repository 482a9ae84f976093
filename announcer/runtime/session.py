"""The live session: transports in, pipeline and speech out, replies back on the source.

One :class:`LiveSession` runs every source the user named (Subscribers' Guide §9); it
is the one object the UIs call, and it wires the runtime's rooms with callbacks it
owns (none of them imports this module; docs/architecture.md):

* ``runtime.sources``: each source a ``SourceLink`` with its ``LinkState``, and the
  supervisor that connects, shakes hands (Level 3, chapter 5), reads frames and
  reconnects with backoff and jitter when the connection breaks;
* ``runtime.backpressure``: frames go in arrival order through one queue to one
  processor; in a flood, news beyond ``SOURCE_QUEUE_LIMIT`` waiting frames of a source
  is skipped as it arrives and said as a count where it was, and at
  ``SOURCE_QUEUE_HARD_LIMIT`` the reader pauses so the transport's flow control slows
  the producer. Every frame dropped anywhere is counted in the engine's diagnostics
  with its reason (:meth:`LiveSession.diagnostics_report`);
* ``runtime.answers``: the user's answers, checked and sent on their own source;
* ``runtime.agents``: several agents, addressing, the user's messages, cancel;
* ``runtime.voice``: our own sentences, and every utterance out to the listeners;
* ``runtime.engine_host``: the one loop that drives the engine (its folds of urgent
  speech beyond a small backlog into spoken counts included).

User interfaces are pluggable listeners (``announcement_made``, ``prompt_opened``,
``prompt_voided``, ``status_changed``) and answer through :meth:`LiveSession.answer`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from announcer.engine.announcement import Announcement, Urgency
from announcer.engine.answer_keys import AnswerKeys
from announcer.engine.phrases import N_
from announcer.engine.pipeline import Engine
from announcer.engine.prompts import PendingPrompt, UserAnswer
from announcer.engine.settings import UserSettings
from announcer.engine.skipped_news import SkippedNewsStore
from announcer.engine.subscription import read_answer
from announcer.i18n.translate import catalog_language
from announcer.runtime.agents import AgentDesk
from announcer.runtime.answers import AnswerSender
from announcer.runtime.backpressure import InboundQueue, Skipped
from announcer.runtime.contract import AnswerOutcome, SessionListener, SessionStatus, UiSession
from announcer.runtime.diagnostics import DiagnosticsFile, attach_log_file, diagnostics_report
from announcer.runtime.ending import SessionEnd
from announcer.runtime.engine_host import EngineHost
from announcer.runtime.sources import (
    FrameAdapter,
    SourceLink,
    SourceSupervisor,
)
from announcer.runtime.voice import BackendFactory, SessionVoice
from announcer.transports import (
    Transport,
    TransportOptions,
    open_transport,
)
from announcer.transports.base import AgentLink, decode_handshake_answer

log = logging.getLogger("announcer.runtime")

# Ctrl-C: saying goodbye to producers (§5.8) may take at most this long in all.
SHUTDOWN_SECONDS = 1.5
TICK_SECONDS = 0.25
# Why a question left the UIs, said with it (translated where it is said).
_CLOSED_WORDS = {
    "answered": N_("it was answered."),
    "voided": N_("the agent no longer needs an answer."),
    "expired": N_("the time to answer ran out; the producer applies its default."),
    "superseded": N_("too many questions were waiting."),
}


#: makes a fresh FrameAdapter for each source (adapters keep per-stream state)
AdapterFactory = Callable[[], FrameAdapter]


class LiveSession(UiSession):
    #: a change of ``settings.backend`` takes effect at once (the UI need not say "next start")
    applies_backend_live = True
    #: each utterance reaches the listeners (``announcement_made``) as it starts to play,
    #: so a UI knows when a question's first words were spoken (answer_guard arming)
    reports_speech_start = True
    #: the engine presents one question at a time and reads each when its turn comes
    presents_prompts = True
    #: the engine closes a question whose time is up, and says why (engine.questions)
    voids_at_deadline = True
    #: the engine says why a question closed (its notice, with the agent's reason)
    announces_withdrawals = True
    #: replies go out on this loop; answer_async says whether they did
    awaits_delivery = True

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
        self.options = options or TransportOptions()
        self.engine = engine or Engine(settings)
        # The one loop that feeds the engine and carries out its speech (runtime.engine_host).
        self.host = EngineHost(self.engine, driver, clock)
        self.handshake_timeout = handshake_timeout
        self.exit_when_done = exit_when_done
        self.adapter_factory = adapter_factory
        self.clock = clock
        # §5.3.1.4: without a way to answer (``--ui none`` and no ``--auto-reject``) we
        # say so, and producers apply their defaults at once instead of waiting.
        self.can_reply = can_reply
        self._known_prompts: dict[str, PendingPrompt] = {}
        self._answered: set[str] = set()
        self._lost_tokens: dict[str, str] = {}
        self.listeners: list[SessionListener] = []
        # ACP agents come ready-made (``announcer agent``, ``listen acp:NAME``); the other
        # sources are opened from their names. One engine hears them all.
        made = [*(transports or []), *(open_transport(s, self.options) for s in sources)]
        self.states = [
            SourceLink(t.source_id, t, adapter=adapter_factory() if adapter_factory else None)
            for t in made
        ]
        for state in self.states:
            # issue 22 item 3: only sources announcer maps itself may use x-announcer
            if state.adapter is not None or state.transport.maps_events:
                self.engine.trust_extension(state.source)
        # What we say, and every utterance out to the listeners (runtime.voice).
        self.voice = SessionVoice(
            self.host,
            lambda: self.settings,
            self.listeners,
            agents=self.agents,
            several=len(self.states) > 1,
            backend_factory=backend_factory,
        )
        self._wake = asyncio.Event()
        self._stopping = asyncio.Event()
        # One queue in arrival order (prompts and the events that void them must not
        # swap); bounded per source by pausing that source's reader (runtime.backpressure).
        self.inbound = InboundQueue(
            self.engine.diagnostics,
            clock,
            wake=self._wake,
            stopping=self._stopping,
            say=self.voice.say,
            count_urgent=self.host.count_skipped_urgent,
            language=lambda: catalog_language(self.settings.languages),
            verbosity=lambda: self.settings.verbosity,
            show_skipped=self.voice.tell_skipped,
        )
        self._loop: asyncio.AbstractEventLoop | None = None
        # Each source's supervisor: connect, handshake, read, reconnect (runtime.sources).
        self.sources = SourceSupervisor(
            self.states,
            self.engine,
            self.host,
            self.inbound,
            settings=lambda: self.settings,
            can_reply=can_reply,
            handshake_timeout=handshake_timeout,
            clock=clock,
            wake=self._wake,
            stopping=self._stopping,
            say=self.voice.system,
            t=self.voice.t,
            status_changed=self._status_changed,
            sync_prompts=self._sync_prompts,
            spawn=self._spawn,
            handle_frame=self._handle_frame,
            lost_tokens=self._lost_tokens,
        )
        # The user's answers, checked and sent on their own source (runtime.answers).
        self.answers = AnswerSender(
            self.host,
            self.states,
            lost_tokens=self._lost_tokens,
            answered=self._answered,
            t=self.voice.t,
            say=self.voice.system,
            sync_prompts=self._sync_prompts,
            status_changed=self._status_changed,
            spawn=self._spawn,
            handshake_message=self.sources.handle_handshake_message,
        )
        # When the session is over (runtime.ending).
        self.ending = SessionEnd(self.engine, clock)
        self._session_state = "idle"
        self._tasks: list[asyncio.Task[Any]] = []
        # Several agents: addressing, the user's messages, cancel (runtime.agents).
        self.desk = AgentDesk(
            lambda: [s.transport for s in self.states],
            lambda text, interrupt: self.speak(text, interrupt=interrupt),
            self.voice.t,
            lambda source_id: sum(
                1 for p in self.engine.pending_prompts() if p.source_id == source_id
            ),
            self._user_wrote,
        )
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
                agent.offer_login = offer_login
        for prompt in self.engine.pending_prompts():
            listener.prompt_opened(prompt)

    def now(self) -> float:
        return self.clock()

    def pending_prompts(self) -> list[PendingPrompt]:
        return self.engine.pending_prompts()

    @property
    def status(self) -> SessionStatus:
        return SessionStatus(
            links=tuple(s.link_state for s in self.states),
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
        """A UI sentence; ``event_id`` names the question it is about, if any.

        ``interrupt``: the answer to the user's own key, said at once (docs/speech.md).
        """
        self.voice.system(
            text,
            urgency=urgency,
            interrupt=interrupt,
            kind="system.ui",
            event_id=event_id,
            answers_key=interrupt,
        )

    def _user_wrote(self, agent: AgentLink) -> None:
        """A message went to ``agent``: its start news still waiting is moot (issue 31,
        item 11), for the agents that say which session it went to."""
        session_id = agent.aaep_session_id()
        if session_id is not None:
            self.host.user_wrote(session_id)

    def say_cue(self, text: str) -> None:
        self.voice.system(text, urgency=Urgency.CRITICAL, kind="system.ui", cue=True)

    def question_cut(self, prompt: PendingPrompt) -> bool:
        return self.engine.question_cut(prompt)

    def stop_speech(self) -> None:
        self.host.silence()

    def repeat_last(self) -> None:
        """Say the last message again; a question still open is read anew (time left now)."""
        self.voice.repeat_last()

    def say_digest(self) -> None:
        """ "What happened": the digest of the agent's turn, built by the engine."""
        self.host.digest()

    def presented_prompt(self) -> PendingPrompt | None:
        """The question being presented, the one answer keys are for (see the engine)."""
        return self.engine.presented_prompt()

    def present(self, reply_token: str) -> None:
        """Read an open question (again) with the time left now; it becomes the presented one."""
        self.host.present(reply_token)

    def say_after_question(self, prompt: PendingPrompt, text: str) -> None:
        """Our own sentence about a question, said right after it and kept with it."""
        self.voice.say_after_question(prompt, text)

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
            _t=self.voice.t,
        )

    def set_answer_keys(self, answer_keys: AnswerKeys) -> None:
        """The UI that answers: the engine's questions name its keys (or none)."""
        self.engine.set_answer_keys(answer_keys)

    def update_settings(self, settings: UserSettings) -> None:
        """Apply at once and renegotiate with every producer that shook hands (§5.7).

        A new speech backend replaces the old one now; if it cannot start, nothing is
        changed and :class:`~announcer.runtime.voice.SpeechSwitchFailed` says why.
        """
        if self.driver is not None and settings.backend != self.settings.backend:
            self.voice.switch(settings)
        self.settings = settings
        self.engine.update_settings(settings)
        for state in self.states:
            if state.connected and state.subscription_id:
                self._spawn(self.sources.renegotiate(state))

    def input_ended(self) -> None:
        """The user can no longer answer (the plain UI's standard input ended): every
        producer is told, now by renegotiation (§5.7) and at any later handshake, that
        this subscriber cannot reply (§5.3.1.4), so it applies its defaults at once
        instead of waiting on questions nobody can answer. ``auto_reject`` still replies."""
        if not self.can_reply or self.settings.reply_policy == "auto_reject":
            return
        self.can_reply = False
        self.sources.can_reply = False
        for state in self.states:
            if state.connected and state.subscription_id:
                self._spawn(self.sources.renegotiate(state))

    def answer(self, answer: UserAnswer) -> AnswerOutcome:
        """Check the answer now; send it in the background (runtime.answers)."""
        return self.answers.answer(answer)

    async def answer_async(self, answer: UserAnswer) -> AnswerOutcome:
        """Turn the answer into a reply (the engine checks it) and send it where it came from."""
        return await self.answers.answer_async(answer)

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
            reason = self._lost_tokens.get(token) or self.voice.t(
                _CLOSED_WORDS.get(str(self.engine.book.closed_reason(token)), "it was closed.")
            )
            for listener in list(self.listeners):
                listener.prompt_voided(token, reason)
        if changed:  # not once per frame: a flood must not flood the UI too
            self._status_changed()

    # ---- talking to agents (runtime.agents: ``announcer agent``, ``listen acp:NAME``) ----

    # The contract's plain defaults (UiSession) are read live from the desk here.
    @property
    def prompt_taken(self) -> bool:  # type: ignore[override]
        """Whether the last message went (or waits to go) out."""
        return self.desk.prompt_taken

    def agents(self) -> list[AgentLink]:
        return self.desk.agents()

    @property
    def takes_prompts(self) -> bool:  # type: ignore[override]
        return self.desk.takes_prompts

    def find_agent(self, name: str) -> AgentLink | None:
        return self.desk.find_agent(name)

    def prompt_target(self) -> AgentLink | None:
        return self.desk.prompt_target()

    def set_prompt_target(self, name: str) -> str | None:
        return self.desk.set_prompt_target(name)

    def address_agent(self, name: str) -> str | None:
        return self.desk.address_agent(name)

    def describe_agents(self) -> str | None:
        return self.desk.describe_agents()

    def send_prompt(
        self, text: str, target: str | None = None, *, stop_key: str = ""
    ) -> str | None:
        return self.desk.send_prompt(text, target, stop_key=stop_key)

    async def cancel_turn(self, target: str | None = None) -> str | None:
        return await self.desk.cancel_turn(target)

    async def change_setting(self, kind: str, wanted: str) -> str | None:
        return await self.desk.change_setting(kind, wanted)

    async def agent_sessions(self, choice: str = "") -> str | None:
        return await self.desk.agent_sessions(choice)

    def agent_settings(self) -> list[tuple[str, str, str, bool]]:
        return self.desk.agent_settings()

    def agent_commands(self, target: str | None = None) -> list[tuple[str, str]]:
        return self.desk.agent_commands(target)

    def agent_suggestions(self, target: str | None = None) -> list[str]:
        return self.desk.agent_suggestions(target)

    def literals(self, kind: str) -> list[str]:
        return self.engine.literals.latest(kind)

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
        self.voice.watch_output_switches(self._loop)
        if self.driver is not None and hasattr(self.driver, "_notify"):
            self.driver._notify = partial(_wake_from_any_thread, self._loop, self._wake)
        self._tasks.extend(self.sources.start(self._loop))
        processor = asyncio.ensure_future(self._process())
        ticker = asyncio.ensure_future(self._ticker())
        try:
            await self._stopping.wait()
        finally:
            # Goodbyes are bounded: Ctrl-C under any flood ends within a couple of seconds.
            with contextlib.suppress(TimeoutError, Exception):
                await asyncio.wait_for(self.sources.shutdown(), SHUTDOWN_SECONDS)
            for task in (processor, ticker, *self._tasks):
                task.cancel()
            for task in (processor, ticker, *self._tasks):
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        failed = [s for s in self.states if s.failed]
        # an agent that stopped unexpectedly (ACP: its process died) fails the run too
        died = any(s.transport.died for s in self.states)
        return 1 if died or (failed and len(failed) == len(self.states)) else 0

    def _spawn(self, coroutine: Any) -> None:
        task = asyncio.ensure_future(coroutine)
        self._tasks.append(task)

    # ---- inbound frames ---------------------------------------------------------------

    # The inbound queue (runtime.backpressure); these names are what the supervisors use.

    @property
    def _inbound(self) -> Any:
        return self.inbound.items

    @property
    def skipped_total(self) -> int:
        """News frames skipped in a flood (each counted, said and logged)."""
        return self.inbound.skipped_total

    @property
    def skipped_news(self) -> SkippedNewsStore:
        """The words of news skipped in a flood, until its count is said (bounded)."""
        return self.inbound.skipped_news

    @property
    def dropped(self) -> dict[str, int]:
        return self.inbound.dropped

    def _enqueue(self, state: SourceLink, raw: str) -> None:
        self.inbound.enqueue(state, raw)

    def _say_skipped(self, state: SourceLink, run: Skipped) -> None:
        self.inbound.say_skipped(state, run)

    async def _wait_for_room(self, state: SourceLink) -> None:
        await self.inbound.wait_for_room(state)

    async def _process(self) -> None:
        await self.inbound.serve(
            self._handle_frame, on_wake=self.host.drain, after_batch=self._check_done
        )

    def _handle_frame(self, state: SourceLink, raw: str) -> None:
        """One frame: handshake answers are ours; everything else goes to the engine."""
        now = self.clock()
        self.ending.frame_read()
        limit = self.options.max_frame_bytes
        if len(raw) * 4 > limit and len(raw.encode("utf-8", "surrogatepass")) > limit:
            self.inbound.count_drop("limits.frame_bytes", "frame over the size limit", state)
            return
        if '"subscription.' in raw:
            # Handshake messages are read by the same decoder as events (duplicate keys,
            # depth and number limits included); one it cannot read goes to the engine,
            # which drops it with the reason like any invalid frame.
            data = decode_handshake_answer(raw)
            if data is not None:
                self.sources.handle_handshake_message(state, read_answer(data))
                self.host.receive(data, state.source, now)
                return
        # The engine decodes and validates (§3.9), drops duplicates (§8.2.4), reorders
        # (§8.2.3), decides what to say and opens prompts; invalid frames are logged there.
        self.host.receive(raw, state.source, now)
        self._sync_prompts()
        self._refresh_session_state()
        if self.settings.reply_policy == "auto_reject":
            self._spawn(self.answers.send_outgoing())

    # ---- speech and listeners -------------------------------------------------------------

    @property
    def driver(self) -> Any:
        """The speech driver (None: no voice, each utterance ends as it starts)."""
        return self.host.driver

    @driver.setter
    def driver(self, driver: Any) -> None:
        self.host.driver = driver

    @property
    def last_announcement(self) -> Announcement | None:
        return self.voice.last_announcement

    @property
    def backend_factory(self) -> BackendFactory | None:
        return self.voice.backend_factory

    @backend_factory.setter
    def backend_factory(self, factory: BackendFactory | None) -> None:
        self.voice.backend_factory = factory

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
            self.host.tick()
            self._sync_prompts()
            self._check_done()

    def _check_done(self) -> None:
        if self._stopping.is_set() or self.inbound.items or self.voice.speaking():
            return
        if self.ending.over(
            all_finished=all(s.finished for s in self.states),
            speech_pending=self.voice.pending(),
            exit_when_done=self.exit_when_done,
        ):
            self._all_done()

    def _all_done(self) -> None:
        """Nothing more will come: stop; or, for the demo, let the UIs say so (issue 14)."""
        if not self.offer_again:
            self.stop()
            return
        if not self.ending.tell_over_once():
            return
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
        return self.voice.output_name()

    def speech_notices(self) -> Any:
        """Notices about speech output held for the UI to show (``HeldNotices``), if any."""
        return self.voice.notices()

    def request_again(self) -> bool:
        """The user asked to run the demo again: this session ends, and its runner repeats."""
        self.again_requested = True
        self.stop()
        return True

    def speech_skipped(self) -> list[Any]:
        skipped = getattr(getattr(self.driver, "backend", None), "skipped", None)
        return skipped if isinstance(skipped, list) else []

    def is_quiet(self) -> bool:
        """Nothing is being said or waits to be said."""
        return not self.voice.speaking() and not self.voice.pending()


def _wake_from_any_thread(loop: asyncio.AbstractEventLoop, wake: asyncio.Event) -> None:
    """A backend ended an utterance on its own thread; after the session's loop closed
    (a voice finishing as announcer exits) there is nothing left to wake."""
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(wake.set)
