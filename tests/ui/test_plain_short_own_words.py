"""Issue 30 items 1 and 2 in the plain interface: announcer's own words after a question
are few, the long forms on the help key (``?``, ``:help``) and at detailed verbosity.

The scripted ACP agent as a real child process, the plain interface on a real pipe,
speech by the ``paced`` backend on the loop's clock (the jsonl record is what the user
heard). A high-risk accept: the question's keys "A then C, or R.", the confirm step "C."
(the line printed names the action: braille, the screen), the echo "Sent." (printed
whole, "Sent: accept."): under 3 s of our own speech at 180 words a minute, where it
took about 6 s ("Type A or R, then Enter; C confirms an accept.", "C then Enter to
confirm.", "Sent: accept.").
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from announcer.engine.scheduler import estimated_seconds
from tests.support.key_runs import ALLOW_ONCE, LAB_PACE, PlainRun, choices, press_until
from tests.support.speech_record import spoken_in
from tests.support.waiting import until

KEYS = "A then C, or R."
STEP = "C."
LONG_KEYS = "Type A or R, then Enter; C confirms an accept."


async def _accept(run: PlainRun, sent: str) -> list[str]:
    """Ask the agent to remove a folder, accept with a then c; what was said after the
    question's first reading (early keys' "Not yet." left out)."""
    await until(lambda: "Scripted Agent is ready." in spoken_in(run.speech), "the agent")
    run.type_line("remove")
    await until(run.printed("Accept or reject:"), "the question")

    async def press() -> None:
        run.type_line("a")

    await press_until(press, run.printed("Type c then Enter to confirm"), asyncio.sleep)
    run.type_line("c")
    await until(lambda: sent in spoken_in(run.speech), "the answer heard")
    await until(lambda: bool(choices(run.folder)), "the agent's answer")
    said = spoken_in(run.speech)
    question = max(i for i, text in enumerate(said) if text.startswith("Confirmation needed."))
    return [said[question], *(text for text in said[question + 1 :] if text != "Not yet.")]


async def test_plain_high_risk_accept_costs_under_three_seconds_of_own_speech(
    tmp_path: Path,
) -> None:
    run = PlainRun(tmp_path, LAB_PACE)
    try:
        question, *after = await _accept(run, "Sent.")
    finally:
        await run.close()
    assert choices(tmp_path) == [ALLOW_ONCE]
    assert question.endswith(" " + KEYS), question
    assert after == [STEP, "Sent."], after
    # The keys are the end of the question's own utterance: their words, at 180 wpm.
    keys = estimated_seconds(question, 180) - estimated_seconds(question[: -len(KEYS) - 1], 180)
    own = keys + sum(estimated_seconds(text, 180) for text in after)
    assert own < 3.0, (own, keys, after)  # was 3.25 + 1.92 + 0.92 s by this estimate
    printed = run.out.getvalue()
    assert "Accept: " in printed and "Type c then Enter to confirm" in printed  # long, shown
    assert "Sent: accept." in printed  # the whole echo is on the screen and the display


async def test_plain_detailed_verbosity_keeps_the_long_forms(tmp_path: Path) -> None:
    run = PlainRun(tmp_path, LAB_PACE)
    run.session.update_settings(run.session.settings.model_copy(update={"verbosity": "detailed"}))
    try:
        question, *after = await _accept(run, "Sent: accept.")
    finally:
        await run.close()
    assert question.endswith(LONG_KEYS), question
    assert after[-1] == "Sent: accept.", after
    assert any(t.startswith("Accept: ") and "Type c then Enter to confirm" in t for t in after)


async def test_plain_question_mark_says_every_key_in_full(tmp_path: Path) -> None:
    run = PlainRun(tmp_path, LAB_PACE)
    try:
        await until(lambda: "Scripted Agent is ready." in spoken_in(run.speech), "the agent")
        run.type_line("remove")
        await until(run.printed("Accept or reject:"), "the question")
        run.type_line("?")
        help_line = f"{LONG_KEYS} :repeat says the question again."
        await until(lambda: help_line in spoken_in(run.speech), "the keys in full, heard")
        assert help_line in run.out.getvalue()
        assert choices(tmp_path) == []  # "?" answers nothing
        run.type_line(":help")
        await until(lambda: spoken_in(run.speech).count(help_line) == 2, ":help says them too")
        assert "Commands: " in run.out.getvalue()
    finally:
        await run.close()


async def test_plain_prompt_line_keeps_a_why_sentence_a_sentence(tmp_path: Path) -> None:
    """ "… It runs code announcer cannot check? [a/r]": the line's question mark turned the
    reason into a question; it now ends as written."""
    (tmp_path / "cmd.txt").write_text("python3 -c 'print(1)'", encoding="utf-8")
    run = PlainRun(tmp_path, LAB_PACE)
    try:
        await until(lambda: "Scripted Agent is ready." in spoken_in(run.speech), "the agent")
        run.type_line("run cmd.txt")
        await until(run.printed("Accept or reject:"), "the question")
    finally:
        await run.close()
    [line] = [text for text in run.out.getvalue().splitlines() if "Accept or reject:" in text]
    assert "It runs code announcer cannot check. [a/r" in line, line
    assert "check?" not in line
