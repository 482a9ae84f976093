"""The one contract between a session and the user interfaces that show it.

A user interface (``ui/plain.py``, the Textual app in ``ui/tui``) is given a
:class:`UiSession` and listens to it as a :class:`SessionListener`. Like harlequin's
adapter base class, :class:`UiSession` is complete: every optional capability (agents
that take messages, the engine presenting one question at a time, speech reporting
when it starts, the demo's "run it again") has a default here, so a UI calls or reads
it and never probes the session with ``getattr``. A session overrides what it offers.

:class:`SessionStatus` is typed: counts, and each source's
:class:`~announcer.engine.subscription.LinkState`. The UIs word it in the user's
language (``announcer.ui.status``); no English sentence is parsed back.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Protocol

from announcer.engine.announcement import Announcement, Urgency
from announcer.engine.subscription import LinkState

if TYPE_CHECKING:
    from announcer.engine.answer_keys import AnswerKeys
    from announcer.engine.prompts import PendingPrompt, UserAnswer
    from announcer.engine.settings import UserSettings
    from announcer.transports.base import AgentLink


class Connection(StrEnum):
    """All sources' connections in one word (the values are the English words)."""

    NOT_CONNECTED = "not connected"
    CONNECTED = "connected"  # every source delivers
    PARTLY = "partly connected"  # some do: see SessionStatus.connected and .sources
    CLOSED_BY_PRODUCER = "closed by the producer"


@dataclass(frozen=True, slots=True)
class SessionStatus:
    """What "where am I" speaks and a status line shows: typed, worded by each UI.

    ``links`` holds each source's state, in the order of ``producers`` when a session
    knows both (a test session may name producers without links, or the reverse).
    """

    producers: tuple[str, ...] = ()
    links: tuple[LinkState, ...] = ()
    session_state: str = "idle"
    pending_prompts: int = 0

    @property
    def sources(self) -> int:
        return len(self.links)

    @property
    def connected(self) -> int:
        """How many sources deliver events now."""
        return sum(1 for link in self.links if link is LinkState.OPEN)

    @property
    def connection(self) -> Connection:
        connected = self.connected
        if not connected and LinkState.CLOSED_BY_PRODUCER in self.links:
            return Connection.CLOSED_BY_PRODUCER
        if not connected:
            return Connection.NOT_CONNECTED
        if connected == self.sources:
            return Connection.CONNECTED
        return Connection.PARTLY


@dataclass(frozen=True, slots=True)
class AnswerOutcome:
    """Whether an answer went out; ``message`` is a sentence for the user.

    ``held``: nothing went out yet, because the agent's follow-up question comes first
    (which of its "always" answers); ``agent``: whose question it answered, named when
    several sources run (issue 31, items 2 and 3).
    """

    sent: bool
    message: str = ""
    held: bool = False
    agent: str = ""


class SessionListener(Protocol):
    """What a session tells a UI (the UI marshals the calls onto its own loop)."""

    def announcement_made(self, announcement: Announcement) -> None: ...

    def prompt_opened(self, prompt: PendingPrompt) -> None: ...

    def prompt_voided(self, reply_token: str, reason: str) -> None: ...

    def status_changed(self, status: SessionStatus) -> None: ...


