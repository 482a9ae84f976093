"""A hostile ACP agent on raw stdio (no SDK): everything a broken or malicious agent may send.

``python -m tests.acp_frontend.hostile_agent`` answers ``initialize`` (its title is
markup, ``[@click=app.quit]…``) and ``session/new``; a prompt then makes it write, in
order, on its stdout:

- lines that are not JSON, JSON that is not an object (``[1, 2, 3]``, ``42``), updates
  without a kind or of a kind the SDK does not know, a notification no client takes;
- one line of ``HOSTILE_LINE_MB`` megabytes (default 20), over announcer's line limit;
- ``session/update`` for ``HOSTILE_GHOSTS`` session ids it never created (default 500),
  and a permission request for one of them (its answer is logged);
- ``HOSTILE_FLOOD`` message chunks (default 20000), then "Still here.";

while it writes ``HOSTILE_STDERR_MB`` megabytes (default 20) to stderr with no newline.
With ``HOSTILE_ASK`` set, it asks permission right behind the flood, inside the turn,
and waits for the answer. It ends the turn, then asks permission 0.3 s later (a late
question). Every answer it receives is appended to ``hostile.jsonl`` in its folder.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path

OUT = sys.stdout.buffer
LOG = Path.cwd() / "hostile.jsonl"
LOCK = threading.Lock()
TITLE = "[@click=app.quit]Evil[/] [b]bold[/b]"
ASKED = threading.Event()  # set when the question behind the flood is answered


def write(data: bytes) -> None:
    with LOCK:
        OUT.write(data)
        OUT.flush()


def send(message: dict[str, object]) -> None:
    write(json.dumps(message).encode() + b"\n")


def update(session: str, text: str) -> dict[str, object]:
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {
            "sessionId": session,
            "update": {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": text},
            },
        },
    }


def permission(request_id: int, session: str) -> dict[str, object]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "session/request_permission",
        "params": {
            "sessionId": session,
            "toolCall": {"toolCallId": f"late-{request_id}", "title": "touch late.txt"},
            "options": [
                {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
                {"optionId": "no", "name": "Reject", "kind": "reject_once"},
            ],
        },
    }


def flood_stderr(megabytes: int) -> None:
    block = b"e" * (1024 * 1024)
    for _ in range(megabytes):
        sys.stderr.buffer.write(block)
        sys.stderr.buffer.flush()


def attack(session: str, prompt_id: object) -> None:
    stderr = threading.Thread(
        target=flood_stderr, args=(int(os.environ.get("HOSTILE_STDERR_MB", "20")),)
    )
    stderr.start()
    write(b"Traceback (most recent call last): not JSON at all\n")
    write(b"[1, 2, 3]\n42\n\n")
    write(b'{"jsonrpc": "2.0", "method": "session/update", "params": ' + b"x" * 10 + b"\n")
    bad_update = update(session, "")
    bad_update["params"] = {"sessionId": session, "update": "garbage"}
    send(bad_update)
    future = update(session, "")
    future["params"] = {"sessionId": session, "update": {"sessionUpdate": "future_kind"}}
    send(future)  # the SDK cannot read it: counted, never a traceback
    send({"jsonrpc": "2.0", "method": "foo/bar", "params": {}})
    size = int(os.environ.get("HOSTILE_LINE_MB", "20")) * 1024 * 1024
    for _ in range(size // (1024 * 1024)):
        write(b"y" * (1024 * 1024))
    write(b"\n")
    for index in range(int(os.environ.get("HOSTILE_GHOSTS", "500"))):
        send(update(f"ghost-{index}", "I am a ghost. "))
    send(permission(900, "ghost-0"))
    for index in range(int(os.environ.get("HOSTILE_FLOOD", "20000"))):
        send(update(session, f"w{index} "))
    send(update(session, "Still here. "))
    stderr.join()
    if os.environ.get("HOSTILE_ASK"):  # a question right behind the flood, in the turn
        ASKED.clear()
        send(permission(800, session))
        ASKED.wait(120)
    send({"jsonrpc": "2.0", "id": prompt_id, "result": {"stopReason": "end_turn"}})
    time.sleep(0.3)
    send(permission(901, session))


def main() -> None:
    session = "real-1"
    for raw in sys.stdin.buffer:
        message = json.loads(raw)
        method = message.get("method")
        if method is None:  # an answer to one of our requests
            with LOG.open("a", encoding="utf-8") as log:
                log.write(json.dumps(message) + "\n")
            ASKED.set()
            continue
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": message["id"], "result": {
                "protocolVersion": 1,
                "agentInfo": {"name": "hostile", "title": TITLE, "version": "1"},
                "agentCapabilities": {}}})  # fmt: skip
        elif method == "session/new":
            send({"jsonrpc": "2.0", "id": message["id"], "result": {"sessionId": session}})
        elif method == "session/prompt":
            threading.Thread(target=attack, args=(session, message["id"]), daemon=True).start()
        elif "id" in message:
            send({"jsonrpc": "2.0", "id": message["id"], "result": {}})


if __name__ == "__main__":
    main()
