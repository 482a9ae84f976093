"""Test runners' summaries read as counts (issue 33 item 2: "tests: 47 passed, 2 failed")."""

from __future__ import annotations

import pytest

from announcer.formats.suite_counts import SuiteCounts, suite_counts

# Each runner's real closing lines (as each prints them), with what a listener should hear.
SUMMARIES = {
    "pytest": (
        "tests/test_parser.py::test_add PASSED\n"
        "tests/test_parser.py::test_parse FAILED\n"
        "=========================== short test summary info ============================\n"
        "FAILED tests/test_parser.py::test_parse - AssertionError: expected 3, got 2\n"
        "=================== 2 failed, 47 passed, 1 skipped in 0.31s ===================\n",
        SuiteCounts(47, 2),
    ),
    "pytest with errors": (
        "==== 1 failed, 10 passed, 2 errors in 1.02s ====\n",
        SuiteCounts(10, 3),
    ),
    "jest": (
        "Test Suites: 1 failed, 3 passed, 4 total\n"
        "Tests:       2 failed, 47 passed, 49 total\n"
        "Snapshots:   0 total\n"
        "Time:        1.234 s\n",
        SuiteCounts(47, 2),
    ),
    "vitest": (
        " Test Files  1 failed | 3 passed (4)\n"
        "      Tests  2 failed | 47 passed (49)\n"
        "   Start at  10:00:00\n",
        SuiteCounts(47, 2),
    ),
    "cargo": (
        "test parser::adds ... FAILED\n"
        "\n"
        "test result: FAILED. 47 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out\n",
        SuiteCounts(47, 2),
    ),
    "mocha": (
        "  47 passing (120ms)\n  2 failing\n\n  1) parser\n       adds:\n",
        SuiteCounts(47, 2),
    ),
    "unittest failed": (
        "======================================================================\n"
        "FAIL: test_parse (test_parser.ParserTest)\n"
        "----------------------------------------------------------------------\n"
        "Ran 49 tests in 0.012s\n"
        "\n"
        "FAILED (failures=2, errors=1)\n",
        SuiteCounts(46, 3),
    ),
    "unittest ok": ("Ran 12 tests in 0.002s\n\nOK\n", SuiteCounts(12, 0)),
    # Only failures named: how many passed is not known, and not said as 0.
    "mocha failures only": ("  2 failing\n\n  1) parser adds\n", SuiteCounts(None, 2)),
    "pytest all failed": ("==== 3 failed in 0.20s ====\n", SuiteCounts(None, 3)),
    "the lab's script": (
        "Exit code 1\ntest_add PASSED\ntest_parser FAILED: expected 3, got 2\n47 passed, 2 failed",
        SuiteCounts(47, 2),
    ),
}


@pytest.mark.parametrize("runner", SUMMARIES)
def test_each_runners_summary_is_read_as_its_counts(runner: str) -> None:
    output, expected = SUMMARIES[runner]
    assert suite_counts(output) == expected


@pytest.mark.parametrize(
    "output",
    [
        "",
        "src/parser.c:1:5: error: expected ';'\n3 errors generated.\n",  # no test summary
        "Exit code 2\nmake: *** [all] Error 2\n",
        "ok  \texample.com/parser\t0.012s\n",  # go test prints no counts: nothing guessed
    ],
)
def test_output_with_no_test_summary_gives_nothing(output: str) -> None:
    assert suite_counts(output) is None


def test_only_the_last_summary_counts_and_only_the_end_is_read() -> None:
    rerun = "3 failed, 44 passed\n" + "rerunning failures\n" + "1 failed, 46 passed\n"
    assert suite_counts(rerun) == SuiteCounts(46, 1)
    # A summary buried under more than the tail's lines of later output is not read.
    buried = "2 failed, 47 passed\n" + "log line\n" * 100
    assert suite_counts(buried) is None
