"""Shared paths and helpers for the protocol tests (real fixtures, real spec text)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.shared_data import SHARED as SHARED_ROOT

# The shared AAEP fixtures, schemas and seed chapters; ANNOUNCER_SHARED points elsewhere.
SHARED = SHARED_ROOT
FIXTURES = SHARED / "aaep" / "fixtures"
SCHEMAS = SHARED / "aaep" / "schemas"
SEEDS = SHARED / "seeds"

_HEADING = re.compile(r"^(\d+\.\d+(?:\.\d+)*)\s+\S")


@dataclass(frozen=True)
class SpecExample:
    chapter: str
    section: str
    line: int
    value: dict[str, Any]


def spec_examples(seed: Path) -> list[SpecExample]:
    """Every JSON object in a seed chapter, with the section heading it sits under.

    The seed text breaks JSON across lines (one token per line in places), so a block
    starts at a line beginning with "{" and grows line by line until it parses.
    """
    lines = seed.read_text(encoding="utf-8").splitlines()
    found: list[SpecExample] = []
    section = ""
    index = 0
    while index < len(lines):
        heading = _HEADING.match(lines[index])
        if heading:
            section = heading.group(1)
        if lines[index].lstrip().startswith("{"):
            for end in range(index, min(index + 120, len(lines))):
                try:
                    value = json.loads("\n".join(lines[index : end + 1]))
                except ValueError:
                    continue
                if isinstance(value, dict):
                    found.append(SpecExample(seed.name, section, index + 1, value))
                index = end
                break
        index += 1
    return found
