"""The agent's questions: permission requests as confirmations, elicitations as forms.

A permission request's reply maps back to the agent's own option (allow or reject, once
or always, see :mod:`announcer.engine.replies`); what will run decides the risk and is
said (issue 22); a plan approval reads the plan; the agent waits, so no timeout is
spoken. An elicitation is asked one field at a time (:mod:`announcer.formats.acp_forms`).
"""

from __future__ import annotations

import re
from typing import Any

from announcer.command_analysis import analyse, higher_risk, scan_text
from announcer.formats.acp_forms import Form, FormField, next_question, parse_form, take_answer
from announcer.formats.acp_session import Permission, _Session, _Tool
from announcer.formats.acp_shapes import (
    _ALLOW_ALWAYS,
    _ALLOW_ONCE,
    _REJECT_ALWAYS,
    _REJECT_ONCE,
    _change_summaries,
    _named_options,
    _options,
    _permission_reason,
    _plan_steps,
    _raw_command,
    _same_words,
    _sentence,
)
from announcer.formats.acp_tools import AcpToolCalls
from announcer.formats.base import AdapterOutput, JsonObject, get_str
from announcer.formats.builder_fields import (
    MAX_PLAN,
    mark_command,
    mark_literal,
    mark_options,
    mark_plan,
)
from announcer.formats.speakable import clip, command_in_words
from announcer.i18n.translate import translator
from announcer.protocol.extensions import ANNOUNCER_EXTENSION, ANNOUNCER_EXTENSION_CONTEXT

#: the longest an agent is given to wait for a confirmation: ACP has no timeout, the agent
#: waits; AAEP needs a number, so the protocol's maximum is sent and never spoken (§4.4.1).
NO_TIMEOUT_SECONDS = 86_400
# ACP tool kinds (schema ToolKind) whose effect cannot be taken back, or that run anything.
_IRREVERSIBLE_KINDS = frozenset({"delete"})
_HIGH_RISK_KINDS = frozenset({"delete", "move"})
_LOW_RISK_KINDS = frozenset({"read", "search", "think", "fetch"})
#: a plan's list item ("- ", "* ", "3. "), as the question counts its steps
_PLAN_ITEM = re.compile(r"^(?:[-*+]|\d+[.)])\s+")
# Names of an "always" option that say nothing more than the key does.
_GENERIC_ALWAYS = frozenset({"always allow", "allow always", "always", "allow all", "yes, always"})


_DO_NOT_ASK_AGAIN = re.compile(r"\b(?:don't|do not) ask again (?:for|about) (?P<scope>.+)$", re.I)


def _always_scope(label: str) -> str:
    """What an "always" option covers, in a few words: "Yes, and don't ask again for sh
    build.sh commands" is "sh build.sh commands"; code marks are markdown."""
    found = _DO_NOT_ASK_AGAIN.search(label)
    scope = found["scope"] if found else label
    return clip(" ".join(scope.replace("`", "").split()).rstrip("."), 120)


