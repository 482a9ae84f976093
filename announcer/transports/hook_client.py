"""The hook's side of the hook bridge: a short-lived process that asks the user's own announcer.

Claude Code and Codex start ``announcer hook claude-code|codex`` once per hook
call and wait for it, so this module imports only the standard library's
``json``, ``os``, ``socket``, ``stat``, ``struct``, ``sys``, ``time`` and, through
``announcer.agents.files``, ``tomllib`` for the agent files (benchmarks/startup.py keeps it
honest; tests/cli/test_lean_commands.py checks what gets imported).

Only the user's own announcer may hear the tool inputs or answer: before the
payload leaves this process the socket's directory must be the user's and mode
0700, the socket must be the user's, and the process listening on it must run
as the user (SO_PEERCRED on Linux, LOCAL_PEERCRED on macOS and the BSDs). On
any doubt nothing is sent and the answer is ``ask``, so the agent asks itself.
Nothing here ever answers "allow" on its own.

Windows has no Unix sockets for asyncio, so there the channel is loopback TCP
(``ANNOUNCER_HOOK_CHANNEL=tcp`` forces it anywhere, as the tests do on Linux): the
announcer writes ``hook.endpoint`` (its port and a fresh per-user secret) in the same
private directory, readable by the user alone, and both ends prove they know the
secret before any payload travels (HMAC over each other's nonce), so neither another
user's listener on that port nor another user's hook gets anything.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import struct
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from announcer.agents.files import hook_agents

PROTOCOL_VERSION = 1
SOCKET_ENV = "ANNOUNCER_HOOK_SOCKET"
CHANNEL_ENV = "ANNOUNCER_HOOK_CHANNEL"  # "unix" or "tcp"; default: tcp on Windows only
LOOPBACK = "127.0.0.1"
MAX_REQUEST_BYTES = 1 << 20  # a hook payload is small; refuse anything huge
DECISIONS = ("allow", "deny", "ask")


class HookAnswer(NamedTuple):  # a NamedTuple: dataclasses costs this process 5 ms
    decision: str  # allow | deny | ask
    reason: str


NO_ANNOUNCER = HookAnswer("ask", "No announcer is running; the agent asks you itself.")
NO_ANSWER = HookAnswer("ask", "No answer from the announcer in time; the agent asks you itself.")


#: Set by the bridge in a blocking payload whose agent has no one at its own dialog
#: (``formats/hooks.py`` reads it under the same name).
UNATTENDED_KEY = "announcer_unattended"


def agent_attended(agent: str, environ: Mapping[str, str] | None = None) -> bool | None:
    """Whether a person sits at the agent's own permission dialog; None when unknown.

    Claude Code tells its hooks in their environment (seen on 2.1.330 in the agent lab):
    ``CLAUDE_CODE_SESSION_ATTENDED`` is 0 and ``CLAUDE_CODE_ENTRYPOINT`` is ``sdk-cli``
    in ``claude -p``, 1 and ``cli`` in the interactive CLI. With no one there, a hook's
    ``ask`` is a denial, not a question the user will see.
    """
    if agent != "claude-code":
        return None
    environ = os.environ if environ is None else environ
    attended = environ.get("CLAUDE_CODE_SESSION_ATTENDED")
    if attended in ("0", "1"):
        return attended == "1"
    entrypoint = environ.get("CLAUDE_CODE_ENTRYPOINT")
    if entrypoint == "sdk-cli":
        return False
    if entrypoint == "cli":
        return True
    return None


def as_told_to(answer: HookAnswer, attended: bool | None) -> HookAnswer:
    """The reason the agent reads, true for how it runs: with no one at its own dialog
    (``claude -p``), "ask" is a denial, so "the agent asks you itself" would be false."""
    if attended is not False or answer.decision != "ask":
        return answer
    if answer is NO_ANNOUNCER:
        return HookAnswer(
            "ask", "No announcer is running and no one is at the prompt, so it is not run."
        )
    return HookAnswer("ask", answer.reason.replace("the agent asks you itself", "so it is not run"))


def untrusted(why: str) -> HookAnswer:
    return HookAnswer(
        "ask", f"The announcer socket is not safe ({why}); the agent asks you itself."
    )


def my_uid() -> int | None:
    """This user's uid; None on Windows, where the per-user folder is the ownership rule."""
    if sys.platform == "win32":
        return None
    return os.getuid()


