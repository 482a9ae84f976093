"""The agent files (announcer/agents/*.toml) are the one list of agents: read, validated, used.

Every place that names agents reads the files through announcer.agents (the hook process
through its standard-library reader); tests/agents/test_catalogue_names.py fails when a
name has no file or no code, or a module keeps a list of its own.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from announcer.agents.catalogue import (
    DEFAULT_AGENT,
    AgentFileError,
    agent_files,
    find_preset,
    load_presets,
    parse_agent_file,
    preset_for_command,
    presets,
)
from announcer.cli.commands import agent as agent_command
from announcer.cli.main import COMMANDS
from tests.lab.clis import PINNED
from tests.support.speech_record import spoken_in

ROOT = Path(__file__).resolve().parents[2]
#: the presets the issue asks for; each has a file and nothing else has one
WANTED = {
    "claude",
    "codex",
    "gemini",
    "goose",
    "opencode",
    "qwen",
    "cline",
    "copilot",
    "kimi",
    "vibe",
}

GOOD = """
id = "demo"
title = "Demo"
homepage = "https://example.invalid"
command = ["demo-acp"]
default_behaviour = "asks"
[package]
registry = "npm"
name = "demo-acp"
version = "1.2.3"
install = "npm install -g demo-acp@1.2.3"
[ask]
says = "asks"
"""


def test_every_wanted_preset_has_a_file_and_every_file_is_a_wanted_preset() -> None:
    assert set(presets()) == WANTED
    folder = ROOT / "announcer" / "agents"
    assert {p.stem for p in folder.glob("*.toml")} == WANTED
    assert next(iter(presets())) == DEFAULT_AGENT


def test_each_file_pins_one_exact_version_and_installs_that_version() -> None:
    for preset in presets().values():
        assert re.fullmatch(r"\d+\.\d+\.\d+", preset.package.version), preset.id
        assert preset.package.version in preset.install, preset.id
        if preset.package.registry == "npm":
            assert preset.install == (
                f"npm install -g {preset.package.name}@{preset.package.version}"
            )


def test_the_current_adapters_and_acp_flags_are_the_ones_started() -> None:
    by_id = presets()
    assert by_id["claude"].package.name == "@agentclientprotocol/claude-agent-acp"
    assert by_id["claude"].command == ("claude-agent-acp",)
    assert by_id["codex"].package.name == "@agentclientprotocol/codex-acp"
    assert by_id["gemini"].command == ("gemini", "--acp")
    assert "--experimental-acp" not in by_id["gemini"].launch_command()
    assert by_id["goose"].command == ("goose", "acp")
    assert by_id["opencode"].command == ("opencode", "acp")
    assert by_id["qwen"].command == ("qwen", "--acp")
    assert by_id["cline"].command == ("cline", "--acp")
    assert by_id["copilot"].command == ("copilot", "--acp")
    assert by_id["kimi"].command == ("kimi", "acp")
    assert by_id["vibe"].command == ("vibe-acp",)
    for preset in by_id.values():
        assert "zed-industries" not in preset.install


def test_the_asking_settings_are_applied_at_launch() -> None:
    codex = presets()["codex"]
    env = codex.launch_env({"PATH": "/bin"})
    assert env == {"PATH": "/bin", "INITIAL_AGENT_MODE": "read-only"}
    qwen = presets()["qwen"]
    assert qwen.launch_command("/opt/qwen") == [
        "/opt/qwen",
        "--acp",
        "--approval-mode",
        "default",
        "--screen-reader",
    ]
    # nothing to add for asking; its quiet mode (issue 33, item 6) only when unset
    assert presets()["claude"].launch_env({"CLAUDE_AX_SCREEN_READER": "0"}) is None
    assert dict(presets()["claude"].ask.config) == {"mode": "default"}


def test_a_command_line_is_known_by_its_presets_program_and_acp_words() -> None:
    assert preset_for_command(["codex-acp"]) is presets()["codex"]
    assert preset_for_command(["/opt/lab/node_modules/.bin/codex-acp"]) is presets()["codex"]
    assert preset_for_command(["C:/npm/codex-acp.cmd"]) is presets()["codex"]
    assert preset_for_command(["gemini", "--acp", "--debug"]) is presets()["gemini"]
    assert preset_for_command(["gemini"]) is None  # not its ACP mode
    assert preset_for_command(["my-agent", "--acp"]) is None
    assert preset_for_command([]) is None


def test_a_presets_program_started_as_a_command_asks_as_the_preset_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``announcer agent -- codex-acp`` is the Codex preset's agent: started as a command,
    codex-acp 2.6.0 ran in Auto review (seen in the lab), so it gets the preset's asking
    settings; a command line or environment that picks its own mode keeps it."""
    monkeypatch.delenv("INITIAL_AGENT_MODE", raising=False)
    codex = agent_command.command_to_start(["/opt/bin/codex-acp"])
    assert codex.command == ["/opt/bin/codex-acp"] and codex.label == "codex-acp"
    assert codex.env is not None and codex.env["INITIAL_AGENT_MODE"] == "read-only"
    assert codex.start_settings() == {"mode": "read-only"}
    qwen = agent_command.command_to_start(["qwen", "--acp"])
    assert qwen.command == ["qwen", "--acp", "--approval-mode", "default", "--screen-reader"]
    own = agent_command.command_to_start(["qwen", "--acp", "--approval-mode=yolo"])
    assert own.command == ["qwen", "--acp", "--approval-mode=yolo"] and not own.start_settings()
    remote = agent_command.command_to_start(["codex-acp"], host="devbox")
    assert remote.command[-1] == "env INITIAL_AGENT_MODE=read-only codex-acp"
    assert remote.start_settings() == {"mode": "read-only"}
    other = agent_command.command_to_start(["my-agent", "serve"])
    assert other.command == ["my-agent", "serve"] and other.env is None
    assert not other.start_settings()
    monkeypatch.setenv("INITIAL_AGENT_MODE", "agent")  # the user's own choice
    chosen = agent_command.command_to_start(["codex-acp"])
    assert chosen.env is None and not chosen.start_settings()


