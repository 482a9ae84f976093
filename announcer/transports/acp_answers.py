"""The agent's questions (permission requests, elicitations) and the user's answers.

Each request is answered exactly once, with the agent's own option: the first answer,
or ``cancelled`` when the turn is cancelled, the agent stops or announcer ends. Several
"always" options are asked about, never guessed (issue 21, 5).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Final, cast, get_args

from announcer.protocol.events import Decision
from announcer.transports.acp_process import AcpProcess, log
from announcer.transports.base import ANSWER_HELD, AgentAnswer

#: §6.2's decisions, from the protocol's own Literal
DECISIONS: Final = frozenset(get_args(Decision))


class AcpAnswers(AcpProcess):
    """The agent's questions as the user hears them, and their answers as the agent gets them."""

    async def send(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """An AAEP reply, for a caller that has no typed answer: its decision or response
        for this time only (an "always" answer comes typed, through :meth:`answer`)."""
        token = str(message.get("reply_token"))
        if message.get("type") == "clarification.reply":
            return await self.send_answer(AgentAnswer(token, response=message.get("response")))
        decision = message.get("decision")
        if message.get("type") != "confirmation.reply" or decision not in DECISIONS:
            return None
        return await self.send_answer(AgentAnswer(token, decision=cast(Decision, decision)))

    async def send_answer(
        self, answer: AgentAnswer, reply: dict[str, Any] | None = None
    ) -> dict[str, Any] | None:
        """The user's answer to the agent's question, typed: its own option, once (§6.2).
        ``reply`` (the AAEP form of the same answer) is not read."""
        token = answer.reply_token
        if answer.decision is None:  # a form's answer (an elicitation, "which always?")
            self._answer_form(token, answer.response)
            return None
        future = self._pending.pop(token, None)
        if (
            future is not None
            and answer.decision == "accept"
            and answer.scope == "always"
            and self.adapter.always_choices(token)
        ):
            # several "always" options: which one is asked, never guessed (issue 21, 5)
            asked = self.adapter.permissions[token].request_key
            out = self.adapter.ask_which_always(token, time.time())
            key = f"always-{asked}"
            self._queue(out.events)
            if self.adapter.form_token(key) is not None:
                self._forms[key] = future
                self._choosing.add(key)
                return ANSWER_HELD  # nothing sent until the user picks one
        option = self.adapter.answer(token, answer.decision, answer.scope)
        if future is None or future.done():
            return None  # already answered or withdrawn: never twice (§6.2)
        future.set_result(_selected(option) if option is not None else _cancelled())
        self._queue(self.adapter.answer_said(time.time()).events)
        return None

    async def on_permission(self, params: dict[str, Any]) -> Any:
        if not self.busy or self._turn_cancelled:
            # ACP: a turn that ended or was cancelled asks nothing more; never shown, never
            # accepted, and counted where the user can read it.
            self.options.count_drop("ACP permission request after its turn ended; cancelled")
            return _cancelled()
        key = f"{time.monotonic_ns()}"
        out = self.adapter.permission_requested(key, params, time.time())
        token = out.asked[0] if out.asked else None
        if token is None:
            log.warning("a permission request could not be asked; answered cancelled")
            self._queue(out.events)
            return _cancelled()
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[str(token)] = future
        self._queue(out.events)
        return await future  # no timeout: the agent waits, and so do we

    async def on_elicitation(self, params: dict[str, Any]) -> Any:
        """Ask the user, field by field; the agent gets only what the user chose."""
        if not self.busy or self._turn_cancelled:
            # issue 29, item 12: as for a permission request, a turn that ended or was
            # cancelled asks nothing more; never shown, never answerable, and counted.
            self.options.count_drop("ACP elicitation after its turn ended; cancelled")
            return {"action": "cancel"}
        key = f"e{time.monotonic_ns()}"
        out = self.adapter.elicitation_requested(key, params, time.time())
        self._queue(out.events)
        if self.adapter.form_token(key) is None:
            log.warning("an elicitation could not be asked; answered cancel")
            return {"action": "cancel"}
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._forms[key] = future
        return await future  # no timeout: the agent waits, and so do we

    def on_form_refused(self, size: int) -> None:
        """The wire refused a question too big to read (the agent got an error): say so."""
        log.warning("%s: a question of %d bytes was refused for its size", self.description, size)
        self._queue(self.adapter.elicitation_refused(time.time()).events)

    def _answer_form(self, token: str, response: object) -> None:
        form = self.adapter.forms.get(token)
        if form is None:
            return  # already answered or withdrawn: never twice (§6.2)
        out, result = self.adapter.elicitation_answered(token, response, time.time())
        self._queue(out.events)
        if result is not None:
            future = self._forms.pop(form.request_key, None)
            if form.request_key in self._choosing:
                self._choosing.discard(form.request_key)
                result = _permission_outcome(form.permission, result)
            if future is not None and not future.done():
                future.set_result(result)

    def _cancel_forms(self, sentence: str) -> None:
        """The agent's own questions are answered ``cancel``: the user never answered them."""
        for key, future in list(self._forms.items()):
            del self._forms[key]
            if not future.done():
                choosing = key in self._choosing
                future.set_result(_cancelled() if choosing else {"action": "cancel"})
            self._choosing.discard(key)
            token = self.adapter.form_token(key)
            if token is not None:
                self._queue(self.adapter.permission_withdrawn(token, sentence, time.time()).events)

    def _cancel_questions(self, sentence: str | None = None) -> None:
        for token, future in list(self._pending.items()):
            del self._pending[token]
            if not future.done():
                future.set_result(_cancelled())
            said = sentence or "The agent no longer waits for this answer."
            self._queue(self.adapter.permission_withdrawn(token, said, time.time()).events)


def _permission_outcome(permission: Any, result: dict[str, Any]) -> Any:
    """The answer to "which always?" as the permission's own outcome."""
    action = result.get("action")
    content = result.get("content")
    option = content.get("option") if isinstance(content, dict) else None
    if action == "accept" and isinstance(option, str):
        return _selected(option)
    reject = permission.options.get("reject_once") if permission is not None else None
    if action == "decline" and reject:
        return _selected(reject)  # declined to choose: a reject for this time only
    return _cancelled()


def _selected(option_id: str) -> Any:
    import acp

    return acp.schema.RequestPermissionResponse(
        outcome=acp.schema.AllowedOutcome(option_id=option_id, outcome="selected")
    )


def _cancelled() -> Any:
    import acp

    return acp.schema.RequestPermissionResponse(
        outcome=acp.schema.DeniedOutcome(outcome="cancelled")
    )
