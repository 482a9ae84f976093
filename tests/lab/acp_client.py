"""A bare ACP client for the agent lab: what a preset's agent sends, seen on the wire.

The lab proves a preset's data (announcer/agents/*.toml) against the real agent: it is
started with the preset's command line and environment, its session gets the preset's
config options, and every ``session/request_permission`` is recorded and answered with
the option kind the test chose. No file-system or terminal capability is declared (as
announcer declares none), so the agent edits and runs with its own tools and must ask.

JSON-RPC 2.0 over the agent's stdio, newline-delimited (ACP's stdio transport); one
reader thread; every wait is bounded.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: the longest one request may take (a turn with the fake model is a few seconds)
REQUEST_TIMEOUT = 120.0


class AcpError(RuntimeError):
    """The agent answered a request with an error, or not in time."""


@dataclass
class PermissionAsked:
    session_id: str
    tool_call: dict[str, Any]
    options: list[dict[str, Any]]
    chosen: str | None


@dataclass
class BareAcpClient:
    command: list[str]
    cwd: Path
    env: dict[str, str]
    #: which option kind answers a permission ("allow_once", "reject_once"), per session id
    answer_kind: dict[str, str] = field(default_factory=dict)
    asked: list[PermissionAsked] = field(default_factory=list)
    updates: list[dict[str, Any]] = field(default_factory=list)
    #: every method the agent called on us, in order (unanswerable ones get an error)
    calls: list[str] = field(default_factory=list)
    stderr_path: Path | None = None
    #: every JSON-RPC message both ways, in order: ``{"t": seconds since start, "from":
    #: "agent"|"client", "message"}``
    #: (tests/lab/record_acp.py keeps it as a recording the sans-I/O tests replay)
    wire: list[dict[str, Any]] = field(default_factory=list)

    def start(self) -> BareAcpClient:
        stderr = open(self.stderr_path or os.devnull, "wb")  # noqa: SIM115 - lives with the process
        self._process = subprocess.Popen(
            self.command,
            cwd=self.cwd,
            env=self.env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            start_new_session=True,  # its own process group, ended whole in close()
        )
        self._ids = iter(range(1, 1_000_000))
        self._started = time.monotonic()
        self._waiting: dict[int, queue.Queue[dict[str, Any]]] = {}
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        return self

    # -- wire ------------------------------------------------------------------------

    def _since(self) -> float:
        return round(time.monotonic() - self._started, 3)

    def _send(self, message: dict[str, Any]) -> None:
        assert self._process.stdin is not None
        with self._lock:
            self.wire.append({"t": self._since(), "from": "client", "message": message})
            self._process.stdin.write(json.dumps(message).encode() + b"\n")
            self._process.stdin.flush()

    def _read(self) -> None:
        assert self._process.stdout is not None
        for raw in self._process.stdout:
            try:
                message = json.loads(raw)
            except ValueError:
                continue  # an adapter's stray log line on stdout
            if not isinstance(message, dict):
                continue
            with self._lock:
                self.wire.append({"t": self._since(), "from": "agent", "message": message})
            if "method" in message and "id" in message:
                self._on_request(message)
            elif "method" in message:
                if message["method"] == "session/update":
                    self.updates.append(message.get("params") or {})
            elif message.get("id") in self._waiting:
                self._waiting[message["id"]].put(message)
        for waiting in list(self._waiting.values()):
            waiting.put({"error": {"message": "the agent's output ended"}})

    def _on_request(self, message: dict[str, Any]) -> None:
        self.calls.append(message["method"])
        if message["method"] != "session/request_permission":
            self._send(
                {
                    "jsonrpc": "2.0",
                    "id": message["id"],
                    "error": {"code": -32601, "message": f"no {message['method']} here"},
                }
            )
            return
        params = message.get("params") or {}
        options = list(params.get("options") or [])
        kind = self.answer_kind.get(params.get("sessionId", ""), "reject_once")
        # an option kind ("allow_once"), or one option by its id (one of several "always")
        chosen = next(
            (o["optionId"] for o in options if kind in (o.get("kind"), o.get("optionId"))), None
        )
        self.asked.append(
            PermissionAsked(
                params.get("sessionId", ""), params.get("toolCall") or {}, options, chosen
            )
        )
        outcome = (
            {"outcome": "selected", "optionId": chosen} if chosen else {"outcome": "cancelled"}
        )
        self._send({"jsonrpc": "2.0", "id": message["id"], "result": {"outcome": outcome}})

    def request(self, method: str, params: dict[str, Any], timeout: float = REQUEST_TIMEOUT) -> Any:
        ident = next(self._ids)
        answer: queue.Queue[dict[str, Any]] = queue.Queue()
        self._waiting[ident] = answer
        self._send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
        try:
            reply = answer.get(timeout=timeout)
        except queue.Empty:
            raise AcpError(f"{method}: no answer within {timeout:.0f} s") from None
        finally:
            self._waiting.pop(ident, None)
        if "error" in reply:
            raise AcpError(f"{method}: {reply['error'].get('message')}")
        return reply.get("result")

    # -- ACP -----------------------------------------------------------------------

    def initialize(self, meta: dict[str, Any] | None = None) -> dict[str, Any]:
        """``meta``: the capabilities' ``_meta`` (an extension a recipe needs), if any."""
        capabilities: dict[str, Any] = {"fs": {"readTextFile": False, "writeTextFile": False}}
        if meta:
            capabilities["_meta"] = meta
        result = self.request(
            "initialize",
            {
                "protocolVersion": 1,
                "clientCapabilities": capabilities,
                "clientInfo": {"name": "announcer-lab", "version": "0"},
            },
        )
        return dict(result or {})

    def new_session(self, folder: Path) -> dict[str, Any]:
        result = self.request("session/new", {"cwd": str(folder), "mcpServers": []})
        return dict(result or {})

    def set_config_option(self, session_id: str, option: str, value: str | bool) -> Any:
        params: dict[str, Any] = {"sessionId": session_id, "configId": option, "value": value}
        if isinstance(value, bool):
            params["type"] = "boolean"  # a boolean option's value is not a value id
        return self.request("session/set_config_option", params)

    def set_mode(self, session_id: str, mode: str) -> Any:
        return self.request("session/set_mode", {"sessionId": session_id, "modeId": mode})

    def prompt(self, session_id: str, text: str) -> dict[str, Any]:
        result = self.request(
            "session/prompt",
            {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]},
        )
        return dict(result or {})

    def prompt_in_background(self, session_id: str, text: str) -> Callable[[float], dict[str, Any]]:
        """Send a prompt without waiting; the returned function waits for its result."""
        outcome: queue.Queue[dict[str, Any] | BaseException] = queue.Queue()

        def send() -> None:
            try:
                outcome.put(self.prompt(session_id, text))
            except BaseException as exc:  # handed to the waiting test
                outcome.put(exc)

        threading.Thread(target=send, daemon=True).start()

        def result(timeout: float) -> dict[str, Any]:
            try:
                got = outcome.get(timeout=timeout)
            except queue.Empty:
                raise AcpError(f"session/prompt: no answer within {timeout:.0f} s") from None
            if isinstance(got, BaseException):
                raise got
            return got

        return result

    def cancel(self, session_id: str) -> None:
        """``session/cancel``: a notification, so no answer; the prompt ends as cancelled."""
        self._send(
            {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session_id}}
        )

    def wait_until_asked(self, session_id: str, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.asked_in(session_id):
                return True
            time.sleep(0.05)
        return False

    def asked_in(self, session_id: str) -> list[PermissionAsked]:
        return [a for a in self.asked if a.session_id == session_id]

    def close(self) -> None:
        """End the agent's whole process group, however it is doing."""
        process = self._process
        if process.stdin is not None:
            process.stdin.close()
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(process.pid, sig)
            except ProcessLookupError:
                break
            try:
                process.wait(timeout=5)
                break
            except subprocess.TimeoutExpired:
                continue
        self._reader.join(timeout=5)


def apply_preset_asking(
    client: BareAcpClient,
    session: dict[str, Any],
    config: dict[str, str | bool],
    mode: str | None,
) -> list[str]:
    """Set the preset's config options (or, without them, its mode), as announcer will.

    Returns what was set, e.g. ``["mode=default"]``. An option the agent does not offer is
    an error: the preset's data would be wrong.
    """
    done = []
    offered = {o.get("id") for o in session.get("configOptions") or []}
    for option, value in config.items():
        if option not in offered:
            raise AcpError(f"the agent offers no config option {option!r}: {sorted(offered)}")
        client.set_config_option(session["sessionId"], option, value)
        done.append(f"{option}={value}")
    if not config and mode is not None:
        client.set_mode(session["sessionId"], mode)
        done.append(f"mode {mode}")
    return done


Check = Callable[[Path], bool]