def channel_form() -> str:
    """``unix`` (a Unix socket) or ``tcp`` (loopback TCP and a secret file): Windows is tcp."""
    if sys.platform == "win32":
        return "tcp"
    return "tcp" if os.environ.get(CHANNEL_ENV, "").lower() == "tcp" else "unix"


def default_socket_path() -> Path:
    """$ANNOUNCER_HOOK_SOCKET, else $XDG_RUNTIME_DIR/announcer/hook.sock, else per-user tmp
    (``hook.endpoint`` instead of ``hook.sock`` for the tcp form)."""
    override = os.environ.get(SOCKET_ENV)
    if override:
        return Path(override)
    name = "hook.endpoint" if channel_form() == "tcp" else "hook.sock"
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime:
        return Path(runtime) / "announcer" / name
    import tempfile  # only here: most users have XDG_RUNTIME_DIR

    uid = my_uid()
    tag = str(uid) if uid is not None else os.environ.get("USERNAME", "user")
    return Path(tempfile.gettempdir()) / f"announcer-{tag}" / name


# -- who is at the other end ------------------------------------------------------

# macOS and the BSDs: getsockopt(SOL_LOCAL=0, LOCAL_PEERCRED=1) gives a struct xucred
# {u_int cr_version; uid_t cr_uid; short cr_ngroups; gid_t cr_groups[16];}.
_SOL_LOCAL = 0
_LOCAL_PEERCRED = getattr(socket, "LOCAL_PEERCRED", 1)
_XUCRED_SIZE = 76


def peer_uid(sock: socket.socket) -> int | None:
    """The uid of the process at the other end of a Unix socket, or None when the OS won't say."""
    if hasattr(socket, "SO_PEERCRED"):  # Linux: struct ucred {pid_t; uid_t; gid_t}
        try:
            raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        except OSError:
            return None
        _pid, uid, _gid = struct.unpack("3i", raw)
        return int(uid)
    if sys.platform == "darwin" or sys.platform.startswith(("freebsd", "openbsd", "netbsd")):
        try:
            raw = sock.getsockopt(_SOL_LOCAL, _LOCAL_PEERCRED, _XUCRED_SIZE)
        except OSError:
            return None
        if len(raw) < 8:
            return None
        _version, uid = struct.unpack_from("Ii", raw)
        return int(uid)
    return None


def directory_problem(path: Path) -> str | None:
    """Why the socket's directory cannot be trusted, or None: it must be ours, 0700, no link."""
    directory = path.parent
    try:
        info = os.lstat(directory)
    except FileNotFoundError:
        return None  # nothing there: nobody listens (the caller's connect says so)
    except OSError as exc:
        return f"cannot inspect {directory}: {exc.strerror}"
    if not stat.S_ISDIR(info.st_mode):
        return f"{directory} is not a plain directory"
    if my_uid() is None:
        return None  # Windows: the folder under the user's profile is the user's own
    if info.st_uid != my_uid():
        return f"{directory} belongs to uid {info.st_uid}"
    if stat.S_IMODE(info.st_mode) & 0o077:
        return f"{directory} has mode {stat.S_IMODE(info.st_mode):o}, not 700"
    return None


def socket_problem(path: Path) -> str | None:
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cannot inspect {path}: {exc.strerror}"
    if channel_form() == "tcp":
        return endpoint_problem(path, info)
    if not stat.S_ISSOCK(info.st_mode):
        return f"{path} is not a socket"
    if info.st_uid != my_uid():
        return f"{path} belongs to uid {info.st_uid}"
    return None


