"""F5 in the Textual app: what happened in the agent's turn (issue 33, item 2), said from
the engine's digest of the events the app already showed; the real engine, the jsonl
speech record, a clock the test holds."""

from __future__ import annotations

import io
import json
from typing import Any

from announcer.engine.pipeline import Engine
from announcer.engine.settings import UserSettings
from announcer.formats.acp import AcpAdapter
from announcer.speech.jsonl import JsonlBackend
from announcer.ui.tui.app import AnnouncerApp
from tests.support.engine_session import EngineSession
from tests.support.speech_record import spoken_in
from tests.ui.conftest import ManualClock


def _update(kind: str, /, **fields: Any) -> dict[str, Any]:
    return {"sessionId": "s1", "update": {"sessionUpdate": kind, **fields}}


async def test_f5_says_what_happened_in_the_turn() -> None:
    records = io.StringIO()
    clock = ManualClock()
    engine = Engine(UserSettings(answer_arming_seconds=0))
    engine.trust_extension("acp")
    session = EngineSession(engine, JsonlBackend(records, clock=clock), clock=clock)
    adapter = AcpAdapter("Claude Code", "claude-code")
    app = AnnouncerApp(session)
    async with app.run_test() as pilot:

        def take(output: Any) -> None:
            for event in output.events:
                session.receive(json.dumps(event), "acp")
            clock.now += 1.0

        take(adapter.session_opened("s1", "/home/ada/project", clock.now))
        take(adapter.prompt_sent("s1", clock.now))
        call = {"toolCallId": "c1", "title": "npm test", "kind": "execute"}
        take(adapter.update(_update("tool_call", status="in_progress", **call), clock.now))
        take(adapter.flush_running(clock.now + 1))
        done = _update("tool_call_update", toolCallId="c1", status="completed")
        take(adapter.update(done, clock.now))
        take(adapter.turn_ended("s1", "end_turn", clock.now))
        await pilot.pause()
        assert not any("turn:" in text for text in spoken_in(records.getvalue()))  # short
        await pilot.press("f5")
        await pilot.pause()
        said = [t for t in spoken_in(records.getvalue()) if t.startswith("Claude Code's turn:")]
        assert said == ["Claude Code's turn: Ran: npm test."]
