"""AEP (Agent Event Protocol, draft 0.1) envelopes -> AAEP events.

Two public drafts share the name and version, and both are accepted:

- the Agent Approve draft: ``aep_version``, ``id``, ``type``, ``time``,
  ``agent{slug,display_name,version}``, ``session``, ``workspace``, ``model``,
  ``action``, ``tool``, ``server``, ``content``; families lifecycle, prompts and
  responses, actions, orchestration, notifications;
- the agenteventprotocol.org draft: ``aep``, ``source``, ``agent`` (a string),
  ``session``, ``run``, ``subject``, ``data`` with ``tool.*``, ``run.*``,
  ``attention.*``... types.

``action.requested`` / ``tool.requested`` are joined to their completion,
failure or denial by ``action.id`` / ``data.tool.call_id``. ``display_style``
hints decide how values are spoken (paths, URLs and JSON summarised). Types we
do not know are announced from their ``content`` text when they have some.
"""

from __future__ import annotations

from typing import Any

from announcer.formats.base import FormatAdapter, JsonObject, get_path, get_str
from announcer.formats.builder import AaepBuilder
from announcer.formats.builder_fields import parse_time
from announcer.formats.builder_state import SessionState
from announcer.formats.speakable import (
    clip,
    command_words,
    plain,
    speak_duration_ms,
    speak_folder,
    speak_value,
)
from announcer.i18n.translate import SOURCE_LANGUAGE
from announcer.protocol.extensions import ANNOUNCER_EXTENSION  # mapping files' display styles


def _styles(envelope: JsonObject) -> dict[str, str]:
    styles = get_path(envelope, "extensions", ANNOUNCER_EXTENSION, "display_styles")
    if isinstance(styles, dict):
        return {str(k): str(v) for k, v in styles.items() if isinstance(v, str)}
    return {}


def content_text(envelope: JsonObject, *kinds: str, language: str = SOURCE_LANGUAGE) -> str | None:
    """Speakable text of the ``content`` blocks (optionally only some block types)."""
    blocks = envelope.get("content")
    if isinstance(blocks, dict):
        blocks = [blocks]
    if not isinstance(blocks, list):
        return None
    parts: list[str] = []
    for block in blocks:
        if not isinstance(block, dict):
            continue
        if kinds and block.get("type") not in kinds:
            continue
        value = block.get("text", block.get("value"))
        style = block.get("style") or block.get("display_style")
        if value is None or value == "":
            continue
        parts.append(
            speak_value(
                value, style if isinstance(style, str) else None, limit=600, language=language
            )
        )
    return " ".join(parts) or None


