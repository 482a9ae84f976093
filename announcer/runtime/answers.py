"""The user's answers: checked by the engine, sent on the source their question came from.

Every refusal is known at once (the engine checks the answer, §6); a delivery failure
is said when it happens, and the producer applies its default. Replies the engine makes
on the user's standing order (``auto_reject``) go out here too, and only rejections.
The session owns the sender and hands it its callbacks; this module never imports the
session.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from announcer.engine.announcement import Urgency
from announcer.engine.prompts import AnswerScope, UserAnswer, is_secret
from announcer.engine.replies import ReplyReady
from announcer.engine.subscription import HandshakeAnswer, read_answer
from announcer.protocol.replies import ConfirmationReply
from announcer.runtime.contract import AnswerOutcome
from announcer.runtime.engine_host import EngineHost
from announcer.runtime.sources import SaySystem, SourceLink
from announcer.transports import TransportError
from announcer.transports.base import ANSWER_HELD, AgentAnswer

log = logging.getLogger("announcer.runtime")


@dataclass(frozen=True, slots=True)
class Reply:
    """A checked answer on its way: the AAEP reply for a producer, the same answer typed
    for an agent transport (no wire dict read back), and how it is said."""

    source_id: str
    wire: dict[str, Any]
    typed: AgentAnswer
    what: str | None = None


def typed_answer(reply: ReplyReady, scope: AnswerScope) -> AgentAnswer:
    """The engine's reply as an agent takes it: the token as the question carried it, the
    decision and the user's scope (a confirmation) or the response (a form)."""
    message = reply.message
    if isinstance(message, ConfirmationReply):
        return AgentAnswer(message.reply_token, decision=message.decision, scope=scope)
    return AgentAnswer(message.reply_token, response=message.response)


class AnswerSender:
    """Checks an answer with the engine and sends the reply on its own source.

    ``lost_tokens`` (reply token -> why nothing can be sent) and ``answered`` (tokens
    answered, until the UIs hear so) are the session's, shared. ``handshake_message``
    handles a handshake answer a producer sent back instead of nothing.
    """

    def __init__(
        self,
        host: EngineHost,
        links: list[SourceLink],
        *,
        lost_tokens: dict[str, str],
        answered: set[str],
        t: Callable[[str], str],
        say: SaySystem,
        sync_prompts: Callable[[], None],
        status_changed: Callable[[], None],
        spawn: Callable[[Coroutine[Any, Any, Any]], None],
        handshake_message: Callable[[SourceLink, HandshakeAnswer], None],
    ) -> None:
        self.host = host
        self.links = links
        self._lost_tokens = lost_tokens
        self._answered = answered
        self._t = t
        self._say = say
        self._sync_prompts = sync_prompts
        self._status_changed = status_changed
        self._spawn = spawn
        self._handshake_message = handshake_message

    def _nothing_sent(self, reason: str) -> str:
        return self._t("Nothing was sent: {reason}").format(reason=reason)

    def answer(self, answer: UserAnswer) -> AnswerOutcome:
        """Check the answer now; send it in the background (a UI on this loop cannot wait).

        Every refusal is known at once; a delivery failure is announced when it happens.
        """
        checked = self.check(answer)
        if isinstance(checked, AnswerOutcome):
            return checked
        self._spawn(self.deliver(checked))
        what = checked.what
        agent = self._named(checked.source_id)
        if agent:
            said = self._t("Sending to {agent}: {what}.").format(agent=agent, what=what)
        else:
            said = self._t("Sending: {what}.").format(what=what)
        return AnswerOutcome(True, said, agent=agent)

    async def answer_async(self, answer: UserAnswer) -> AnswerOutcome:
        """Turn the answer into a reply (the engine checks it) and send it where it came from."""
        checked = self.check(answer)
        if isinstance(checked, AnswerOutcome):
            return checked
        return await self.deliver(checked)

    def check(self, answer: UserAnswer) -> AnswerOutcome | Reply:
        token = answer.reply_token
        if token in self._lost_tokens:
            return AnswerOutcome(False, self._nothing_sent(self._lost_tokens[token]))
        outcome = self.host.answer(answer)
        if isinstance(outcome, ReplyReady):
            self._answered.add(token)
        self._sync_prompts()
        self.host.tick()  # the next waiting question, now
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
        return Reply(outcome.prompt.source_id, wire, typed_answer(outcome, answer.scope), what)

    async def deliver(self, reply: Reply) -> AnswerOutcome:
        source_id, wire, what = reply.source_id, reply.wire, reply.what
        state = next((s for s in self.links if s.source == source_id), None)
        if state is None or not state.connected:
            reason = self._t(
                "the connection it came from is lost; the producer applies its default."
            )
            self._say(self._nothing_sent(reason), urgency=Urgency.CRITICAL)
            return AnswerOutcome(False, self._nothing_sent(reason))
        try:
            # an agent transport takes the answer typed; a producer, the AAEP reply
            response = await state.transport.send_answer(reply.typed, wire)
        except TransportError as exc:
            reason = self._t(
                "the reply could not be delivered ({problem}); the producer applies its default."
            ).format(problem=exc)
            self._say(self._nothing_sent(reason), urgency=Urgency.CRITICAL)
            return AnswerOutcome(False, self._nothing_sent(reason))
        agent = self._named(source_id)
        if response is ANSWER_HELD:
            # the agent's follow-up question comes first: "Sent" only once something was
            said = self._t("Nothing sent yet: choose which always answer.")
            return AnswerOutcome(False, said, held=True, agent=agent)
        if response is not None:
            self._handshake_message(state, read_answer(response))
        self._status_changed()
        what = what or _what(wire)
        if agent:
            said = self._t("Sent to {agent}: {what}.").format(agent=agent, what=what)
        else:
            said = self._t("Sent: {what}.").format(what=what)
        return AnswerOutcome(True, said, agent=agent)

    def _named(self, source_id: str) -> str:
        """Whose question an answer goes to, when more than one source runs (else "")."""
        if len(self.links) < 2:
            return ""
        state = next((s for s in self.links if s.source == source_id), None)
        return str(state.transport.description) if state is not None else ""

    async def send_outgoing(self) -> None:
        """Replies the engine made on the user's standing order (``auto_reject`` only)."""
        for outgoing in self.host.engine.take_outgoing():
            wire = outgoing.to_wire()
            if wire.get("type") == "confirmation.reply" and wire.get("decision") != "reject":
                log.error("refused to send an automatic reply that is not a rejection")
                continue
            typed = typed_answer(outgoing.reply, "once")  # never "always" in the user's name
            await self.deliver(Reply(outgoing.source_id, wire, typed))


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
