"""One registry of agent CLI streams, one module per stream (issue 24 item 7).

``announcer.formats.cli_streams.CLI_STREAMS`` names every stream ``--format`` takes for
an agent CLI's JSON Lines. These tests fail when a registered name has no module of its
own, when a stream module is not registered, or when ``get_adapter`` does not reach it.
"""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path

import pytest

from announcer.formats import FORMAT_NAMES, get_adapter
from announcer.formats.cli_streams import CLI_STREAMS
from announcer.formats.cli_streams.common import _CliStreamAdapter

PACKAGE = "announcer.formats.cli_streams"
PACKAGE_DIR = Path(importlib.import_module(PACKAGE).__file__ or "").parent
# Modules of the package that are not a stream of their own.
SHARED_MODULES = {"__init__", "common"}


def module_of(stream: str) -> str:
    """The module a stream's adapter lives in: its name with ``-`` as ``_``."""
    return stream.replace("-", "_")


def stream_modules() -> set[str]:
    return {path.stem for path in PACKAGE_DIR.glob("*.py")} - SHARED_MODULES


@pytest.mark.parametrize("stream", sorted(CLI_STREAMS))
def test_every_registered_stream_has_its_own_module(stream: str) -> None:
    adapter = CLI_STREAMS[stream]
    assert (PACKAGE_DIR / f"{module_of(stream)}.py").is_file(), (
        f"{stream!r} is registered but {PACKAGE_DIR}/{module_of(stream)}.py is missing"
    )
    assert adapter.__module__ == f"{PACKAGE}.{module_of(stream)}"
    assert adapter.name == stream
    assert issubclass(adapter, _CliStreamAdapter)


@pytest.mark.parametrize("module_name", sorted(stream_modules()))
def test_every_stream_module_is_registered(module_name: str) -> None:
    module = importlib.import_module(f"{PACKAGE}.{module_name}")
    adapters = [
        value
        for value in vars(module).values()
        if inspect.isclass(value)
        and issubclass(value, _CliStreamAdapter)
        and value is not _CliStreamAdapter
        and value.__module__ == module.__name__
    ]
    assert adapters, f"{module.__name__} defines no stream adapter"
    for adapter in adapters:
        assert CLI_STREAMS.get(adapter.name) is adapter, (
            f"{adapter.__qualname__} ({adapter.name!r}) is not in CLI_STREAMS"
        )


def test_the_registry_and_the_modules_agree() -> None:
    assert {module_of(stream) for stream in CLI_STREAMS} == stream_modules()


@pytest.mark.parametrize("stream", sorted(CLI_STREAMS))
def test_listen_format_reaches_each_registered_stream(stream: str) -> None:
    assert stream in FORMAT_NAMES
    first, second = get_adapter(stream), get_adapter(stream)
    assert type(first) is CLI_STREAMS[stream]
    assert first is not second  # a fresh adapter per stream
