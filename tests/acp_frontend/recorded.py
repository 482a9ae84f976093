"""Replay a real adapter's recorded ACP session through the mapping and the engine.

A recording (``tests/acp_frontend/recordings/NAME.jsonl``, made by
``python -m tests.lab.record_acp NAME`` against the pinned adapters in the agent lab) holds
every JSON-RPC message of one session both ways, with its time. :func:`replay` feeds them
to :class:`~announcer.formats.acp.AcpAdapter` as ``announcer.transports.acp`` does (the
session opened with its settings, each prompt, update, permission request, the answer the
recording gave, the turn's end), and the events through the real engine
(:class:`~tests.acp_frontend.test_acp_mapping.Heard`): what a listener hears from what the
real adapter really sent.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from announcer.engine.prompts import UserAnswer
from announcer.formats.acp_tools import RUNNING_QUIET_SECONDS
from tests.acp_frontend.test_acp_mapping import Heard

RECORDINGS = Path(__file__).parent / "recordings"

#: an option kind as the user's decision and its scope
_DECISION = {
    "allow_once": ("accept", "once"),
    "allow_always": ("accept", "always"),
    "reject_once": ("reject", "once"),
    "reject_always": ("reject", "always"),
}


def recording(name: str, folder: Path = RECORDINGS) -> list[dict[str, Any]]:
    lines = (folder / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def replay(
    name: str,
    heard: Heard | None = None,
    folder: Path = RECORDINGS,
    *,
    hold: Callable[[dict[str, Any]], float] | None = None,
    early: bool = False,
    **settings: Any,
) -> Heard:
    """What the listener hears from recording ``name`` in ``folder`` (``settings``: the
    user's). ``hold(entry)``: seconds of silence passed before ``entry`` on the session's
    clock, the engine ticking each second (a command that ran a minute, not the seconds
    the lab's took), and every later entry that much later. ``early``: the user typed the
    first message while the agent was starting, so it waited and went as soon as the
    session was open (as ``announcer.transports.acp`` sends it)."""
    heard = heard or Heard(**settings)
    adapter, engine = heard.adapter, heard.engine
    engine.set_subscription("acp", "sub_recorded")
    asked: dict[Any, str] = {}  # the agent's request id -> method
    requested: dict[Any, dict[str, Any]] = {}  # our request id -> the request
    permissions: dict[Any, tuple[str, list[dict[str, Any]]]] = {}  # id -> (token, options)
    # sessions opened and not yet prompted: their modes and settings, as set at the start
    starting: dict[str, tuple[Any, Any]] = {}
    started = heard.now
    waiting = _waiting(early)
    for entry in recording(name, folder):
        message = entry["message"]
        held = hold(entry) if hold is not None else 0.0
        for _second in range(int(held)):  # bounded: the seconds asked for
            heard.now += 1.0
            heard.tick()
        started += held
        now = started + float(entry.get("t", 0.0))
        if adapter.running_due() and now - heard.now >= RUNNING_QUIET_SECONDS:
            heard.take(adapter.flush_running(now))
        heard.now = max(heard.now, now)
        if entry["from"] == "client":
            if "method" in message and "id" in message:
                requested[message["id"]] = message
                if message["method"] == "session/prompt":
                    session_id = message["params"]["sessionId"]
                    if session_id in starting:  # the settings as the session starts, once
                        modes, config = starting.pop(session_id)
                        heard.take(
                            adapter.settings_known(session_id, modes, config, heard.now, **waiting)
                        )
                    heard.take(adapter.prompt_sent(session_id, heard.now))
            elif message.get("id") in permissions:
                _answered(heard, *permissions.pop(message["id"]), message.get("result") or {})
            continue
        method = message.get("method")
        if method == "session/update":
            heard.take(adapter.update(message["params"], heard.now))
            adapter.take_asked_again()
        elif method == "session/request_permission":
            asked[message["id"]] = method
            before = len(heard.events)
            heard.take(
                adapter.permission_requested(str(message["id"]), message["params"], heard.now)
            )
            tokens = [e["reply_token"] for e in heard.events[before:] if "reply_token" in e]
            permissions[message["id"]] = (tokens[-1], message["params"].get("options") or [])
        elif method is None and message.get("id") in requested:
            _answer_of_ours(
                heard, requested.pop(message["id"]), message.get("result") or {}, starting, early
            )
    return heard


def _waiting(early: bool) -> dict[str, bool]:
    """The mapping is told that the user's first message waited for the agent, or nothing."""
    return {"message_waiting": True} if early else {}


def _answered(
    heard: Heard, token: str, options: list[dict[str, Any]], result: dict[str, Any]
) -> None:
    """The recording's answer to a permission request, given by the user's keys."""
    chosen = (result.get("outcome") or {}).get("optionId")
    kind = next((o.get("kind") for o in options if o.get("optionId") == chosen), None)
    decision, scope = _DECISION.get(str(kind), ("reject", "once"))
    heard.engine.answer(UserAnswer(token, decision=decision), heard.now)
    heard.adapter.answer(token, decision, scope)
    heard.take(heard.adapter.answer_said(heard.now))


def _answer_of_ours(
    heard: Heard,
    request: dict[str, Any],
    result: dict[str, Any],
    starting: dict[str, tuple[Any, Any]],
    early: bool = False,
) -> None:
    """The agent's answer to one of our requests: a session opened, a turn ended, a setting."""
    adapter, params = heard.adapter, request.get("params") or {}
    method = request.get("method")
    if method == "initialize":
        info = result.get("agentInfo") or {}
        title = info.get("title") or info.get("name")
        if isinstance(title, str) and title.strip():
            adapter.rename(title.strip())
    elif method == "session/new":
        session_id = str(result.get("sessionId"))
        heard.take(
            adapter.session_opened(
                session_id, str(params.get("cwd", "")), heard.now, **_waiting(early)
            )
        )
        starting[session_id] = (result.get("modes"), result.get("configOptions") or [])
        # known at once, said once the start settings are applied (as the transport does)
        heard.take(adapter.settings_known(session_id, *starting[session_id], heard.now, say=False))
    elif method == "session/set_config_option" and params.get("sessionId") in starting:
        modes, _ = starting[params["sessionId"]]
        starting[params["sessionId"]] = (modes, result.get("configOptions") or [])
    elif method == "session/set_mode" and params.get("sessionId") in starting:
        modes, config = starting[params["sessionId"]]
        if isinstance(modes, dict):
            modes = {**modes, "currentModeId": params.get("modeId")}
        config = [
            {**o, "currentValue": params.get("modeId")} if o.get("category") == "mode" else o
            for o in config
        ]
        starting[params["sessionId"]] = (modes, config)
    elif method == "session/prompt":
        heard.take(adapter.turn_ended(params["sessionId"], result.get("stopReason"), heard.now))
