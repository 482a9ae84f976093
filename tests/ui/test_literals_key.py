"""F6 in the Textual app: the last code block and the web addresses the agent wrote,
whole and literally (issue 31 item 14; ``:code`` and ``:links`` in the plain UI). Speech
says "code block, 2 lines, Python" and a URL by its host; the screen has every character.
The real ACP mapping and engine, the jsonl speech record, a clock the test holds."""

from __future__ import annotations

import io
import json
from typing import Any

from textual.widgets import OptionList

from announcer.engine.pipeline import Engine
from announcer.engine.settings import UserSettings
from announcer.formats.acp import AcpAdapter
from announcer.speech.jsonl import JsonlBackend
from announcer.ui.tui.app import AnnouncerApp
from announcer.ui.tui.modals import ConfirmScreen
from announcer.ui.tui.screens import LiteralsScreen
from tests.support.engine_session import EngineSession
from tests.support.speech_record import spoken_in
from tests.ui.conftest import ManualClock

URL = "https://packaging.python.org/en/latest/tutorials/packaging-projects/"
ANSWER = (
    "Here is the helper:\n\n```python\ndef total(items):\n    return sum(items)  # [b]\n```\n\n"
    f"See {URL} for the details.\n"
)

OPTIONS = [
    {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
    {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
]


def _update(kind: str, /, **fields: Any) -> dict[str, Any]:
    return {"sessionId": "s1", "update": {"sessionUpdate": kind, **fields}}


async def test_f6_shows_the_last_code_block_and_the_whole_addresses() -> None:
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

        await pilot.press("f6")  # nothing written yet: it says so, and Escape goes back
        await pilot.pause()
        assert isinstance(app.screen, LiteralsScreen)
        assert app.screen.lines == ["No code block yet.", "No web address yet."]
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, LiteralsScreen)

        take(adapter.session_opened("s1", "/home/ada/project", clock.now))
        take(adapter.prompt_sent("s1", clock.now))
        chunk = {"type": "text", "text": ANSWER}
        take(adapter.update(_update("agent_message_chunk", content=chunk), clock.now))
        take(adapter.turn_ended("s1", "end_turn", clock.now))
        await pilot.pause()
        heard = " ".join(spoken_in(records.getvalue()))
        assert "code block, 2 lines, Python" in heard, heard
        assert "packaging-projects" not in heard, heard  # speech says the host only

        await pilot.press("f6")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, LiteralsScreen)
        rows = screen.query_one("#list", OptionList)
        shown = [str(rows.get_option_at_index(i).prompt) for i in range(rows.option_count)]
        # as written: indentation, the comment's brackets, the whole address
        assert shown == ["def total(items):", "    return sum(items)  # [b]", URL]
        said = spoken_in(records.getvalue())
        assert any(
            t.startswith("Code and links. Code block, 2 lines. Web addresses: 1.") for t in said
        ), said
        rows.highlighted = 2
        await pilot.press("enter")
        await pilot.pause()
        assert spoken_in(records.getvalue())[-1] == URL
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, LiteralsScreen)

        # a question's dialog keeps its keys: F6 does not open over it
        take(adapter.prompt_sent("s1", clock.now))
        call = {"toolCallId": "c1", "title": "rm -rf build", "kind": "execute"}
        asked = {"sessionId": "s1", "toolCall": call, "options": OPTIONS}
        take(adapter.permission_requested("p1", asked, clock.now))
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("f6")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
