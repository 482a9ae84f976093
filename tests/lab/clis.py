"""Install and launch the real agent CLIs (pinned npm versions) against the fake model.

- :func:`ensure_clis` installs the pinned ``@anthropic-ai/claude-code`` and ``@openai/codex``
  with npm into an ignored cache folder (``.cache/agent-lab`` in the checkout, or
  ``$ANNOUNCER_LAB_DIR``) on first use, and returns where their commands are.
- :func:`claude_env` / :func:`codex_env` give the environment (and, for Codex, the
  ``config.toml``) that points a CLI at a :class:`~tests.lab.fake_model.FakeModelServer`,
  with a scratch ``HOME`` and no traffic anywhere else.
- :func:`claude_command` / :func:`codex_command` build the usual stream-json command lines.

``python -m tests.lab.clis install`` installs them (``scripts/bootstrap.sh test`` calls it).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: the versions the lab's expectations were reviewed against; change them together
PINNED = {"@anthropic-ai/claude-code": "2.1.330", "@openai/codex": "0.169.0"}
INSTALL_TIMEOUT = 900.0


class LabUnavailable(RuntimeError):
    """node, npm or the pinned CLIs cannot be had on this machine."""


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


def lab_dir() -> Path:
    return Path(os.environ.get("ANNOUNCER_LAB_DIR") or ROOT / ".cache" / "agent-lab")


def _installed(folder: Path) -> bool:
    for package, version in PINNED.items():
        manifest = folder / "node_modules" / package / "package.json"
        try:
            if json.loads(manifest.read_text()).get("version") != version:
                return False
        except (OSError, ValueError):
            return False
    return all((folder / "node_modules" / ".bin" / n).exists() for n in ("claude", "codex"))


def ensure_clis(*, install: bool = True) -> Clis:
    """The pinned CLIs, installed on first use; :class:`LabUnavailable` says why not."""
    folder = lab_dir()
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        raise LabUnavailable("node and npm are not installed (scripts/bootstrap.sh test adds them)")
    if not _installed(folder):
        if not install:
            raise LabUnavailable(f"the pinned agent CLIs are not installed in {folder}")
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "package.json").write_text(
            json.dumps({"name": "announcer-agent-lab", "private": True}) + "\n"
        )
        specs = [f"{package}@{version}" for package, version in PINNED.items()]
        flags = ["--no-audit", "--no-fund", "--save-exact", "--loglevel=error"]
        try:
            done = subprocess.run(
                [npm, "install", "--prefix", str(folder), *flags, *specs],
                capture_output=True,
                text=True,
                timeout=INSTALL_TIMEOUT,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            raise LabUnavailable(f"npm install took over {INSTALL_TIMEOUT:.0f} s") from exc
        if done.returncode != 0 or not _installed(folder):
            tail = (done.stderr or done.stdout).strip().splitlines()[-5:]
            raise LabUnavailable("npm install of the agent CLIs failed: " + " | ".join(tail))
    bin_dir = folder / "node_modules" / ".bin"
    return Clis(folder, bin_dir / "claude", bin_dir / "codex", Path(node))


def _quiet_base(home: Path) -> dict[str, str]:
    """A scratch HOME and nothing inherited that could reach a real account or service."""
    keep = {
        k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "TERM", "TMPDIR")
    }
    home.mkdir(parents=True, exist_ok=True)
    return {
        **keep,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "NO_COLOR": "1",
        "NPM_CONFIG_UPDATE_NOTIFIER": "false",
        "CI": os.environ.get("CI", ""),
    }


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
    if not _installed(lab_dir()) and shutil.which("npm"):
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
