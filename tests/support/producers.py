"""Where a producer on loopback listens, in each transport's form (AAEP B.2, chapter 5)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

LOOPBACK = "127.0.0.1"
#: The WebSocket path of announcer's demo producer (``paths="aaep"``) and the hostile ones.
WS_PATH = "/aaep/v1/ws"


def ws_url(port: int | Any, path: str = WS_PATH) -> str:
    """``ws://127.0.0.1:PORT/aaep/v1/ws``; ``port`` may be a server with a ``port``."""
    return f"ws://{LOOPBACK}:{_port(port)}{path}"


def http_url(port: int | Any, path: str = "") -> str:
    """``http://127.0.0.1:PORT``: the SSE transport's origin (or a path on it)."""
    return f"http://{LOOPBACK}:{_port(port)}{path}"


def producer_url(kind: str, port: int | Any) -> str:
    """The address a subscriber is given for transport ``kind`` (``ws`` or ``sse``)."""
    if kind == "ws":
        return ws_url(port)
    if kind == "sse":
        return http_url(port)
    raise ValueError(f"no loopback address for transport {kind!r}")


def _port(port: int | Any) -> int:
    return port if isinstance(port, int) else int(port.port)


def short_source(recording: Path, folder: Path, monkeypatch: Any) -> str:
    """``recording`` copied into ``folder`` as ``s.jsonl`` and named relative to it (the
    test's working directory from now on): "Connected to s.jsonl." is said in a second;
    a recording's full path takes seconds of real speech that no test listens for."""
    shutil.copyfile(recording, folder / "s.jsonl")
    monkeypatch.chdir(folder)
    return "s.jsonl"
