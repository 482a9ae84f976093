"""The ACP agent's stdout as JSON-RPC messages for the SDK: bounded, checked, never fatal.

The SDK's own stdio reader trusts the agent: a line that is not JSON prints a
traceback, a JSON value that is not an object ends its receive loop (the agent is then
silently gone), a huge line is gathered whole, and every message becomes a task at
once, however fast the agent writes. This transport sits between the pipe and the
SDK's ``Connection`` (its message-level ``Transport`` seam) and:

- cuts every line at ``max_line_bytes``: a longer one is skipped as it streams by,
  never held in memory;
- refuses an agent's question (``elicitation/create``) longer than ``max_form_bytes``
  with a JSON-RPC error, before it is parsed when its head names the method (the
  SDK's models of a 16 MB form took 670 MB and froze the keys for seconds), and tells
  the transport so the user hears it (a question never vanishes in silence);
- skips blank lines, lines that are not JSON and JSON that is not an object, each
  counted with its reason (nothing is lost silently);
- passes on ``session/update`` only for sessions announcer created (``session/new``
  answered, or the one it loaded); a request about another session is answered with
  a JSON-RPC error at once, so the agent never waits on it;
- reads the next message only once the previous one was handled and the events
  waiting for the engine are below a high-water mark (``room``), so an agent that
  floods blocks on its own pipe instead of growing our memory;
- joins message chunks already waiting in the pipe into one, so a flood of tiny
  chunks costs the engine a few events, and the question behind it arrives in time.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

log = logging.getLogger("announcer.transports.acp")

#: the longest line kept: a large tool output or diff arrives as one JSON line
MAX_LINE_BYTES = 16 * 1024 * 1024
#: the longest agent question (``elicitation/create``) kept: a form is at most 20 fields of
#: 29 options each (formats/acp_forms.py), a few kilobytes; four AAEP events' worth (§3.7)
MAX_FORM_BYTES = 256 * 1024
#: the method of a message whose first members are ``jsonrpc`` and ``id`` (as every SDK
#: writes them), read from its head without parsing the rest
_HEAD = re.compile(
    rb'\A\s*\{(?:\s*"(?:jsonrpc|id)"\s*:\s*(?:"[^"\\]*"|-?\d+)\s*,)*'
    rb'\s*"method"\s*:\s*"([^"\\]{1,100})"'
)
_HEAD_ID = re.compile(rb'"id"\s*:\s*("[^"\\]*"|-?\d+)')
_FORM_METHOD = "elicitation/create"
#: read from the pipe this much at a time
READ_BYTES = 64 * 1024
#: the most text joined from waiting message chunks into one
MAX_JOINED_CHARS = 64 * 1024
#: the session-creating requests whose answer names a new session
_CREATING = frozenset({"session/new", "session/fork"})
#: requests whose params name a session the client already knows (it names the id)
_NAMING = frozenset({"session/load", "session/resume"})
#: the notifications a client takes (ACP schema, client methods); ``_name`` are extensions
_NOTIFICATIONS = frozenset({"session/update", "elicitation/complete"})
#: what the SDK logs, with a traceback, about a message it could not handle
_SDK_COMPLAINTS = (
    "Unhandled error while handling notification",
    "Unhandled error while handling request",
    "Error parsing JSON-RPC message",
    "Background task failed",
)


class SdkComplaints(logging.Filter):
    """The SDK's tracebacks about an agent's bad message become a counted drop.

    The SDK logs them on the root logger with ``logging.exception``, which would print
    a Python traceback on the user's terminal; the agent sent something wrong, which is
    the agent's problem, so it is counted (``:diagnostics``) and logged in one line.
    """

    def __init__(self) -> None:
        super().__init__()
        self.count_drop: Callable[[str], None] | None = None

    def filter(self, record: logging.LogRecord) -> bool:
        message = str(record.msg)
        if not message.startswith(_SDK_COMPLAINTS):
            return True
        error = record.exc_info[1] if record.exc_info else None
        kind = type(error).__name__ if error is not None else "error"
        if self.count_drop is not None:
            self.count_drop(f"ACP agent sent a message the SDK could not read ({kind}); skipped")
        log.warning("%s (%s)", record.getMessage(), kind)
        return False


SDK_COMPLAINTS = SdkComplaints()


class GuardedStdio:
    """A message-level transport over the agent's stdin and stdout (see the module)."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        on_drop: Callable[[str], None],
        room: Callable[[], Awaitable[None]] | None = None,
        max_line_bytes: int = MAX_LINE_BYTES,
        on_notice: Callable[[dict[str, Any]], None] | None = None,
        max_form_bytes: int = MAX_FORM_BYTES,
        on_form_refused: Callable[[int], None] | None = None,
    ) -> None:
        self._reader = reader
        self._writer = writer
        self._on_drop = on_drop
        self._room = room
        self._max_line = max_line_bytes
        # ``notice`` updates (ACP session notices) are newer than the SDK's schema: they go
        # straight to the transport instead of failing the SDK's validation
        self._on_notice = on_notice
        self._max_form = max_form_bytes
        # told the size of each agent question refused for its size, to say it to the user
        self._on_form_refused = on_form_refused
        self._buffer = bytearray()
        self._start = 0  # where the unread part of the buffer starts
        self._skipping = False  # inside a line over the limit: dropped up to its end
        self._eof = False
        self._ready: deque[dict[str, Any]] = deque()
        self._write_lock = asyncio.Lock()
        self.sessions: set[str] = set()
        self._creating: set[object] = set()
        SDK_COMPLAINTS.count_drop = on_drop
        root = logging.getLogger()
        if SDK_COMPLAINTS not in root.filters:
            root.addFilter(SDK_COMPLAINTS)

    # -- the SDK's Transport face ---------------------------------------------------------

    async def send(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        params = message.get("params")
        if method == "initialize" and isinstance(params, dict) and self._on_notice is not None:
            # ACP session notices: declared here, since the SDK's model has no field for it
            capabilities = params.setdefault("clientCapabilities", {})
            if isinstance(capabilities, dict):
                session = capabilities.get("session") or {}
                # and ACP compaction updates (opt-in in ACP 1, issue 33 item 3), and the
                # agent's suggested next prompts (unstable ACP ``prompt_suggestions_update``,
                # issue 33 item 5: ``{}`` takes text and resource_link blocks).
                # Not ``_meta.jetbrains.air``, though claude-agent-acp 0.101 and codex-acp
                # 2.6 send their ``_meta.promptSuggestions`` only to a client declaring it:
                # it turns on JetBrains AIR's whole form of the wire, not just suggestions.
                # Their tool calls then come without ``rawInput`` while the input streams,
                # a permission request carries only what AIR already holds, a question of
                # the agent loses its "Other" choice and one-question title, and results
                # move between fields; what a command will run would be read from less.
                capabilities["session"] = {
                    **session,
                    "notices": {},
                    "compaction": {},
                    "promptSuggestions": {},
                }
        if method in _CREATING and "id" in message:
            self._creating.add(message["id"])
        elif (
            method in _NAMING
            and isinstance(params, dict)
            and isinstance(params.get("sessionId"), str)
        ):
            self.sessions.add(params["sessionId"])
        data = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
        async with self._write_lock:
            self._writer.write(data)
            await self._writer.drain()

    async def receive(self) -> dict[str, Any] | None:
        # Let the handler of the message before run first: one at a time, never a pile.
        await asyncio.sleep(0)
        if self._room is not None:
            await self._room()
        while True:
            if self._ready:
                return self._ready.popleft()
            line = await self._line()
            if line is None:
                return None
            message = self._check(line)
            if message is not None:
                return self._join_chunks(message)

    async def close(self) -> None:
        self._writer.close()

    # -- lines -----------------------------------------------------------------------------

    def _buffered_line(self) -> bytes | None:
        """The next whole line already read, or None; a line over the limit is skipped."""
        while True:
            end = self._buffer.find(b"\n", self._start)
            if end < 0:
                if len(self._buffer) - self._start > self._max_line:
                    if not self._skipping:
                        self._drop(f"a line longer than {self._max_line} bytes")
                    self._skipping = True
                    self._buffer.clear()
                    self._start = 0
                return None
            line = bytes(self._buffer[self._start : end])
            self._start = end + 1
            if self._start > READ_BYTES and self._start * 2 > len(self._buffer):
                del self._buffer[: self._start]
                self._start = 0
            if self._skipping:
                self._skipping = False  # the end of the long line: dropped with it
                continue
            if len(line) > self._max_line:
                self._drop(f"a line longer than {self._max_line} bytes")
                continue
            return line

    async def _line(self) -> bytes | None:
        while True:
            line = self._buffered_line()
            if line is not None:
                return line
            if self._eof:
                return None
            chunk = await self._reader.read(READ_BYTES)
            if not chunk:
                self._eof = True
                rest = bytes(self._buffer[self._start :])
                self._buffer.clear()
                self._start = 0
                if rest.strip() and not self._skipping:
                    return rest
                return None
            self._buffer += chunk

    # -- messages ------------------------------------------------------------------------

    def _check(self, line: bytes) -> dict[str, Any] | None:
        """A JSON-RPC object about a session we know, or None (counted, or answered)."""
        if not line.strip():
            return None
        if len(line) > self._max_form and self._refused_by_head(line):
            return None
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            self._drop("a line that is not JSON")
            return None
        if not isinstance(message, dict):
            self._drop("JSON that is not an object")
            return None
        method = message.get("method")
        if method is None:
            self._answered(message)
            return message
        if not isinstance(method, str):
            self._drop("a message whose method is not a string")
            return None
        if method == _FORM_METHOD and len(line) > self._max_form:
            # its head did not name the method first: parsed, and refused all the same
            self._refuse_form(message.get("id"), len(line), "id" in message)
            return None
        params = message.get("params")
        if "id" not in message and not (method in _NOTIFICATIONS or method.startswith("_")):
            self._drop("a notification a client does not take")
            return None
        if method == "session/update" and not _readable_update(params):
            self._drop("a session/update without an update kind")
            return None
        session = params.get("sessionId") if isinstance(params, dict) else None
        if (
            method == "session/update"
            and self._on_notice is not None
            and session in self.sessions
            and isinstance(params, dict)
            and params["update"]["sessionUpdate"] in _AROUND_THE_SDK
        ):
            self._on_notice(params)
            return None
        if session is not None and session not in self.sessions:
            if "id" in message:
                self._refuse(message, "unknown session")
            self._drop("a message for a session announcer never opened")
            return None
        return message

    def _answered(self, message: dict[str, Any]) -> None:
        """A response: the session it created is now ours."""
        if message.get("id") in self._creating:
            self._creating.discard(message.get("id"))
            result = message.get("result")
            if isinstance(result, dict) and isinstance(result.get("sessionId"), str):
                self.sessions.add(result["sessionId"])

    def _refused_by_head(self, line: bytes) -> bool:
        """A long line whose head names ``elicitation/create``: refused unparsed."""
        head = _HEAD.match(line[:4096])
        if head is None or head.group(1).decode("utf-8", "replace") != _FORM_METHOD:
            return False
        found = _HEAD_ID.search(line, 0, head.start(1))
        request_id = json.loads(found.group(1)) if found else None
        self._refuse_form(request_id, len(line), found is not None)
        return True

    def _refuse_form(self, request_id: object, size: int, is_request: bool) -> None:
        """An agent question too big to read: an error to the agent, a word to the user."""
        if is_request:
            self._refuse(
                {"id": request_id},
                f"the form is {size} bytes; announcer reads forms of at most "
                f"{self._max_form} bytes",
            )
        self._drop(f"a question (elicitation/create) over {self._max_form} bytes")
        if self._on_form_refused is not None:
            self._on_form_refused(size)

    def _refuse(self, message: dict[str, Any], reason: str) -> None:
        """Answer a request we will not pass on, so the agent never waits for it."""
        answer = {
            "jsonrpc": "2.0",
            "id": message.get("id"),
            "error": {"code": -32602, "message": f"Invalid params: {reason}"},
        }
        data = json.dumps(answer).encode() + b"\n"
        with contextlib.suppress(ConnectionError, RuntimeError):
            self._writer.write(data)

    def _join_chunks(self, message: dict[str, Any]) -> dict[str, Any]:
        """Join the text chunks of one session already waiting in the buffer into one."""
        key = _chunk_key(message)
        if key is None:
            return message
        texts = [message["params"]["update"]["content"]["text"]]
        size = len(texts[0])
        while size < MAX_JOINED_CHARS:
            line = self._buffered_line()
            if line is None:
                break
            following = self._check(line)
            if following is None:
                continue
            if _chunk_key(following) != key:
                self._ready.append(following)
                break
            text = following["params"]["update"]["content"]["text"]
            texts.append(text)
            size += len(text)
        if len(texts) > 1:
            message["params"]["update"]["content"]["text"] = "".join(texts)
        return message

    def _drop(self, reason: str) -> None:
        self._on_drop(f"ACP agent sent {reason}; skipped")


#: session updates newer than the SDK's schema, passed straight to the transport: session
#: notices, and ACP compaction (its progress and the summary it kept)
_AROUND_THE_SDK = frozenset({"notice", "compaction_update", "compaction_summary_chunk"})


def _readable_update(params: object) -> bool:
    if not isinstance(params, dict):
        return False
    update = params.get("update")
    return isinstance(update, dict) and isinstance(update.get("sessionUpdate"), str)


def _chunk_key(message: dict[str, Any]) -> tuple[str, str] | None:
    """(session, kind) of a plain text message chunk, which may be joined with the next."""
    if message.get("method") != "session/update" or "id" in message:
        return None
    params = message.get("params")
    if not isinstance(params, dict):
        return None
    update = params.get("update")
    if not isinstance(update, dict) or update.get("sessionUpdate") != "agent_message_chunk":
        return None
    content = update.get("content")
    if not isinstance(content, dict) or content.get("type") != "text":
        return None
    if not isinstance(content.get("text"), str) or set(content) - {"type", "text"}:
        return None
    return (str(params.get("sessionId")), "agent_message_chunk")


__all__ = ["MAX_FORM_BYTES", "MAX_LINE_BYTES", "GuardedStdio"]
