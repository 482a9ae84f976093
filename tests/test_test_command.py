"""``./test`` runs the static checks as steps of its own (ruff, ruff format, mypy strict on
the core, the import-linter contracts of docs/architecture.md), the two long steps (the
packaging tests, mypy as Windows and macOS see the package) in the background beside them,
then pytest over the rest, whose summary line ends the output: CI (.ci/run) runs exactly
``./test`` and reads that line."""

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


def test_the_long_steps_run_beside_the_tests_and_the_main_run_leaves_only_them_out() -> None:
    """The packaging tests and the platform type checks still run in every ./test (CI ran
    them before they became steps), once: as steps, not again in the parallel run."""
    paths = dict(re.findall(r'^(PACKAGING|PLATFORMS)="([^"]+)"$', SCRIPT, flags=re.MULTILINE))
    assert paths == {"PACKAGING": "tests/packaging", "PLATFORMS": "tests/test_platforms.py"}
    for path in paths.values():
        assert (ROOT / path).exists(), path
    started = re.findall(r'^start_step "[^"]+" "\$(\w+)"$', SCRIPT, flags=re.MULTILINE)
    assert sorted(started) == ["PACKAGING", "PLATFORMS"]
    [main_run] = [line for line in SCRIPT.splitlines() if line.startswith('run_pytest "${color')]
    assert '--ignore="$PACKAGING"' in main_run and '--ignore="$PLATFORMS"' in main_run
    assert main_run.count("--ignore") == 2  # nothing else is left out
    assert "finish_steps" in SCRIPT.split(main_run, 1)[1]  # their verdicts count


def test_the_whole_run_tries_hypothesis_full_counts_and_targeted_runs_the_dev_profile() -> None:
    from tests.support import examples

    before, whole_run = SCRIPT.split("# The whole run:", 1)
    assert 'export ANNOUNCER_HYPOTHESIS_PROFILE="${ANNOUNCER_HYPOTHESIS_PROFILE:-full}"' in (
        whole_run
    )
    code_before = [line for line in before.splitlines() if not line.lstrip().startswith("#")]
    assert not any("ANNOUNCER_HYPOTHESIS_PROFILE" in line for line in code_before)
    assert examples.PROFILES == ("full", "dev")
    assert examples.FULL_DEFAULT == 100  # hypothesis's own default: today's count


def test_the_fast_option_runs_the_sans_io_tier() -> None:
    fast = SCRIPT.split('if [ "${1:-}" = "--fast" ]; then', 1)[1].split("\nfi\n", 1)[0]
    assert 'run_pytest -m "not slow" "$@"' in fast


def test_ci_runs_exactly_the_test_command_and_pytest_comes_last() -> None:
    assert (ROOT / ".ci" / "run").read_text(encoding="utf-8").rstrip().endswith("exec ./test")
    steps = [line.strip() for line in SCRIPT.splitlines() if line.strip()]
    main_run = next(i for i, line in enumerate(steps) if line.startswith('run_pytest "${color'))
    assert main_run > max(i for i, line in enumerate(steps) if line == "static_checks")
    # pytest's own summary line, teed, is said again after the long steps' reports
    assert steps[main_run + 1] == 'tee "$logs/pytest.log"'
    assert steps.index('summary="$(tail -n 1 "$logs/pytest.log")"') > steps.index("finish_steps")
    last_print = max(i for i, line in enumerate(steps) if "printf" in line)
    assert steps[last_print] == """[ -n "$summary" ] && printf '%s\\n' "$summary\""""
    assert last_print > steps.index("finish_steps")


def test_the_fast_tier_leaves_out_only_folders_whose_every_test_is_slow() -> None:
    """``./test --fast`` (``-m "not slow"``) does not import the slow folders at all
    (tests/conftest.py): that is exact only if every test there is marked ``slow``."""
    from tests.support.tiers import SLOW_FOLDERS, TESTS, every_test_is_slow, tiers_of

    for folder in SLOW_FOLDERS:
        module = TESTS / folder / "test_anything.py"
        assert every_test_is_slow(module)
        assert "slow" in tiers_of(module, "test_anything", frozenset())
    for folder in ("engine", "protocol", "formats", "i18n", "config", "cli"):
        assert not every_test_is_slow(TESTS / folder / "test_anything.py")
    assert not every_test_is_slow(TESTS / "test_test_command.py")