def endpoint_problem(path: Path, info: os.stat_result) -> str | None:
    """The tcp form's endpoint file must be a plain file of ours that no one else can read."""
    if not stat.S_ISREG(info.st_mode):
        return f"{path} is not a plain file"
    if my_uid() is None:
        return None
    if info.st_uid != my_uid():
        return f"{path} belongs to uid {info.st_uid}"
    if stat.S_IMODE(info.st_mode) & 0o077:
        return f"{path} has mode {stat.S_IMODE(info.st_mode):o}, not 600"
    return None


def peer_problem(sock: socket.socket) -> str | None:
    uid = peer_uid(sock)
    if uid is None:
        return "the system does not say who listens on it"
    if uid != my_uid():
        return f"it is served by uid {uid}"
    return None


# -- the tcp form: who knows the secret -----------------------------------------------


def read_endpoint(path: Path) -> tuple[int, bytes] | None:
    """The port and secret in a tcp endpoint file, or None when it is not one."""
    try:
        with open(path, "rb") as handle:
            data = json.loads(handle.read(4096))
        port, secret = data["port"], bytes.fromhex(data["secret"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not isinstance(port, int) or not 0 < port < 65536 or len(secret) < 16:
        return None
    return port, secret


def proof(secret: bytes, role: bytes, nonce: str) -> str:
    """HMAC-SHA256 that ``role`` (b"announcer" or b"hook") knows the secret, over a nonce."""
    import hashlib
    import hmac

    return hmac.new(
        secret, role + b":" + nonce.encode("ascii", "replace"), hashlib.sha256
    ).hexdigest()


def proofs_match(expected: str, given: object) -> bool:
    import hmac

    return isinstance(given, str) and hmac.compare_digest(expected, given)


def read_line(sock: socket.socket, limit: int = MAX_REQUEST_BYTES) -> bytes:
    data = b""
    while not data.endswith(b"\n"):
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
        if len(data) > limit:
            break
    return data


def tcp_connect(path: Path, timeout: float) -> tuple[socket.socket, str | None]:
    """Connect to the announcer named in the endpoint file and check it knows the secret.

    Returns the socket and the proof this hook sends with its request, or raises
    ConnectionRefusedError (nobody there) or PermissionError (someone else there)."""
    endpoint = read_endpoint(path)
    if endpoint is None:
        raise ConnectionRefusedError(f"{path} names no announcer")
    port, secret = endpoint
    import secrets

    sock = socket.create_connection((LOOPBACK, port), timeout=timeout)
    try:
        nonce = secrets.token_hex(16)
        sock.sendall(json.dumps({"bridge": PROTOCOL_VERSION, "hello": nonce}).encode() + b"\n")
        try:
            hello = json.loads(read_line(sock, 4096))
        except (ValueError, RecursionError):
            hello = None
        if not isinstance(hello, dict) or not proofs_match(
            proof(secret, b"announcer", nonce), hello.get("proof")
        ):
            raise PermissionError(f"the listener on port {port} does not know the secret")
        their_nonce = hello.get("nonce")
        if not isinstance(their_nonce, str):
            raise PermissionError(f"the listener on port {port} sent no challenge")
        return sock, proof(secret, b"hook", their_nonce)
    except BaseException:
        sock.close()
        raise


# -- asking -------------------------------------------------------------------------

# A payload travels whole when its request fits the bridge's line (MAX_REQUEST_BYTES):
# a command is judged by all of it, and one cut before its dangerous tail would let a
# single key allow what the user never heard (issue 29). Only a payload too big for the
# line is shrunk, its longest strings first, and every cut is written into the payload
# (CUT_KEY: where, and how long it really was), so the announcer says so and asks for
# two keys.
#: strings are cut to the first of these lengths at which the request fits
FORWARD_LIMITS = (1 << 18, 1 << 16, 1 << 14, 4096, 1024)
MAX_FORWARDED_DEPTH = 32
MAX_FORWARDED_ITEMS = 1000
#: the payload key listing what the hook client cut: ``{"tool_input.command": 20028}``
#: (a string's true length in characters, a list's true number of items)
CUT_KEY = "announcer_cut"


def shrink(
    value: Any, depth: int = 0, *, limit: int = FORWARD_LIMITS[-1], path: str = "",
    cuts: dict[str, int] | None = None,
) -> Any:  # fmt: skip
    """``value`` with strings over ``limit`` characters cut (each cut noted in ``cuts``)."""
    if isinstance(value, str):
        if len(value) <= limit:
            return value
        # Imported here: most strings are short, and this process starts on every hook call.
        from announcer.i18n.text import grapheme_floor  # cut between characters (§11.3.3)

        if cuts is not None:
            cuts[path or "."] = len(value)
        return value[: grapheme_floor(value, limit)] + "…"
    if depth > MAX_FORWARDED_DEPTH:
        if cuts is not None:
            cuts[path or "."] = -1  # too deep to forward at all
        return None
    if isinstance(value, dict):
        return {
            str(k): shrink(
                v, depth + 1, limit=limit, path=f"{path}.{k}" if path else str(k), cuts=cuts
            )
            for k, v in value.items()
        }
    if isinstance(value, list):
        if len(value) > MAX_FORWARDED_ITEMS and cuts is not None:
            cuts[f"{path}[]"] = len(value)
        return [
            shrink(v, depth + 1, limit=limit, path=f"{path}[{i}]", cuts=cuts)
            for i, v in enumerate(value[:MAX_FORWARDED_ITEMS])
        ]
    return value


def forwardable(
    payload: dict[str, Any], room: int = MAX_REQUEST_BYTES - (1 << 16)
) -> dict[str, Any]:
    """The payload as the bridge is sent it: whole when it fits ``room`` bytes of JSON,
    else its strings cut to the first limit that fits, with :data:`CUT_KEY` saying what
    was cut. A producer's own ``CUT_KEY`` is never trusted: only this client writes it."""
    payload = {k: v for k, v in payload.items() if k != CUT_KEY}
    shrunk: dict[str, Any] = payload
    for limit in FORWARD_LIMITS:
        cuts: dict[str, int] = {}
        shrunk = shrink(payload, limit=limit, cuts=cuts)
        if cuts:
            shrunk[CUT_KEY] = cuts
        if len(json.dumps(shrunk)) <= room:
            break
    return shrunk


# -- when the agent started this hook ----------------------------------------------

# Hooks registered with ``"async": true`` run side by side, and a detached hook
# (``--detach``) hands its payload to a background process, so payloads can reach the
# announcer out of order. Each request carries when the agent started its hook process,
# and the announcer puts them back in that order (hook_bridge.SpawnOrder).


def boot_clock() -> float:
    """Seconds on the clock the kernel stamps process start times with (Linux: boot time)."""
    if sys.platform != "win32" and hasattr(time, "CLOCK_BOOTTIME"):
        return time.clock_gettime(time.CLOCK_BOOTTIME)
    return time.monotonic()


def spawned_at() -> float:
    """When this process was started, on :func:`boot_clock`: the kernel's start time
    (``/proc/self/stat``, 10 ms steps), so a hook the agent started first sorts first
    however long each interpreter took to start. Elsewhere: now."""
    if sys.platform == "win32":
        return boot_clock()
    try:
        with open("/proc/self/stat", "rb") as stat_file:
            raw = stat_file.read()
        fields = raw[raw.rindex(b")") + 2 :].split()
        return int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22: starttime, in ticks
    except (OSError, ValueError, IndexError):
        return boot_clock()


def ask_announcer(
    payload: dict[str, Any],
    *,
    blocking: bool,
    timeout: float,
    path: Path | None = None,
    agent: str = "claude-code",
    spawned: tuple[float, int] | None = None,
) -> HookAnswer | None:
    """Send one hook payload; for a blocking one wait up to ``timeout`` seconds for the decision.

    Returns None for a non-blocking send. Every failure or doubt is ``ask`` (never allow),
    and on doubt about who listens the payload is not sent at all. ``spawned`` is when
    and as which pid the agent started the hook, for hooks the agent does not wait for
    (the announcer puts those back in order); without it the request goes on as it arrives.
    """
    path = path or default_socket_path()
    problem = directory_problem(path) or socket_problem(path)
    if problem is not None:
        _warn(problem)
        return untrusted(problem) if blocking else None
    request = {
        "bridge": PROTOCOL_VERSION,
        "agent": agent,
        "payload": forwardable(payload),
        "blocking": blocking,
        "timeout": timeout,
    }
    if spawned is not None:
        request["spawned"] = list(spawned)
    attended = agent_attended(agent)
    if attended is not None:
        request["attended"] = attended
    data = b""
    try:
        with _connect(path, min(timeout, 5.0), request) as sock:
            problem = peer_problem(sock) if channel_form() == "unix" else None
            if problem is not None:
                _warn(problem)
                return untrusted(problem) if blocking else None
            sock.sendall(json.dumps(request).encode("utf-8") + b"\n")
            if not blocking:
                return None
            sock.settimeout(timeout)
            while not data.endswith(b"\n"):
                chunk = sock.recv(65536)
                if not chunk:
                    break
                data += chunk
                if len(data) > MAX_REQUEST_BYTES:
                    return NO_ANSWER
    except (FileNotFoundError, ConnectionRefusedError):
        return NO_ANNOUNCER if blocking else None
    except PermissionError as exc:  # a tcp listener that does not know the secret
        _warn(str(exc))
        return untrusted(str(exc)) if blocking else None
    except TimeoutError:
        return NO_ANSWER if blocking else None
    except OSError:
        return NO_ANNOUNCER if blocking else None
    try:
        reply = json.loads(data)
    except (ValueError, RecursionError):
        return NO_ANSWER
    decision = reply.get("decision") if isinstance(reply, dict) else None
    reason = reply.get("reason") if isinstance(reply, dict) else None
    if decision not in DECISIONS:
        return NO_ANSWER
    return HookAnswer(str(decision), str(reason) if isinstance(reason, str) else "")


def _connect(path: Path, timeout: float, request: dict[str, Any]) -> socket.socket:
    """A connected socket to the announcer; the tcp form adds this hook's proof to ``request``."""
    if sys.platform == "win32" or channel_form() == "tcp":
        sock, hook_proof = tcp_connect(path, timeout)
        request["proof"] = hook_proof
        return sock
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        sock.connect(str(path))
    except BaseException:
        sock.close()
        raise
    return sock


def _warn(problem: str) -> None:
    print(f"announcer hook: not asking the announcer: {problem}", file=sys.stderr)


# -- what the hook prints -----------------------------------------------------------


def is_blocking(payload: dict[str, Any], agent: str = "claude-code") -> bool:
    """Whether this hook waits for the user: the agent file's ``[cli.hooks] blocking``
    (Codex's PreToolUse cannot answer "ask", so for Codex only PermissionRequest blocks;
    silence there leaves Codex's own approval prompt in charge)."""
    known = hook_agents().get(agent)
    return known is not None and payload.get("hook_event_name") in known.blocking


def claude_code_hook_output(hook_event_name: str, decision: str, reason: str) -> dict[str, Any]:
    """Claude Code's hook output JSON for a decision.

    PreToolUse: ``hookSpecificOutput.permissionDecision`` allow | deny | ask with
    ``permissionDecisionReason``. PermissionRequest: ``hookSpecificOutput.decision``
    with ``behavior`` allow | deny and a ``message``; it has no "ask", so "ask" is
    an output without a decision and Claude Code shows its own permission dialog.
    """
    if hook_event_name == "PermissionRequest":
        if decision not in ("allow", "deny"):
            return {"hookSpecificOutput": {"hookEventName": "PermissionRequest"}}
        inner: dict[str, Any] = {"behavior": decision}
        if decision == "deny":
            inner["message"] = reason
        return {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": inner}}
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": decision if decision in DECISIONS else "ask",
            "permissionDecisionReason": reason,
        }
    }


def hook_output(
    agent: str, hook_event_name: str, decision: str, reason: str
) -> dict[str, Any] | None:
    """The hook's stdout for a decision, or None when it must print nothing.

    Codex: PermissionRequest takes ``decision.behavior`` allow | deny like Claude
    Code; with no decision ("ask") the hook stays quiet and Codex asks itself.
    """
    if agent == "codex" and (decision == "ask" or hook_event_name != "PermissionRequest"):
        return None
    return claude_code_hook_output(hook_event_name, decision, reason)


def read_payload(raw: bytes) -> dict[str, Any] | None:
    """The hook payload, or None when it is not a JSON object we can read (any depth, any bytes)."""
    try:
        payload = json.loads(raw)
    except (ValueError, RecursionError):  # RecursionError: nested deeper than Python recurses
        return None
    return payload if isinstance(payload, dict) else None


def detach() -> bool:
    """Go on in a background process of its own and let the agent's process end now.

    True in the background process (it carries on), False where forking is not possible
    (it carries on in the foreground); the agent's process exits here. The background
    process leaves the agent's process group and closes the agent's pipes, so neither
    the agent's wait nor its clean-up at exit (Claude Code ends hooks registered with
    ``"async": true`` that still run when ``claude -p`` ends) cuts an announcement off.
    """
    if sys.platform == "win32" or not hasattr(os, "fork"):
        return False
    try:
        child = os.fork()
    except OSError:
        return False
    if child:
        os._exit(0)  # the agent sees the hook end at once; nothing to print
    os.setsid()
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)
    return True


