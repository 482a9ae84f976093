"""Issue 29, item 14: a line cut off by urgent news and said again is printed once.

A real ``LiveSession`` subscribed over a loopback WebSocket to the scripted producer, the
plain line interface printing to a buffer, and a speech backend that finishes an
utterance only when the test says so: "Started." is being said when a critical alert of
another session comes; the alert cuts it off, and once the alert is said "Started." is
said again, whole (never lost). It was printed a second time; the user reading the
lines sees it once.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable
from pathlib import Path

from announcer.engine.announcement import Announcement
from announcer.engine.settings import UserSettings
from announcer.runtime.session import LiveSession
from announcer.speech.backend import BackendCapabilities, VoiceSettings
from announcer.speech.driver import SpeechDriver
from announcer.transports import TransportOptions
from announcer.ui.plain import PlainUi
from tests.producer.live import running, wait_for
from tests.support.scripted import connected, event, scripted, source, started

ALERT = "Alert: the disk is full."


class HeldBackend:
    """Says one utterance at a time and ends it only when the test calls :meth:`finish`."""

    name = "held"
    capabilities = BackendCapabilities(can_interrupt=True)

    def __init__(self) -> None:
        self.spoken: list[str] = []
        self.current: tuple[Announcement, Callable[[], None]] | None = None

    def start(self) -> None:
        pass

    def speak(
        self, announcement: Announcement, voice: VoiceSettings, on_done: Callable[[], None]
    ) -> None:
        self.spoken.append(announcement.text)
        self.current = (announcement, on_done)

    def saying(self) -> str | None:
        return self.current[0].text if self.current is not None else None

    def finish(self) -> None:
        if self.current is not None:
            _, done = self.current
            self.current = None
            done()

    def stop(self) -> None:
        self.finish()

    def is_speaking(self) -> bool:
        return self.current is not None

    def close(self) -> None:
        pass


async def test_a_line_said_again_after_an_urgent_cut_is_printed_once(tmp_path: Path) -> None:
    server, core = await scripted()
    backend = HeldBackend()
    settings = UserSettings(after_interrupt="resume")
    session = LiveSession(
        [source("ws", server)], settings, TransportOptions(), driver=SpeechDriver(backend)
    )
    out = io.StringIO()
    read_end, write_end = os.pipe()
    ui = PlainUi(out=out, inp=os.fdopen(read_end, encoding="utf-8"))
    sid = "sess_again"
    try:
        async with running(session):
            ui.attach(session)
            await connected(core, session)
            core.push(started(sid, 0))  # "Started."

            def at(text: str) -> bool:
                if backend.saying() == text:
                    return True
                backend.finish()  # what comes before it is said through
                return False

            await wait_for(lambda: at("Started."))
            core.push(
                event("agent.state.changed", "sess_other", None, from_state="thinking",
                      to_state="calling_tool", urgency="critical", summary_normal=ALERT)
            )  # fmt: skip
            await wait_for(lambda: backend.saying() == ALERT)  # it cut "Started." off
            backend.finish()
            await wait_for(lambda: backend.saying() == "Started.")  # said again, whole
            backend.finish()
    except TimeoutError:
        raise AssertionError(f"spoken: {backend.spoken}; printed: {out.getvalue()}") from None
    finally:
        os.close(write_end)
        await server.close()
    assert backend.spoken.count("Started.") == 2  # never lost: said again
    lines = out.getvalue().splitlines()
    assert lines.count("[started] Started.") + lines.count("Started.") == 1, lines
    assert any(ALERT in line for line in lines)