def test_aliases_find_their_preset_in_any_case() -> None:
    assert find_preset("Claude-Code") is presets()["claude"]
    assert find_preset("claude_code") is presets()["claude"]
    assert find_preset("gemini_cli") is presets()["gemini"]
    assert find_preset("nobody") is None


@pytest.mark.parametrize(
    ("change", "where"),
    [
        (('version = "1.2.3"', 'version = "^1.2"'), "package.version"),
        (('version = "1.2.3"', 'version = "latest"'), "package.version"),
        (('registry = "npm"', 'registry = "brew"'), "package.registry"),
        (('command = ["demo-acp"]', "command = []"), "command"),
        (('title = "Demo"', 'title = "Demo"\nspeed = 3'), "speed"),
        (('says = "asks"', ""), "ask.says"),
        (('id = "demo"', 'id = "other"'), "id"),
        (("demo-acp@1.2.3", "demo-acp"), "package.install"),
    ],
)
def test_a_bad_file_is_refused_naming_the_file_and_the_field(
    change: tuple[str, str], where: str
) -> None:
    text = GOOD.replace(*change)
    with pytest.raises(AgentFileError) as caught:
        parse_agent_file(text, "announcer/agents/demo.toml")
    message = str(caught.value)
    assert message.startswith(f"announcer/agents/demo.toml: {where}:"), message


def test_not_toml_is_refused_naming_the_file() -> None:
    with pytest.raises(AgentFileError, match=r"^x/demo.toml: not valid TOML"):
        parse_agent_file("id = ", "x/demo.toml")


def test_two_files_cannot_claim_one_name() -> None:
    other = GOOD.replace('id = "demo"', 'id = "twin"\naliases = ["DEMO"]')
    with pytest.raises(AgentFileError, match=r"twin.toml: aliases: 'DEMO' is already demo's"):
        load_presets({"a/demo.toml": GOOD, "a/twin.toml": other})


def test_the_packaged_files_are_the_folder() -> None:
    assert {Path(name).stem for name in agent_files()} == WANTED


# -- every place that names agents agrees with the files ---------------------------------------


def test_the_lab_runs_the_versions_the_presets_install() -> None:
    for preset in presets().values():
        if preset.package.name in PINNED:
            assert PINNED[preset.package.name] == preset.package.version, preset.id


def test_help_names_no_agent_list_of_its_own() -> None:
    assert COMMANDS["agent"][1] == agent_command.HELP


def test_docs_list_every_preset_with_its_install_line() -> None:
    text = (ROOT / "docs" / "agents.md").read_text(encoding="utf-8")
    for preset in presets().values():
        rows = [line.replace("\\|", "|") for line in text.splitlines()]  # a table's escaped |
        row = next((line for line in rows if line.startswith(f"| `{preset.id}`")), "")
        assert row, f"docs/agents.md has no row for {preset.id}"
        assert f"`{preset.install}`" in row, preset.id
        assert f"`{shlex.join(preset.launch_command())}`" in row, preset.id
    assert "zed-industries" not in text


# -- what the user reads and hears ---------------------------------------------------------


def _lines(done: subprocess.CompletedProcess[str]) -> list[str]:
    """Both streams: under the plain UI the speech record goes to standard error."""
    return (done.stdout + "\n" + done.stderr).splitlines()


def _announcer(tmp_path: Path, *words: str, path: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "announcer", "agent", *words],
        cwd=ROOT,
        env={
            "PATH": path,
            "PYTHONPATH": str(ROOT),
            "HOME": str(tmp_path),
            "ANNOUNCER_CONFIG": str(tmp_path / "none.toml"),
        },
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_list_says_which_presets_are_installed_and_how_to_install_the_others(
    tmp_path: Path,
) -> None:
    fake = tmp_path / "bin" / "qwen"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    done = _announcer(tmp_path, "--list", path=str(fake.parent))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == len(WANTED)
    by_id = {line.split(" ", 1)[0]: line for line in lines}
    assert set(by_id) == WANTED
    assert f"installed: {fake}" in by_id["qwen"]
    assert "qwen --acp --approval-mode default" in by_id["qwen"]
    for name in WANTED - {"qwen"}:
        assert f"not installed; install it with: {presets()[name].install}." in by_id[name]


