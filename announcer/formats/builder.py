"""Builds valid AAEP events (Chapter 3 envelope, Chapter 4 core types) for the adapters.

Per-stream state lives here: native session ids map to ``sess_`` ids, each
session numbers its events from 0 (§3 ``sequence_number``: 0 on
``agent.session.started``, then +1), open tool calls are joined by their
native id, and streamed outputs keep their character position. Ids are
derived from the native ids with a hash so that replaying the same stream
gives the same event ids (the engine's dedup, §8.2, relies on stable ids).
"""

from __future__ import annotations

import functools
import hashlib
import math
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, get_args

from announcer.command_analysis import higher_risk, scan_text
from announcer.formats.speakable import clip
from announcer.i18n.translate import SOURCE_LANGUAGE, translator
from announcer.protocol.events import Decision

AAEP_CONTEXT = "https://aaep-protocol.org/context/v1"
# §4.3.3 schema: chunk maxLength
MAX_CHUNK_CHARS = 16384
# §3 summary bounds: terse 4096, normal/detailed 16384 characters
MAX_TERSE = 4096
MAX_SUMMARY = 16384
#: a tool argument at most this long is said at terse verbosity too ("Bash: ls.")
TERSE_ARGUMENT = 40
# sessions remembered per stream before the oldest (ended first) are forgotten
MAX_SESSIONS = 1000
# Confirmation defaults when the source gives none (Chapter 6 §6.4.2: 30-90 s for low risk)
DEFAULT_CONFIRMATION_TIMEOUT_S = 120

# §3.7: a whole event stays under 64 KiB on the wire; a chunk gets at most 48 KiB of it,
# counted as the worst JSON encoding (ASCII-escaped: "\u00e9" is 6 bytes, astral 12)
MAX_CHUNK_JSON_BYTES = 48 * 1024

_TOOL_NAME_BAD = re.compile(r"[^A-Za-z0-9_.-]")


def _json_cost(char: str) -> int:
    code = ord(char)
    if 0x20 <= code < 0x7F:
        return 2 if char in '"\\' else 1
    if code in (0x08, 0x09, 0x0A, 0x0C, 0x0D):
        return 2
    return 12 if code > 0xFFFF else 6