class AcpQuestions(AcpToolCalls):
    """Permission requests and elicitations: asked once, answered once, withdrawn."""

    def permission_requested(
        self, request_key: str, params: JsonObject, now: float
    ) -> AdapterOutput:
        """``session/request_permission`` as a confirmation; the reply token names the
        request, and is in the output's ``asked`` when the question was built."""
        asked: list[str] = []

        def step() -> None:
            token = self._permission(request_key, params, now)
            if token is not None:
                asked.append(token)

        out = self._run(step)
        out.asked = asked
        return out

    def permission_withdrawn(self, reply_token: str, sentence: str, now: float) -> AdapterOutput:
        """The question no longer stands (turn cancelled, agent gone): §6.8 withdraws it."""

        def step() -> None:
            permission = self.permissions.pop(reply_token, None)
            form = self.forms.pop(reply_token, None)
            owner = permission.session_id if permission else form.session_id if form else None
            if owner is None:
                return
            session = self.sessions.get(owner)
            if session is None or session.state.ended:
                return
            self.builder.state_changed(
                session.state,
                now,
                "thinking",
                normal=sentence,
                terse=self._t("Question withdrawn."),
                urgency="normal",
                force=True,
            )

        return self._run(step)

    def answer(self, reply_token: str, decision: str, scope: str = "once") -> str | None:
        """The agent's option id for a reply, once: a token is used up by its first answer.

        A rejected call never runs: it is not announced afterwards (the user has just heard
        their own "Sent: reject"), and its failure report is not read as a failure.
        """
        permission = self.permissions.pop(reply_token, None)
        if permission is None:
            return None
        option = permission.option_for(decision, scope)
        session = self.sessions.get(permission.session_id)
        tool = session.tools.get(permission.tool_call_id or "") if session else None
        if tool is not None and decision != "accept" and not tool.announced:
            tool.announced = tool.finished = True
        if tool is not None and decision == "accept" and option is not None:
            # it runs now, and adapters often say nothing more until it ends: the engine
            # is told it runs (not said again), so a long run is not taken for the agent
            # waiting on the user, and its silence is broken (issue 33, item 3)
            self._opened_after.append((permission.session_id, permission.tool_call_id or ""))
        if session is not None and decision != "accept" and option is not None:
            # A reject is the user's own decision: said as such, never as a failure.
            what = (tool.title if tool is not None else "") or self._t("the request")
            if tool is not None:
                tool.rejected = True
            session.rejected_in_turn = what
            self._said_after.append((permission.session_id, what))
        return option

    def _plan_and_options(
        self, call: JsonObject, options: object, known_plan: str = ""
    ) -> tuple[str, str, str]:
        """The plan of a plan approval, by steps, what each of the agent's options means,
        and the few words an ordinary question says of them.

        Every option is named with the answer that picks it ("Accept: Yes, manually approve
        edits"); an "always" option says that from now on the agent will not ask. An
        ordinary question says only what "always" covers ("Always: sh build.sh commands.",
        issue 31 item 10): the labels are read at detailed verbosity.
        """
        plan = get_str(call, "rawInput", "plan") or known_plan
        said_plan = ""
        if plan.strip():
            steps = _plan_steps(plan)
            said_plan = (
                translator(self.language)
                .ngettext(
                    "The plan has {count} step: {steps}",
                    "The plan has {count} steps: {steps}",
                    len(steps),
                )
                .format(
                    count=len(steps),
                    steps=" ".join(
                        f"{i}. {_sentence(step)}" for i, step in enumerate(steps[:8], 1)
                    ),
                )
            )
            if len(steps) > 8:
                # every step is reachable: W reads the whole plan (the question's keys say
                # so), and the detailed summary holds it whole
                said_plan = f"{_sentence(said_plan)} " + translator(self.language).ngettext(
                    "And {count} more step.", "And {count} more steps.", len(steps) - 8
                ).format(count=len(steps) - 8)
        named = _named_options(options)
        always = [name for _, name, kind in named if kind == _ALLOW_ALWAYS]
        specific = [n for n in always if n.casefold() not in _GENERIC_ALWAYS]
        if not plan.strip() and len(always) < 2 and not specific:
            return said_plan, "", ""  # plain allow/reject/always: the keys say it all
        parts: list[str] = []
        for decision, wanted in (
            (self._t("Accept"), _ALLOW_ONCE),
            (self._t("Reject"), _REJECT_ONCE),
        ):
            name = next((n for _, n, kind in named if kind == wanted), None)
            if name:
                parts.append(f"{decision}: {name}")
        if always:
            parts.append(
                self._t("Always: {options}; from now on it does not ask about this").format(
                    options=self._t(" or ").join(always[:4])
                )
            )
        never = next((n for _, n, kind in named if kind == _REJECT_ALWAYS), None)
        if never:
            parts.append(self._t("Never: {option}").format(option=never))
        short = ""
        if len(always) == 1 and specific:
            short = _sentence(self._t("Always: {scope}").format(scope=_always_scope(always[0])))
        elif len(always) > 1:
            short = _sentence(
                self._t("Always: one of {count}, asked next").format(count=len(always))
            )
        return said_plan, _sentence("; ".join(parts)), short

    def _plan_dangers(self, plan: str) -> tuple[str, bool, bool]:
        """What in a plan is dangerous, in words; whether that makes it high risk; whether
        any of it cannot be undone.

        Every line is read as :func:`~announcer.command_analysis.scan_text` reads prose
        (the steps past the eighth too, headings and notes as well), so a plan whose last
        step is ``rm -rf ~`` is a high-risk question taking two keys. A plan longer than
        a question keeps is not read in full, so it is high risk too, and said."""
        if not plan.strip():
            return "", False, False
        kept = plan[:MAX_PLAN]
        lines = [line.strip() for line in kept.splitlines() if line.strip()]
        items = [bool(_PLAN_ITEM.match(line)) for line in lines]
        numbered = any(items)
        found: list[str] = []
        irreversible = high = False
        step = 0
        for line, is_item in zip(lines, items, strict=True):
            if is_item or not numbered:
                step += 1
            danger = scan_text(line)
            if danger is None or not (danger.dangerous or danger.risk == "high"):
                continue
            high = True
            irreversible = irreversible or danger.irreversible
            where = (
                self._t("step {number}").format(number=step)
                if is_item or not numbered
                else self._t("its notes")
            )
            parts = "; ".join(danger.dangerous) or clip(line, 120)
            found.append(f"{where}: {parts}")
        said: list[str] = []
        if found:
            shown = "; ".join(found[:3])
            if len(found) > 3:
                shown += "; " + translator(self.language).ngettext(
                    "and {count} more step", "and {count} more steps", len(found) - 3
                ).format(count=len(found) - 3)
            said.append(self._t("Dangerous in the plan: {parts}").format(parts=shown))
        if len(plan) > MAX_PLAN:
            high = True
            said.append(
                self._t(
                    "The plan has {count} characters; only the first {kept} are shown and read"
                ).format(count=len(plan), kept=MAX_PLAN)
            )
        return " ".join(_sentence(part) for part in said), high, irreversible

    def always_choices(self, reply_token: str) -> list[tuple[str, str]]:
        """The agent's allow-always options (id, name) for a question, when there are several."""
        permission = self.permissions.get(reply_token)
        if permission is None:
            return []
        always = [(o, n) for o, n, kind in permission.named if kind == _ALLOW_ALWAYS]
        return always if len(always) > 1 else []

    def ask_which_always(self, reply_token: str, now: float) -> AdapterOutput:
        """``always`` with several allow-always options: ask which one (never a guess).

        The question stays open; its follow-up is a one-field form whose answer
        :meth:`elicitation_answered` returns as ``{"action": "accept", "content":
        {"option": OPTION_ID}}``, or decline (a reject) or cancel.
        """

        def step() -> None:
            permission = self.permissions.pop(reply_token, None)
            if permission is None:
                return
            choices = [(o, n) for o, n, kind in permission.named if kind == _ALLOW_ALWAYS]
            field_ = FormField(
                "option", "choice", self._t("Which always answer?"), required=True,
                options=choices,
            )  # fmt: skip
            form = Form(
                f"always-{permission.request_key}",
                permission.session_id,
                self._t("The agent offers several always answers."),
                [field_],
                permission.tool_call_id,
            )
            form.permission = permission
            self._ask_form(self._session(permission.session_id, now), form, now)

        return self._run(step)

    def answer_said(self, now: float) -> AdapterOutput:
        """What follows the user's answer: "You rejected: rm -rf build.", or (quietly) that
        the call the user allowed runs."""

        def step() -> None:
            opened, self._opened_after = self._opened_after, []
            for session_id, call_id in opened:
                session = self.sessions.get(session_id)
                tool = session.tools.get(call_id) if session is not None else None
                if session is not None and tool is not None and not tool.announced:
                    self._open_quietly(session, call_id, tool, now)
            said, self._said_after = self._said_after, []
            for session_id, what in said:
                session = self.sessions.get(session_id)
                if session is None or session.state.ended:
                    continue
                sentence = _sentence(self._t("You rejected: {action}").format(action=what))
                self._say_sentence(session, now, sentence)

        return self._run(step)

    def elicitation_requested(
        self, request_key: str, params: JsonObject, now: float
    ) -> AdapterOutput:
        """``elicitation/create``: the first clarification of the form, or the URL's question.

        The reply token of the question asked is in the output; the form stays open until
        :meth:`elicitation_answered` returns the agent's response (never answered here).
        """
        return self._run(lambda: self._elicit(request_key, params, now))

    def elicitation_refused(self, now: float) -> AdapterOutput:
        """An ``elicitation/create`` too big to read was refused before it was read (the
        agent got an error): said at once, never folded, since a question must never
        vanish in silence (issue 29 item 6)."""

        def step() -> None:
            session = self._session(self._latest_session(), now)
            sentence = self._t(
                "{agent} asked a question too big to read; it was refused, and {agent} was told."
            ).format(agent=self.agent_name)
            self._say_sentence(session, now, sentence, urgency="critical")

        return self._run(step)

    def elicitation_answered(
        self, reply_token: str, response: object, now: float
    ) -> tuple[AdapterOutput, JsonObject | None]:
        """The user's reply to one question of a form.

        Returns the ACP response (``accept`` with content, ``decline`` or ``cancel``) once
        the form is done; otherwise None, and the output holds the next question (the next
        field, the review, or the same field again with the reason).
        """
        result: list[JsonObject] = []

        def step() -> None:
            form = self.forms.pop(reply_token, None)
            if form is None:
                return
            done = take_answer(form, response, self._t)
            if done is not None:
                result.append(done)
                return
            self._ask_form(self._session(form.session_id, now), form, now)

        out = self._run(step)
        return out, (result[0] if result else None)

    def form_token(self, request_key: str) -> str | None:
        """The reply token of the question now asked for an elicitation, if still open."""
        return next((t for t, f in self.forms.items() if f.request_key == request_key), None)

    def _elicit(self, request_key: str, params: JsonObject, now: float) -> None:
        form = parse_form(request_key, params)
        form.session_id = form.session_id or self._latest_session() or ""
        session = self._session(form.session_id or None, now)
        self._say_thought(session, now)
        if form.tool_call_id is not None:
            # A tool that asks (AskUserQuestion, request_user_input) is announced once, as
            # the question: never before it, nor "done" after the answer.
            if form.tool_call_id in session.due:
                session.due.remove(form.tool_call_id)
            tool = session.tools.setdefault(form.tool_call_id, _Tool())
            tool.asked = tool.announced = tool.finished = True
        self._announce_due(session, now)
        self._ask_form(session, form, now)

    def _ask_form(self, session: _Session, form: Form, now: float) -> None:
        if form.url is None and not form.fields:
            form.reviewing = True  # nothing to fill in: still said, and sent only if confirmed
        question = next_question(form, self.agent_name, self._t)
        form.asked += 1
        event = self.builder.clarification(
            session.state,
            now,
            token_seed=f"elicitation-{form.request_key}-{form.asked}",
            question=question.text,
            terse=question.terse,
            choices=question.choices,
            timeout_seconds=NO_TIMEOUT_SECONDS,
        )
        kinds = list(question.kinds)
        if len(event.get("choices") or []) < 2:
            event.pop("choices", None)
            kinds = [k for k in kinds if k != "multiple_choice"] or ["freetext"]
        event["accepted_response_kinds"] = kinds
        event["@context"] = [event["@context"], ANNOUNCER_EXTENSION_CONTEXT]
        ours: dict[str, Any] = {"no_timeout": True}
        if question.secret:
            ours["secret"] = True  # the answer is not read back (engine.prompts.is_secret)
        event.setdefault("extensions", {})[ANNOUNCER_EXTENSION] = ours
        self.forms[str(event["reply_token"])] = form

    def _ask_again_with_plan(self, session: _Session, call_id: str, plan: str, now: float) -> None:
        """A plan that comes after its approval question reaches it (claude-agent-acp sends
        the plan in a tool_call_update that, under load, may follow the request): the open
        question is withdrawn and asked again with the plan, under a new reply token, so no
        key answers a plan approval whose plan was never read."""
        for token, permission in list(self.permissions.items()):
            if (
                permission.tool_call_id != call_id
                or permission.params is None
                or permission.plan == plan
                or self.sessions.get(permission.session_id) is not session
            ):
                continue
            del self.permissions[token]
            again = self._t("{agent} sent its plan: the question again, with it.").format(
                agent=self.agent_name
            )
            self.builder.state_changed(
                session.state,
                now,
                "thinking",
                normal=again,
                terse=again,
                urgency="normal",
                force=True,
            )
            new_token = self._permission(f"{permission.request_key}+plan", permission.params, now)
            if new_token is not None:
                self._asked_again.append((token, new_token))

    def take_asked_again(self) -> list[tuple[str, str]]:
        """Questions asked again since the last call: (old reply token, new reply token).
        The transport's waiting answer moves to the new token; the old one answers nothing."""
        asked, self._asked_again = self._asked_again, []
        return asked

    def _permission(self, request_key: str, params: JsonObject, now: float) -> str | None:
        session = self._session(get_str(params, "sessionId"), now)
        self._say_thought(session, now)
        call = params.get("toolCall") if isinstance(params.get("toolCall"), dict) else {}
        assert isinstance(call, dict)
        call_id = get_str(call, "toolCallId")
        # The request carries the call's latest title, kind and places.
        if call_id is not None:
            self._tool(session, {**call, "status": None}, now)
        tool = session.tools.get(call_id or "", _Tool())
        if call_id in session.due:
            session.due.remove(call_id)
        tool.asked = True
        self._announce_due(session, now)
        # a title's code marks are markdown (older adapters), never part of what runs
        title = " ".join((get_str(call, "title") or tool.title or "").replace("`", "").split())
        kind = get_str(call, "kind") or tool.kind
        description = get_str(call, "rawInput", "description") or tool.description
        # What will run decides the risk and is said, never the title or kind alone
        # (issue 22): "List the files" that runs rm -rf ~ is a high-risk delete.
        command = _raw_command(call) or tool.command
        # an "execute" call without rawInput is titled by its command (Claude's adapters)
        judged = command or (title if kind == "execute" and title else None)
        analysis = analyse(judged) if judged is not None else None
        options = _options(params.get("options"))
        allowed = ["reject"] + (["accept"] if _ALLOW_ONCE in options else [])
        risk = "low" if kind in _LOW_RISK_KINDS else "medium"
        if kind in _HIGH_RISK_KINDS:
            risk = "high"
        if analysis is not None:
            risk = higher_risk(risk, analysis.risk)
        if tool.deletes:  # a delete is said as one: high risk, cannot be undone
            risk = "high"
        action = title or self._t("a {kind} step").format(kind=kind)
        if command is not None:
            said = command_in_words(command, self.language).rstrip(".")
            flat = " ".join(command.split())
            plain_title = " ".join(title.replace("`", "").split())
            if plain_title == flat or (plain_title and plain_title in flat):
                # titled by its command (`rm -rf build`), or by its last words (codex-acp:
                # "build.sh" for sh build.sh): said once, as run
                action = said
            else:
                # the title's code marks are markdown, not part of what runs
                action = " ".join(action.replace("`", "").split())
                if flat not in action or len(flat) > len(said):
                    command_words = self._t("Command: {command}").format(command=said)
                    action = f"{_sentence(action)} {command_words}"
        files = ", ".join(tool.locations[:3]) if tool.locations else ""
        changes = _change_summaries(call.get("content"), session.cwd, self.language) or (
            tool.changes
        )
        touches = (
            _sentence("; ".join(changes))
            if changes
            else self._t("It touches {files}.").format(files=files)
            if files and command is None  # a command says its paths itself, all of them
            else ""
        )
        consequence = description or touches
        if description and touches:
            consequence = f"{_sentence(description)} {touches}"
        if tool.deletes:  # what it deletes first, then its other changes (issue 31, 8)
            others = [c for c in changes if not any(d in c for d in tool.deletes)]
            consequence = self._t("It deletes {files}.").format(files=", ".join(tool.deletes[:3]))
            if others:
                consequence += " " + _sentence("; ".join(others[:3]))
        reason = _permission_reason(params, call, title)
        if reason and description and _same_words(reason, description):
            reason = ""  # already said as the call's description
        if reason:  # the agent's own reason is part of the question
            its_reason = self._t("Its reason: {reason}").format(reason=clip(reason, 300))
            consequence = f"{_sentence(consequence)} {its_reason}" if consequence else its_reason
        hidden = 0 if command is not None else self._hidden_in(tool, title)
        if hidden:  # a disguised file name (a right-to-left override): said, and high risk
            risk = "high"
            consequence = f"{_sentence(consequence)} " if consequence else ""
            consequence += self._hidden_sentence(hidden)
        plan, choices, short = self._plan_and_options(call, params.get("options"), tool.plan)
        whole_plan = get_str(call, "rawInput", "plan") or tool.plan
        plan_irreversible = False
        if plan:  # a plan approval reads the plan and what each answer does (ExitPlanMode)
            consequence = plan
            # issue 29, item 13: every step is risk-checked, as a command is; what is
            # dangerous is said, and a plan not kept whole is not read in full: high risk
            warning, plan_high, plan_irreversible = self._plan_dangers(whole_plan)
            if plan_high:
                risk = "high"
            if warning:
                consequence = f"{_sentence(warning)} {_sentence(consequence)}"
            if choices:
                consequence = f"{_sentence(consequence)} {choices}"
        elif short:  # an ordinary question: the "always" scope in a few words
            consequence = f"{_sentence(consequence)} {short}" if consequence else short
        if not consequence:  # a command says what it does; anything else says this much
            consequence = self._t("It runs only if you accept.")
        token_seed = f"permission-{request_key}"
        event = self.builder.confirmation(
            session.state,
            now,
            token_seed=token_seed,
            action=_sentence(
                self._t("{agent} wants to run: {action}").format(
                    agent=self.agent_name, action=action
                )
            ),
            consequence=_sentence(consequence),
            normal=_sentence(
                self._t("{agent} asks permission: {action}").format(
                    agent=self.agent_name, action=action
                )
            ),
            terse=_sentence(action),
            risk_level=risk,
            irreversible=kind in _IRREVERSIBLE_KINDS
            or bool(tool.deletes)
            or plan_irreversible
            or (analysis is not None and analysis.irreversible),
            timeout_seconds=NO_TIMEOUT_SECONDS,
        )
        event["allowed_replies"] = allowed
        tool.asked_seq = session.state.next_seq
        if whole_plan.strip():  # the whole plan, also in the detailed summary
            event["summary_detailed"] = clip(
                f"{event['summary_normal']} {' '.join(whole_plan.split())}", 16_000
            )
        # §7: the agent waits without a deadline; the engine must not speak one.
        event["@context"] = [event["@context"], ANNOUNCER_EXTENSION_CONTEXT]
        always = [
            decision
            for decision, kind in (("accept", _ALLOW_ALWAYS), ("reject", _REJECT_ALWAYS))
            if kind in options and decision in allowed
        ]
        event.setdefault("extensions", {})[ANNOUNCER_EXTENSION] = {
            "no_timeout": True,
            "options": sorted(options),
            # the decisions the agent also offers "always" for (engine.prompts.always_decisions)
            "always": always,
        }
        if command is not None:
            mark_command(event, command)
        else:
            mark_literal(event)  # titles and paths are read as written
        if choices and not plan:  # every option's label, at detailed verbosity
            mark_options(event, choices)
        if whole_plan.strip():  # the whole plan: shown, and read whole on a key (W)
            mark_plan(event, whole_plan)
        session.state.state = "awaiting_input"  # §6.8: a later change away from it withdraws
        token = str(event["reply_token"])
        self.permissions[token] = Permission(
            request_key,
            get_str(params, "sessionId") or "",
            call_id,
            options,
            tuple(_named_options(params.get("options"))),
            params=params,
            plan=whole_plan,
        )
        return token
