"""How many tests passed and failed, read from what a command printed (issue 33, item 2).

A listener asks of a test run "how many failed?", not "exit code 1". Test runners end
with a summary line, each in its own shape; this module reads the common ones from a
command's output, sans-I/O, and returns the counts (never the line itself: the digest
says them in the user's language):

* pytest ``=== 2 failed, 47 passed in 0.31s ===``, and the same "N passed, N failed"
  from many runners and scripts;
* Jest ``Tests:       2 failed, 47 passed, 49 total`` and Vitest
  ``Tests  2 failed | 47 passed (49)``;
* Cargo ``test result: FAILED. 47 passed; 2 failed; 0 ignored``;
* Mocha ``47 passing`` / ``2 failing`` (two lines);
* unittest ``Ran 49 tests in 0.1s`` then ``FAILED (failures=2, errors=1)`` or ``OK``.

Only the last summary in the output counts (a runner that reruns prints its final one
last); errors count as failures. Output with no summary gives None: nothing is guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

# Only the end of the output is read: summaries come last, and a flood stays cheap.
TAIL_LINES: Final = 60
_COUNT: Final = re.compile(
    r"\b(\d{1,7})\s+(passed|passing|failed|failing|errors?|error(?:ed)?)\b", re.IGNORECASE
)
_SUMMARY_WORDS: Final = frozenset({"passed", "passing", "failed", "failing"})
_UNITTEST_RAN: Final = re.compile(r"^Ran (\d{1,7}) tests? in\b")
_UNITTEST_FAILED: Final = re.compile(r"^FAILED \(([^)]*)\)")
_UNITTEST_PART: Final = re.compile(r"\b(failures|errors)=(\d{1,7})\b")
_UNITTEST_OK: Final = re.compile(r"^OK\b")


@dataclass(frozen=True, slots=True)
class SuiteCounts:
    """A test run's outcome: how many passed and how many failed (errors included)."""

    passed: int | None  # None: the summary named only failures ("2 failing")
    failed: int


def suite_counts(output: str) -> SuiteCounts | None:
    """The counts of the last test summary in ``output``, or None if it has none."""
    lines = [line.strip() for line in output.splitlines()[-TAIL_LINES:] if line.strip()]
    for index in range(len(lines) - 1, -1, -1):
        line = lines[index]
        found = _unittest(lines, index) or _counted(line)
        if found is not None:
            if _only_one_side(line):  # Mocha: "47 passing" and "2 failing" on two lines
                found = _merge(found, lines[max(0, index - 2) : index])
            return found
    return None


def _counted(line: str) -> SuiteCounts | None:
    """ "N passed, N failed" and kin; errors count only beside them ("3 errors
    generated." from a compiler is no test summary)."""
    passed: int | None = None
    failed = 0
    seen = False
    for number, word in _COUNT.findall(line):
        word = word.lower()
        seen = seen or word in _SUMMARY_WORDS
        if word in ("passed", "passing"):
            passed = (passed or 0) + int(number)
        else:
            failed += int(number)
    return SuiteCounts(passed, failed) if seen else None


def _only_one_side(line: str) -> bool:
    words = {word.lower() for _, word in _COUNT.findall(line)}
    return words <= {"passing"} or words <= {"failing"}


def _merge(found: SuiteCounts, before: list[str]) -> SuiteCounts:
    passed, failed = found.passed, found.failed
    for line in before:
        if not _only_one_side(line):
            continue
        other = _counted(line)
        if other is not None:
            if other.passed is not None:
                passed = (passed or 0) + other.passed
            failed += other.failed
    return SuiteCounts(passed, failed)


def _unittest(lines: list[str], index: int) -> SuiteCounts | None:
    """unittest's "Ran N tests" and, on a later line, "OK" or "FAILED (failures=F)"."""
    verdict = lines[index]
    failed_match = _UNITTEST_FAILED.match(verdict)
    if failed_match is None and _UNITTEST_OK.match(verdict) is None:
        return None
    ran = next(
        (
            int(match.group(1))
            for line in reversed(lines[max(0, index - 4) : index])
            if (match := _UNITTEST_RAN.match(line)) is not None
        ),
        None,
    )
    if ran is None:
        return None
    failed = 0
    if failed_match is not None:
        failed = sum(int(count) for _, count in _UNITTEST_PART.findall(failed_match.group(1)))
    return SuiteCounts(max(0, ran - failed), failed)
