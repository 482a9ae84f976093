"""The ACP agent registry read and chosen from, sans-I/O (issue 33, item 1)."""

from __future__ import annotations

import json
import time

import pytest

from announcer.formats.acp import AcpAdapter
from announcer.formats.acp_registry import (
    Launch,
    Refusal,
    RegistryError,
    choose_launch,
    parse_registry,
    platform_key,
)
from announcer.formats.acp_settings import asks_first
from tests.support.acp_registry import QUARANTINE, snapshot

SHA = "ab" * 32


def _registry(**options: object):  # type: ignore[no-untyped-def]
    return parse_registry(json.dumps(snapshot(**options)), "registry.json", json.dumps(QUARANTINE))  # type: ignore[arg-type]


def _which(*found: str):  # type: ignore[no-untyped-def]
    return lambda program: f"/usr/bin/{program}" if program in found else None


def test_every_good_entry_is_read_and_the_malformed_one_is_said_with_its_field_and_rule() -> None:
    registry = _registry()
    assert list(registry.agents) == [
        "scripted",
        "uv-agent",
        "bin-agent",
        "both-agent",
        "held-agent",
    ]
    assert registry.problems == (
        "registry.json: agents[4] ('broken'): version: must be a version such as 1.2.3, "
        "not 'latest'",
    )
    assert registry.quarantine == {"held-agent": "crashes on start"}
    assert registry.find("Scripted").name == "Scripted Agent"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("entry", "said"),
    [
        ({"distribution": {}}, "distribution: must give npx, uvx or binary"),
        ({"distribution": {"pip": {"package": "x"}}}, "distribution.pip: Extra inputs"),
        ({"distribution": {"npx": {"package": ""}}}, "distribution.npx.package: String should"),
        ({"distribution": {"npx": {"package": "--eval=x"}}},
         "distribution.npx.package: must be one"),
        ({"id": "Bad Id"}, "id: must be lower-case"),
        ({"distribution": {"binary": {"plan9-mips": {"archive": "https://a/b", "cmd": "x"}}}},
         "distribution.binary: unknown platform 'plan9-mips'"),
        ({"distribution": {"binary": {"linux-x86_64": {"archive": "https://a/b", "cmd": "x",
                                                        "sha256": "12"}}}},
         "distribution.binary.linux-x86_64.sha256: must be 64 hexadecimal digits"),
        ({"distribution": {"binary": {"linux-x86_64": {"archive": "file:///etc/passwd",
                                                        "cmd": "x"}}}},
         "distribution.binary.linux-x86_64.archive: must be an http(s) address"),
    ],
)  # fmt: skip
def test_a_malformed_entry_names_the_field_and_the_rule(
    entry: dict[str, object], said: str
) -> None:
    good = {"id": "one", "name": "One", "version": "1.0.0", "description": "d",
            "distribution": {"npx": {"package": "one"}}}  # fmt: skip
    registry = parse_registry(json.dumps({"agents": [good, {**good, **entry}]}), "r.json")
    assert list(registry.agents) == ["one"] or "id" in entry
    assert len(registry.problems) == 1
    assert said in registry.problems[0], registry.problems


def test_a_registry_that_cannot_be_read_at_all_says_where_and_why() -> None:
    with pytest.raises(RegistryError, match=r"^r\.json: not valid JSON"):
        parse_registry("{", "r.json")
    with pytest.raises(RegistryError, match=r"^r\.json: agents: must be a list"):
        parse_registry('{"agents": {}}', "r.json")
    one = parse_registry(json.dumps(snapshot()["agents"][0]), "agent.json")
    assert list(one.agents) == ["scripted"]  # one agent.json is a registry of one


def test_a_program_already_on_path_is_preferred_with_the_registry_arguments_and_env() -> None:
    agent = _registry().agents["scripted"]
    chosen = choose_launch(agent, platform="linux-x86_64", which=_which("scripted-agent", "npx"))
    assert isinstance(chosen, Launch)
    assert (chosen.how, chosen.command) == ("path", ("/usr/bin/scripted-agent", "--modes"))
    assert chosen.env == {"REGISTRY_ENV_CHECK": "from-registry"}


def test_npx_then_uvx_as_the_registry_says() -> None:
    registry = _registry()
    npx = choose_launch(registry.agents["scripted"], platform="linux-x86_64", which=_which("npx"))
    assert isinstance(npx, Launch)
    assert npx.command == ("/usr/bin/npx", "--yes", "@lab/scripted-agent@1.0.0", "--modes")
    uvx = choose_launch(registry.agents["uv-agent"], platform="linux-x86_64", which=_which("uvx"))
    assert isinstance(uvx, Launch)
    assert uvx.command == ("/usr/bin/uvx", "uv-agent==0.3.1", "acp")
    both = registry.agents["both-agent"]
    only_uvx = choose_launch(both, platform="linux-x86_64", which=_which("uvx"))
    assert isinstance(only_uvx, Launch) and only_uvx.how == "uvx"
    none = choose_launch(both, platform="linux-x86_64", which=_which())
    assert isinstance(none, Refusal) and none.reason == "no_runner"