def test_a_missing_preset_is_said_aloud_with_its_install_command(tmp_path: Path) -> None:
    done = _announcer(tmp_path, "opencode", "--speech", "jsonl", "--ui", "plain", path="")
    assert done.returncode == 2
    assert "Install it with: npm install -g opencode-ai@1.18.33" in done.stderr
    said = [json.loads(line) for line in _lines(done) if line.startswith("{")]
    assert spoken_in(said) == [
        "OpenCode is not installed. Install it with: npm install -g opencode-ai@1.18.33"
    ]


def test_the_missing_preset_is_said_in_the_users_language(tmp_path: Path) -> None:
    done = _announcer(
        tmp_path, "kimi", "--speech", "jsonl", "--ui", "plain", "--language", "de", path=""
    )
    said = [json.loads(line) for line in _lines(done) if line.startswith("{")]
    assert spoken_in(said) == [
        "Kimi Code ist nicht installiert. Installieren Sie es mit: "
        "npm install -g @moonshot-ai/kimi-code@2.1.0"
    ]


def test_the_readme_names_every_preset_where_it_names_agents() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| `agent [NAME"))
    for preset in presets().values():
        assert preset.title in row, preset.title


def test_each_preset_tells_the_transport_what_to_set_once_its_session_is_open() -> None:
    from announcer.cli.acp_agents import resolve_agent

    wanted = {
        "claude": {"mode": "default"},
        "codex": {"mode": "read-only"},
        "cline": {"auto_approve": False},
        "qwen": {},  # its argument already starts it asking
    }
    for name, settings in wanted.items():
        agent = resolve_agent(name, None, host="devbox")  # over ssh: no local install needed
        assert not isinstance(agent, str)
        assert agent.start_settings() == settings, name


QUIET_CHILD = (
    "import json, os, sys\nprint(json.dumps({'argv': sys.argv[1:], 'env': dict(os.environ)}))\n"
)


@pytest.mark.parametrize(
    ("name", "program", "flag", "variable"),
    [
        ("gemini", "gemini", "--screen-reader", None),
        ("qwen", "qwen", "--screen-reader", None),
        ("copilot", "copilot", "--screen-reader", None),
        ("claude", "claude-agent-acp", None, "CLAUDE_AX_SCREEN_READER"),
    ],
)
def test_a_presets_quiet_mode_reaches_the_started_agent(
    name: str, program: str, flag: str | None, variable: str | None, tmp_path: Path, monkeypatch
) -> None:
    """Issue 33, item 6: the agent file's ``[quiet]`` flag or variable is on the command line
    and in the environment of the real process ``announcer agent NAME`` starts (a stand-in
    that prints both: in ACP mode the CLIs' screen-reader modes show nothing to observe)."""
    from announcer.cli.acp_agents import AgentToStart, resolve_agent

    stand_in = tmp_path / program
    stand_in.write_text(f"#!{sys.executable}\n{QUIET_CHILD}")
    stand_in.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("CLAUDE_AX_SCREEN_READER", raising=False)
    agent = resolve_agent(name, None)
    assert isinstance(agent, AgentToStart)
    done = subprocess.run(
        agent.command, env=agent.env, capture_output=True, text=True, timeout=60, check=True
    )
    seen = json.loads(done.stdout)
    if flag is not None:
        assert seen["argv"].count(flag) == 1
    if variable is not None:
        assert seen["env"][variable] == "1"
    # the user's own value wins: an opt-out stays an opt-out
    if variable is not None:
        monkeypatch.setenv(variable, "0")
        kept = resolve_agent(name, None)
        assert isinstance(kept, AgentToStart)
        assert (kept.env or {}).get(variable, "0") == "0"


def test_quiet_modes_are_data_in_the_agent_files() -> None:
    """watch reads the same ``[quiet]`` table: a new agent file with one needs no code."""
    from announcer.cli.commands.watch import quiet_mode_env

    claude = presets()["claude"]
    assert claude.quiet is not None and claude.quiet.env == {"CLAUDE_AX_SCREEN_READER": "1"}
    env, told = quiet_mode_env("claude-code", {})
    assert env == claude.quiet.env and told and claude.title in told
    gemini = presets()["gemini"]
    assert gemini.quiet is not None and gemini.quiet.args == ("--screen-reader",)
    # watch never rewrites the user's command, so a flag-only mode adds nothing there
    assert quiet_mode_env("gemini", {"PATH": "/bin"}) == ({"PATH": "/bin"}, None)
