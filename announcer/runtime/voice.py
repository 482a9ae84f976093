"""What the session says itself, and what the UIs hear of all that is said.

Our own sentences (connections, answers, the UI's words) share the engine's speech
queue through the :class:`~announcer.runtime.engine_host.EngineHost`, so urgency orders
them too. Each utterance reaches the listeners as it starts to play (a UI arms its
answer keys from a question's first words); with several sources the speaker is named
when it changes (§9). A switch of the speech backend takes effect at once. The session
owns the voice and hands it its callbacks; this module never imports the session.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections import deque
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from announcer.engine.agent_voices import agent_voices, distinct_names
from announcer.engine.announcement import SPEECH_OUTPUT_KIND, Announcement, Urgency
from announcer.engine.phrases import N_
from announcer.engine.prompts import PendingPrompt
from announcer.engine.settings import UserSettings
from announcer.engine.speakers import SpeakerNames
from announcer.engine.speech_commands import Speak
from announcer.i18n.translate import catalog_language, translator
from announcer.protocol.sanitise import clean_speech
from announcer.runtime.engine_host import EngineHost

if TYPE_CHECKING:
    from announcer.transports.base import AgentLink

log = logging.getLogger("announcer.runtime")

#: builds (not starts) a speech backend by name, for a live switch of ``settings.backend``
BackendFactory = Callable[[str, UserSettings], Any]


class SpeechSwitchFailed(RuntimeError):
    """The speech backend the user chose could not start; the old one keeps speaking."""


class SessionVoice:
    """Our sentences into the engine's queue; every utterance out to the listeners.

    ``listeners`` is the session's list (shared); ``agents`` lists the agents (their
    names name a speaker); ``several`` says whether more than one source speaks.
    """

    def __init__(
        self,
        host: EngineHost,
        settings: Callable[[], UserSettings],
        listeners: list[Any],
        *,
        agents: Callable[[], list[AgentLink]],
        several: bool,
        backend_factory: BackendFactory | None = None,
    ) -> None:
        self.host = host
        self._settings = settings
        self.listeners = listeners
        self._agents = agents
        self.backend_factory = backend_factory
        self.last_announcement: Announcement | None = None
        #: utterances started lately, as the engine gave them: one started again is the
        #: scheduler saying again what an urgent message cut off (issue 29, item 14)
        self._started: deque[Announcement] = deque(maxlen=64)
        self._loop: asyncio.AbstractEventLoop | None = None  # where switch notices are said
        # Every part of the last message (one split by language has several), for repeat.
        self.last_message: list[Announcement] = []
        # Several sources: whose words these are is said when the speaker changes (§9).
        self._speakers = SpeakerNames(self.t) if several else None
        self._voiced: Any = None  # the speech driver the agents' voices were chosen for
        host.on_speak = self.starting
        # News skipped unheard to keep up (issue 14 e) is still shown by the UIs.
        host.engine.scheduler.on_skip = self.tell_skipped

    def language(self) -> str:
        return catalog_language(self._settings().languages)

    def t(self, message: str) -> str:
        """Our own phrases go through the product's catalogs (announcer.i18n)."""
        return translator(self.language()).gettext(message)

    # -- what we say --------------------------------------------------------------------

    def say(self, announcement: Announcement) -> None:
        """Our own messages share the engine's speech queue, so urgency orders them too."""
        self.host.say(announcement)

    def system(
        self,
        text: str,
        *,
        urgency: Urgency = Urgency.NORMAL,
        interrupt: bool = False,
        kind: str = "system.connection",
        event_id: str | None = None,
        answers_key: bool = False,
        cue: bool = False,
    ) -> None:
        self.say(
            Announcement(
                # our sentences quote producer fields (name, languages, reasons): sanitised
                text=clean_speech(text),
                language=self.language(),
                urgency=urgency,
                interrupt=interrupt or urgency is Urgency.CRITICAL,
                event_id=event_id,
                kind=kind,
                answers_key=answers_key,
                cue=cue,
            )
        )

    def say_after_question(self, prompt: PendingPrompt, text: str) -> None:
        """Our own sentence about a question, said right after it and kept with it.

        Queued as a later part of the question's message (``continues``) at the
        question's urgency, so it neither interrupts the question nor is skipped
        as stale once the question has been heard.
        """
        urgency = getattr(prompt.event, "urgency", "critical")
        self.say(
            Announcement(
                # our sentences quote producer fields (name, languages, reasons): sanitised
                text=clean_speech(text),
                language=self.language(),
                urgency=Urgency.CRITICAL if urgency == "critical" else Urgency.NORMAL,
                event_id=prompt.event_id,
                session_id=prompt.session_id,
                producer_id=prompt.producer_id,
                kind="system.ui",
                continues=True,
            )
        )

    def repeat_last(self) -> None:
        """Say the last message again; a question still open is read anew (time left now)."""
        parts = list(self.last_message)
        if parts:
            for prompt in self.host.engine.pending_prompts():
                if prompt.event_id == parts[0].event_id:
                    self.host.present(prompt.reply_token)
                    return
        for part in parts:
            # a copy: a repeat the user asked for is news to show again, not a resumption
            self.say(dataclasses.replace(part))

    # -- what is said, as it starts -------------------------------------------------------

    def starting(self, command: Speak) -> Speak:
        """An utterance starts: named when several speak, kept for repeat, shown to the UIs.

        One said again after an urgent message cut it off is the same announcement: the
        UIs hear of it as said again (``announcement_said_again``), so a line interface
        does not print it twice."""
        given = command.announcement
        again = any(started is given for started in self._started)
        if not again:
            self._started.append(given)
        if self._speakers is not None:
            command = self._named(command)
        announcement = command.announcement
        if again:
            self.last_announcement = announcement
            self.tell_again(announcement)
            return command
        self.last_announcement = announcement
        if announcement.kind != "system.ui":  # the UI's own words are not news
            if announcement.continues and self.last_message:
                self.last_message.append(announcement)
            else:
                self.last_message = [announcement]
        self.tell(announcement)
        return command

    def _named(self, command: Speak) -> Speak:
        """With several sources, the speaker's name before their first words (engine.speakers)."""
        assert self._speakers is not None
        announcement = command.announcement
        producer = announcement.producer_id
        if producer is not None and producer not in self._speakers.names:
            self._learn_agents()
        if self.host.driver is not None and self._voiced is not self.host.driver:
            self._give_voices()  # a new speech output lists other voices
        if producer is not None and producer not in self._speakers.names:
            self._speakers.learn(producer, self._producer_name(producer))
        named = self._speakers.name(announcement)
        return command if named is announcement else Speak(command.utterance_id, named)

    def _agent_names(self) -> list[tuple[str, str]]:
        """(producer id, short name) of each agent, in the order they were given."""
        agents = [(agent.producer_id, agent.description) for agent in self._agents()]
        return [(producer, name) for producer, name in agents if producer and name]

    def _learn_agents(self) -> None:
        """Every agent's name as said before its words, cut to what tells the agents apart
        (engine.agent_voices, issue 33, item 4)."""
        assert self._speakers is not None
        agents = self._agent_names()
        if not agents:
            return
        short = distinct_names([name for _, name in agents])
        for producer, name in agents:
            self._speakers.learn(producer, short[name])

    def _give_voices(self) -> None:
        """Each agent a voice of its own on the current speech output (issue 33, item 4)."""
        driver = self.host.driver
        self._voiced = driver
        if driver is None:
            return
        agents = self._agent_names()
        names = [name for _, name in agents]
        listed = getattr(driver.backend, "installed_voices", None)
        installed: list[str] = []
        if callable(listed):
            try:
                installed = list(listed(self.language()))
            except Exception as exc:  # a backend that cannot list its voices: names only
                log.warning("could not list the installed voices: %s", exc)
        chosen = agent_voices(
            names, self._settings().agent_voices, installed, own=driver.voice.voice
        )
        for producer, name in agents:
            voice = chosen[name]
            if voice is not None:
                driver.producer_voices[producer] = (voice, self.language())

    def _producer_name(self, producer_id: str) -> str:
        for agent in self._agents():
            if agent.producer_id == producer_id:
                return agent.description
        for session in self.host.engine.sessions():
            if session.producer_id == producer_id and session.producer_name:
                return clean_speech(session.producer_name)
        return producer_id

    def tell(self, announcement: Announcement) -> None:
        for listener in list(self.listeners):
            try:
                listener.announcement_made(announcement)
            except Exception:
                log.exception("a listener failed")

    def tell_again(self, announcement: Announcement) -> None:
        """An utterance started again (resumed after a cut); listeners that print keep
        their one line (``announcement_said_again``), the others hear it as new."""
        for listener in list(self.listeners):
            again = getattr(listener, "announcement_said_again", None)
            try:
                if again is not None:
                    again(announcement)
                else:
                    listener.announcement_made(announcement)
            except Exception:
                log.exception("a listener failed")

    def tell_skipped(self, announcement: Announcement) -> None:
        for listener in list(self.listeners):
            skipped = getattr(listener, "announcement_skipped", None)
            if skipped is None:
                continue
            try:
                skipped(announcement)
            except Exception:
                log.exception("a listener failed")

    # -- the speech output ------------------------------------------------------------------

    def switch(self, settings: UserSettings) -> None:
        """Start the chosen backend, then retire the old one (its queue moves to the new)."""
        from announcer.speech.driver import SpeechDriver
        from announcer.speech.registry import user_voice

        factory = self.backend_factory or _create_backend
        try:
            backend = factory(settings.backend, settings)
            backend.start()
        except Exception as exc:
            raise SpeechSwitchFailed(
                self.t(N_("the speech backend {name} could not start ({reason})")).format(
                    name=settings.backend, reason=exc
                )
            ) from None
        old = self.host.driver
        # what the old backend was saying is cut; the engine hears it ended and goes on
        self.host.replace_driver(
            SpeechDriver(backend, user_voice(settings), getattr(old, "_notify", None))
        )
        self.watch_output_switches()
        log.info("speech backend switched to %s", settings.backend)

    def watch_output_switches(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        """A voice that takes over mid-session says so itself (issue 29 item 4): the
        fallback's sentence (from its own thread) joins our words on ``loop``. The
        notice is printed where the fallback prints it; this is its spoken half."""
        if loop is not None:
            self._loop = loop
        backend = getattr(self.host.driver, "backend", None)
        if backend is not None and hasattr(backend, "on_switch"):
            backend.on_switch = self._output_switched

    def _output_switched(self, sentence: str) -> None:
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(
                partial(self.system, sentence, kind=SPEECH_OUTPUT_KIND, urgency=Urgency.NORMAL)
            )

    def output_name(self) -> str:
        """The name of the output speech goes to now ("none" when there is none)."""
        backend = getattr(self.host.driver, "backend", None)
        if backend is None:
            return "none"
        return str(getattr(backend, "active_name", None) or getattr(backend, "name", "none"))

    def notices(self) -> Any:
        """Notices about speech output held for the UI to show (``HeldNotices``), if any."""
        return getattr(getattr(self.host.driver, "backend", None), "notices", None)

    def speaking(self) -> bool:
        """The backend is saying something now."""
        driver = self.host.driver
        return driver is not None and bool(driver.backend.is_speaking())

    def pending(self) -> bool:
        """The engine is saying something or holds something to say."""
        status = self.host.engine.status()
        return bool(status.queued or status.speaking)


def _create_backend(spec: str, settings: UserSettings) -> Any:
    from announcer.speech.registry import backend_from_spec

    backend = backend_from_spec(spec, settings)
    if backend is None:
        raise ValueError("'none' turns speech off; it is not a voice to switch to")
    return backend