def test_an_archive_is_never_chosen_unless_asked_and_then_only_with_a_sha256() -> None:
    unsigned = _registry().agents["bin-agent"]
    signed = _registry(archive_sha256=SHA.upper()).agents["bin-agent"]
    here = "linux-x86_64"
    assert choose_launch(signed, platform=here, which=_which("npx", "uvx")) == Refusal(
        signed, "download", "https://example.invalid/bin-agent-2.0.0.tar.gz"
    )
    refused = choose_launch(unsigned, platform=here, which=_which(), download=True)
    assert isinstance(refused, Refusal) and refused.reason == "no_sha256"
    asked = choose_launch(signed, platform=here, which=_which(), download=True)
    assert isinstance(asked, Launch) and asked.how == "download"
    assert asked.archive is not None and asked.archive.sha256 == SHA  # compared in lower case
    assert asked.command == ("./bin/bin-agent", "acp")
    on_path = choose_launch(signed, platform=here, which=_which("bin-agent"), download=True)
    assert isinstance(on_path, Launch) and on_path.command == ("/usr/bin/bin-agent", "acp")
    elsewhere = choose_launch(signed, platform="windows-x86_64", which=_which(), download=True)
    assert isinstance(elsewhere, Refusal) and elsewhere.reason == "no_runner"


def test_a_quarantined_agent_is_refused_with_the_registry_reason() -> None:
    registry = _registry()
    held = choose_launch(
        registry.agents["held-agent"],
        platform="linux-x86_64",
        which=_which("npx"),
        quarantine=registry.quarantine,
    )
    assert held == Refusal(registry.agents["held-agent"], "quarantined", "crashes on start")


def test_quarantine_shapes_and_platform_names() -> None:
    text = json.dumps(snapshot()["agents"][:1])
    for held in ('["scripted"]', '{"agents": [{"id": "scripted", "reason": "x"}]}'):
        registry = parse_registry(f'{{"agents": {text}}}', "r", held)
        assert "scripted" in registry.quarantine
    assert parse_registry(f'{{"agents": {text}}}', "r", "[1]").problems == (
        "r quarantine: id: 1 is not an agent id",
    )
    assert platform_key("Linux", "x86_64") == "linux-x86_64"
    assert platform_key("Darwin", "arm64") == "darwin-aarch64"
    assert platform_key("Windows", "AMD64") == "windows-x86_64"


@pytest.mark.parametrize(
    ("mode_id", "name", "asks"),
    [
        ("ask", "Ask before edits", True),
        ("default", "Default", True),
        ("plan", "Plan", True),
        ("read-only", "Read only", True),
        ("auto", "Auto review", False),
        ("acceptEdits", "Accept edits", False),
        ("bypassPermissions", "Bypass permissions", False),
        ("full-access", "Full access", False),
        ("yolo", "YOLO", False),
    ],
)
def test_modes_that_ask_first(mode_id: str, name: str, asks: bool) -> None:
    assert asks_first(mode_id, name) is asks


def test_the_no_preset_sentence_names_the_modes_and_those_that_ask_first() -> None:
    adapter = AcpAdapter(agent_name="Foo", agent_id="foo")
    now = time.time()
    adapter.session_opened("s1", "/tmp", now)
    modes = {
        "currentModeId": "auto",
        "availableModes": [
            {"id": "ask", "name": "Ask before edits"},
            {"id": "auto", "name": "Auto review"},
        ],
    }
    adapter.settings_known("s1", modes, [], now)
    (event,) = adapter.no_preset_said("s1", "Foo", now).events
    assert event["summary_normal"] == (
        "No preset for Foo: it may act without asking. Its modes are Ask before edits, "
        "Auto review; :mode changes it. Modes that ask first: Ask before edits."
    )
    bare = AcpAdapter(agent_name="Bar", agent_id="bar")
    bare.session_opened("s2", "/tmp", now)
    (said,) = bare.no_preset_said("s2", "Bar", now).events
    assert said["summary_normal"] == (
        "No preset for Bar: it may act without asking. It offers no modes to choose from."
    )


def test_the_registry_words_are_printed_literally_never_as_terminal_controls() -> None:
    entry = snapshot()["agents"][0]
    hostile = {**entry, "name": "Evil\x1b[2J\x1b]0;owned\x07 Agent", "description": "a\nb\u202ec"}
    registry = parse_registry(
        json.dumps({"agents": [hostile]}), "r.json", '{"scripted": "x\\u001b[31m"}'
    )
    agent = registry.agents["scripted"]
    assert "\x1b" not in agent.name and "\n" not in agent.description
    assert "\u202e" not in agent.description
    assert "\x1b" not in registry.quarantine["scripted"]
    bad = parse_registry(json.dumps({"agents": [{**entry, "version": "1.0.0\x1b[2J"}]}), "r.json")
    assert bad.agents == {} and "version: must be a version" in bad.problems[0]
