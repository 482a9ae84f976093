"""Every test (and every CLI subprocess it starts) sees an empty settings file of its own,
and the same neutral locale, whatever the developer's or CI's environment says. Each test
is marked with its tiers (tests/support/tiers.py) as it is collected."""

from __future__ import annotations

import ast
import gc
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.support.examples import load_profile as load_hypothesis_profile
from tests.support.terminal import Terminal, tmux_installed
from tests.support.tiers import every_test_is_slow, mark_tiers

if TYPE_CHECKING:
    from tests.support.scripted import OpenScriptedLive


def _guard_ast_parse_against_reentry() -> None:
    """CPython 3.11.7 keeps the AST-to-object recursion counter in shared module state
    (gh-106905, fixed in 3.11.8). A garbage collection during ``ast.parse`` can run a
    finaliser whose unraisable-exception report formats a traceback, and 3.11's traceback
    formatting calls ``ast.parse`` again: the outer call then fails with "SystemError: AST
    constructor recursion depth mismatch". pytest (assertion rewriting) and tracebacks are
    the callers here, so each parse runs with the collector paused and one at a time."""
    if sys.version_info >= (3, 11, 8) or getattr(ast.parse, "_announcer_guarded", False):
        return
    original = ast.parse
    lock = threading.Lock()

    def parse(*args: Any, **kwargs: Any) -> Any:
        with lock:
            was_enabled = gc.isenabled()
            gc.disable()
            try:
                return original(*args, **kwargs)
            finally:
                if was_enabled:
                    gc.enable()

    parse._announcer_guarded = True  # type: ignore[attr-defined]
    ast.parse = parse


_guard_ast_parse_against_reentry()


def _give_children_the_terminals_ctrl_c() -> None:
    """A suite started in the background (``nohup ./test &``, a runner's ``&``) inherits
    SIGINT ignored, and an ignored signal stays ignored across exec: every announcer the
    tests start would then shrug off the SIGINT a test sends as a terminal's Ctrl-C. A
    Python handler is reset to the default by exec, so the children start as they would
    from a terminal. (announcer itself keeps an inherited "ignore", as a background job
    should.)"""
    import signal

    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


_give_children_the_terminals_ctrl_c()


# Hypothesis: the dev profile (fewer examples) unless ./test's full run asks for full.
load_hypothesis_profile()


# First: xdist's own hook turns the xdist_group marks into scheduling groups, so the marks
# must be on the items before it runs (after it, they were silently ignored).
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    mark_tiers(items)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """With ``-m "not slow"`` (``./test --fast``), the folders whose every test is ``slow``
    (tests/support/tiers.py) are not even imported: their tests would all be deselected, and
    importing them (Textual, the transports) cost each worker about 10 s before its first test.
    """
    terms = {term.strip() for term in str(config.getoption("markexpr") or "").split(" and ")}
    return True if "not slow" in terms and every_test_is_slow(collection_path) else None


def pytest_sessionfinish(session: pytest.Session) -> None:
    """An xdist worker ends quickly once it has said it is finished. execnet sends a
    worker that still runs 5 s after that a SIGINT, and pytest's clean-up after it does
    five full garbage collections over the worker's whole heap: on a loaded machine that
    took longer, and the SIGINT landed in hypothesis's gc callback as a stray
    "KeyboardInterrupt" traceback at the end of the run. So the garbage is collected here,
    before the worker says it is finished (its unraisable exceptions are still reported),
    and what is left is frozen: later collections skip it."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        gc.collect()
        gc.freeze()


@pytest.fixture
def terminal() -> Iterator[Terminal]:
    """A real terminal: a tmux server of this test's own, ended after it (tier ``tmux``)."""
    if not tmux_installed():
        pytest.skip("tmux is not installed (scripts/bootstrap.sh test installs it)")
    screen = Terminal()
    try:
        yield screen
    finally:
        screen.close()


@pytest.fixture
def scripted_live(tmp_path: Path) -> OpenScriptedLive:
    """``async with scripted_live(kind, **options) as live``: the scripted producer and a live
    session subscribed to it over loopback WebSocket or SSE (tests/support/scripted.py)."""
    from tests.support.scripted import opener  # imported here: the fast tier needs none of it

    return opener(tmp_path)


@pytest.fixture(autouse=True)
def isolated_settings_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The developer's real ~/.config/announcer/config.toml must never change a test's result."""
    path = tmp_path / "isolated-config" / "config.toml"
    monkeypatch.setenv("ANNOUNCER_CONFIG", str(path))
    # ... nor may a test write the developer's diagnostics log (platformdirs state dir).
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "isolated-state"))
    # The system locale is a settings source (languages); tests that want one set it themselves.
    monkeypatch.setenv("LANG", "C.UTF-8")
    for name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(name, raising=False)
    for name in [key for key in os.environ if key.startswith("ANNOUNCER_")]:
        if name != "ANNOUNCER_CONFIG":
            monkeypatch.delenv(name, raising=False)
    return path
