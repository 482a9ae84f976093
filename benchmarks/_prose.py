"""Deterministic English prose for the benchmarks: realistic agent output, with the
abbreviations, numbers, file names and lists a sentence splitter must survive."""

from __future__ import annotations

import random

_SUBJECTS = [
    "The assistant",
    "Your account",
    "Dr. Patel",
    "The quarterly report",
    "Mrs. Okafor",
    "This plan",
    "The U.S. office",
    "Our team",
    "The migration script",
    "Version 3.11.7",
    "The transfer",
    "Each invoice",
    "The build",
    "Mr. Lee",
    "The index",
]
_VERBS = [
    "reviewed",
    "updated",
    "moved",
    "checked",
    "rebuilt",
    "scheduled",
    "approved",
    "summarised",
    "compared",
    "exported",
    "cancelled",
    "validated",
    "downloaded",
    "rejected",
    "merged",
]
_OBJECTS = [
    "the savings balance of $1,200.50",
    "report.pdf and notes.txt",
    "twelve open tickets",
    "the file at https://example.com/docs/a.html",
    "about 98.6 percent of the rows",
    "the budget, e.g. rent and food,",
    "every account, i.e. checking and savings,",
    "the draft from 9 a.m. this morning",
    "three pull requests",
    "the config in settings.toml",
    "a message to ops@example.org",
    "the plan for Jan. and Feb.",
    "the data set",
]
_TAILS = [
    "",
    " before lunch",
    " without errors",
    " as you asked",
    " in 2.5 seconds",
    " for the third time",
    " and found nothing unusual",
    " with some warnings",
]
_ENDS = [".", ".", ".", ".", "!", "?", "...", "."]


def prose(size: int, seed: int = 7) -> str:
    rng = random.Random(seed)
    parts: list[str] = []
    total = 0
    while total < size:
        if rng.random() < 0.05:
            items = [f"- {rng.choice(_OBJECTS)}" for _ in range(rng.randint(2, 4))]
            piece = "\n\nHere is what changed:\n" + "\n".join(items) + "\n\n"
        else:
            piece = (
                f"{rng.choice(_SUBJECTS)} {rng.choice(_VERBS)} {rng.choice(_OBJECTS)}"
                f"{rng.choice(_TAILS)}{rng.choice(_ENDS)} "
            )
        parts.append(piece)
        total += len(piece)
    return "".join(parts)[:size]


def chunks(text: str, seed: int = 11, low: int = 1, high: int = 8) -> list[str]:
    rng = random.Random(seed)
    out: list[str] = []
    index = 0
    while index < len(text):
        step = rng.randint(low, high)
        out.append(text[index : index + step])
        index += step
    return out
