"""The lab's own rule: without the CLIs it skips on a developer's machine and fails on CI."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.lab.clis import PINNED, LabUnavailable, ensure_clis

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
