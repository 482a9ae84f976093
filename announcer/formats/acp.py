"""Agent Client Protocol (ACP) sessions -> AAEP events, so an ACP agent goes through the one engine.

ACP is how editors drive coding agents: the client sends prompts, the agent streams
``session/update`` notifications (message and thought chunks, tool calls, plans,
mode changes) and asks ``session/request_permission`` before it acts. This module is
the sans-I/O half of ``announcer agent``: it takes those messages as plain JSON
objects (the wire form, camelCase) with a clock and returns AAEP event dicts; the
adapter in ``announcer.transports.acp`` runs the agent process with the
``agent-client-protocol`` SDK and feeds it here.

What the user hears, by design (docs/agents.md):

- message chunks are one output stream per turn, coalesced into sentences by the engine;
- a thought is gathered whole and said only at detailed verbosity (never in low
  cognitive load, whose terse wording is just "Thinking.");
- a tool call is announced once, when it has a title (adapters first send it empty),
  with its human description by verbosity; its end says finished or failed, diffs
  become "changes 3 lines in app.py", and paths are relative to the session's folder;
- a plan is read as "Step 2 of 5: ..." when the step in progress changes;
- a mode change is said briefly; token usage is never spoken;
- a permission request is a confirmation whose reply maps back to the agent's own
  option: allow once / reject once, and allow always / reject always when the agent
  offers them (an "always" answer rides in the reply's ``modified_action``, see
  :mod:`announcer.engine.replies`); the agent waits, so no timeout is spoken.

The mapping's rooms, each building on those after it (an import-linter contract keeps
the order): this module (:class:`AcpAdapter`: the client's own steps, the wire messages,
the agent's words and notices, the end of a turn), :mod:`~announcer.formats.acp_questions`
(permissions, elicitations), :mod:`~announcer.formats.acp_settings` (modes, settings,
sessions, logins), :mod:`~announcer.formats.acp_tools` (tool calls, the reviewer, plans),
:mod:`~announcer.formats.acp_session` (sessions and the steps all use) and
:mod:`~announcer.formats.acp_shapes` (reading the wire shapes);
:mod:`~announcer.formats.acp_logins` turns terminal logins into commands.
"""

from __future__ import annotations

from announcer.formats.acp_questions import AcpQuestions
from announcer.formats.acp_session import _Session
from announcer.formats.acp_settings import AcpSettings
from announcer.formats.acp_shapes import _commands, _content_text, _sentence
from announcer.formats.base import AdapterOutput, JsonObject, get_str
from announcer.formats.builder_fields import mark_detailed_only
from announcer.formats.speakable import clip
from announcer.protocol.sanitise import clean_speech

# Updates after which a titled call waiting to be said is said (the agent moved on).
_MOVES_ON = frozenset(
    {"agent_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update", "plan"}
)


def _empty_chunk(update: JsonObject) -> bool:
    """A message chunk with no words (qwen sends one to carry its token usage): the agent
    has not moved on, so a call waiting for its question is not said yet ("Shell.")."""
    return update.get("sessionUpdate") == "agent_message_chunk" and not _content_text(
        update.get("content")
    )


#: the share of the context window at which it is said to be nearly full, and below
#: which it has room again (said again the next time it fills)
CONTEXT_NEARLY_FULL = 0.9
CONTEXT_ROOM_AGAIN = 0.8


#: the most suggested prompts kept, and the longest each may be
MAX_SUGGESTIONS = 5
MAX_SUGGESTION_CHARS = 500


def _meta_suggestions(update: JsonObject) -> object | None:
    """``_meta.promptSuggestions.suggestions`` of a ``session_info_update``, if there."""
    meta = update.get("_meta")
    carried = meta.get("promptSuggestions") if isinstance(meta, dict) else None
    return carried.get("suggestions") if isinstance(carried, dict) else None