class UiSession:
    """Everything a UI needs from the engine, runtime and speech.

    The first group must be given by every session; the rest are optional
    capabilities, each with the default meaning "this session does not offer it".
    """

    # ---- what every session gives ----------------------------------------------------

    settings: UserSettings

    @property
    def status(self) -> SessionStatus:
        return SessionStatus()

    def subscribe(self, listener: Any) -> None:
        """Register the UI; prompts already open are re-sent to it."""
        raise NotImplementedError

    def answer(self, answer: UserAnswer) -> AnswerOutcome:
        """Check the answer and send it on the prompt's connection (§6)."""
        raise NotImplementedError

    def speak(
        self,
        text: str,
        urgency: Urgency = Urgency.NORMAL,
        interrupt: bool = False,
        event_id: str | None = None,
    ) -> None:
        """Say a UI sentence; ``event_id`` names the question it is about, if any.

        ``interrupt``: it answers the user's own key, said at once even over a question
        (``Announcement.answers_key``, docs/speech.md "A key over a question").
        """
        raise NotImplementedError

    def update_settings(self, settings: UserSettings) -> None:
        """Apply at once (and renegotiate with connected producers, §5.7)."""
        raise NotImplementedError

    # ---- optional capabilities, with their defaults ----------------------------------

    #: the engine already spoke each question, so a dialog adds only who asks and the keys
    announces_prompts: bool = True
    #: each utterance reaches ``announcement_made`` as it starts to play, so a UI knows when
    #: a question's first words were spoken (answer_guard arming); otherwise the request to
    #: speak counts as the start
    reports_speech_start: bool = False
    #: the engine presents one question at a time and reads each when its turn comes
    #: (:meth:`presented_prompt`, :meth:`present`)
    presents_prompts: bool = False
    #: :meth:`answer_async` sends on the UI's own loop and reports whether it went out
    awaits_delivery: bool = False
    #: a change of ``settings.backend`` takes effect at once (not "next start")
    applies_backend_live: bool = False
    #: the session ends once every source has (``--exit-when-done``, the demo)
    exit_when_done: bool = False
    #: whether the last :meth:`send_prompt` went (or waits to go) out
    prompt_taken: bool = True
    #: an agent here takes the user's messages (:meth:`send_prompt`)
    takes_prompts: bool = False
    #: the session's engine closes each question when its time is up and says why, in
    #: words true for its source (a hook's agent asks itself; an AAEP default applies);
    #: the UI then never closes one on its own clock, where its generic words could come
    #: first and be wrong (``prompt_voided`` arrives as a message)
    voids_at_deadline: bool = False
    #: the session's engine says, once, why each question closed without the user's answer
    #: (withdrawn, with the agent's reason; time up; connection lost); the UI then only
    #: closes it, and says nothing of its own (issue 30 item 1: never announced twice)
    announces_withdrawals: bool = False

    def now(self) -> float:
        """The clock ``PendingPrompt.received_at`` was measured with."""
        return time.monotonic()

    def question_cut(self, prompt: PendingPrompt) -> bool:
        """Whether ``prompt``'s question was cut off by a key's answer and not yet said
        through again (:meth:`announcer.engine.pipeline.Engine.question_cut`)."""
        return False

    def accept_open(self, prompt: PendingPrompt) -> bool:
        """Whether accept may still be sent for ``prompt`` now, as the reply book judges it
        (§6.4: accept closes at the producer's deadline by our best estimate; reject stays
        open until :attr:`PendingPrompt.deadline`). A UI shows only reject once it is not."""
        return prompt.accepts(self.now())

    async def answer_async(self, answer: UserAnswer) -> AnswerOutcome:
        """:meth:`answer`, awaited until the reply is known to have gone out (or not)."""
        return self.answer(answer)

    def pending_prompts(self) -> list[PendingPrompt]:
        return []

    def stop(self) -> None:
        """End the session (the user quit)."""

    def stop_speech(self) -> None:
        """Silence what is being said."""

    def repeat_last(self) -> None:
        """Say the last message again."""

    def say_digest(self) -> None:
        """Say what happened in the agent's turn (now, else the last); a session without
        an engine has none."""

    def set_answer_keys(self, answer_keys: AnswerKeys) -> None:
        """Which keys the engine's spoken questions name; a session without an engine
        names none."""

    def input_ended(self) -> None:
        """The interface can no longer take the user's answers (its input ended): a
        session that declared it can reply says it no longer can (§5.3.1.4)."""

    def presented_prompt(self) -> PendingPrompt | None:
        """The question being presented (see :attr:`presents_prompts`)."""
        return None

    def present(self, reply_token: str) -> None:
        """Read an open question (again) with the time left now."""

    def say_after_question(self, prompt: PendingPrompt, text: str) -> None:
        """Our own sentence about a question, said right after it."""
        self.speak(text, Urgency.CRITICAL)

    def say_cue(self, text: str) -> None:
        """An early key's cue ("Not yet.", issue 20): said after the words being spoken,
        cutting nothing off (``Announcement.cue``)."""
        self.speak(text, Urgency.CRITICAL)

    def literals(self, kind: str) -> list[str]:
        """What the agents wrote that speech shortens, whole: ``code`` (the last code
        block) or ``links`` (the addresses, newest last); none by default."""
        return []

    def diagnostics_report(self) -> list[str]:
        """Every drop so far, by reason; empty when nothing is counted here."""
        return []

    # speech output

    def speech_output(self) -> str:
        """The output speech goes to now: "none", "printed text", a backend's name, or ""
        when the session does not say."""
        return ""

    def speech_notices(self) -> Any:
        """Notices about the speech output held for the UI (``HeldNotices``), or None."""
        return None

    def speech_skipped(self) -> list[Any]:
        """The speech outputs tried and skipped at start, with why (``why_no_voice``)."""
        return []

    def is_quiet(self) -> bool:
        """Nothing is being said or waits to be said."""
        return True

    # the demo

    def request_again(self) -> bool:
        """The user asked to run the demo again; False when this session cannot."""
        return False

    # agents that take messages (``announcer agent``, ``listen acp:NAME``)

    def agents(self) -> list[AgentLink]:
        """The agents the user can type to, in the order named."""
        return []

    def prompt_target(self) -> AgentLink | None:
        """The agent a message without ``@NAME`` goes to, or None."""
        return None

    def send_prompt(
        self, text: str, target: str | None = None, *, stop_key: str = ""
    ) -> str | None:
        """Send the user's words to an agent; the sentence said back, or None with no agent."""
        return None

    def address_agent(self, name: str) -> str | None:
        """``@NAME`` / ``:to NAME`` alone; the sentence said, or None with no agent."""
        return None

    async def cancel_turn(self, target: str | None = None) -> str | None:
        return None

    async def change_setting(self, kind: str, wanted: str) -> str | None:
        return None

    async def agent_sessions(self, choice: str = "") -> str | None:
        return None

    def agent_settings(self) -> list[tuple[str, str, str, bool]]:
        return []

    def agent_commands(self, target: str | None = None) -> list[tuple[str, str]]:
        return []

    def agent_suggestions(self, target: str | None = None) -> list[str]:
        return []