# Text this short fits both bounds whatever its characters (12 bytes each at worst).
_ALWAYS_FITS = min(MAX_CHUNK_CHARS, MAX_CHUNK_JSON_BYTES // 12)


def split_chunks(text: str) -> list[str]:
    """Cut streamed text into chunks that fit §4.3.3 (16384 characters) and §3.7 (64 KiB)."""
    if len(text) <= _ALWAYS_FITS:
        return [text] if text else []  # a streamed chunk: nearly always a few words
    pieces: list[str] = []
    start = cost = 0
    for index, char in enumerate(text):
        char_cost = _json_cost(char)
        if index - start >= MAX_CHUNK_CHARS or cost + char_cost > MAX_CHUNK_JSON_BYTES:
            pieces.append(text[start:index])
            start, cost = index, 0
        cost += char_cost
    if start < len(text):
        pieces.append(text[start:])
    return pieces


Event = dict[str, Any]


def digest(*parts: object, length: int = 32) -> str:
    joined = "\x1f".join(map(str, parts))
    return hashlib.sha256(joined.encode("utf-8")).hexdigest()[:length]


def iso_timestamp(seconds: float) -> str:
    """RFC 3339 UTC with millisecond precision (§3 timestamp).

    Every event is stamped, so the date and time up to the second are remembered for
    the last few seconds (events come many to a second); the milliseconds are rounded as
    ``datetime.fromtimestamp`` rounds them.
    """
    fraction, whole = math.modf(seconds)
    micro = round(fraction * 1_000_000)
    if micro >= 1_000_000 or micro < 0 or whole != whole:  # a carry, before 1970, NaN
        return _slow_iso_timestamp(seconds)
    return f"{_second_prefix(int(whole))}{micro // 1000:03d}Z"


@functools.lru_cache(maxsize=8)
def _second_prefix(second: int) -> str:
    return datetime.fromtimestamp(second, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.")


def _slow_iso_timestamp(seconds: float) -> str:
    moment = datetime.fromtimestamp(seconds, tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def parse_time(value: object) -> float | None:
    """Native timestamps: RFC 3339 strings or epoch seconds/milliseconds."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value) / 1000 if value > 1e11 else float(value)
    if not isinstance(value, str) or not value:
        return None
    text = value.strip().replace("z", "Z")
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def tool_identifier(name: str | None) -> str:
    """Fit a native tool name to §4.3.1's ``^[A-Za-z_][A-Za-z0-9_.-]{0,255}$``."""
    cleaned = _TOOL_NAME_BAD.sub("_", name or "")[:256]
    if not cleaned or not (cleaned[0].isalpha() or cleaned[0] == "_"):
        cleaned = ("tool_" + cleaned)[:256] if cleaned else "tool"
    return cleaned


def spoken_tool(name: str, language: str = SOURCE_LANGUAGE) -> str:
    """``mcp__github__create_issue`` or ``github.create_issue`` -> ``create issue from github``."""
    from_server = translator(language).gettext("{tool} from {server}")
    if name.startswith("mcp__"):
        parts = name.split("__")
        if len(parts) >= 3:
            return from_server.format(tool=parts[2].replace("_", " "), server=parts[1])
    server, dot, tool = name.partition(".")
    if dot and server and tool and "." not in tool:  # Codex's "server.tool" for MCP calls
        return from_server.format(tool=tool.replace("_", " "), server=server.replace("_", " "))
    return name.replace("_", " ")


@dataclass(slots=True)
class OpenTool:
    tool: str
    call_id: str
    started: float
    label: str | None = None  # the spoken argument, to tell parallel calls apart
    overlapped: bool = False  # another call of the same tool ran at the same time


@dataclass(slots=True)
class OpenOutput:
    output_id: str
    position: int = 0


@dataclass(slots=True)
class SessionState:
    native_id: str
    session_id: str
    next_seq: int = 0
    state: str = "idle"
    started: bool = False
    ended: bool = False
    started_at: float | None = None
    tool_count: int = 0
    open_tools: dict[str, OpenTool] = field(default_factory=dict)
    outputs: dict[str, OpenOutput] = field(default_factory=dict)
    # the question that put the session in awaiting_input: the change that leaves it
    # names it (correlation_id), the evidence a subscriber voids it on (§6.8)
    question_event_id: str | None = None
    # (session id, its hash state) for event ids: one hash per event, most of it done once
    id_hash: tuple[str, Any] | None = field(default=None, repr=False, compare=False)


def sentence(text: str) -> str:
    """Capitalise and end with a full stop, so speech pauses where the thought ends."""
    text = text.strip()
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text[-1] in ".!?…" else text + "."


def _upper_first(text: str) -> str:
    return text[:1].upper() + text[1:] if text[:1].islower() else text


def summaries(normal: str, terse: str | None = None, detailed: str | None = None) -> dict[str, str]:
    """Our sentences start with a capital (braille readers see it) and fit §3's bounds."""
    out = {"summary_normal": _upper_first(clip(normal, MAX_SUMMARY)) or "…"}
    if terse:
        out["summary_terse"] = _upper_first(clip(terse, MAX_TERSE))
    if detailed and detailed != normal:
        out["summary_detailed"] = _upper_first(clip(detailed, MAX_SUMMARY))
    return out


#: where announcer's own hints travel inside an event (§7 extensions), and the @context
#: entry that declares that prefix (§3.4.3)
ANNOUNCER_EXTENSION = "x-announcer"
ANNOUNCER_EXTENSION_CONTEXT = "urn:announcer:x-announcer:v1"
#: the most of a command kept in a question (the rest is said to be cut)
MAX_COMMAND = 8192


def mark_command(event: Event, command: str) -> None:
    """Record in a question the command its agent will run, whole (bounded), so every
    interface shows and reads what will run (announcer.command_analysis, issue 22)."""
    ours = _ours(event)
    ours["command"] = command[:MAX_COMMAND]
    ours["literal"] = True


#: the longest plan a question keeps whole (a plan approval's markdown)
MAX_PLAN = 16_000


def mark_plan(event: Event, plan: str) -> None:
    """Record in a plan approval the agent's whole plan (bounded), so every interface
    shows it and reads it whole on a key (issue 21, item 5: by steps, whole on a key)."""
    _ours(event)["plan"] = plan[:MAX_PLAN]


def mark_literal(event: Event) -> None:
    """A question whose action names paths or code as written (announcer's own mappings):
    read literally, never tidied as markdown (issue 21: `__init__.py` is not emphasis)."""
    _ours(event)["literal"] = True


def _ours(event: Event) -> dict[str, Any]:
    context = event.get("@context")
    if isinstance(context, list):
        if ANNOUNCER_EXTENSION_CONTEXT not in context:
            context.append(ANNOUNCER_EXTENSION_CONTEXT)
    else:
        event["@context"] = [context, ANNOUNCER_EXTENSION_CONTEXT]
    ours: dict[str, Any] = event.setdefault("extensions", {}).setdefault(ANNOUNCER_EXTENSION, {})
    return ours


class AaepBuilder:
    """Makes AAEP events for one input stream of one agent.

    ``language`` is the catalog language of our own sentences (Chapter 11): they are
    generated through gettext in it, and events say so in ``localization_hints``.
    """

    def __init__(
        self, agent_id: str, agent_name: str, *, salt: str = "", language: str = SOURCE_LANGUAGE
    ) -> None:
        self.language = language
        self.agent_id = agent_id
        self.agent_name = agent_name
        self.agent_version: str | None = None
        self.model: str | None = None
        self.salt = salt
        self.sessions: dict[str, SessionState] = {}
        self.current: SessionState | None = None
        self._anonymous = 0
        self.events: list[Event] = []

    # -- sessions ----------------------------------------------------------

    def session(self, native_id: str | None) -> SessionState:
        """The session for a native id; None means "the one we are in" (or a new one)."""
        if native_id is None:
            if self.current is not None and not self.current.ended:
                return self.current
            self._anonymous += 1
            native_id = f"anonymous-{self._anonymous}"
        state = self.sessions.get(native_id)
        if state is None or (state.ended and native_id.startswith("anonymous-")):
            state = SessionState(native_id, "sess_" + digest(self.salt, self.agent_id, native_id))
            self.sessions[native_id] = state
            self._forget_old_sessions(keep=state)
        self.current = state
        return state

    def _forget_old_sessions(self, keep: SessionState) -> None:
        """A long-running bridge sees many sessions: keep memory bounded, ended ones go first."""
        excess = len(self.sessions) - MAX_SESSIONS
        if excess <= 0:
            return
        ended = [key for key, state in self.sessions.items() if state.ended]
        ended_keys = set(ended)
        candidates = ended + [key for key in self.sessions if key not in ended_keys]
        for key in [k for k in candidates if self.sessions[k] is not keep][:excess]:
            del self.sessions[key]

    def rename_current(self, native_id: str) -> SessionState:
        """An anonymous session learned its real id (e.g. a later line carries session_id)."""
        cur = self.current
        if cur is not None and cur.native_id.startswith("anonymous-") and not cur.ended:
            return cur  # keep the ids already spoken consistent within this stream
        return self.session(native_id)

    def _t(self, message: str) -> str:
        """One of our sentences in the stream's language (gettext)."""
        return translator(self.language).gettext(message)

    def spoken_tool(self, name: str) -> str:
        return spoken_tool(name, self.language)

    def take(self) -> list[Event]:
        out, self.events = self.events, []
        return out

    # -- envelope ----------------------------------------------------------

    def _emit(
        self,
        sess: SessionState,
        type_: str,
        now: float,
        fields: dict[str, Any],
        *,
        urgency: str = "normal",
        at: float | None = None,
    ) -> Event:
        if not sess.started and type_ != "session.started":
            # the stream began mid-session: open it quietly so sequence numbers start at 0
            self.session_started(sess, now, at=at, urgency="background")
        if sess.ended and type_ != "session.started":
            # a line after the end (e.g. Claude Code's result, then more output): nothing
            # may follow a terminal event (§4.5.1), so this is a new session of the same agent
            self.session_started(sess, now, at=at, urgency="background")
        producer: dict[str, str] = {"agent_id": self.agent_id, "agent_name": self.agent_name}
        if self.agent_version:
            producer["agent_version"] = self.agent_version
        if self.model:
            producer["model"] = self.model
        event: Event = {
            "@context": AAEP_CONTEXT,
            "type": "aaep:agent." + type_,
            "event_id": self._event_id(sess),
            "session_id": sess.session_id,
            "sequence_number": sess.next_seq,
            "timestamp": iso_timestamp(at if at is not None else now),
            "producer": producer,
            "urgency": urgency,
        }
        if type_ != "output.streaming":
            # our summaries are in the user's language (Chapter 11: say which language text
            # is in); streamed output is the agent's own text, in a language we do not know
            event["localization_hints"] = {"primary_language": self.language}
        event.update(fields)
        sess.next_seq += 1
        self.events.append(event)
        return event

    def _event_id(self, sess: SessionState) -> str:
        """``evt_`` + digest(salt, session id, sequence number), the session's part hashed once."""
        cached = sess.id_hash
        if cached is None or cached[0] != sess.session_id:
            prefix = f"{self.salt}\x1f{sess.session_id}\x1f".encode()
            cached = sess.id_hash = (sess.session_id, hashlib.sha256(prefix))
        hashed = cached[1].copy()
        hashed.update(str(sess.next_seq).encode())
        return "evt_" + hashed.hexdigest()[:32]

    # -- Chapter 4 event types --------------------------------------------

    def session_started(
        self,
        sess: SessionState,
        now: float,
        *,
        normal: str | None = None,
        terse: str | None = None,
        detailed: str | None = None,
        at: float | None = None,
        extra: dict[str, Any] | None = None,
        urgency: str = "normal",
    ) -> None:
        if sess.started and not sess.ended:
            return
        if sess.ended:  # a new session under the same native id (resume)
            sess.next_seq = 0
            sess.session_id = "sess_" + digest(self.salt, self.agent_id, sess.native_id, now)
        sess.started, sess.ended, sess.state = True, False, "idle"
        sess.started_at = at if at is not None else now
        fields = summaries(
            normal or self._t("{agent} session started.").format(agent=self.agent_name),
            terse or self._t("{agent} started.").format(agent=self.agent_name),
            detailed,
        )
        fields.update(extra or {})
        self._emit(sess, "session.started", now, fields, urgency=urgency, at=at)

    def session_completed(
        self,
        sess: SessionState,
        now: float,
        *,
        normal: str,
        terse: str | None = None,
        detailed: str | None = None,
        duration_ms: int | None = None,
        at: float | None = None,
    ) -> None:
        fields: dict[str, Any] = summaries(normal, terse, detailed)
        fields["tool_invocations_count"] = sess.tool_count
        if duration_ms is not None and 0 <= duration_ms <= 86_400_000:
            fields["duration_ms"] = duration_ms
        self._end_session(sess, "session.completed", now, fields, at=at)

    def session_errored(
        self,
        sess: SessionState,
        now: float,
        *,
        normal: str,
        terse: str | None = None,
        detailed: str | None = None,
        category: str = "unknown",
        recoverable: bool | None = None,
        at: float | None = None,
    ) -> None:
        fields: dict[str, Any] = summaries(normal, terse, detailed)
        fields["error_category"] = category
        if recoverable is not None:
            fields["recoverable"] = recoverable
        # §4.1.3: errored sessions are always critical
        self._end_session(sess, "session.errored", now, fields, urgency="critical", at=at)

    def session_cancelled(
        self, sess: SessionState, now: float, *, normal: str, by: str, at: float | None = None
    ) -> None:
        fields: dict[str, Any] = summaries(normal, self._t("Cancelled."))
        fields["cancelled_by"] = by
        self._end_session(sess, "session.cancelled", now, fields, at=at)

    def _end_session(
        self,
        sess: SessionState,
        type_: str,
        now: float,
        fields: dict[str, Any],
        *,
        urgency: str = "normal",
        at: float | None = None,
    ) -> None:
        """§4.5.1: what is open is closed before the terminal event, and nothing follows it."""
        self._close_open(sess, now, at)
        self._emit(sess, type_, now, fields, urgency=urgency, at=at)
        sess.ended = True

    def state_changed(
        self,
        sess: SessionState,
        now: float,
        to_state: str,
        *,
        normal: str | None = None,
        terse: str | None = None,
        detailed: str | None = None,
        urgency: str = "background",
        at: float | None = None,
        force: bool = False,
    ) -> None:
        """§4.2.1: from_state chains from the previous change's to_state; repeats are skipped.

        Explicit changes move ``sess.state``, and so does a question (``awaiting_input``,
        Appendix A.4), so the change that resolves it starts from ``awaiting_input``.
        """
        if sess.started and sess.state == to_state and not force and not detailed:
            return
        if not sess.started:
            self.session_started(sess, now, at=at)
        fields: dict[str, Any] = {"from_state": sess.state, "to_state": to_state}
        if sess.state == "awaiting_input" and to_state != "awaiting_input":
            if sess.question_event_id is not None:
                fields["correlation_id"] = sess.question_event_id
            sess.question_event_id = None
        if normal:
            fields.update(summaries(normal, terse, detailed))
        sess.state = to_state
        self._emit(sess, "state.changed", now, fields, urgency=urgency, at=at)

    def thinking(
        self,
        sess: SessionState,
        now: float,
        thought: str | None,
        *,
        detail: str | None = None,
        at: float | None = None,
    ) -> None:
        """A model's thought: each new one is spoken, a bare 'thinking' only on a change.

        ``thought`` is its headline (normal verbosity); ``detail`` the rest (detailed).
        """
        normal = (
            self._t("Thinking: {text}").format(text=sentence(thought))
            if thought
            else self._t("Thinking.")
        )
        self.state_changed(
            sess,
            now,
            "thinking",
            normal=normal,
            terse=self._t("Thinking."),
            detailed=f"{normal} {sentence(detail)}" if thought and detail else None,
            at=at,
            force=bool(thought),
        )

    def tool_invoked(
        self,
        sess: SessionState,
        now: float,
        native_call_id: str | None,
        tool_name: str | None,
        *,
        normal: str | None = None,
        terse: str | None = None,
        detailed: str | None = None,
        args_summary: str | None = None,
        label: str | None = None,
        at: float | None = None,
        urgency: str = "normal",
    ) -> None:
        """``label`` names the call for the ear when ``args_summary`` (raw) does not."""
        tool = tool_identifier(tool_name)
        key = native_call_id or f"anonymous-{sess.tool_count}"
        if key in sess.open_tools:
            return  # the same call announced twice (start then update): say it once
        call_id = "call_" + digest(self.salt, sess.session_id, key, length=24)
        opened = OpenTool(tool, call_id, at if at is not None else now, label=label or args_summary)
        for other in sess.open_tools.values():
            if other.tool == tool:  # parallel calls of one tool: each end must say which
                other.overlapped = opened.overlapped = True
        sess.open_tools[key] = opened
        sess.tool_count += 1
        spoken = self.spoken_tool(tool_name or tool)
        fields: dict[str, Any] = {"tool": tool, "tool_call_id": call_id}
        running = (
            self._t("Running {tool}: {details}.").format(tool=spoken, details=args_summary)
            if args_summary
            else self._t("Running {tool}.").format(tool=spoken)
        )
        if terse is None:
            # "Bash." alone does not say which call; a short argument fits a terse line
            short = label or args_summary
            terse = (
                self._t("{tool}: {details}.").format(tool=spoken, details=short)
                if short and len(short) <= TERSE_ARGUMENT
                else f"{spoken}."
            )
        fields.update(summaries(normal or running, terse, detailed))
        if args_summary:
            fields["args_summary"] = clip(args_summary, MAX_SUMMARY)
        self._emit(sess, "tool.invoked", now, fields, urgency=urgency, at=at)

    def tool_completed(
        self,
        sess: SessionState,
        now: float,
        native_call_id: str | None,
        status: str,
        *,
        tool_name: str | None = None,
        normal: str | None = None,
        terse: str | None = None,
        detailed: str | None = None,
        error_message: str | None = None,
        duration_ms: int | None = None,
        at: float | None = None,
    ) -> None:
        key = native_call_id
        if key is None and sess.open_tools:
            key = next(reversed(sess.open_tools))  # the only/most recent open call
        opened = sess.open_tools.pop(key, None) if key is not None else None
        if opened is None:
            # a result without its call (the stream started mid-way): announce the call
            # quietly first so the pair stays whole (§4.5.2), then say the result
            key = key or f"orphan-{sess.next_seq}"
            spoken = self.spoken_tool(tool_name) if tool_name else self._t("A tool")
            self.tool_invoked(
                sess,
                now,
                key,
                tool_name,
                normal=self._t("{tool} was running.").format(tool=spoken),
                at=at,
                urgency="background",
            )
            opened = sess.open_tools.pop(key)
        else:
            spoken = self.spoken_tool(opened.tool)
            if duration_ms is None:
                elapsed = (at if at is not None else now) - opened.started
                duration_ms = int(elapsed * 1000) if elapsed >= 0 else None
        tool, call_id = opened.tool, opened.call_id
        # several calls of one tool at once: "Bash finished." three times says nothing
        ambiguous = bool(opened.label) and opened.overlapped
        # Subscribers lead a failed completion with "<tool> failed." themselves (§4.3.2
        # status), so a failure's summary says why, without naming the tool again (at any
        # verbosity: "Bash failed. Bash failed: ..." is heard twice).
        if normal is None:
            if status == "success":
                normal = (
                    self._t("{tool} finished: {details}.").format(tool=spoken, details=opened.label)
                    if ambiguous
                    else self._t("{tool} finished.").format(tool=spoken)
                )
            elif status == "timeout":
                normal = self._t("It did not finish in time.")
            else:
                normal = (
                    sentence(error_message) if error_message else self._t("It reported an error.")
                )
        fields: dict[str, Any] = {"tool": tool, "status": status, "tool_call_id": call_id}
        if terse is None:
            # our own "Done." would sound like the end of the session
            terse = (
                self._t("{tool} done: {details}.").format(tool=spoken, details=opened.label)
                if status == "success" and ambiguous
                else self._t("{tool} done.").format(tool=spoken)
                if status == "success"
                else self._t("{tool} failed.").format(tool=spoken)
                if status == "error"
                else self._t("{tool} timed out.").format(tool=spoken)
            )
        fields.update(summaries(normal, terse, detailed))
        if status != "success":
            # §4.3.2: a failure explains itself, even when the agent gave no reason we may say
            fields["error_message"] = clip(
                error_message or self._t("{tool} did not succeed").format(tool=spoken), 4096
            )
        if duration_ms is not None and 0 <= duration_ms <= 86_400_000:
            fields["duration_ms"] = duration_ms
        # a failed tool matters to the user; a succeeded one is background news
        urgency = "background" if status == "success" else "normal"
        self._emit(sess, "tool.completed", now, fields, urgency=urgency, at=at)

    def output(
        self,
        sess: SessionState,
        now: float,
        key: str,
        text: str,
        *,
        complete: bool,
        at: float | None = None,
    ) -> None:
        """§4.3.3 streaming output: chunks of one output_id with a running position."""
        opened = sess.outputs.get(key)
        if opened is None:
            if not text and complete:
                return  # nothing was said and nothing is left to say
            opened = OpenOutput("out_" + digest(self.salt, sess.session_id, key, length=24))
            sess.outputs[key] = opened
        pieces = split_chunks(text) or [""]
        for index, piece in enumerate(pieces):
            last = index == len(pieces) - 1
            fields: dict[str, Any] = {
                "chunk": piece,
                "position": opened.position,
                "complete": complete and last,
                "output_id": opened.output_id,
            }
            if complete and last:
                fields["coalesce_hint"] = "completion"
            opened.position += len(piece)
            self._emit(sess, "output.streaming", now, fields, at=at)
        if complete:
            del sess.outputs[key]

    def confirmation(
        self,
        sess: SessionState,
        now: float,
        *,
        token_seed: str,
        action: str,
        consequence: str,
        normal: str,
        terse: str | None = None,
        detailed: str | None = None,
        risk_level: str = "medium",
        irreversible: bool = False,
        timeout_seconds: int = DEFAULT_CONFIRMATION_TIMEOUT_S,
        extra_context: dict[str, Any] | None = None,
        at: float | None = None,
    ) -> Event:
        """§4.4.1: always critical; the default decision is always reject, never allow.

        A dangerous command named in the action (``rm -rf build/``) raises the risk
        whatever the caller said (announcer.command_analysis, issue 22)."""
        found = scan_text(action)
        if found is not None:
            risk_level = higher_risk(risk_level, found.risk)
            irreversible = irreversible or found.irreversible
        fields: dict[str, Any] = {
            "action": clip(action, MAX_SUMMARY),
            "consequence": clip(consequence, MAX_SUMMARY),
            **self._reply_fields(sess, token_seed, timeout_seconds),
            "default_decision": "reject",
            "risk_level": risk_level,
            "irreversible": irreversible,
            "allowed_replies": list(get_args(Decision)),
        }
        fields.update(summaries(normal, terse, detailed))
        if extra_context:
            fields["extra_context"] = extra_context
        event = self._emit(sess, "awaiting.confirmation", now, fields, urgency="critical", at=at)
        self._awaiting_input(sess, event)
        return event

    def _reply_fields(
        self, sess: SessionState, token_seed: str, timeout_seconds: int
    ) -> dict[str, Any]:
        """The reply token (stable for one prompt of one session) and a bounded timeout."""
        return {
            "reply_token": "rpl_" + digest(self.salt, sess.session_id, token_seed),
            "timeout_seconds": max(1, min(int(timeout_seconds), 86_400)),
        }

    def clarification(
        self,
        sess: SessionState,
        now: float,
        *,
        token_seed: str,
        question: str,
        normal: str | None = None,
        terse: str | None = None,
        choices: list[tuple[str, str]] | None = None,
        timeout_seconds: int = DEFAULT_CONFIRMATION_TIMEOUT_S,
        at: float | None = None,
    ) -> Event:
        fields: dict[str, Any] = {
            "question": clip(question, MAX_SUMMARY),
            **self._reply_fields(sess, token_seed, timeout_seconds),
        }
        fields.update(summaries(normal or question, terse))
        unique = list(dict.fromkeys(choices or []))
        if len(unique) >= 2:
            fields["choices"] = [
                {"value": clip(v, 256), "label": clip(label, 1024)} for v, label in unique[:32]
            ]
            fields["accepted_response_kinds"] = ["multiple_choice", "freetext"]
        else:
            fields["accepted_response_kinds"] = ["freetext"]
        event = self._emit(sess, "awaiting.clarification", now, fields, urgency="critical", at=at)
        self._awaiting_input(sess, event)
        return event

    @staticmethod
    def _awaiting_input(sess: SessionState, event: Event) -> None:
        """Appendix A.4: a question puts the agent in ``awaiting_input`` (§4.2.1 implicit state).

        The next state change then starts from it, which is what tells a subscriber
        the question was resolved or withdrawn (§6.8 reads ``from_state``).
        """
        sess.state = "awaiting_input"
        event_id = event.get("event_id")
        sess.question_event_id = event_id if isinstance(event_id, str) else None

    def tool_denied(
        self,
        sess: SessionState,
        now: float,
        native_call_id: str | None,
        tool: str | None,
        *,
        error_message: str,
        reason: str | None = None,
        by: str | None = None,
        at: float | None = None,
    ) -> None:
        """A requested call the user or a policy denied: it ends the tool pair as an error.

        The sentence gives the ``reason`` or who denied it, like ``denied_before_request``.
        """
        name = self.spoken_tool(tool) if tool else self._t("the tool")
        if reason:
            normal = self._t("Denied: {reason}.").format(reason=reason)
            detailed = self._t("{tool} was denied: {reason}.").format(tool=name, reason=reason)
        elif by:
            normal = self._t("Denied by {who}.").format(who=by)
            detailed = self._t("{tool} was denied by {who}.").format(tool=name, who=by)
        else:
            normal = self._t("Denied.")
            detailed = self._t("{tool} was denied.").format(tool=name)
        self.tool_completed(
            sess,
            now,
            native_call_id,
            "error",
            tool_name=tool,
            normal=normal,
            detailed=detailed,
            terse=self._t("Denied."),
            error_message=error_message,
            at=at,
        )

    def denied_before_request(
        self,
        sess: SessionState,
        now: float,
        tool: str | None,
        *,
        reason: str | None = None,
        by: str | None = None,
        at: float | None = None,
    ) -> None:
        """A denial of a call never requested here: it never ran, so no tool pair is opened.

        The sentence gives the ``reason`` ("was denied: not allowed.") or who denied it
        ("was denied by policy.").
        """
        name = self.spoken_tool(tool) if tool else self._t("a tool")
        if reason:
            said = self._t("{tool} was denied: {reason}.").format(tool=name, reason=reason)
        elif by:
            said = self._t("{tool} was denied by {who}.").format(tool=name, who=by)
        else:
            said = self._t("{tool} was denied.").format(tool=name)
        self.progress(
            sess,
            now,
            description=self._t("{tool} denied").format(tool=name),
            normal=said,
            terse=self._t("Denied."),
            urgency="normal",
            at=at,
        )

    def progress(
        self,
        sess: SessionState,
        now: float,
        *,
        description: str | None = None,
        percent: float | None = None,
        step: int | None = None,
        total_steps: int | None = None,
        normal: str | None = None,
        terse: str | None = None,
        urgency: str = "background",
        at: float | None = None,
    ) -> None:
        progress: dict[str, Any] = {}
        if percent is not None and 0 <= percent <= 100:
            progress["percent"] = percent
        if step is not None and step >= 1:
            progress["step"] = step
        if total_steps is not None and total_steps >= 1 and (step is None or step <= total_steps):
            progress["total_steps"] = total_steps
        if description:
            progress["description"] = clip(description, 4096)
        if not progress:
            progress["description"] = clip(normal or self._t("Working."), 4096)
        fields: dict[str, Any] = {"progress": progress}
        if normal:
            fields.update(summaries(normal, terse))
        self._emit(sess, "progress.updated", now, fields, urgency=urgency, at=at)

    # -- end of stream -----------------------------------------------------

    def _close_open(self, sess: SessionState, now: float, at: float | None) -> None:
        """§4.3.2: every invoked tool gets its completion; every output its complete chunk."""
        for key in list(sess.outputs):
            self.output(sess, now, key, "", complete=True, at=at)
        for key in list(sess.open_tools):
            self.tool_completed(
                sess,
                now,
                key,
                "timeout",
                normal=self._t("It never reported back before the stream ended."),
                error_message=self._t("the stream ended before the tool reported a result"),
                at=at,
            )

    def close_all(self, now: float) -> None:
        """At end of input: finish what is open, but do not invent an ending for the session."""
        for sess in self.sessions.values():
            if sess.started and not sess.ended:
                self._close_open(sess, now, None)
