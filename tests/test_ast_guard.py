"""The test run's guard around ``ast.parse`` (tests/conftest.py) holds when a garbage
collection inside a parse runs a finaliser whose error report parses again, which is
how CI once failed a test at set-up with "AST constructor recursion depth mismatch"."""

from __future__ import annotations

import ast
import gc
import sys
from typing import Any

import pytest


class _RaisesWhenCollected:
    def __init__(self) -> None:
        self.itself = self  # a cycle: only the collector frees it

    def __del__(self) -> None:
        raise RuntimeError("finaliser failed, as an unclosed transport's does")


def test_a_parse_interrupted_by_a_finaliser_that_parses_still_succeeds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reports: list[str] = []

    def report_by_parsing(unraisable: Any) -> None:
        # 3.11's traceback formatter parses source lines to place its carets.
        reports.append(ast.dump(ast.parse("caret = anchor[1](2)")))

    monkeypatch.setattr(sys, "unraisablehook", report_by_parsing)
    source = "\n".join(f"a{i} = [{i}, ({i}, {i})]" for i in range(2000))
    thresholds = gc.get_threshold()
    gc.collect()
    gc.set_threshold(1)
    try:
        for _ in range(10):
            for _ in range(50):
                _RaisesWhenCollected()
            tree = ast.parse(source)
            assert len(tree.body) == 2000
    finally:
        gc.set_threshold(*thresholds)
        gc.collect()
    assert reports, "no finaliser ran, so the guard was not exercised"
