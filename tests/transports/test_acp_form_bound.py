"""The ACP wire bounds an agent's question (issue 29 item 6), whatever the order of its members.

Over a real socket pair: the agent's end writes JSON-RPC lines, announcer's end is the
``GuardedStdio`` the ACP transport uses. A form over ``MAX_FORM_BYTES`` is answered
with an error on the wire and never handed on; one within it is handed on whole.
"""

from __future__ import annotations

import asyncio
import json
import socket
from typing import Any

import pytest

from announcer.transports.acp_wire import MAX_FORM_BYTES, GuardedStdio
from tests.support.waiting import TIMEOUT


def _form(request_id: int, fields: int, *, params_first: bool) -> bytes:
    properties = {f"f{i}": {"type": "string", "title": f"Field {i}"} for i in range(fields)}
    params = {"sessionId": "s1", "message": "Fill it in.", "requestedSchema": {
        "type": "object", "properties": properties}}  # fmt: skip
    if params_first:  # members in an order no SDK writes: read whole, refused all the same
        message: dict[str, Any] = {"params": params, "method": "elicitation/create"}
        message["id"] = request_id
        message["jsonrpc"] = "2.0"
    else:
        message = {"jsonrpc": "2.0", "id": request_id, "method": "elicitation/create"}
        message["params"] = params
    return json.dumps(message).encode() + b"\n"


@pytest.mark.parametrize("params_first", [False, True])
async def test_a_form_over_the_bound_is_refused_and_one_within_it_passes(
    params_first: bool,
) -> None:
    ours, theirs = socket.socketpair()
    reader, writer = await asyncio.open_connection(sock=ours)
    agent_reader, agent_writer = await asyncio.open_connection(sock=theirs)
    drops: list[str] = []
    refused: list[int] = []
    wire = GuardedStdio(reader, writer, on_drop=drops.append, on_form_refused=refused.append)
    wire.sessions.add("s1")
    big = _form(7, 12_000, params_first=params_first)
    small = _form(8, 3, params_first=params_first)
    assert len(big) > MAX_FORM_BYTES > len(small)
    try:
        agent_writer.write(big + small)
        sending = asyncio.ensure_future(agent_writer.drain())  # the pipe holds less than it
        handed_on = await asyncio.wait_for(wire.receive(), TIMEOUT)
        await asyncio.wait_for(sending, TIMEOUT)
        answer = json.loads(await asyncio.wait_for(agent_reader.readline(), TIMEOUT))
    finally:
        agent_writer.close()
        writer.close()
    assert handed_on is not None and handed_on["id"] == 8  # the small form, whole
    assert len(handed_on["params"]["requestedSchema"]["properties"]) == 3
    assert answer["id"] == 7
    assert answer["error"]["code"] == -32602
    assert f"at most {MAX_FORM_BYTES} bytes" in answer["error"]["message"]
    assert refused == [len(big) - 1]  # the user is told (the line without its end)
    assert drops == [f"ACP agent sent a question (elicitation/create) over {MAX_FORM_BYTES} "
                     "bytes; skipped"]  # fmt: skip