def run_hook(agent: str, *, timeout: float, path: Path | None, background: bool = False) -> int:
    """The whole hook command: payload on stdin, decision on stdout, exit status 0 always.

    ``background`` (``--detach``): an announce-only event is sent from a detached
    process, so the agent never waits for the socket. A blocking one never detaches.
    """
    payload = read_payload(sys.stdin.buffer.read())
    if payload is None:
        # Without a payload we cannot tell which hook this is; no decision lets the
        # agent carry on with its own permission rules.
        print("announcer hook: the hook payload on stdin is not a JSON object", file=sys.stderr)
        if agent == "claude-code":
            print("{}")
        return 0
    event = str(payload.get("hook_event_name", ""))
    blocking = is_blocking(payload, agent)
    # A hook the agent waits for arrives in order; a question or a detached hook carries
    # when the agent started it (taken before a detach: the agent's own start order).
    spawned = (spawned_at(), os.getpid()) if blocking or background else None
    if background and not blocking:
        target = path or default_socket_path()
        problem = directory_problem(target) or socket_problem(target)
        if problem is not None:  # said here, while the agent still reads stderr
            _warn(problem)
            return 0
        if not target.exists():
            return 0  # no announcer runs: nothing to hand over
        detach()
    try:
        answer = ask_announcer(
            payload,
            blocking=blocking,
            timeout=max(1.0, timeout),
            path=path,
            agent=agent,
            spawned=spawned,
        )
    except Exception as exc:  # never a traceback, never a missing answer
        print(f"announcer hook: {type(exc).__name__}: {exc}", file=sys.stderr)
        answer = NO_ANSWER
    if not blocking:
        return 0
    if answer is None or answer.decision not in DECISIONS:
        answer = NO_ANSWER
    answer = as_told_to(answer, agent_attended(agent))
    output = hook_output(agent, event, answer.decision, answer.reason)
    if output is not None:
        print(json.dumps(output))
    return 0
