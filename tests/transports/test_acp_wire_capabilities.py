"""What announcer declares to an ACP agent on the wire, past the SDK's own schema."""

from __future__ import annotations

import asyncio
import json

from announcer.transports.acp_wire import GuardedStdio


class _Written:
    """The agent's standard input: every byte announcer writes to it."""

    def __init__(self) -> None:
        self.data = bytearray()

    def write(self, data: bytes) -> None:
        self.data += data

    async def drain(self) -> None:
        return None

    def close(self) -> None:
        return None


def test_initialize_opts_in_to_compaction_updates_notices_and_prompt_suggestions() -> None:
    """ACP 1: an agent sends ``compaction_update`` only to a client that declared
    ``clientCapabilities.session.compaction`` (issue 33, item 3), and
    ``prompt_suggestions_update`` only to one that declared ``session.promptSuggestions``
    (item 5); the SDK's model has neither field, so they are added on the wire, beside
    what the SDK wrote. Never JetBrains AIR's ``_meta.jetbrains.air``: it changes the
    shape of every tool call and question the adapters send."""
    written = _Written()
    request = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": 1, "clientCapabilities": {"session": {"x": 1}}},
    }

    async def send() -> None:
        # made inside the loop: a StreamReader outside one looks for a current loop
        wire = GuardedStdio(
            asyncio.StreamReader(),
            written,  # type: ignore[arg-type]
            on_drop=lambda reason: None,
            on_notice=lambda params: None,
        )
        await wire.send(request)

    asyncio.run(send())
    sent = json.loads(written.data)
    assert sent["params"]["clientCapabilities"]["session"] == {
        "x": 1,
        "notices": {},
        "compaction": {},
        "promptSuggestions": {},
    }
    assert "_meta" not in sent["params"]["clientCapabilities"]
