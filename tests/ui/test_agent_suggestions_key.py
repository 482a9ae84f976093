"""F7 in the Textual app (issue 33, item 5): the prompts the agent suggests sending next,
a list; Enter sends the one picked, as if typed. The real app, a live session and the
scripted ACP agent as a child process (tests/ui/test_agent_prompt.py's ``Run``); what the
agent received is the file it writes, what the user heard the jsonl speech record."""

from __future__ import annotations

from pathlib import Path

from announcer.ui.tui.screens import SuggestionsScreen
from tests.support.waiting import until_on_pilot as until
from tests.ui.test_agent_prompt import Run, stopped


async def test_f7_lists_the_suggested_prompts_and_enter_sends_the_one_picked(
    tmp_path: Path,
) -> None:
    run = Run(tmp_path, tags=("Alpha",), verbosity="detailed")
    async with run.app.run_test() as pilot:
        runner = await started_as(run, pilot, "Alpha")
        await pilot.press("f7")
        await until(
            pilot,
            run.said("The agent has suggested nothing to send next."),
            "nothing suggested yet",
        )
        await pilot.press(*"suggest", "enter")
        await until(pilot, run.said("Alpha finished the turn."), "the turn's end")
        # at detailed verbosity the newest list is said after the turn (ACP's form, then
        # the adapters' _meta form replaced it before the turn ended)
        await until(pilot, run.said("Alpha suggests 2 prompts; the first: Commit the fix."), "it")
        await pilot.press("f7")
        await until(pilot, lambda: isinstance(run.app.screen, SuggestionsScreen), "the list")
        await until(pilot, run.said("Alpha suggests these. Enter sends the one you pick."), "")
        await pilot.press("down")
        await until(pilot, run.said("Open a pull request"), "the second, highlighted")
        await pilot.press("enter")
        await until(pilot, run.said("Sent to Alpha: Open a pull request"), "the echo")
        await until(pilot, lambda: len(_prompts(tmp_path)) == 2, "the agent to get it")
        assert _prompts(tmp_path) == ["suggest", "Open a pull request"]
        assert not isinstance(run.app.screen, SuggestionsScreen)
        await stopped(run, runner)
    assert not any("\x1b" in line for line in run.heard())


async def started_as(run: Run, pilot: object, title: str):  # type: ignore[no-untyped-def]
    """The tagged agent is ready (``started`` waits for the untagged one's title)."""
    import asyncio

    runner = asyncio.ensure_future(run.session.run())
    await until(pilot, run.said(f"{title} is ready."), "the agent to start")
    return runner


def _prompts(folder: Path) -> list[str]:
    path = folder / "prompts-Alpha.txt"
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []
