"""One agent list (issue 32, step 4): every name has its agent file and its code, and no
module keeps a list of agents of its own.

A new agent CLI stream is its adapter in announcer/formats/cli_streams/ plus its agent
file's ``[cli]`` table; a new hook agent is its mapping file plus ``[cli.hooks]``. These
tests fail when one half is missing, and when a module outside announcer/agents/ names
two agents in one literal list, set, tuple or dict (a hand-kept mirror of the files).
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from announcer.agents.catalogue import (
    AgentFileError,
    find_preset,
    hook_presets,
    load_presets,
    parse_agent_file,
    presets,
    stream_presets,
)
from announcer.agents.files import hook_agents
from announcer.formats import FORMAT_NAMES, get_adapter
from announcer.formats.cli_streams import CLI_STREAMS
from announcer.formats.detect import format_of_command, format_of_line
from announcer.formats.mapping import builtin_mapping, builtin_mappings
from tests.shared_data import SHARED

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "announcer"
CLI_STREAM_FIXTURES = SHARED / "peers" / "agent-cli-streams"


def test_every_cli_stream_adapter_has_an_agent_file_and_every_file_stream_an_adapter() -> None:
    files = set(stream_presets())
    adapters = set(CLI_STREAMS)
    assert adapters - files == set(), "a stream adapter with no agent file's [cli] table"
    assert files - adapters == set(), "an agent file's [cli] stream with no adapter"
    for stream in files:
        assert stream in FORMAT_NAMES, stream


def test_every_hook_agent_has_its_mapping_and_format_and_every_mapping_an_agent_file() -> None:
    files = set(hook_presets())
    assert set(builtin_mappings()) == files
    assert {name.removesuffix("-hooks") for name in FORMAT_NAMES if name.endswith("-hooks")} == (
        files
    )
    for name, preset in hook_presets().items():
        assert find_preset(name) is preset  # the hook's name is one of the agent's names
        assert builtin_mapping(name).display_name == preset.title


def test_the_hook_process_reads_the_same_hooks_as_the_catalogue() -> None:
    """The hook process reads the files without pydantic; both readings must agree."""
    lean = hook_agents()
    assert list(lean) == list(hook_presets())
    for name, preset in hook_presets().items():
        assert preset.cli is not None and preset.cli.hooks is not None
        hooks = preset.cli.hooks
        assert lean[name].title == preset.title
        assert lean[name].blocking == hooks.blocking
        assert lean[name].hold_pre_tool_use == hooks.hold_pre_tool_use


def test_each_stream_adapter_speaks_as_its_agent_file_says() -> None:
    for stream, preset in stream_presets().items():
        adapter = get_adapter(stream)
        assert preset.cli is not None
        assert adapter.agent_name == preset.title, stream  # type: ignore[attr-defined]
        assert adapter.agent_id == preset.cli.stream_agent_id, stream  # type: ignore[attr-defined]


def _first_line(fixture: str) -> str:
    return (CLI_STREAM_FIXTURES / fixture).read_text(encoding="utf-8").splitlines()[0]


#: ``opencode run --format json``'s first line, in its current shape (the shared fixtures
#: hold only an older shape without ``sessionID`` or ``part``, told by neither the old code
#: nor the agent file)
OPENCODE_FIRST = json.dumps(
    {"type": "step_start", "timestamp": 1, "sessionID": "ses_1", "part": {"type": "step-start"}}
)


@pytest.mark.parametrize(
    ("first", "stream"),
    [
        (_first_line("claude_code__stream_json__v1__system_init.jsonl"), "claude-code"),
        (_first_line("codex__resume.jsonl"), "codex"),
        (_first_line("gemini_cli__stream_json__v1__init.jsonl"), "gemini"),
        (OPENCODE_FIRST, "opencode"),
    ],
)
def test_a_first_line_is_told_by_its_agent_files_first_line_test(first: str, stream: str) -> None:
    assert format_of_line(first) == stream
    obj = json.loads(first)  # and no other agent file's test claims it
    claims = [s for s, p in stream_presets().items() if p.cli and p.cli.first_line.matches(obj)]
    assert claims == [stream]


def test_every_program_and_package_in_the_files_is_known_on_a_command_line() -> None:
    for stream, preset in stream_presets().items():
        assert preset.cli is not None
        for word in (*preset.cli.programs, *preset.cli.packages):
            assert format_of_command([word]) == stream, word
            assert format_of_command(["npx", "-y", f"{word}@1.0.0"]) == stream, word


def _names() -> set[str]:
    """Every agent's id, alias, title, program, package, stream and hook name."""
    words: set[str] = set()
    for preset in presets().values():
        words.update((*preset.names, preset.title))
        if preset.cli is not None:
            words.update((*preset.cli.programs, *preset.cli.packages, preset.cli.stream_format))
            if preset.cli.hooks is not None:
                words.add(preset.cli.hooks.name)
    return words


def _agents_named(node: ast.expr, names: set[str]) -> set[str]:
    """The agents a collection literal names (by any of their names)."""
    if isinstance(node, ast.Dict):
        items = [key for key in node.keys if key is not None] + list(node.values)
    elif isinstance(node, ast.List | ast.Tuple | ast.Set):
        items = list(node.elts)
    else:
        return set()
    found = set()
    for item in items:
        if isinstance(item, ast.Constant) and isinstance(item.value, str) and item.value in names:
            preset = find_preset(item.value) or next(
                p
                for p in presets().values()
                if item.value == p.title
                or (p.cli and item.value in (*p.cli.programs, *p.cli.packages, p.cli.stream_format))
            )
            found.add(preset.id)
    return found


def mirrors(source: str, names: set[str]) -> list[tuple[int, set[str]]]:
    """Each literal list, set, tuple or dict in ``source`` that names two agents or more."""
    hits = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.expr):
            agents = _agents_named(node, names)
            if len(agents) >= 2:
                hits.append((node.lineno, agents))
    return hits


def test_no_module_keeps_a_list_of_agents_of_its_own() -> None:
    names = _names()
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.parent == PACKAGE / "agents":
            continue
        hits = mirrors(path.read_text(encoding="utf-8"), names)
        if hits:
            found[str(path.relative_to(ROOT))] = hits
    assert found == {}, "read these from announcer/agents instead"


def test_the_mirror_check_sees_a_hand_kept_list() -> None:
    """The check above is not vacuous: the lists this step removed are each caught."""
    names = _names()
    assert mirrors('HOOK_AGENTS = ("claude-code", "codex")\n', names)
    assert mirrors('NAMES = {"claude_code": "Claude Code", "opencode": "OpenCode"}\n', names)
    assert mirrors('FLAGS = {"codex": ("--json",), "gemini": ("--output-format",)}\n', names)
    assert not mirrors('ONE = ("codex", "--json")\n', names)


GOOD_CLI = """
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
[cli]
programs = ["demo"]
stream_format = "demo"
[cli.first_line]
type = ["hello"]
[cli.hooks]
name = "demo"
blocking = ["PreToolUse"]
"""


@pytest.mark.parametrize(
    ("change", "where"),
    [
        (('[cli.first_line]\ntype = ["hello"]\n', ""), "cli.first_line"),
        (('type = ["hello"]', "type = []"), "cli.first_line.type"),
        (('name = "demo"\nblocking', 'name = "other"\nblocking'), "cli.hooks.name"),
        (('blocking = ["PreToolUse"]', 'blocking = ["PreToolUse"]\nwait = 3'), "cli.hooks.wait"),
    ],
)
def test_a_bad_cli_table_is_refused_naming_the_field(change: tuple[str, str], where: str) -> None:
    assert parse_agent_file(GOOD_CLI, "announcer/agents/demo.toml").cli is not None
    with pytest.raises(AgentFileError) as caught:
        parse_agent_file(GOOD_CLI.replace(*change), "announcer/agents/demo.toml")
    assert str(caught.value).startswith(f"announcer/agents/demo.toml: {where}:"), caught.value


def test_two_files_cannot_claim_one_stream() -> None:
    twin = GOOD_CLI.replace('id = "demo"', 'id = "twin"').replace(
        'name = "demo"\nblocking', 'name = "twin"\nblocking'
    )
    with pytest.raises(AgentFileError, match=r"twin.toml: cli.stream_format: 'demo' is already"):
        load_presets({"a/demo.toml": GOOD_CLI, "a/twin.toml": twin})
