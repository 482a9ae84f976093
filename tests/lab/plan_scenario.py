"""``lab:plan-work``: a coding agent's whole turn for issue 20's pace tests.

A plan (Claude Code's TodoWrite, an ACP plan), several tools (a read, a command that asks
the user first, the plan's updates), a question (the command's permission) and a long
markdown answer. Registered in the fake model's :data:`~tests.lab.fake_model.SCENARIOS`
when imported (this file is the pace tests' own; the shared scenarios stay as they are).
"""

from __future__ import annotations

from typing import Any

from tests.lab.fake_model import SCENARIOS, Call, Scenario, Turn

NAME = "plan-work"
NOTES = "The parser drops the last line of a file without a final newline.\n"
MADE_FILE = "made.txt"
STEPS = ("Read the notes", "Create made.txt", "Sum up the change")
INTRO = "I'll read the notes, make the file and then sum up."
PLAN_ANSWER = (
    "# What I did\n\n"
    "I read the notes and created the file you asked for.\n\n"
    "## The steps\n\n"
    "1. The notes say the parser drops the last line of a file.\n"
    "2. The new file is empty and sits next to the notes.\n"
    "3. Nothing else in the folder changed.\n\n"
    "## What comes next\n\n"
    "The fix itself is one line in the parser. "
    "I can write it and run the tests when you are ready. "
    "Tell me if you want a different name for the file."
)
#: PLAN_ANSWER as a listener hears it (headings and list items are read as sentences)
PLAN_SENTENCES = [
    "What I did.",
    "I read the notes and created the file you asked for.",
    "The steps.",
    "1: The notes say the parser drops the last line of a file.",
    "2: The new file is empty and sits next to the notes.",
    "3: Nothing else in the folder changed.",
    "What comes next.",
    "The fix itself is one line in the parser.",
    "I can write it and run the tests when you are ready.",
    "Tell me if you want a different name for the file.",
]


def _todos(done: int) -> tuple[str, dict[str, Any]]:
    """Claude Code's TodoWrite with the first ``done`` steps completed, the next under way."""
    todos = [
        {
            "content": step,
            "activeForm": step,
            "status": "completed" if i < done else "in_progress" if i == done else "pending",
        }
        for i, step in enumerate(STEPS)
    ]
    return ("TodoWrite", {"todos": todos})


PLAN_WORK = Scenario(
    NAME,
    (
        Turn(text=INTRO, calls=(Call(_todos(0)),)),
        Turn(calls=(Call(("Read", {"file_path": "{cwd}/notes.md"})),)),
        Turn(calls=(Call(_todos(1)),)),
        Turn(
            calls=(
                Call(("Bash", {"command": f"touch {MADE_FILE}", "description": "Create made.txt"})),
            )
        ),
        Turn(calls=(Call(_todos(3)),)),
        Turn(text=PLAN_ANSWER),
    ),
    "a plan, several tools, a question and a long markdown answer (issue 20's pace)",
)
SCENARIOS.setdefault(NAME, PLAN_WORK)
