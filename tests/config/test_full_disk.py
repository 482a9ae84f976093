"""A full disk never costs the user their settings file (issue 22 item 10, "Settings").

``announcer config reset`` runs as a real process on a real full file system: a tiny
tmpfs mounted by the test (it runs as root here; elsewhere the test is skipped and the
injected error below still runs). The old file must stay as it was, no temporary file
may be left, and the reason is said in words.
"""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from announcer.config.writer import ConfigError, reset_file, save_setting

ROOT = Path(__file__).resolve().parents[2]
MINE = '# my own settings, written by hand\nverbosity = "terse"\nrate_wpm = 320\n'


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A 64 KiB tmpfs holding a settings file, then filled to the last byte."""
    mount_point = tmp_path / "small-disk"
    mount_point.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount_point)],
        capture_output=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root); the injected failure still runs")
    try:
        (mount_point / "config.toml").write_text(MINE, encoding="utf-8")
        filler = mount_point / f"filler-{uuid.uuid4().hex}"
        with contextlib.suppress(OSError), filler.open("wb") as handle:
            while True:  # bounded by the 64 KiB the file system has
                handle.write(b"\0" * 4096)
                handle.flush()
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], capture_output=True, check=False)


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_config_reset_on_a_full_disk_keeps_the_file_and_says_why(full_disk: Path) -> None:
    settings_file = full_disk / "config.toml"
    done = subprocess.run(
        [sys.executable, "-m", "announcer", "config", "reset", "--yes"],
        cwd=ROOT,
        env={**os.environ, "ANNOUNCER_CONFIG": str(settings_file), "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    assert "the disk is full" in done.stderr and "the file was not changed" in done.stderr
    assert "Errno" not in done.stderr and "Traceback" not in done.stderr
    assert settings_file.read_text(encoding="utf-8") == MINE
    assert leftovers(full_disk) == []


def test_a_setting_saved_on_a_full_disk_keeps_the_file(full_disk: Path) -> None:
    settings_file = full_disk / "config.toml"
    with pytest.raises(ConfigError, match="the disk is full"):
        save_setting("verbosity", "detailed", settings_file)
    assert settings_file.read_text(encoding="utf-8") == MINE
    assert leftovers(full_disk) == []


@pytest.mark.parametrize("failing", ["write", "fsync", "replace"])
def test_an_injected_write_failure_leaves_the_old_file_and_no_temporary(
    failing: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings_file = tmp_path / "config.toml"
    settings_file.write_text(MINE, encoding="utf-8")

    def no_space(*_args: object, **_kwargs: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    if failing == "write":
        real_fdopen = os.fdopen

        class Full:
            def __init__(self, *args: object, **kwargs: object) -> None:
                self._inner = real_fdopen(*args, **kwargs)  # type: ignore[call-overload]

            def __enter__(self) -> Full:
                return self

            def __exit__(self, *_: object) -> None:
                self._inner.close()

            def write(self, _data: bytes) -> int:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        monkeypatch.setattr(os, "fdopen", Full)
    elif failing == "fsync":
        monkeypatch.setattr(os, "fsync", no_space)
    else:
        monkeypatch.setattr(os, "replace", no_space)
    with pytest.raises(ConfigError, match="the disk is full; the file was not changed"):
        reset_file(settings_file)
    with pytest.raises(ConfigError, match="the disk is full"):
        save_setting("verbosity", "detailed", settings_file)
    assert settings_file.read_text(encoding="utf-8") == MINE
    assert leftovers(tmp_path) == []


def test_reset_keeps_a_copy_and_writes_the_template(tmp_path: Path) -> None:
    settings_file = tmp_path / "config.toml"
    settings_file.write_text(MINE, encoding="utf-8")
    backup = reset_file(settings_file)
    assert backup is not None and backup.read_text(encoding="utf-8") == MINE
    assert settings_file.read_text(encoding="utf-8") != MINE
    assert leftovers(tmp_path) == []
