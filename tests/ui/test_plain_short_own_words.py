"""Issue 30 item 2 in the plain interface: a risky accept's confirm step is heard short.

The scripted ACP agent as a real child process, the plain interface on a real pipe,
speech by the ``paced`` backend on the loop's clock (the jsonl record is what the user
heard). The question's keys are one short sentence; the confirm step is heard as "C then
Enter to confirm." while the line printed names the action (braille, the screen); the
echo is "Sent: accept.".
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from announcer.engine.scheduler import estimated_seconds
from tests.support.key_runs import ALLOW_ONCE, LAB_PACE, PlainRun, choices, press_until
from tests.support.speech_record import spoken_in
from tests.support.waiting import until

KEYS = "Type A or R, then Enter; C confirms an accept."
STEP = "C then Enter to confirm."


async def test_plain_risky_accept_is_heard_in_few_words(tmp_path: Path) -> None:
    run = PlainRun(tmp_path, LAB_PACE)
    try:
        await until(lambda: "Scripted Agent is ready." in spoken_in(run.speech), "the agent")
        run.type_line("remove")
        await until(run.printed("Accept or reject:"), "the question")

        async def press() -> None:
            run.type_line("a")

        await press_until(press, run.printed("Type c then Enter to confirm"), asyncio.sleep)
        await until(lambda: STEP in spoken_in(run.speech), "the confirm step heard")
        run.type_line("c")
        await until(lambda: "Sent: accept." in spoken_in(run.speech), "the answer heard")
        await until(lambda: bool(choices(tmp_path)), "the agent's answer")
    finally:
        await run.close()
    assert choices(tmp_path) == [ALLOW_ONCE]
    said = spoken_in(run.speech)
    question = max(i for i, text in enumerate(said) if text.startswith("Confirmation needed."))
    assert KEYS in said[question], said[question]
    after = [text for text in said[question + 1 :] if text != "Not yet."]
    assert after == [STEP, "Sent: accept."], after
    assert sum(estimated_seconds(text, 180) for text in after) < 3.0
    printed = run.out.getvalue()
    assert "Accept: " in printed and "Type c then Enter to confirm" in printed  # long, shown
