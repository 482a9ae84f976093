"""The fields of an AAEP event as the adapters build them: bounds, ids, timestamps.

§3's bounds (summaries, chunks, a whole event under 64 KiB), ids derived from native ids
with a hash (replaying a stream gives the same ids, §8.2), RFC 3339 timestamps, tool
names as identifiers and as said, our sentences' summaries, and the marks announcer puts
in a question's own §7 extension (the command that will run, the plan, read literally).
"""

from __future__ import annotations

import functools
import hashlib
import math
import re
from datetime import UTC, datetime
from typing import Any

from announcer.command_analysis import MAX_COMMAND_CHARS
from announcer.formats.speakable import clip
from announcer.i18n.translate import SOURCE_LANGUAGE, translator
from announcer.protocol.extensions import ANNOUNCER_EXTENSION, ANNOUNCER_EXTENSION_CONTEXT

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


#: the most of a command kept in a question: as much as announcer checks
#: (announcer.command_analysis); a longer one keeps its true length beside it
MAX_COMMAND = MAX_COMMAND_CHARS


def mark_command(event: Event, command: str, *, length: int | None = None) -> None:
    """Record in a question the command its agent will run, whole (bounded), so every
    interface shows and reads what will run (announcer.command_analysis, issue 22).

    A command longer than what is kept (or given cut, ``length`` its true length) keeps
    its true length as ``command_length``: what was not seen is said and is high risk."""
    ours = _ours(event)
    ours["command"] = command[:MAX_COMMAND]
    true_length = max(len(command), length or 0)
    if true_length > len(ours["command"]):
        ours["command_length"] = true_length
    ours["literal"] = True


#: the longest plan a question keeps whole (a plan approval's markdown)
MAX_PLAN = 16_000


def mark_plan(event: Event, plan: str) -> None:
    """Record in a plan approval the agent's whole plan (bounded), so every interface
    shows it and reads it whole on a key (issue 21, item 5: by steps, whole on a key)."""
    _ours(event)["plan"] = plan[:MAX_PLAN]


def mark_outcome_said(event: Event) -> None:
    """A tool's end whose summary already says how it ended and what ended ("sh build.sh
    failed, exit code 2: ..."): said as it is, without the subscriber's "<tool> failed."."""
    _ours(event)["outcome_said"] = True


def mark_options(event: Event, options: str) -> None:
    """Every option of a question by its agent's label, read at detailed verbosity; the
    question itself says only what "always" covers (issue 31, item 10)."""
    _ours(event)["options"] = options[:MAX_SUMMARY]


def mark_whole(event: Event) -> None:
    """News that carries the agent's own words (a quick plan's steps): said whole at
    normal verbosity, never cut to a status line's length (the agent's words are never
    dropped)."""
    _ours(event)["whole"] = True


def mark_changes(event: Event, changes: str) -> None:
    """What an edit did to its files, line counts and all ("adds 1 line and removes 1 line
    in src/app.py"), kept on its end when the end says less ("Changed src/app.py."): the
    turn's digest names it (issue 33, item 2)."""
    _ours(event)["changes"] = changes[:1000]


def mark_suite_counts(event: Event, passed: int | None, failed: int) -> None:
    """How many tests a command's run passed (None: not said) and failed, read from its
    output: the turn's digest says them ("sh run_tests.sh: 47 passed, 2 failed", issue 33
    item 2)."""
    _ours(event)["tests"] = {"failed": failed} | ({} if passed is None else {"passed": passed})


def mark_detailed_only(event: Event) -> None:
    """News the user hears only at detailed verbosity (an agent's suggested next prompt,
    issue 33 item 5): a guess of the user's own words, on a key at every verbosity."""
    _ours(event)["detailed_only"] = True


def mark_start_line(event: Event) -> None:
    """An agent's settings line as it starts (issue 31, item 11): moot once the user has
    written to it, so never said again after the user's message."""
    _ours(event)["start_line"] = True


def mark_kept_quiet(event: Event) -> None:
    """News in the event stream that is not said (the engine counts it as "said already"
    in the diagnostics): an agent's start while the user's message waits for it (issue 31,
    item 11), a call's success right after the line that named it (issue 30, item 8; issue
    31, item 11). Only a session's start and a call's success are ever kept quiet
    (announcer.engine.policy)."""
    _ours(event)["quiet"] = True


def kept_quiet(event: Event) -> bool:
    """Whether our own mapping marked ``event`` not to be said (:func:`mark_kept_quiet`),
    for the interfaces that print events without the engine (``hook serve``); honoured
    for a session's start and a call's success only, as the engine does."""
    extensions = event.get("extensions")
    ours = extensions.get(ANNOUNCER_EXTENSION) if isinstance(extensions, dict) else None
    if not (isinstance(ours, dict) and ours.get("quiet") is True):
        return False
    kind = event.get("type")
    return kind == "aaep:agent.session.started" or (
        kind == "aaep:agent.tool.completed" and event.get("status") == "success"
    )


def mark_said_as_question(event: Event) -> None:
    """A call whose permission question already said it (issue 31, item 11): its start is
    kept for the record and not said again after the user's answer."""
    _ours(event)["said_as_question"] = True


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
