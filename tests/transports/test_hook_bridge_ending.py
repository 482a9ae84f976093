"""announcer ending while a hook waits for the user's answer: the hook gets no answer (never
an allow), and nothing stray is printed on the user's terminal.

Python 3.11's stream server printed every connection handler cancelled at the loop's end
as "Exception in callback ... CancelledError". A real hook client (``ask_announcer``, in a
thread, as the hook process runs it) talks to the real server over a Unix socket.
"""

from __future__ import annotations

import asyncio
import tempfile
import threading
from pathlib import Path
from typing import Any

from announcer.transports.hook_bridge import HookBridgeServer
from announcer.transports.hook_client import NO_ANSWER, HookAnswer, ask_announcer

WAIT = 60.0


def test_a_hook_waiting_when_announcer_ends_gets_no_answer_and_nothing_stray_is_printed(
    monkeypatch: Any,
) -> None:
    monkeypatch.setenv("ANNOUNCER_HOOK_CHANNEL", "unix")
    folder = Path(tempfile.mkdtemp(prefix="hook-end-"))  # short: a socket path has a limit
    folder.chmod(0o700)
    path = folder / "hook.sock"
    errors: list[dict[str, Any]] = []
    answers: list[HookAnswer | None] = []

    async def main() -> threading.Thread:
        asyncio.get_running_loop().set_exception_handler(lambda _loop, c: errors.append(c))
        asked = asyncio.Event()
        loop = asyncio.get_running_loop()

        async def handler(payload: Any, blocking: bool, wait: float, agent: str) -> None:
            loop.call_soon(asked.set)
            await asyncio.sleep(3600)  # the user has not answered yet

        server = HookBridgeServer(handler, path)
        await server.start()
        hook = threading.Thread(
            target=lambda: answers.append(
                ask_announcer({"tool_name": "Bash"}, blocking=True, timeout=WAIT, path=path)
            ),
            daemon=True,
        )
        hook.start()
        await asyncio.wait_for(asked.wait(), WAIT)
        await server.close()
        return hook  # asyncio.run now cancels the waiting handler, as when announcer ends

    hook = asyncio.run(main())
    hook.join(WAIT)
    assert answers == [NO_ANSWER]
    assert errors == []
