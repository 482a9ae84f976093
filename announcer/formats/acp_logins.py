"""ACP terminal logins (Authentication, "terminal" methods) as the command the user runs.

announcer never types a credential itself: ``announcer.transports.acp_process`` offers these
commands, run by the user in their own terminal.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
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

# -- the environment the agent chose for its login (issue 29 item 3) ----------------------

#: Variables a login may set without a word: how text looks and which language it uses.
HARMLESS_ENV = frozenset(
    {"TERM", "COLORTERM", "NO_COLOR", "FORCE_COLOR", "CLICOLOR", "LANG", "LANGUAGE", "TZ"}
    | {"LC_ALL", "LC_CTYPE", "LC_MESSAGES", "LC_NUMERIC", "LC_TIME", "LC_COLLATE"}
)
#: A value longer than this is shown cut, and what was not shown whole is high risk.
LOGIN_ENV_VALUE_CHARS = 200

#: Why a variable makes the login high risk (two keys), by kind: the exact names first
#: (upper case: Windows reads names in any case), then their kin by prefix.
_RISKY_FAMILIES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("program", ("PATH",)),
    (
        "code",
        (
            "PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "PYTHONUSERBASE", "LD_PRELOAD",
            "LD_LIBRARY_PATH", "LD_AUDIT", "NODE_OPTIONS", "NODE_PATH", "PERL5LIB", "PERL5OPT",
            "PERLLIB", "RUBYOPT", "RUBYLIB", "CLASSPATH", "GCONV_PATH", "JAVA_TOOL_OPTIONS",
            "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS",
        ),
    ),
    (
        "shell",
        ("BASH_ENV", "ENV", "PROMPT_COMMAND", "SHELLOPTS", "BASHOPTS", "PS4", "IFS", "ZDOTDIR"),
    ),
    (
        "command",
        (
            "GIT_SSH_COMMAND", "GIT_SSH", "GIT_EXEC_PATH", "GIT_ASKPASS", "SSH_ASKPASS", "SHELL",
            "EDITOR", "VISUAL", "PAGER", "BROWSER",
        ),
    ),
    (
        "trust",
        (
            "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "SSL_CERT_FILE", "SSL_CERT_DIR",
            "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS",
            "NODE_TLS_REJECT_UNAUTHORIZED",
        ),
    ),
    ("home", ("HOME", "USERPROFILE", "XDG_CONFIG_HOME", "XDG_DATA_HOME")),
)  # fmt: skip
_RISKY_NAMES: dict[str, str] = {name: kind for kind, names in _RISKY_FAMILIES for name in names}
_RISKY_PREFIXES: tuple[tuple[str, str], ...] = (
    ("DYLD_", "code"),
    ("LD_", "code"),
    ("PYTHON", "code"),
    ("NODE_", "code"),
    ("PERL", "code"),
    ("RUBY", "code"),
    ("NPM_CONFIG_", "code"),
    ("BASH_FUNC_", "shell"),
    ("GIT_CONFIG", "command"),
)


def _risk_kind(name: str) -> str | None:
    upper = name.upper()
    kind = _RISKY_NAMES.get(upper)
    if kind is not None:
        return kind
    return next((k for prefix, k in _RISKY_PREFIXES if upper.startswith(prefix)), None)


@dataclass(frozen=True, slots=True)
class LoginEnvReading:
    """What the agent set in its login's environment, as the user is told it.

    ``shown``: every variable beyond :data:`HARMLESS_ENV`, in the agent's order, each value
    cut at :data:`LOGIN_ENV_VALUE_CHARS`. ``risks``: ``(kind, name)`` for each reason to
    take two keys: a variable that decides what code runs (``PATH``, ``PYTHONPATH``,
    ``LD_PRELOAD``, ``NODE_OPTIONS``, ... and their kin), or a value too long to show whole.
    """

    shown: tuple[tuple[str, str], ...] = ()
    risks: tuple[tuple[str, str], ...] = ()

    @property
    def high_risk(self) -> bool:
        return bool(self.risks)


def read_login_env(env: Sequence[tuple[str, str]]) -> LoginEnvReading:
    shown: list[tuple[str, str]] = []
    risks: list[tuple[str, str]] = []
    for name, value in env:
        if name.upper() in HARMLESS_ENV:
            continue
        kind = _risk_kind(name)
        if kind is not None:
            risks.append((kind, name))
        if len(value) > LOGIN_ENV_VALUE_CHARS:
            risks.append(("cut", name))
            value = value[:LOGIN_ENV_VALUE_CHARS] + "…"
        shown.append((name, value))
    return LoginEnvReading(tuple(shown), tuple(risks))


def login_env_words(reading: LoginEnvReading, _t: Callable[[str], str]) -> tuple[str, str]:
    """The environment as said (``""`` when nothing beyond the harmless), and why it takes
    two keys (``""`` when it does not): short, in the user's language."""
    if not reading.shown:
        return "", ""
    listed = ", ".join(f"{name}={value}" for name, value in reading.shown)
    shown = _t("It runs with {variables}.").format(variables=listed)
    if not reading.high_risk:
        return shown, ""
    reasons = {
        "program": _t("{names} picks which programs run."),
        "code": _t("{names} can load code you were not shown."),
        "shell": _t("{names} runs shell code you were not shown."),
        "command": _t("{names} names a command it may run."),
        "trust": _t("{names} changes where it connects or whom it trusts."),
        "home": _t("{names} makes it read settings from another folder."),
        "cut": _t("{names} is too long to show whole."),
    }
    said: list[str] = []
    for kind, sentence in reasons.items():
        names = [name for k, name in reading.risks if k == kind]
        if names:
            said.append(sentence.format(names=", ".join(dict.fromkeys(names))))
    risk = _t("High risk: {reasons} It takes two keys.").format(reasons=" ".join(said))
    return shown, risk


@dataclass(frozen=True, slots=True)
class LoginChoice:
    """A terminal login as an interface offers it: its name and command, the whole
    environment it runs with, and what the agent chose of that environment."""

    name: str
    argv: tuple[str, ...]
    env: dict[str, str]
    reading: LoginEnvReading


def login_choice(login: TerminalLogin, base: dict[str, str]) -> LoginChoice:
    """The login with announcer's own environment beneath the agent's variables."""
    return LoginChoice(
        login.name, login.argv, {**base, **dict(login.env)}, read_login_env(login.env)
    )


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
