"""ACP terminal logins (Authentication, "terminal" methods) as the command the user runs.

announcer never types a credential itself: ``announcer.transports.acp_process`` offers these
commands, run by the user in their own terminal.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from announcer.formats.base import get_str
from announcer.formats.speakable import clip


@dataclass(frozen=True, slots=True)
class TerminalLogin:
    """An ACP terminal login (Authentication, "terminal" methods): the agent's own program
    run by the user in their terminal with the method's arguments and environment."""

    method_id: str
    name: str
    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()


_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _program_name(path: str) -> str:
    """``/usr/bin/opencode`` and ``C:\\npm\\opencode.cmd`` are both ``opencode``."""
    name = re.split(r"[\\/]", path)[-1]
    return re.sub(r"\.(?:cmd|exe|bat)$", "", name, flags=re.IGNORECASE)


def _login_args(value: object) -> tuple[str, ...] | None:
    if not isinstance(value, list) or len(value) > 20:
        return None
    if not all(isinstance(word, str) and 0 < len(word) <= 200 for word in value):
        return None
    return tuple(value)


def _login_env(value: object) -> tuple[tuple[str, str], ...]:
    """``env`` as v1 sends it (a map) or v2 (a list of name and value)."""
    pairs: list[tuple[object, object]] = []
    if isinstance(value, dict):
        pairs = list(value.items())
    elif isinstance(value, list):
        pairs = [(v.get("name"), v.get("value")) for v in value if isinstance(v, dict)]
    return tuple(
        (name, val)
        for name, val in pairs[:20]
        if isinstance(name, str) and _ENV_NAME.match(name) and isinstance(val, str)
    )


def terminal_logins(methods: object, command: Sequence[str]) -> list[TerminalLogin]:
    """The terminal logins among an agent's ``authMethods``, each as the command to run.

    A ``terminal`` method's ``args`` follow the agent's own command line (the ACP spec: the
    method never names a program). Older adapters say it in ``_meta``: qwen's ``{"type":
    "terminal", "args"}``, opencode's ``{"terminal-auth": {"command", "args"}}``; those
    arguments follow the agent's program alone (its command line starts ACP mode), and a
    ``terminal-auth`` command is taken only when it is that same program.
    """
    if not command:
        return []
    program = command[0]
    found: list[TerminalLogin] = []
    for method in methods if isinstance(methods, list) else []:
        if not isinstance(method, dict):
            continue
        method_id = get_str(method, "id") or ""
        name = clip(get_str(method, "name") or method_id, 80)
        meta = method.get("_meta") if isinstance(method.get("_meta"), dict) else {}
        assert isinstance(meta, dict)
        legacy = meta.get("terminal-auth") if isinstance(meta.get("terminal-auth"), dict) else {}
        assert isinstance(legacy, dict)
        argv: tuple[str, ...] | None = None
        if method.get("type") == "terminal":
            args = _login_args(method.get("args", []))
            argv = (*command, *args) if args is not None else None
        elif meta.get("type") == "terminal":
            args = _login_args(meta.get("args", []))
            argv = (program, *args) if args is not None else None
        elif isinstance(legacy.get("command"), str) and (
            _program_name(str(legacy["command"])) == _program_name(program)
        ):
            args = _login_args(legacy.get("args", []))
            argv = (program, *args) if args is not None else None
        if argv is not None and method_id:
            found.append(TerminalLogin(method_id, name, argv, _login_env(method.get("env"))))
    return found[:4]
