"""The runtime reads transports and agents through declared seams (issue 32, step 3).

``Transport`` (announcer/transports/base.py) declares every optional part with its
default and ``AgentLink`` what an agent offers, as ``UiSession`` does for the UIs: the
runtime never probes a transport or an agent with ``getattr``/``hasattr``, and every
transport announcer ships subclasses the base (so mypy checks what the runtime reads).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
from pathlib import Path

import announcer.transports
from announcer.transports.base import Transport

RUNTIME = Path(announcer.transports.__file__).resolve().parents[1] / "runtime"


def probes() -> list[str]:
    """Each ``getattr``/``hasattr`` in runtime/ whose object is a transport or an agent."""
    found = []
    for path in sorted(RUNTIME.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("getattr", "hasattr")
                and node.args
            ):
                probed = ast.unparse(node.args[0])
                if "transport" in probed.casefold() or "agent" in probed.casefold():
                    found.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_the_runtime_never_probes_a_transport_or_an_agent() -> None:
    assert probes() == []


def test_every_transport_subclasses_the_declared_base() -> None:
    """A class with the transport's face (``frames``) is a ``Transport``, and complete."""
    faces = []
    for info in pkgutil.iter_modules(announcer.transports.__path__):
        module = importlib.import_module(f"announcer.transports.{info.name}")
        for _name, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == module.__name__ and callable(getattr(cls, "frames", None)):
                faces.append(cls)
    assert faces, "no transport found"
    for cls in faces:
        if cls is Transport:
            continue
        assert issubclass(cls, Transport), cls
        if not cls.__subclasses__():  # a shared base (MessageStreamTransport) may be partial
            assert not inspect.isabstract(cls), (cls, cls.__abstractmethods__)


def test_an_agent_is_its_transports_agent_link_and_a_producer_is_none() -> None:
    from announcer.transports.acp import AcpTransport
    from announcer.transports.replay import ReplayTransport

    agent = AcpTransport(["true"], name="Helper", label="helper")
    assert agent.agent() is agent
    assert agent.producer_id == agent.adapter.agent_id
    assert ReplayTransport("-", announcer.transports.TransportOptions()).agent() is None
