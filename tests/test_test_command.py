"""``./test`` runs the static checks as steps of its own (ruff, ruff format, mypy strict on
the core, the import-linter contracts of docs/architecture.md), then pytest, whose summary
line ends the output: CI (.ci/run) runs exactly ``./test`` and reads that line."""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = (ROOT / "test").read_text(encoding="utf-8")
BIN = Path(sys.prefix) / "bin"


def test_the_test_command_runs_every_static_check_with_its_tool_installed() -> None:
    checks = dict(re.findall(r'^\s*check "([^"]+)" (.+)$', SCRIPT, flags=re.MULTILINE))
    assert set(checks) == {
        "ruff check",
        "ruff format --check",
        "mypy (strict on the core)",
        "import-linter contracts",
    }
    assert 'ruff" check .' in checks["ruff check"]
    assert 'ruff" format --check .' in checks["ruff format --check"]
    assert "-m mypy" in checks["mypy (strict on the core)"]
    assert "lint-imports" in checks["import-linter contracts"]
    for tool in ("ruff", "lint-imports", "mypy"):
        assert (BIN / tool).exists(), f"{tool} is not installed; ./test installs it"


def test_ci_runs_exactly_the_test_command_and_pytest_comes_last() -> None:
    assert (ROOT / ".ci" / "run").read_text(encoding="utf-8").rstrip().endswith("exec ./test")
    steps = [line.strip() for line in SCRIPT.splitlines() if line.strip()]
    assert steps.index('run_pytest "$@"') > max(
        index for index, line in enumerate(steps) if line == "static_checks"
    )
