"""Whatever a producer sends, the engine neither raises nor grows without bound."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from announcer.engine.pipeline import Engine
from announcer.engine.prompts import UserAnswer
from announcer.engine.settings import UserSettings
from announcer.engine.speech_commands import Speak
from tests.support.examples import examples

DEMO = Path(__file__).resolve().parents[2] / "announcer" / "data" / "banking_session.jsonl"
TEMPLATES = [json.loads(line) for line in DEMO.read_text(encoding="utf-8").splitlines()]

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**60), max_value=2**60)
    | st.floats(allow_nan=False)
    | st.text(max_size=40),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3)
    ),
    max_leaves=6,
)
hostile_text = st.text(
    alphabet=st.sampled_from(list("ab .!?\n\x1b[0m`*#-_|\u202e\x00é😀。")), max_size=60
)


@st.composite
def mutated_frames(draw: st.DrawFn) -> list[Any]:
    frames: list[Any] = []
    for _ in range(draw(st.integers(min_value=1, max_value=25))):
        event = dict(draw(st.sampled_from(TEMPLATES)))
        for _ in range(draw(st.integers(min_value=0, max_value=3))):
            key = draw(st.sampled_from(sorted(event)))
            choice = draw(st.integers(min_value=0, max_value=3))
            if choice == 0:
                event.pop(key)
            elif choice == 1:
                event[key] = draw(json_values)
            elif choice == 2 and isinstance(event[key], str):
                event[key] = draw(hostile_text)
            else:
                event["sequence_number"] = draw(st.integers(min_value=0, max_value=40))
        frames.append(json.dumps(event) if draw(st.booleans()) else event)
    return frames


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    frames=mutated_frames(),
    load=st.sampled_from(["low", "medium", "high"]),
    verbosity=st.sampled_from(["terse", "normal", "detailed"]),
)
def test_the_engine_survives_mutated_sessions(frames: list[Any], load: str, verbosity: str) -> None:
    engine = Engine(UserSettings(cognitive_load=load, verbosity=verbosity), paced=True)  # type: ignore[arg-type]
    now = 0.0
    for frame in frames:
        now += 0.25
        for command in engine.receive(frame, "fuzz", now):
            if isinstance(command, Speak):
                assert command.announcement.text.strip()
                engine.on_speech_done(command.utterance_id, now)
        for prompt in engine.pending_prompts():
            engine.answer(UserAnswer(prompt.reply_token, decision="reject", response="x"), now)
    for _ in range(50):
        wake = engine.next_wakeup()
        if wake is None:
            break
        now = max(now, wake)
        engine.tick(now)
    status = engine.status()
    assert status.frames == len(frames)
    assert len(engine.transcript()) <= 1_000