class AepAdapter(FormatAdapter):
    """``--format aep``: one AEP envelope per line, from either public draft."""

    name = "aep"

    def __init__(self) -> None:
        super().__init__()
        self.builders: dict[str, AaepBuilder] = {}

    # -- plumbing ----------------------------------------------------------

    def builder(self, slug: str, display_name: str | None = None) -> AaepBuilder:
        b = self.builders.get(slug)
        if b is None:
            b = AaepBuilder(
                slug,
                display_name or slug.replace("-", " ").replace("_", " ").title(),
                language=self.language,
            )
            self.builders[slug] = b
        elif display_name:
            b.agent_name = display_name
        return b

    def set_language(self, language: str) -> None:
        super().set_language(language)
        for b in self.builders.values():
            b.language = self.language

    def _flush(self) -> None:
        for b in self.builders.values():
            for event in b.take():
                self.emit(event)

    def _finish(self, now: float) -> None:
        for b in self.builders.values():
            b.close_all(now)
        self._flush()

    def handle(self, obj: JsonObject, now: float) -> None:
        if "aep_version" in obj:
            self.handle_seed(obj, now)
        elif "aep" in obj:
            self.handle_org(obj, now)
        else:
            self.diagnose("not_aep", "neither 'aep_version' nor 'aep' is present; dropped")
            return
        self._flush()

    # -- sentences both drafts say alike -------------------------------------

    def _settled(
        self,
        b: AaepBuilder,
        sess: SessionState,
        now: float,
        to_state: str,
        *,
        normal: str,
        terse: str,
        at: float | None,
    ) -> None:
        """An end of work or an answer: heard even when the state does not change."""
        b.state_changed(
            sess, now, to_state, normal=normal, terse=terse, urgency="normal", at=at, force=True
        )

    def _compacted(self, b: AaepBuilder, sess: SessionState, now: float, at: float | None) -> None:
        b.progress(
            sess,
            now,
            description=self._t("Context compacted"),
            normal=self._t("{agent} compacted its context.").format(agent=b.agent_name),
            terse=self._t("Compacted."),
            at=at,
        )

    def _error_said(self, b: AaepBuilder, message: str) -> str:
        return self._t("{agent} error: {message}").format(agent=b.agent_name, message=message)

    def _error(
        self, b: AaepBuilder, sess: SessionState, now: float, message: str, at: float | None
    ) -> None:
        """A non-fatal error: spoken as progress, the session goes on."""
        b.progress(
            sess,
            now,
            description=clip(message, 4096),
            normal=self._error_said(b, message),
            terse=self._t("Error."),
            urgency="normal",
            at=at,
        )

    def _asks(self, b: AaepBuilder, question: str) -> str:
        return self._t("{agent} asks: {question}").format(agent=b.agent_name, question=question)

    def _permission(
        self,
        b: AaepBuilder,
        sess: SessionState,
        now: float,
        *,
        seed: str,
        action: str,
        terse: str,
        at: float | None,
    ) -> None:
        b.confirmation(
            sess,
            now,
            token_seed=seed,
            action=action,
            consequence=self._t("{agent} goes ahead only if you accept.").format(
                agent=b.agent_name
            ),
            normal=self._asks(b, action),
            terse=terse,
            at=at,
        )

    # -- the Agent Approve draft (aep_version) -------------------------------

    def handle_seed(self, env: JsonObject, now: float) -> None:
        etype = get_str(env, "type")
        if etype is None or get_str(env, "id") is None:
            self.diagnose("missing_field", "an AEP event needs 'id' and 'type'; dropped")
            return
        slug = get_str(env, "agent", "slug") or get_str(env, "agent") or "agent"
        b = self.builder(slug, get_str(env, "agent", "display_name"))
        b.agent_version = get_str(env, "agent", "version") or b.agent_version
        b.model = get_str(env, "model", "id") or b.model
        native = (
            get_str(env, "session", "id")
            or get_str(env, "session", "conversation_id")
            or get_str(env, "agent", "instance_id")
        )
        sess = b.session(native)
        at = parse_time(env.get("time"))
        styles = _styles(env)
        who = b.agent_name
        text = content_text(env, language=self.language)
        action_id = get_str(env, "action", "id")
        tool_name = get_str(env, "tool", "name")
        opened = sess.open_tools.get(action_id) if action_id else None
        if tool_name is None and opened is not None:
            tool_name = opened.tool  # joined by action.id
        if tool_name is None and etype == "action.requested":
            tool_name = get_str(env, "action", "type")
        if tool_name and get_str(env, "server", "name") and not tool_name.startswith("mcp__"):
            tool_name = f"mcp__{get_str(env, 'server', 'name')}__{tool_name}"

        if etype in ("session.start", "session.started", "session.resume"):
            cwd = get_str(env, "workspace", "cwd")
            started = (
                self._t("{agent} session started in {folder}.").format(
                    agent=who, folder=speak_folder(cwd)
                )
                if cwd
                else self._t("{agent} session started.").format(agent=who)
            )
            b.session_started(
                sess,
                now,
                normal=started,
                terse=self._t("{agent} started.").format(agent=who),
                at=at,
            )
        elif etype in ("session.end", "session.ended"):
            reason = get_str(env, "session", "end_reason") or get_str(env, "reason")
            b.session_completed(
                sess,
                now,
                normal=self._t("{agent} session ended.").format(agent=who),
                terse=self._t("Ended."),
                detailed=self._t("{agent} session ended: {reason}.").format(
                    agent=who, reason=reason
                )
                if reason
                else None,
                at=at,
            )
        elif etype in ("prompt.submitted",):
            b.state_changed(
                sess,
                now,
                "thinking",
                normal=self._t("{agent} is working on your prompt.").format(agent=who),
                terse=self._t("Thinking."),
                detailed=self._t("{agent} got your prompt: {text}").format(agent=who, text=text)
                if text
                else None,
                at=at,
            )
        elif etype in ("model.thought", "thought"):
            b.thinking(sess, now, text, at=at)
        elif etype in ("model.response", "response", "response.completed", "model.message"):
            if text:
                b.output(sess, now, get_str(env, "id") or "response", text, complete=True, at=at)
            else:
                self.diagnose("empty_content", f"'{etype}' without content text; not announced")
        elif etype in ("model.delta", "response.delta", "model.response.delta"):
            if text:
                key = get_str(env, "session", "turn_id") or "stream"
                b.output(sess, now, key, text, complete=False, at=at)
        elif etype in ("plan", "plan.updated", "model.plan"):
            b.progress(
                sess,
                now,
                description=clip(text or self._t("Plan updated."), 4096),
                normal=self._t("Plan: {text}").format(text=text)
                if text
                else self._t("Plan updated."),
                terse=self._t("Plan."),
                urgency="normal",
                at=at,
            )
        elif etype == "action.requested":
            args = command_words(
                env.get("action", {}).get("input") if isinstance(env.get("action"), dict) else None,
                self.language,
            )
            if args is None and "action.input" in styles:
                args = speak_value(
                    get_path(env, "action", "input"),
                    styles["action.input"],
                    language=self.language,
                )
            b.tool_invoked(sess, now, action_id, tool_name, args_summary=args, at=at, detailed=text)
        elif etype in ("action.completed", "action.failed", "action.denied"):
            status = get_str(env, "action", "status")
            failed = etype != "action.completed" or status in ("failed", "error")
            error = get_str(env, "action", "error") or get_str(env, "action", "error", "message")
            duration = get_path(env, "metrics", "duration_ms")
            if etype == "action.denied" and (action_id is None or action_id not in sess.open_tools):
                reason = get_str(env, "decision", "reason") or get_str(env, "control", "message")
                b.denied_before_request(sess, now, tool_name, reason=reason, at=at)
            elif etype == "action.denied":
                reason = get_str(env, "decision", "reason") or get_str(env, "control", "message")
                b.tool_denied(
                    sess,
                    now,
                    action_id,
                    tool_name,
                    reason=reason,
                    error_message=reason or self._t("denied"),
                    at=at,
                )
            else:
                b.tool_completed(
                    sess,
                    now,
                    action_id,
                    "error" if failed else "success",
                    tool_name=tool_name,
                    error_message=clip(error, 300) if error else None,
                    duration_ms=int(duration)
                    if isinstance(duration, int | float) and not isinstance(duration, bool)
                    else None,
                    at=at,
                )
        elif etype in ("subagent.start", "subagent.started"):
            name = (
                get_str(env, "subagent", "type")
                or get_str(env, "subagent", "name")
                or self._t("a subagent")
            )
            b.progress(
                sess,
                now,
                description=self._t("Started {name}").format(name=name),
                normal=self._t("{agent} started {name}.").format(agent=who, name=name),
                terse=self._t("Subagent started."),
                at=at,
            )
        elif etype in ("subagent.stop", "subagent.stopped", "subagent.end"):
            b.progress(
                sess,
                now,
                description=self._t("Subagent finished"),
                normal=self._t("A subagent finished."),
                terse=self._t("Subagent done."),
                at=at,
            )
        elif etype == "context.compacted":
            self._compacted(b, sess, now, at)
        elif etype in ("agent.interrupted", "turn.interrupted"):
            self._settled(
                b,
                sess,
                now,
                "idle",
                normal=self._t("{agent} stopped: the turn was interrupted.").format(agent=who),
                terse=self._t("Interrupted."),
                at=at,
            )
        elif etype in ("agent.stop", "turn.completed", "stop"):
            if text:  # the agent's last message (a Stop hook's last_assistant_message)
                b.output(
                    sess, now, get_str(env, "id") or "last-message", text, complete=True, at=at
                )
            self._settled(
                b,
                sess,
                now,
                "idle",
                normal=self._t("{agent} finished responding.").format(agent=who),
                terse=self._t("Done."),
                at=at,
            )
        elif etype in ("notification", "notification.sent"):
            b.progress(
                sess,
                now,
                description=clip(text or etype, 4096),
                normal=self._t("{agent}: {text}").format(agent=who, text=text)
                if text
                else self._t("{agent} sent a notification.").format(agent=who),
                terse=self._t("Notification."),
                urgency="normal",
                at=at,
            )
        elif etype in ("question.asked", "question"):
            self._seed_question(env, b, sess, now, at, text)
        elif etype in ("question.answered", "answer"):
            self._settled(
                b,
                sess,
                now,
                "thinking",
                normal=self._t("The question was answered."),
                terse=self._t("Answered."),
                at=at,
            )
        elif etype in ("error", "agent.error", "session.error"):
            message = text or get_str(env, "error", "message") or self._t("an error")
            self._error(b, sess, now, message, at)
        elif text:
            # unknown types are announced from their content text (issue 8)
            b.progress(
                sess,
                now,
                description=clip(text, 4096),
                normal=self._t("{agent}: {text}").format(agent=who, text=text),
                at=at,
                urgency="normal",
            )
        else:
            self.diagnose("unknown_type", f"AEP type {etype!r} without content text; not announced")

    def _seed_question(
        self,
        env: JsonObject,
        b: AaepBuilder,
        sess: SessionState,
        now: float,
        at: float | None,
        text: str | None,
    ) -> None:
        question = content_text(env, "question", "prompt", language=self.language) or text
        if not question:
            self.diagnose("empty_content", "a question without text; not announced")
            return
        extensions = env.get("extensions")
        kinds = {
            str(v.get("notification_type", ""))
            for v in (extensions.values() if isinstance(extensions, dict) else [])
            if isinstance(v, dict)
        }
        title = next(
            (
                str(v["title"])
                for v in (extensions.values() if isinstance(extensions, dict) else [])
                if isinstance(v, dict) and isinstance(v.get("title"), str)
            ),
            None,
        )
        seed = get_str(env, "id") or question
        if any("permission" in k or "approval" in k for k in kinds):
            self._permission(
                b,
                sess,
                now,
                seed=seed,
                action=plain(question),
                terse=title or self._t("Permission needed."),
                at=at,
            )
        else:
            b.clarification(
                sess,
                now,
                token_seed=seed,
                question=plain(question),
                normal=self._asks(b, plain(question)),
                terse=title,
                at=at,
            )

    # -- the agenteventprotocol.org draft (aep) ----------------------------

    def handle_org(self, env: JsonObject, now: float) -> None:
        etype = get_str(env, "type")
        agent = get_str(env, "agent")
        if etype is None or agent is None or get_str(env, "id") is None:
            self.diagnose("missing_field", "an AEP event needs 'id', 'type' and 'agent'; dropped")
            return
        data: Any = env.get("data") if isinstance(env.get("data"), dict) else {}
        b = self.builder(agent)
        session = get_str(env, "session")
        if etype.startswith("agent."):
            session = f"agent:{agent}"  # agent-scoped events have no session of their own
        sess = b.session(f"{agent}/{session}" if session else None)
        at = parse_time(env.get("time"))
        who = b.agent_name
        tool = get_str(data, "tool", "name") or get_str(env, "subject")
        call = get_str(data, "tool", "call_id")
        duration = data.get("duration_ms")
        duration_ms = (
            duration if isinstance(duration, int) and not isinstance(duration, bool) else None
        )
        error = get_str(data, "error", "message") or get_str(data, "error", "type")
        family = etype.split(".")[0]

        if etype == "session.started":
            b.model = get_str(data, "gen_ai.request.model") or b.model
            b.agent_version = get_str(data, "client", "version") or b.agent_version
            b.session_started(
                sess,
                now,
                normal=self._t("{agent} session started.").format(agent=who),
                terse=self._t("{agent} started.").format(agent=who),
                at=at,
            )
        elif etype == "session.ended":
            reason = get_str(data, "reason")
            took = (
                speak_duration_ms(duration_ms, self.language) if duration_ms is not None else None
            )
            if took:
                ended = self._t("{agent} session ended, after {duration}.")
                ended_why = self._t("{agent} session ended ({reason}), after {duration}.")
            else:
                ended = self._t("{agent} session ended.")
                ended_why = self._t("{agent} session ended ({reason}).")
            b.session_completed(
                sess,
                now,
                normal=ended.format(agent=who, duration=took),
                terse=self._t("Ended."),
                detailed=ended_why.format(agent=who, reason=reason, duration=took)
                if reason
                else None,
                duration_ms=duration_ms,
                at=at,
            )
        elif etype == "run.started":
            b.state_changed(
                sess,
                now,
                "thinking",
                normal=self._t("{agent} is working.").format(agent=who),
                terse=self._t("Working."),
                at=at,
            )
        elif etype == "run.finished":
            finished = (
                self._t("{agent} finished in {duration}.").format(
                    agent=who, duration=speak_duration_ms(duration_ms, self.language)
                )
                if duration_ms is not None
                else self._t("{agent} finished.").format(agent=who)
            )
            self._settled(b, sess, now, "idle", normal=finished, terse=self._t("Done."), at=at)
        elif etype == "run.failed":
            reason = (get_str(data, "reason") or self._t("unknown reason")).replace("_", " ")
            self._settled(
                b,
                sess,
                now,
                "idle",
                normal=self._t("{agent} run failed: {reason}.").format(agent=who, reason=reason),
                terse=self._t("Run failed."),
                at=at,
            )
        elif etype == "run.cancelled":
            reason = get_str(data, "reason")
            self._settled(
                b,
                sess,
                now,
                "idle",
                normal=self._t("{agent} run cancelled: {reason}.").format(agent=who, reason=reason)
                if reason
                else self._t("{agent} run cancelled.").format(agent=who),
                terse=self._t("Cancelled."),
                at=at,
            )
        elif etype == "tool.requested":
            b.tool_invoked(sess, now, call, tool, at=at)
        elif etype == "tool.completed":
            b.tool_completed(
                sess, now, call, "success", tool_name=tool, duration_ms=duration_ms, at=at
            )
        elif etype == "tool.failed":
            b.tool_completed(
                sess,
                now,
                call,
                "error",
                tool_name=tool,
                error_message=error,
                duration_ms=duration_ms,
                at=at,
            )
        elif etype == "tool.denied" and (call is None or call not in sess.open_tools):
            # denied before it was ever requested here: it never ran, so no tool pair
            by = get_str(data, "by")
            b.denied_before_request(sess, now, tool, by=by, at=at)
        elif etype == "tool.denied":
            b.tool_denied(
                sess,
                now,
                call,
                tool,
                by=get_str(data, "by"),
                error_message=get_str(data, "rule") or self._t("denied"),
                at=at,
            )
        elif etype == "attention.requested":
            self._org_attention(env, data, b, sess, now, at)
        elif etype in ("attention.answered", "attention.resolved"):
            if etype == "attention.answered":
                option = get_str(data, "answer", "option")
                self._settled(
                    b,
                    sess,
                    now,
                    "thinking",
                    normal=self._t("Answered: {option}.").format(option=option)
                    if option
                    else self._t("The request was answered."),
                    terse=self._t("Answered."),
                    at=at,
                )
        elif etype == "attention.timeout":
            self._settled(
                b,
                sess,
                now,
                "idle",
                normal=self._t("Nobody answered the request in time."),
                terse=self._t("Request timed out."),
                at=at,
            )
        elif etype == "error.raised":
            message = error or self._t("an error")
            if data.get("fatal") is True:
                said = self._error_said(b, message)
                b.session_errored(sess, now, normal=said, terse=self._t("Error."), at=at)
            else:
                self._error(b, sess, now, message, at)
        elif etype == "progress.status":
            status_text = get_str(data, "message")
            percent = data.get("percent")
            pct = (
                float(percent)
                if isinstance(percent, int | float) and not isinstance(percent, bool)
                else None
            )
            if status_text or pct is not None:
                b.progress(
                    sess,
                    now,
                    description=status_text,
                    percent=pct,
                    normal=status_text.capitalize() + "."
                    if status_text
                    else self._t("{percent} percent.").format(percent=f"{pct:.0f}"),
                    at=at,
                )
            else:
                self.diagnose(
                    "empty_content", "progress.status without message or percent; not announced"
                )
        elif etype in ("progress.task.planned", "progress.task.completed"):
            title = get_str(data, "task", "title") or self._t("a task")
            done = etype.endswith("completed")
            b.progress(
                sess,
                now,
                description=title,
                normal=(self._t("Done: {task}.") if done else self._t("Planned: {task}.")).format(
                    task=title
                ),
                at=at,
            )
        elif etype == "progress.artifact.produced":
            name = get_str(data, "artifact", "name") or self._t("a file")
            b.progress(
                sess,
                now,
                description=self._t("Produced {name}").format(name=name),
                normal=self._t("{agent} produced {name}.").format(agent=who, name=name),
                at=at,
            )
        elif etype in ("run.step.started", "run.step.finished"):
            step_name = get_str(data, "name")
            if step_name:
                b.progress(
                    sess,
                    now,
                    description=step_name,
                    normal=self._t("Step: {step}.").format(step=step_name),
                    at=at,
                )
        elif etype.startswith("delegation.subagent."):
            kind = get_str(data, "agent_type") or self._t("subagent")
            if etype.endswith("started"):
                description = self._t("{kind} subagent started")
                said = self._t("{agent} started subagent {kind}.")
            else:
                description = self._t("{kind} subagent finished")
                said = self._t("{agent} finished subagent {kind}.")
            b.progress(
                sess,
                now,
                description=description.format(kind=kind),
                normal=said.format(agent=who, kind=kind),
                at=at,
            )
        elif etype == "session.compacted":
            self._compacted(b, sess, now, at)
        elif etype == "agent.health":
            status = get_str(data, "status") or self._t("unknown")
            if status != "ok" and status != "healthy":
                detail = get_str(data, "detail")
                b.progress(
                    sess,
                    now,
                    description=self._t("health {status}").format(status=status),
                    normal=self._t("{agent} health: {status}, {detail}.").format(
                        agent=who, status=status, detail=detail
                    )
                    if detail
                    else self._t("{agent} health: {status}.").format(agent=who, status=status),
                    urgency="normal",
                    at=at,
                )
        elif etype == "agent.idle" and get_str(data, "reason") == "awaiting_input":
            b.state_changed(
                sess,
                now,
                "awaiting_input",
                normal=self._t("{agent} is waiting for you.").format(agent=who),
                terse=self._t("Waiting."),
                urgency="normal",
                at=at,
            )
        elif family in ("control", "state", "agent", "resource", "assessment") or etype.startswith(
            "x."
        ):
            # routing receipts, commands, state sync and telemetry: nothing for the ear
            self.diagnose("ignored", f"AEP type {etype!r} is not announced")
        else:
            fallback = get_str(data, "message") or get_str(data, "prompt")
            if fallback:
                b.progress(sess, now, description=clip(fallback, 4096), normal=fallback, at=at)
            else:
                self.diagnose("unknown_type", f"AEP type {etype!r} without text; not announced")

    def _org_attention(
        self,
        env: JsonObject,
        data: Any,
        b: AaepBuilder,
        sess: SessionState,
        now: float,
        at: float | None,
    ) -> None:
        kind = get_str(data, "kind") or "question"
        prompt = get_str(data, "prompt") or self._t("The agent needs your attention.")
        seed = get_str(env, "id") or prompt
        if kind == "permission":
            self._permission(
                b, sess, now, seed=seed, action=prompt, terse=self._t("Permission needed."), at=at
            )
            return
        choices: list[tuple[str, str]] = []
        for option in data.get("options") or []:
            if isinstance(option, dict) and get_str(option, "id"):
                choices.append((str(option["id"]), get_str(option, "label") or str(option["id"])))
        fields = data.get("fields")
        if isinstance(fields, list) and fields:
            labels = [get_str(f, "label") for f in fields if isinstance(f, dict)]
            spoken = "; ".join(lab for lab in labels if lab)
            question = f"{prompt}. {spoken}" if spoken else prompt
        else:
            question = prompt
        b.clarification(
            sess,
            now,
            token_seed=seed,
            question=question,
            normal=self._asks(b, prompt),
            terse=self._t("Question."),
            choices=choices,
            at=at,
        )
