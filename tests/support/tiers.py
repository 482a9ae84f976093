"""Which tier a test is in, from where it lives and what it uses, never from a hand list.

``./test`` runs every tier; a developer picks some with ``-m`` (docs/testing.md):

* ``lab``: the agent lab (``tests/lab/``, or the ``lab``, ``clis`` or ``fake_model``
  fixtures): real agent CLIs on node against the fake model, spread over the xdist
  workers like any other test. The tests in ``tests/packaging`` keep to one worker
  (group ``packaging``: one wheel and one bundle built for all of them).
* ``tmux``: the terminal app in a real terminal (the ``terminal`` fixture, or a module
  that runs ``tmux`` itself).
* ``e2e``: starts programs as child processes (announcer's own CLI, speech-dispatcher,
  espeak-ng, an agent): the module uses ``subprocess`` or ``sys.executable``. Every
  ``tmux`` and ``lab`` test is one too.
* ``slow``: anything beyond the sans-I/O core: every ``e2e`` test, and every test in a
  folder whose subject is real time or real I/O (loopback servers, Textual under Pilot,
  paced speech). ``-m "not slow"`` is the sans-I/O core alone, the quickest run.
* ``serial``: set by hand, only on a test that needs the machine to itself; ``./test``
  runs those on one worker, after the rest.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]

TIERS = {
    "e2e": "starts programs as child processes (announcer's CLI, speech servers, agents)",
    "tmux": "drives the terminal app in a real terminal (tmux)",
    "lab": "the agent lab: real agent CLIs on node against the fake model",
    "slow": "beyond the sans-I/O core: real time, loopback servers, Pilot, or e2e",
    "serial": "needs the machine to itself: run alone, after the parallel run",
}

# Folders whose subject is real time or real I/O: each of their tests is ``slow``.
REAL_IO_FOLDERS = frozenset(
    {"acp_frontend", "lab", "producer", "reliability", "runtime", "speech", "transports", "ui"}
)
# Folders whose tests build or install the package: each is ``slow`` too.
BUILD_FOLDERS = frozenset({"packaging"})
SLOW_FOLDERS = REAL_IO_FOLDERS | BUILD_FOLDERS
LAB_FIXTURES = frozenset({"lab", "clis", "fake_model"})
# Folders whose tests share costly session fixtures (the packaging tests' one built and
# installed wheel): their tests keep to one worker, so the fixture is made once.
SHARED_SESSION_FOLDERS = frozenset({"packaging"})
_STARTS_PROGRAMS = re.compile(
    r"\bsubprocess\b|create_subprocess_exec|create_subprocess_shell|\bPopen\b|sys\.executable"
)
_RUNS_TMUX = re.compile(r"""["']tmux["']|\btmux\(""")


@cache
def _source(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return ""


@cache
def _tree(path: Path) -> ast.Module:
    try:
        return ast.parse(_source(path))
    except SyntaxError:
        return ast.Module(body=[], type_ignores=[])


@cache
def _definitions(path: Path) -> dict[str, str]:
    """The source of each top-level function and class of module ``path``, by name.

    Cached, and cut by line numbers: ``ast.get_source_segment`` splits the whole module
    again for every definition, which made collection cost 40 CPU-seconds per xdist worker.
    """
    lines = _source(path).splitlines(keepends=True)
    return {
        node.name: "".join(lines[node.lineno - 1 : node.end_lineno])
        for node in _tree(path).body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    }


def _helpers_used(path: Path) -> list[str]:
    """The source of each function or class ``path`` imports from a test helper module."""
    found = []
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if not node.module.startswith("tests."):
                continue
            module = TESTS.parent.joinpath(*node.module.split("."))
            for candidate in (module.with_suffix(".py"), module / "__init__.py"):
                if candidate.is_file():
                    definitions = _definitions(candidate)
                    found += [definitions.get(alias.name, "") for alias in node.names]
    return found


@cache
def starts_programs(path: Path) -> bool:
    """The module, or a helper it imports from the tests, starts programs as child processes."""
    return bool(_STARTS_PROGRAMS.search(_source(path))) or any(
        _STARTS_PROGRAMS.search(helper) for helper in _helpers_used(path)
    )


@cache
def _runs_tmux(path: Path, test_name: str) -> bool:
    """The test function, or a function of its module it calls, runs tmux."""
    test = next(
        (
            node
            for node in _tree(path).body
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == test_name
        ),
        None,
    )
    if test is None:
        return False
    called = {
        node.func.id
        for node in ast.walk(test)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }
    definitions = _definitions(path)
    return any(
        _RUNS_TMUX.search(definitions[name]) for name in {test_name} | (called & definitions.keys())
    )


def _folder(path: Path) -> str | None:
    """The folder under tests/ that holds ``path``."""
    try:
        return path.resolve().relative_to(TESTS).parts[0]
    except (ValueError, IndexError):
        return None


def every_test_is_slow(path: Path) -> bool:
    """``path`` is a folder (or in one) whose every test is ``slow`` (tiers_of says so)."""
    return _folder(path) in SLOW_FOLDERS


def tiers_of(path: Path, test_name: str, fixtures: frozenset[str]) -> set[str]:
    """The tier markers of test ``test_name`` in module ``path`` that uses ``fixtures``."""
    folder = _folder(path)
    if folder is None:
        return set()
    tiers: set[str] = set()
    if folder == "lab" or fixtures & LAB_FIXTURES:
        tiers.add("lab")
    if "terminal" in fixtures or _runs_tmux(path, test_name):
        tiers.add("tmux")
    if tiers or starts_programs(path):
        tiers.add("e2e")
    if tiers or folder in SLOW_FOLDERS:
        tiers.add("slow")
    return tiers


def mark_tiers(items: list[pytest.Item]) -> None:
    """Mark each collected test with its tiers; the packaging and serial tests are grouped
    (xdist ``--dist loadgroup``): the packaging tests share one built wheel and bundle on
    one worker. The lab is not grouped: its tests run side by side (each worker starts its
    own fake model), which is minutes faster than one worker running them all."""
    for item in items:
        fixtures = frozenset(getattr(item, "fixturenames", ()))
        function = getattr(item, "originalname", None) or item.name
        tiers = tiers_of(Path(str(item.path)), function, fixtures)
        for tier in sorted(tiers):
            item.add_marker(tier)
        folder = _folder(Path(str(item.path)))
        if folder in SHARED_SESSION_FOLDERS:
            item.add_marker(pytest.mark.xdist_group(folder))
        elif item.get_closest_marker("serial") is not None:
            item.add_marker(pytest.mark.xdist_group("serial"))
