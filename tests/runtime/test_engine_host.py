"""The engine is driven in one place: ``announcer/runtime/engine_host.py`` (issue 24 item 1).

Five modules once ran their own copy of the loop that feeds the engine, carries out its
speech commands, reports finished speech back and ticks when due; a fix in one missed
four. The first test reads the source of the product and of the test and benchmark
drivers and fails when any module other than the host makes the loop's calls itself.
The others check the host's loop with a real backend.
"""

from __future__ import annotations

import ast
import asyncio
import io
import json
from pathlib import Path

from announcer.engine.announcement import Announcement, Urgency
from announcer.engine.pipeline import Engine
from announcer.engine.prompts import UserAnswer
from announcer.engine.replies import ReplyReady
from announcer.engine.settings import UserSettings
from announcer.runtime.engine_host import EngineHost
from announcer.speech.driver import SpeechDriver
from announcer.speech.jsonl import JsonlBackend
from announcer.speech.paced import PacedBackend, SimulatedClock
from tests.engine.aaep import confirmation, frame
from tests.support.pace_replay import run_simulated
from tests.support.waiting import until

ROOT = Path(__file__).resolve().parents[2]
HOST = ROOT / "announcer" / "runtime" / "engine_host.py"
# Where engine drivers live: the product, and the drivers tests and benchmarks share.
DRIVER_PLACES = (ROOT / "announcer", ROOT / "tests" / "support")
# The core itself (the engine and its parts call each other) and the speech driver (it
# defines the calls) are not drivers of the engine.
NOT_DRIVERS = (ROOT / "announcer" / "engine", ROOT / "announcer" / "speech" / "driver.py")
# Calls that are the loop whatever they are made on: reporting speech done, taking the
# speech an answer left, taking a backend's finished utterances.
LOOP_CALLS = frozenset({"on_speech_done", "take_speech", "take_completed"})
# Calls that are the loop when made on an engine (time passing, when it is next due) or
# on a speech driver (carrying out commands and feeding completions back).
ENGINE_LOOP_CALLS = frozenset({"tick", "next_wakeup"})
DRIVER_LOOP_CALLS = frozenset({"run"})


def _receiver(call: ast.Call) -> str:
    assert isinstance(call.func, ast.Attribute)
    return ast.unparse(call.func.value).rsplit(".", 1)[-1].lstrip("_").lower()


def loop_calls(path: Path) -> list[str]:
    """Each call in ``path`` that drives the engine's command loop, as ``line: source``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        name = node.func.attr
        receiver = _receiver(node)
        if (
            name in LOOP_CALLS
            or (name in ENGINE_LOOP_CALLS and receiver == "engine")
            or (name in DRIVER_LOOP_CALLS and receiver == "driver")
        ):
            found.append(f"{node.lineno}: {ast.unparse(node)}")
    return found


def driver_modules() -> list[Path]:
    files: list[Path] = []
    for place in DRIVER_PLACES:
        for path in sorted(place.rglob("*.py")):
            if path == HOST or any(path.is_relative_to(skip) for skip in NOT_DRIVERS):
                continue
            files.append(path)
    return files


def test_only_the_engine_host_drives_the_engines_command_loop() -> None:
    files = driver_modules()
    assert len(files) > 50  # the product's modules were found
    offenders = {
        str(path.relative_to(ROOT)): calls for path in files if (calls := loop_calls(path))
    }
    assert offenders == {}, (
        "these modules drive the engine's command loop themselves; "
        f"use announcer.runtime.engine_host.EngineHost: {offenders}"
    )


def test_the_check_finds_a_copy_of_the_loop(tmp_path: Path) -> None:
    copy = tmp_path / "copy.py"
    copy.write_text(
        "def run(self, commands):\n"
        "    self.driver.run(commands, lambda u: self.engine.on_speech_done(u, 0.0))\n"
        "    for utterance in self.driver.take_completed():\n"
        "        pass\n"
        "    self._run(self.engine.tick(self.now()))\n"
        "    wake = engine.next_wakeup()\n"
        "    outcome = self._engine.take_speech()\n",
        encoding="utf-8",
    )
    lines = sorted(int(call.split(":")[0]) for call in loop_calls(copy))
    assert lines == [2, 2, 3, 5, 6, 7]
    assert loop_calls(HOST)  # the host itself makes them all


def test_what_finishes_at_once_lets_the_next_utterance_start_in_the_same_step() -> None:
    records = io.StringIO()
    engine = Engine(UserSettings())
    host = EngineHost(engine, SpeechDriver(JsonlBackend(records)), lambda: 0.0)
    for index in range(3):
        host.say(Announcement(f"Sentence {index}.", "en", Urgency.NORMAL))
    said = [json.loads(line)["text"] for line in records.getvalue().splitlines()]
    assert said == ["Sentence 0.", "Sentence 1.", "Sentence 2."]
    assert engine.status().queued == 0 and host.in_flight == 0


def test_without_a_voice_each_utterance_ends_as_it_starts_and_the_hook_sees_it() -> None:
    engine = Engine(UserSettings())
    started: list[str] = []

    def shown(command):  # type: ignore[no-untyped-def]
        started.append(command.announcement.text)
        return command

    host = EngineHost(engine, None, lambda: 0.0, on_speak=shown)
    host.receive(frame("agent.session.started"), "local")
    host.say(Announcement("Our own words.", "en", Urgency.NORMAL))
    assert started and started[-1] == "Our own words."
    assert engine.scheduler.speaking is None and engine.status().queued == 0


def test_paced_speech_is_drained_and_an_answer_cuts_its_question_off() -> None:
    clock = SimulatedClock()
    backend = PacedBackend(clock)
    engine = Engine(UserSettings())
    engine.set_subscription("local", "sub_local")
    host = EngineHost(engine, SpeechDriver(backend), clock.now)
    host.receive(confirmation("rpl_host1"), "local")
    clock.advance_to(1.0)
    assert not host.drain()  # the question is still being read
    outcome = host.answer(UserAnswer("rpl_host1", decision="reject"))
    assert isinstance(outcome, ReplyReady)
    assert backend.utterances[0].stopped  # cut off by the answer
    clock.advance_to(120.0)
    host.drain()
    host.tick_if_due()
    assert engine.pending_prompts() == []


def test_on_a_loop_the_host_ticks_at_the_engines_next_moment() -> None:
    """A question's time runs out on the engine's own deadline, with nobody calling tick."""

    async def main() -> tuple[float, list[float]]:
        loop = asyncio.get_running_loop()
        engine = Engine(UserSettings())
        engine.set_subscription("local", "sub_local")
        ticked: list[float] = []
        host = EngineHost(engine, None, loop.time)
        host.keep_ticking(
            loop, loop_clock=True, on_due=lambda: (ticked.append(loop.time()), host.tick())
        )
        host.receive(confirmation("rpl_host2", timeout_seconds=300), "local")
        deadline = engine.book.next_deadline()
        assert deadline is not None
        await until(lambda: not engine.pending_prompts(), "the question to expire", timeout=900)
        host.stop_ticking()
        return deadline, ticked

    deadline, ticked = run_simulated(main)
    assert ticked and ticked[-1] == deadline  # the timer fired at that very moment
