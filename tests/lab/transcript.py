"""What a listener hears from a captured agent stream: the jsonl speech record.

The stream goes through the format adapter, the engine and the ``jsonl`` speech
backend exactly as ``announcer watch --speech jsonl`` sends it (unpaced: every
decision is recorded), so several verbosities can be heard from one CLI run.
"""

from __future__ import annotations

import io
import json
from typing import Any

from announcer.engine.pipeline import Engine
from announcer.engine.settings import UserSettings
from announcer.formats import get_adapter
from announcer.speech.backend import VoiceSettings
from announcer.speech.driver import SpeechDriver
from announcer.speech.jsonl import JsonlBackend
from tests.support.speech_record import spoken_in


def speech_record(
    fmt: str, stream: str, *, verbosity: str = "normal", language: str = "en"
) -> list[dict[str, Any]]:
    """Every speak/cancel record for ``stream`` (the agent's stdout) at ``verbosity``."""
    settings = UserSettings.model_validate(
        {**UserSettings().model_dump(), "verbosity": verbosity, "languages": [language]}
    )
    out = io.StringIO()
    clock = [0.0]
    backend = JsonlBackend(out, clock=lambda: clock[0])
    backend.start()
    engine = Engine(settings, paced=False)
    engine.trust_extension("watch")  # as `announcer watch` does: the stream is mapped by us
    driver = SpeechDriver(backend, VoiceSettings(), notify=lambda: None)

    def run(commands: list[Any]) -> None:
        driver.run(commands, lambda uid: engine.on_speech_done(uid, clock[0]))

    def settle() -> None:
        for _ in range(1000):
            done = driver.take_completed()
            if not done:
                return
            for uid in done:
                run(engine.on_speech_done(uid, clock[0]))

    adapter = get_adapter(fmt, language=language)
    outputs = [
        adapter.feed(line, 1_800_000_000.0 + i) for i, line in enumerate(stream.splitlines())
    ]
    outputs.append(adapter.finish(1_800_000_000.0 + len(outputs)))
    for output in outputs:
        for event in output.events:
            clock[0] += 0.01
            run(engine.receive(event, "watch", clock[0]))
            settle()
    clock[0] += 0.01
    run(engine.source_closed("watch", clock[0]))
    for _ in range(200):  # let timers (coalescer flushes, arming) run out
        settle()
        wake = engine.next_wakeup()
        if wake is None:
            break
        clock[0] = max(clock[0], wake) + 0.001
        run(engine.tick(clock[0]))
    settle()
    backend.close()
    return [json.loads(line) for line in out.getvalue().splitlines()]


def spoken(fmt: str, stream: str, *, verbosity: str = "normal", language: str = "en") -> list[str]:
    """The sentences spoken, in order."""
    return spoken_in(speech_record(fmt, stream, verbosity=verbosity, language=language))