def _suggestion_text(item: object) -> object:
    """One suggested prompt's text: ACP's ``{"prompt": [ContentBlock, ...]}`` (its text
    blocks, a ``resource_link`` as its address), the adapters' ``_meta`` ``{"text": ...}``,
    or a bare string."""
    if not isinstance(item, dict):
        return item
    blocks = item.get("prompt")
    if not isinstance(blocks, list):
        return item.get("text")
    parts = []
    for block in blocks[:20]:
        text = _content_text(block)
        if text is None and isinstance(block, dict) and block.get("type") == "resource_link":
            text = get_str(block, "uri")
        if text:
            parts.append(text)
    return " ".join(parts)


def _suggestions(raw: object) -> list[str]:
    """Suggested prompts, sanitised, blank ones left out: an empty list clears the last
    suggestion (the turn predicted nothing)."""
    found: list[str] = []
    for item in raw if isinstance(raw, list) else []:
        text = _suggestion_text(item)
        if isinstance(text, str):
            cleaned = " ".join(clean_speech(text).split())
            if cleaned:
                found.append(clip(cleaned, MAX_SUGGESTION_CHARS))
        if len(found) == MAX_SUGGESTIONS:
            break
    return found


class AcpAdapter(AcpQuestions, AcpSettings):
    """One ACP connection (an agent process) as AAEP events; sessions keyed by ACP sessionId."""

    name = "acp"

    def session_opened(
        self, session_id: str, cwd: str, now: float, message_waiting: bool = False
    ) -> AdapterOutput:
        """``session/new`` answered: the session starts. ``message_waiting``: the user's
        message typed while it started goes now; "is ready." is not said and the settings
        line is said after that turn, so neither delays the answer (issue 31, item 11)."""
        return self._run(lambda: self._open(session_id, cwd, now, message_waiting))

    def prompt_sent(self, session_id: str, now: float) -> AdapterOutput:
        """The user sent a prompt: a new turn, the agent is thinking."""

        def step() -> None:
            # Only a new output stream: "Sent" was just said, and the agent's first
            # thought, call or words say the rest.
            session = self._session(session_id, now)
            session.turn += 1
            session.in_turn = True

        return self._run(step)

    def turn_ended(self, session_id: str, stop_reason: str | None, now: float) -> AdapterOutput:
        """``session/prompt`` answered with its ``stopReason``: the turn is over."""
        return self._run(lambda: self._end_turn(session_id, stop_reason, now))

    def session_failed(self, session_id: str | None, reason: str, now: float) -> AdapterOutput:
        """The agent process ended or broke: the session errored (always critical, §4.1.3)."""

        def step() -> None:
            targets = [self.sessions[session_id]] if session_id in self.sessions else []
            if session_id is None:
                targets = [s for s in self.sessions.values() if not s.state.ended]
            for session in targets:
                self._end_unfinished(session, now)
                self.builder.session_errored(
                    session.state,
                    now,
                    normal=self._t("{agent} stopped unexpectedly: {reason}").format(
                        agent=self.agent_name, reason=reason
                    ),
                    terse=self._t("{agent} stopped unexpectedly.").format(agent=self.agent_name),
                    category="permanent",  # §4.1.3: the process is gone
                    recoverable=False,
                )

        return self._run(step)

    def _end_unfinished(self, session: _Session, now: float) -> None:
        """The agent stopped with calls under way: each is said not to have finished,
        because the agent stopped (never "timed out"; what it left running is said with
        the agent's end, issue 31 item 7)."""
        for call_id, tool in session.tools.items():
            started = tool.announced or tool.asked or call_id in session.running
            if tool.finished or tool.internal or not started:
                continue
            session.running.pop(call_id, None)
            tool.finished = True
            said = self._t("{tool} did not finish: {agent} stopped.").format(
                tool=self._failed_name(tool), agent=self.agent_name
            )
            self._fail_in_one_sentence(session, call_id, tool, said, now)

    def turn_cancelled(self, session_id: str) -> None:
        """The user asked to stop the turn (``:cancel``): its end is said as their cancel."""
        session = self.sessions.get(session_id)
        if session is not None:
            session.cancelled_by_user = True

    def handle(self, obj: JsonObject, now: float) -> None:
        """A JSON-RPC message from the agent: ``session/update`` or a permission request."""
        method = obj.get("method")
        params = obj.get("params")
        if not isinstance(params, dict):
            self.diagnose("acp_params", f"{method!r} has no params object; dropped")
            return
        if method == "session/update":
            self._update(params, now)
        elif method == "session/request_permission":
            self._permission(str(obj.get("id", "")), params, now)
        else:
            self.diagnose("acp_method", f"no announcement for ACP method {str(method)[:60]!r}")

    def update(self, params: JsonObject, now: float) -> AdapterOutput:
        """One ``session/update`` notification's params."""
        return self._run(lambda: self._update(params, now))

    def _update(self, params: JsonObject, now: float) -> None:
        # The hot path (benchmarks/acp.py): most updates are message chunks, so this
        # does only what a chunk needs before it goes to the builder.
        session = self._session(get_str(params, "sessionId"), now)
        update = params.get("update")
        if not isinstance(update, dict):
            self.diagnose("acp_update", "session/update without an update object; dropped")
            return
        kind = update.get("sessionUpdate")
        if kind != "agent_thought_chunk" and session.thought:
            self._say_thought(session, now)
        if session.due and kind in _MOVES_ON and not _empty_chunk(update):
            # The agent moved on without asking: the titled call is said now. Silent
            # updates (usage, commands, settings, notices) are not moving on.
            self._announce_due(session, now, keep=get_str(update, "toolCallId"))
        if kind == "agent_message_chunk":
            self._message(session, update, now)
        elif kind == "agent_thought_chunk":
            text = _content_text(update.get("content"))
            if text:
                session.thought.append(text)
        elif kind in ("tool_call", "tool_call_update"):
            self._tool(session, update, now)
        elif kind == "plan":
            self._plan(session, update, now)
        elif kind == "current_mode_update":
            self._mode(session, get_str(update, "currentModeId"), now)
        elif kind == "config_option_update":
            self._config(session, update.get("configOptions"), now)
        elif kind == "notice":
            self._notice(session, update, now)
        elif kind == "compaction_update":
            self._compaction(session, update, now)
        elif kind == "usage_update":
            self._usage(session, update, now)
        elif kind == "available_commands_update":
            session.commands = _commands(update.get("availableCommands"))
        elif kind == "prompt_suggestions_update":  # unstable ACP (schema 1.32)
            self._suggested(session, _suggestions(update.get("suggestions")), now)
        elif kind == "session_info_update" and _meta_suggestions(update) is not None:
            # the adapters' own form (claude-agent-acp, codex-acp), sent only to JetBrains AIR
            self._suggested(session, _suggestions(_meta_suggestions(update)), now)
        elif kind in (
            "user_message_chunk",
            "session_info_update",
            "compaction_summary_chunk",
        ):
            return  # our own prompt echoed, token counts, settings: never spoken
        else:
            self.diagnose("acp_update", f"no announcement for update {str(kind)[:60]!r}")

    def _suggested(self, session: _Session, found: list[str], now: float) -> None:
        """The agent's newest suggested prompts (issue 33, item 5): kept for the list key
        and said once the turn is over (at once when it already is: the adapters predict
        after the turn's end). An empty list clears them and says nothing."""
        said_before = session.suggestions if not session.suggestion_due else []
        session.suggestions = found
        session.suggestion_due = bool(found) and found != said_before
        if session.suggestion_due and not session.in_turn:
            self._say_suggestions(session, now)

    def _say_suggestions(self, session: _Session, now: float) -> None:
        """ "Claude suggests: Run the tests." at detailed verbosity only (marked for the
        engine): a guess of the user's next words is not news, and it is on a key."""
        session.suggestion_due = False
        first, count = session.suggestions[0], len(session.suggestions)
        said = (
            self._t("{agent} suggests: {prompt}")
            if count == 1
            else self._t("{agent} suggests {count} prompts; the first: {prompt}")
        )
        sentence = _sentence(said.format(agent=self.agent_name, prompt=first, count=count))
        self._say_sentence(session, now, sentence)
        mark_detailed_only(self.builder.events[-1])

    def _compaction(self, session: _Session, update: JsonObject, now: float) -> None:
        """ACP ``compaction_update`` (issue 33, item 3): the agent compacts its context.

        Said once per status of each compaction: "Compacting the conversation…", then
        "Conversation compacted." (or why it failed, or that it was cancelled). The summary
        it kept is not read: it is the agent's memory, not news.
        """
        compaction_id = (get_str(update, "compactionId") or "")[:200]
        status = get_str(update, "status") or "in_progress"
        if session.compactions.get(compaction_id) == status:
            return
        if len(session.compactions) >= 64:
            session.compactions.pop(next(iter(session.compactions)))
        session.compactions[compaction_id] = status
        if status == "in_progress":
            said, percent = self._t("{agent} is compacting the conversation…"), None
        elif status == "completed":
            said, percent = self._t("Conversation compacted."), 100
        elif status == "failed":
            reason = " ".join((get_str(update, "error") or "").split())
            said = self._t("Compacting the conversation failed.")
            if reason:
                said = f"{said} {_sentence(clip(reason, 300))}"
            percent = 100
        elif status == "cancelled":
            said, percent = self._t("Compacting the conversation was cancelled."), 100
        else:
            self.diagnose("acp_update", f"compaction status {status[:40]!r} unknown; dropped")
            return
        sentence = said.format(agent=self.agent_name)
        self.builder.progress(
            session.state,
            now,
            description=sentence,
            percent=percent,
            normal=sentence,
            terse=sentence,
            urgency="normal",
        )

    def _usage(self, session: _Session, update: JsonObject, now: float) -> None:
        """ACP ``usage_update``: said only when the context window becomes nearly full
        (a context notice, issue 33 item 3), once until it has room again."""
        used, size = update.get("used"), update.get("size")
        if not isinstance(used, int | float) or not isinstance(size, int | float) or size <= 0:
            return
        share = used / size
        if share < CONTEXT_ROOM_AGAIN:
            session.context_full_said = False
        if share < CONTEXT_NEARLY_FULL or session.context_full_said:
            return
        session.context_full_said = True
        sentence = self._t("{agent}'s context is {percent}% full.").format(
            agent=self.agent_name, percent=min(100, int(share * 100))
        )
        self._say_sentence(session, now, sentence)

    def _message(self, session: _Session, update: JsonObject, now: float) -> None:
        content = update.get("content")
        text = _content_text(content)
        if text is None:
            kind = get_str(content, "type") or "content"
            text = self._t("(The agent sent {kind} that cannot be read aloud.)").format(kind=kind)
            text = f" {text} "
        if text:
            # A chunk of another message (its ``messageId`` differs) starts a paragraph:
            # run together, "…/auto-mode-classifier-billing" and "Plan approved" made one
            # address, and "Plan" was heard as part of it (issue 31, item 13).
            message = (session.turn, get_str(update, "messageId"))
            previous = session.message
            if previous is not None and previous[0] == message[0] and previous[1] != message[1]:
                text = "\n\n" + text
            session.message = message
            self.builder.output(session.state, now, self._output_key(session), text, complete=False)

    def _notice(self, session: _Session, update: JsonObject, now: float) -> None:
        """ACP session notice (an adapter's status, billing or warning), said by severity.

        Never read as the agent's words: it is the adapter's own advisory, with its own
        lead ("Warning from Claude: ..."). info is background news; warning and error are
        said at once, an error at critical urgency; an unknown severity as a notice.
        """
        title = " ".join((get_str(update, "title") or "").split())
        description = " ".join((get_str(update, "description") or "").split())
        if not title and not description:
            self.diagnose("acp_notice", "a notice without a title; dropped")
            return
        text = clip(f"{_sentence(title)} {description}".strip(), 600)
        severity = get_str(update, "severity") or ""
        if severity == "error":
            said, urgency = self._t("Error from {agent}: {notice}"), "critical"
        elif severity == "warning":
            said, urgency = self._t("Warning from {agent}: {notice}"), "normal"
        else:
            said, urgency = self._t("Notice from {agent}: {notice}"), "background"
        sentence = _sentence(said.format(agent=self.agent_name, notice=text))
        self.builder.progress(
            session.state,
            now,
            description=sentence,
            percent=None if urgency == "background" else 100,
            normal=sentence,
            terse=sentence,
            urgency=urgency,
        )

    def _end_turn(self, session_id: str, stop_reason: str | None, now: float) -> None:
        session = self._session(session_id, now)
        self._say_thought(session, now)
        self._announce_due(session, now)
        self.builder.output(session.state, now, self._output_key(session), "", complete=True)
        # Adapters do not always report the end of a call that ran without asking.
        for call_id, tool in session.tools.items():
            if tool.announced and not tool.finished:
                tool.finished = True
                # Its end was never reported: after a cancel it may well still run. Short,
                # the point first, so a status line is never cut mid-thought (issue 31, 13)
                ended = (
                    self._t("{tool} may still be running.")
                    if stop_reason == "cancelled"
                    else self._t("{tool} ended with the turn.")
                )
                self.builder.tool_completed(
                    session.state,
                    now,
                    call_id,
                    "success",
                    tool_name=tool.kind,
                    normal=_sentence(ended.format(tool=self._failed_name(tool))),
                    detailed=_sentence(
                        self._t("{tool} may still be running; its end was not reported.").format(
                            tool=self._failed_name(tool)
                        )
                        if stop_reason == "cancelled"
                        else ended.format(tool=self._failed_name(tool))
                    ),
                    terse=self._t("Done."),
                )
        session.tools.clear()
        sentences = {
            "end_turn": self._t("{agent} finished the turn."),
            "cancelled": self._t("{agent} stopped the turn: you cancelled it."),
            "refusal": self._t("{agent} refused to go on."),
            "max_tokens": self._t("{agent} stopped: it reached its output limit."),
            "max_turn_requests": self._t("{agent} stopped: it reached its step limit."),
        }
        said = sentences.get(stop_reason or "end_turn", sentences["end_turn"])
        rejected, session.rejected_in_turn = session.rejected_in_turn, None
        detailed = None
        if stop_reason == "cancelled" and rejected and not session.cancelled_by_user:
            # The adapter ends the turn as "cancelled" after a reject: not the user's cancel.
            # "You rejected: ..." has just named it: not again at normal verbosity, where a
            # long command would be cut mid-word (issue 31, item 13)
            said = self._t("{agent} stopped the turn after you rejected it.")
            detailed = _sentence(
                self._t("{agent} stopped the turn after you rejected: {action}").format(
                    agent=self.agent_name, action=rejected
                )
            )
        session.cancelled_by_user = False
        if session.settings_after_turn is not None:
            # the settings line held back while the user's first message waited (issue 31,
            # item 11): said once, after the answer it would have delayed, and before the
            # turn's end (a newer status line would fold that away)
            said_whole, brief = session.settings_after_turn
            session.settings_after_turn = None
            self._say_settings(session, said_whole, brief, now)
        # The agent now waits for the user: always said (never folded into a short cycle),
        # since silence while an agent waits is what users of agent tools hate most.
        self.builder.state_changed(
            session.state,
            now,
            "awaiting_input",
            normal=_sentence(said.format(agent=self.agent_name)),
            terse=self._t("Your turn."),
            detailed=detailed,
            urgency="normal",
            force=True,
        )
        session.in_turn = False
        if session.suggestion_due:  # suggested during the turn: said after its end
            self._say_suggestions(session, now)


__all__ = ["AcpAdapter"]
