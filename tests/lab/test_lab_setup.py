"""The lab's own rule: without the CLIs it skips on a developer's machine and fails on CI."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.lab.clis import (
    PINNED,
    LabUnavailable,
    _remove_older_pins,
    ensure_clis,
    install_lock,
    lab_dir,
    pins_digest,
)

ROOT = Path(__file__).resolve().parents[2]


def test_missing_clis_are_reported_not_installed_when_told_not_to(tmp_path, monkeypatch):
    monkeypatch.setenv("ANNOUNCER_LAB_DIR", str(tmp_path / "empty"))
    with pytest.raises(LabUnavailable, match=r"not installed|node and npm"):
        ensure_clis(install=False)
    assert all(version.count(".") == 2 for version in PINNED.values())  # exact pins


def run_lab_probe(tmp_path: Path, ci: str) -> subprocess.CompletedProcess[str]:
    """A one-test pytest run that asks for the CLIs where node and npm cannot be found."""
    probe = tmp_path / "test_probe.py"
    probe.write_text("def test_needs_the_clis(clis):\n    assert clis\n")
    (tmp_path / "conftest.py").write_text("from tests.lab.conftest import clis  # noqa: F401\n")
    env = {
        "PATH": str(Path(sys.executable).parent),  # python only: no node, no npm
        "PYTHONPATH": str(ROOT),
        "ANNOUNCER_LAB_DIR": str(tmp_path / "empty"),
        "CI": ci,
        "HOME": str(tmp_path),
    }
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(probe)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_without_node_the_lab_fails_on_ci_and_skips_elsewhere(tmp_path):
    on_ci = run_lab_probe(tmp_path, "true")
    assert on_ci.returncode == 1, on_ci.stdout
    assert "on CI the lab must run" in on_ci.stdout
    (tmp_path / "local").mkdir()
    local = run_lab_probe(tmp_path / "local", "")
    assert local.returncode == 0, local.stdout
    assert "1 skipped" in local.stdout


def test_the_lab_is_shared_by_checkouts_one_folder_per_set_of_pins(tmp_path, monkeypatch):
    """A fresh clone finds the CLIs another checkout of the same pins installed."""
    monkeypatch.delenv("ANNOUNCER_LAB_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    first = lab_dir()
    assert first == tmp_path / "cache" / "announcer" / "lab" / "agents" / pins_digest()
    monkeypatch.setitem(PINNED, "@openai/codex", "0.0.1")
    moved = lab_dir()
    assert moved != first and moved.parent == first.parent
    first.mkdir(parents=True)
    moved.mkdir(parents=True)
    (first.parent / "notes").mkdir()  # not a pin set: left alone
    _remove_older_pins(moved)
    assert sorted(p.name for p in moved.parent.iterdir()) == sorted([moved.name, "notes"])


def test_a_second_install_waits_for_the_first(tmp_path):
    """Two checkouts setting up at once: the second waits for the lock, never mixes in."""
    folder = tmp_path / "agents" / "0123456789abcdef"
    order: list[str] = []
    trying = threading.Event()

    def second() -> None:
        trying.set()
        with install_lock(folder):
            order.append("second")

    with install_lock(folder):
        waiter = threading.Thread(target=second)
        waiter.start()
        assert trying.wait(10)
        order.append("first")
    waiter.join(10)
    assert order == ["first", "second"]
