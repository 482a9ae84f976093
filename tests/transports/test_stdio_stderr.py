"""B.6.5: a stdio producer's stderr is for people, never read as AAEP messages."""

from __future__ import annotations

import asyncio
import contextlib
import json
import shlex
import sys

from announcer.transports import TransportOptions, open_transport
from announcer.transports.base import TransportError

EVENT = {
    "@context": "https://aaep-protocol.org/context/v1",
    "type": "aaep:agent.session.started",
    "event_id": "evt_{n}",
    "session_id": "sess_err",
    "timestamp": "2026-05-24T14:22:11Z",
    "producer": {"agent_id": "stderr-agent"},
    "summary_normal": "{where}",
}

# The same JSON-RPC notification (B.6) on both streams; only stdout's is a message.
CHILD = f"""
import json, sys
event = {json.dumps(EVENT)!r}
def line(n, where):
    params = json.loads(event.replace("{{n}}", n).replace("{{where}}", where))
    return json.dumps({{"jsonrpc": "2.0", "method": "aaep.event", "params": params}}) + "\\n"
sys.stderr.write(line("1", "from stderr"))
sys.stderr.flush()
sys.stdout.write(line("2", "from stdout"))
sys.stdout.flush()
"""


async def test_an_event_written_to_stderr_is_not_read_only_stdout_is() -> None:
    command = f"{shlex.quote(sys.executable)} -c {shlex.quote(CHILD)}"
    transport = open_transport(f"stdio:{command}", TransportOptions())
    await transport.connect()
    received: list[dict[str, object]] = []
    try:

        async def read() -> None:
            with contextlib.suppress(TransportError):  # the child exits when it is done
                async for raw in transport.frames():
                    received.append(json.loads(raw))

        await asyncio.wait_for(read(), 30)
    finally:
        await transport.close()
    assert [event["summary_normal"] for event in received] == ["from stdout"]
