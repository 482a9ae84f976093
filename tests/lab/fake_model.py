"""A scripted fake model server on 127.0.0.1 for the real agent CLIs (the agent lab).

It speaks just enough of two wire APIs for Claude Code and Codex to run offline:

- the Anthropic Messages API (``POST /v1/messages``, streaming SSE and plain JSON),
- the OpenAI Responses API (``POST /v1/responses``, streaming SSE and plain JSON),
- the OpenAI Chat Completions API (``POST /v1/chat/completions``), for Qwen Code and
  opencode's openai-compatible provider,
- the Gemini API (``POST /v1beta/models/MODEL:streamGenerateContent`` and
  ``:generateContent``), for Gemini CLI.

Chat Completions and Gemini callers get Claude's scripted calls under their own tool
names (``Bash`` is qwen's and Gemini's ``run_shell_command``, opencode's ``bash``;
``Write`` is ``write_file``, ``write`` or Copilot's ``create``), picked from the tools the
request offers.

The scenario is picked by the prompt: the first user text that holds ``lab:NAME``
(``lab:one-tool``, ``lab:parallel`` ...; see :data:`SCENARIOS`). A scenario is a list
of model turns; which turn to answer is worked out from the conversation the CLI
sends back (how many tool results it already holds), so the server keeps no state
between requests and one server serves any number of CLI runs at once. A request
with no scenario (a title or side request) gets a short plain answer.

Every request is recorded (:attr:`FakeModelServer.requests`) so a test can check
what the agent sent. Standard library only: ``http.server`` in a thread.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.support.producers import http_url

# -- scenarios ---------------------------------------------------------------


@dataclass(frozen=True)
class Call:
    """One tool call the model makes. ``claude``/``codex`` give the tool and its input per CLI."""

    claude: tuple[str, dict[str, Any]] | None = None
    codex: tuple[str, dict[str, Any]] | None = None


@dataclass(frozen=True)
class Turn:
    """One model answer: optional reasoning, optional text, then any tool calls (in parallel)."""

    text: str = ""
    reasoning: str = ""
    calls: tuple[Call, ...] = ()
    #: answer only once this scenario has asked the model too (or ``AFTER_WAIT_SECONDS``
    #: passed): a parent that waits for its subagent. Codex's spawn_agent returns at once,
    #: and `codex exec` ends with the parent's turn, so a slow machine could end the run
    #: before the subagent ever asked.
    after: str = ""


#: the longest a turn waits for the scenario named in ``Turn.after``
AFTER_WAIT_SECONDS = 20.0


@dataclass(frozen=True)
class Scenario:
    name: str
    turns: tuple[Turn, ...]
    note: str = ""
    http_error: int = 0  # answer every request with this HTTP error instead


LONG_MARKDOWN = (
    "# Summary of the change\n\n"
    "The parser now accepts **nested** lists and keeps `offsets` exact.\n\n"
    "## What changed\n\n"
    "- The tokenizer reads one line at a time.\n"
    "- Errors name the line and the column.\n"
    "- The old `parse_all` function is gone.\n\n"
    "## How to try it\n\n"
    "```sh\npython -m parser sample.txt\n```\n\n"
    "| file | lines |\n|---|---|\n| parser.py | 120 |\n| tokens.py | 80 |\n\n"
    "That is all for this change. Tell me if you want the tests run again."
)
SUBAGENT_PROMPT = (
    "lab:sub-inner You are a helper. Look through every Python file in this folder, "
    "count how many functions each one defines, note any file that has no docstring, "
    "and report back a short table with one row per file and a final total."
)


def _bash(command: str, description: str = "") -> tuple[str, dict[str, Any]]:
    tool_input: dict[str, Any] = {"command": command}
    if description:
        tool_input["description"] = description
    return ("Bash", tool_input)


def _shell(cmd: str, **extra: Any) -> tuple[str, dict[str, Any]]:
    return ("exec_command", {"cmd": cmd, **extra})


#: the file a ``lab:edit`` run writes, relative to the CLI's working directory
EDIT_FILE = "hello.txt"
EDIT_TEXT = "hello from the lab\n"
CODEX_PATCH = f"*** Begin Patch\n*** Add File: {EDIT_FILE}\n+hello from the lab\n*** End Patch\n"

#: ``lab:ask``: the question Claude Code's AskUserQuestion asks the user
ASK_QUESTION: dict[str, Any] = {
    "question": "Which database should the app use?",
    "header": "Database",
    "options": [
        {"label": "SQLite", "description": "One file"},
        {"label": "Postgres", "description": "A server"},
    ],
    "multiSelect": False,
}

#: ``lab:ask``: the same question as Codex's request_user_input asks it
CODEX_QUESTION: dict[str, Any] = {
    "id": "database",
    "header": "Database",
    "question": "Which database should the app use?",
    "options": [
        {"label": "SQLite", "description": "One file"},
        {"label": "Postgres", "description": "A server"},
    ],
}

#: ``lab:plan-exit``: the plan Claude Code asks the user to approve
LAB_PLAN = "## Fix login\n\n1. Read auth.py\n2. Fix the token check\n3. Run the tests\n"

#: a command that works for a second, marks that it is well under way (``started.txt``),
#: works 3 s more, then writes ``late.txt``. No ``sleep`` word: Qwen Code refuses a bare
#: sleep before another command. From its start to its end it holds an exclusive lock on
#: :data:`LONG_COMMAND_LOCK`, so a test knows at once when it ended, without waiting the
#: 3 s out (tests/lab/test_presets_lab.py).
LONG_COMMAND_LOCK = "running.lock"
LONG_COMMAND = (
    "python3 -c 'import fcntl, pathlib, time; "
    f'lock = open("{LONG_COMMAND_LOCK}", "w"); fcntl.flock(lock, fcntl.LOCK_EX); '
    'time.sleep(1); pathlib.Path("started.txt").touch(); '
    'time.sleep(3); pathlib.Path("late.txt").touch()\''
)

#: ``lab:patch-delete``: a Codex patch that changes two files and deletes one
#: (the recorder puts them in the folder first: :data:`PATCH_FILES`)
PATCH_FILES = {
    "README.md": "# App\n\nOld intro.\n",
    "old_notes.txt": "note one\nnote two\n",
    "src/app.py": "def main():\n    return 1\n",
}
CODEX_DELETE_PATCH = (
    "*** Begin Patch\n"
    "*** Update File: README.md\n@@\n # App\n \n-Old intro.\n+New intro.\n+Run it with make.\n"
    "*** Delete File: old_notes.txt\n"
    "*** Update File: src/app.py\n@@\n def main():\n-    return 1\n+    return 0\n"
    "*** End Patch\n"
)

#: ``lab:build-fail``: the build script the recorder puts in the folder
#: (tests/lab/record_acp.py): a compiler's error on stderr, then exit status 2
BUILD_SCRIPT = (
    "echo 'gcc -c src/parser.c'\n"
    "echo \"src/parser.c:1:5: error: expected ';' before 'int'\" >&2\n"
    "echo 'make: *** [Makefile:2: all] Error 1' >&2\n"
    "exit 2\n"
)

#: ``lab:ten-tools``: the project the recorder puts in the folder (tests/lab/record_acp.py):
#: a bug in ``add``, and a test script that still fails after the fix (issue 33, item 2)
TEN_TOOLS_FILES = {
    "src/app.py": "def add(a, b):\n    return a - b\n",
    "README.md": "# App\n\nAdds numbers.\n",
    "run_tests.sh": (
        "echo 'test_add PASSED'\n"
        "echo 'test_parser FAILED: expected 3, got 2' >&2\n"
        "echo '47 passed, 2 failed'\n"
        "exit 1\n"
    ),
}
#: the agent's last words in ``lab:ten-tools``
TEN_TOOLS_LAST_WORDS = "I fixed add. Two tests in test_parser still fail."


def _ten_tools() -> tuple[Turn, ...]:
    """Claude Code's ten calls, one a model turn: reads, edits, new files and the tests."""
    calls = (
        ("Read", {"file_path": "{cwd}/src/app.py"}),
        ("Edit", {"file_path": "{cwd}/src/app.py", "old_string": "return a - b",
                  "new_string": "return a + b"}),
        ("Read", {"file_path": "{cwd}/README.md"}),
        ("Edit", {"file_path": "{cwd}/README.md", "old_string": "Adds numbers.",
                  "new_string": "Adds numbers.\n\nRun the tests with sh run_tests.sh."}),
        ("Write", {"file_path": "{cwd}/src/util.py",
                   "content": "def twice(a):\n    return 2 * a\n"}),
        _bash("ls src", "List the source files"),
        _bash("sh run_tests.sh", "Run the tests"),
        _bash("grep -n add src/app.py", "Find add"),
        ("Write", {"file_path": "{cwd}/CHANGES.md", "content": "- add() adds.\n"}),
        _bash("sh run_tests.sh", "Run the tests again"),
    )  # fmt: skip
    return (*(Turn(calls=(Call(call),)) for call in calls), Turn(text=TEN_TOOLS_LAST_WORDS))


#: ``lab:quick-plan``: the steps of a plan done as quickly as they are made
QUICK_STEPS = ("Read the notes", "Fix the parser", "Run the tests", "Sum up")


def _quick_todos(done: int) -> tuple[str, dict[str, Any]]:
    """Claude Code's TodoWrite for :data:`QUICK_STEPS`, the first ``done`` completed."""
    todos = [
        {
            "content": step,
            "activeForm": step,
            "status": "completed" if i < done else "in_progress" if i == done else "pending",
        }
        for i, step in enumerate(QUICK_STEPS)
    ]
    return ("TodoWrite", {"todos": todos})


SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        Scenario(
            "one-tool",
            (
                Turn(calls=(Call(_bash("echo hello", "Print hello"), _shell("echo hello")),)),
                Turn(text="The command printed hello."),
            ),
            "one shell command, then a short answer",
        ),
        Scenario(
            "several",
            (
                Turn(
                    text="Let me look around.",
                    calls=(Call(_bash("ls", "List the files"), _shell("ls")),),
                ),
                Turn(calls=(Call(("Read", {"file_path": "{cwd}/notes.md"}), _shell("pwd")),)),
                Turn(calls=(Call(_bash("wc -l notes.md", "Count lines"), _shell("true")),)),
                Turn(text="I looked at the files."),
            ),
            "three tool calls one after another",
        ),
        Scenario(
            "parallel",
            (
                Turn(
                    calls=(
                        Call(_bash("echo one", "Print one"), _shell("echo one")),
                        Call(_bash("echo two", "Print two"), _shell("echo two")),
                        Call(_bash("echo three", "Print three"), _shell("echo three")),
                    )
                ),
                Turn(text="All three ran."),
            ),
            "three shell commands in one turn",
        ),
        Scenario(
            "edit",
            (
                Turn(
                    calls=(
                        Call(
                            ("Write", {"file_path": "{cwd}/" + EDIT_FILE, "content": EDIT_TEXT}),
                            _shell(f"apply_patch <<'EOF'\n{CODEX_PATCH}EOF\n"),
                        ),
                    )
                ),
                Turn(text=f"I wrote {EDIT_FILE}."),
            ),
            "a new file is written",
        ),
        Scenario(
            "fail",
            (
                Turn(
                    calls=(
                        Call(
                            _bash("ls missing-lab-folder", "List a missing folder"),
                            _shell("ls missing-lab-folder"),
                        ),
                    )
                ),
                Turn(text="That folder does not exist."),
            ),
            "a command that fails",
        ),
        Scenario(
            "build-fail",
            (
                Turn(
                    calls=(
                        Call(
                            _bash("sh build.sh", "Build the project"),
                            _shell(
                                "sh build.sh",
                                sandbox_permissions="require_escalated",
                                justification="Build the project",
                            ),
                        ),
                    )
                ),
                Turn(text="The build failed."),
            ),
            "a build that fails: a compiler's error, exit status 2",
        ),
        Scenario(
            "patch-delete",
            (
                Turn(
                    calls=(Call(codex=_shell(f"apply_patch <<'EOF'\n{CODEX_DELETE_PATCH}EOF\n")),)
                ),
                Turn(text="I changed two files and deleted the old notes."),
            ),
            "a Codex patch: two files changed, one deleted",
        ),
        Scenario(
            "quick-plan",
            (
                Turn(calls=(Call(_quick_todos(0)),)),
                Turn(calls=(Call(_quick_todos(len(QUICK_STEPS))),)),
                Turn(text="All done."),
            ),
            "a plan whose steps are all done at once (Claude Code's TodoWrite)",
        ),
        Scenario(
            "subagent",
            (
                Turn(
                    calls=(
                        Call(
                            (
                                "Agent",
                                {
                                    "description": "Count functions",
                                    "prompt": SUBAGENT_PROMPT,
                                    "subagent_type": "general-purpose",
                                },
                            ),
                            ("multi_agent_v1.spawn_agent", {"message": SUBAGENT_PROMPT}),
                        ),
                    )
                ),
                Turn(text="The helper counted the functions.", after="sub-inner"),
            ),
            "a subagent: Claude Code's Agent tool, Codex's spawn_agent (multi_agent_v1)",
        ),
        Scenario(
            "sub-inner",
            (Turn(text="There are no Python files here."),),
            "what the subagent itself answers",
        ),
        Scenario(
            "api-error",
            (Turn(),),
            "the model API refuses the request (HTTP 400)",
            http_error=400,
        ),
        Scenario("markdown", (Turn(text=LONG_MARKDOWN),), "a long markdown answer"),
        Scenario(
            "ask",
            (
                Turn(
                    calls=(
                        Call(
                            ("AskUserQuestion", {"questions": [ASK_QUESTION]}),
                            ("request_user_input", {"questions": [CODEX_QUESTION]}),
                        ),
                    )
                ),
                Turn(text="You picked a database."),
            ),
            "the agent asks the user its own question (Claude Code's AskUserQuestion, "
            "Codex's request_user_input)",
        ),
        Scenario(
            "plan-exit",
            (
                Turn(calls=(Call(("ExitPlanMode", {"plan": LAB_PLAN})),)),
                Turn(text="Plan approved; starting."),
            ),
            "Claude Code leaves plan mode: its plan approval (ExitPlanMode)",
        ),
        Scenario(
            "denied",
            (
                Turn(
                    calls=(
                        Call(
                            _bash("rm -rf build", "Remove the build folder"),
                            _shell(
                                "rm -rf build",
                                sandbox_permissions="require_escalated",
                                justification="Remove the build folder",
                            ),
                        ),
                    )
                ),
                Turn(text="I could not remove the build folder."),
            ),
            "a call the CLI refuses (permission mode default / escalation in exec)",
        ),
        Scenario(
            "command",
            (
                Turn(
                    calls=(
                        Call(
                            _bash("touch made.txt", "Create made.txt"),
                            _shell(
                                "touch made.txt",
                                sandbox_permissions="require_escalated",
                                justification="Create made.txt",
                            ),
                        ),
                    )
                ),
                Turn(text="I ran the command."),
            ),
            "a command that changes the folder but deletes nothing (the agent's asking mode asks)",
        ),
        Scenario(
            "long",
            (
                Turn(
                    calls=(
                        Call(
                            _bash(LONG_COMMAND, "Wait, then create late.txt"),
                            _shell(
                                LONG_COMMAND,
                                sandbox_permissions="require_escalated",
                                justification="Wait, then create late.txt",
                            ),
                        ),
                    )
                ),
                Turn(text="The long command ended."),
            ),
            "a command that takes seconds and then changes the folder (to cancel midway)",
        ),
        Scenario(
            "denied-twice",
            (
                Turn(calls=(Call(_bash("rm -rf build", "Remove the build folder")),)),
                Turn(calls=(Call(_bash("rm -rf build", "Remove the build folder")),)),
                Turn(text="I removed the build folder twice."),
            ),
            "the same refused call twice in one turn (an 'always' answer covers the second)",
        ),
        Scenario(
            "ten-tools",
            _ten_tools(),
            "ten calls in one turn (issue 33's digest): two files changed, two new, the "
            "tests run twice and failing",
        ),
        Scenario(
            "reasoning",
            (
                Turn(
                    reasoning="**Checking the files**\n\nI should list the folder first.",
                    text="I thought about it: nothing needs to change.",
                ),
            ),
            "a thought, then the answer",
        ),
    )
}

#: the error bodies of the ``api-error`` scenario (each API's own shape)
ANTHROPIC_ERROR = {
    "type": "error",
    "error": {"type": "invalid_request_error", "message": "lab: the request was refused"},
}
OPENAI_ERROR = {
    "error": {
        "type": "invalid_request_error",
        "code": "lab_refused",
        "message": "lab: the request was refused",
        "param": None,
    }
}
GEMINI_ERROR = {
    "error": {"code": 400, "message": "lab: the request was refused", "status": "INVALID_ARGUMENT"}
}
_SCENARIO_TAG = re.compile(r"\blab:([a-z][a-z0-9-]*)")
FALLBACK_TEXT = "Lab fallback answer."
#: what Claude Code's request for the user's next prompt starts with (its prompt
#: suggestions, CLAUDE_CODE_ENABLE_PROMPT_SUGGESTION), and the lab model's prediction
SUGGESTION_MODE = "[SUGGESTION MODE:"
SUGGESTED_PROMPT = "run the tests"


def scenario_in(texts: Iterator[str]) -> Scenario | None:
    """The scenario named by the first ``lab:NAME`` in the user's texts."""
    for text in texts:
        for match in _SCENARIO_TAG.finditer(text):
            found = SCENARIOS.get(match.group(1))
            if found is not None:
                return found
    return None


def turn_for(scenario: Scenario, results_seen: int, agent: str) -> Turn:
    """The turn to answer once ``results_seen`` tool results are in the conversation."""
    needed = 0
    for turn in scenario.turns:
        if results_seen <= needed:
            return turn
        needed += sum(1 for c in turn.calls if getattr(c, agent) is not None)
    return scenario.turns[-1] if not scenario.turns[-1].calls else Turn(text="Done.")


# -- request parsing -----------------------------------------------------------


def _anthropic_texts(body: dict[str, Any]) -> Iterator[str]:
    for message in body.get("messages") or []:
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            yield content
        elif isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and isinstance(block.get("text"), str):
                    yield block["text"]


def _anthropic_results(body: dict[str, Any]) -> int:
    count = 0
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            count += sum(
                1 for b in content if isinstance(b, dict) and b.get("type") == "tool_result"
            )
    return count


def _responses_texts(body: dict[str, Any]) -> Iterator[str]:
    items = body.get("input")
    if isinstance(items, str):
        yield items
        return
    for item in items or []:
        if not isinstance(item, dict) or item.get("role") != "user":
            continue
        content = item.get("content")
        if isinstance(content, str):
            yield content
        elif isinstance(content, list):
            for part in content:
                if isinstance(part, dict) and isinstance(part.get("text"), str):
                    yield part["text"]


def _responses_results(body: dict[str, Any]) -> int:
    items = body.get("input")
    if not isinstance(items, list):
        return 0
    return sum(
        1
        for i in items
        if isinstance(i, dict)
        and i.get("type") in ("function_call_output", "custom_tool_call_output")
    )


# -- the Chat Completions and Gemini callers: Claude's calls under their own tool names ----

#: Claude's tool -> the names other agents give the same tool, first offered wins
_SAME_TOOL = {
    "Bash": ("run_shell_command", "bash", "shell"),
    "Write": ("write_file", "write", "create"),
    "Read": ("read_file", "read"),
}
#: Claude's argument -> other spellings of it
_SAME_ARGUMENT = {
    "file_path": ("file_path", "filePath", "absolute_path", "path"),
    "content": ("content", "file_text"),  # GitHub Copilot's create
}


def translated_call(
    claude: tuple[str, dict[str, Any]], offered: dict[str, set[str]]
) -> tuple[str, dict[str, Any]]:
    """Claude's ``(tool, input)`` as the agent that offers ``offered`` (name -> arguments)."""
    tool, arguments = claude
    name = next((n for n in _SAME_TOOL.get(tool, ()) if n in offered), tool)
    accepted = offered.get(name, set())
    out: dict[str, Any] = {}
    for key, value in arguments.items():
        spellings = _SAME_ARGUMENT.get(key, (key,))
        out[next((k for k in spellings if k in accepted), key)] = value
    if "description" in accepted and "description" not in out:
        out["description"] = "Lab step"
    return name, out


def _chat_offered(body: dict[str, Any]) -> dict[str, set[str]]:
    offered: dict[str, set[str]] = {}
    for tool in body.get("tools") or []:
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            properties = (function.get("parameters") or {}).get("properties") or {}
            offered[function["name"]] = set(properties)
    return offered


def _latest_scenario(entries: list[tuple[list[str], int]]) -> tuple[Scenario | None, int]:
    """The scenario of the latest user text that names one, and the tool results since.

    ``entries``: per message, its user texts and how many tool results it holds. Chat
    Completions and Gemini agents keep one conversation per session, so a second prompt
    (``lab:denied`` after ``lab:reasoning``) is a scenario of its own, counted afresh.
    """
    found: Scenario | None = None
    results = 0
    for texts, tool_results in entries:
        named = scenario_in(iter(texts))
        if named is not None:
            found, results = named, 0
        results += tool_results
    return found, results


def _chat_entries(body: dict[str, Any]) -> list[tuple[list[str], int]]:
    entries = []
    for message in body.get("messages") or []:
        if not isinstance(message, dict):
            continue
        if message.get("role") == "tool":
            entries.append(([], 1))
            continue
        texts = []
        content = message.get("content")
        if message.get("role") == "user" and isinstance(content, str):
            texts.append(content)
        elif message.get("role") == "user" and isinstance(content, list):
            texts += [
                p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)
            ]
        entries.append((texts, 0))
    return entries


def chat_events(
    turn: Turn, model: str, cwd: str, offered: dict[str, set[str]]
) -> list[dict[str, Any]]:
    """One streamed Chat Completions answer: text deltas, then tool calls, then the finish."""
    cid = _id("chatcmpl")
    base = {"id": cid, "object": "chat.completion.chunk", "created": 0, "model": model}
    events = [{**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}]
    for piece in _split(turn.text) if turn.text else []:
        events.append({**base, "choices": [{"index": 0, "delta": {"content": piece}}]})
    calls = [c.claude for c in turn.calls if c.claude is not None]
    for index, claude in enumerate(calls):
        name, arguments = translated_call(_fill(claude, cwd), offered)
        call = {
            "index": index,
            "id": _id("call"),
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)},
        }
        events.append({**base, "choices": [{"index": 0, "delta": {"tool_calls": [call]}}]})
    finish = "tool_calls" if calls else "stop"
    events.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    events.append({**base, "choices": [], "usage": usage})
    return events


def chat_object(turn: Turn, model: str, cwd: str, offered: dict[str, set[str]]) -> dict[str, Any]:
    calls = []
    for claude in (c.claude for c in turn.calls if c.claude is not None):
        name, arguments = translated_call(_fill(claude, cwd), offered)
        calls.append(
            {
                "id": _id("call"),
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
        )
    message: dict[str, Any] = {"role": "assistant", "content": turn.text or None}
    if calls:
        message["tool_calls"] = calls
    return {
        "id": _id("chatcmpl"),
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def _gemini_offered(body: dict[str, Any]) -> dict[str, set[str]]:
    offered: dict[str, set[str]] = {}
    for tool in body.get("tools") or []:
        for declaration in (
            (tool.get("functionDeclarations") or []) if isinstance(tool, dict) else []
        ):
            if isinstance(declaration, dict) and isinstance(declaration.get("name"), str):
                schema = declaration.get("parametersJsonSchema") or declaration.get("parameters")
                properties = (schema or {}).get("properties") or {}
                offered[declaration["name"]] = set(properties)
    return offered


def _gemini_entries(body: dict[str, Any]) -> list[tuple[list[str], int]]:
    entries = []
    for content in body.get("contents") or []:
        if not isinstance(content, dict):
            continue
        parts = [p for p in content.get("parts") or [] if isinstance(p, dict)]
        texts = (
            [p["text"] for p in parts if isinstance(p.get("text"), str)]
            if content.get("role") == "user"
            else []
        )
        entries.append((texts, sum(1 for p in parts if "functionResponse" in p)))
    return entries


def gemini_chunks(
    turn: Turn, model: str, cwd: str, offered: dict[str, set[str]]
) -> list[dict[str, Any]]:
    """One Gemini answer as stream chunks: text parts, then function calls, finish on the last."""
    parts: list[dict[str, Any]] = (
        [{"text": piece} for piece in _split(turn.text)] if turn.text else []
    )
    for claude in (c.claude for c in turn.calls if c.claude is not None):
        name, arguments = translated_call(_fill(claude, cwd), offered)
        parts.append({"functionCall": {"name": name, "args": arguments}})
    if not parts:
        parts = [{"text": ""}]
    usage = {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}
    chunks = []
    for index, part in enumerate(parts):
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": [part]}, "index": 0}
        if index == len(parts) - 1:
            candidate["finishReason"] = "STOP"
        chunks.append({"candidates": [candidate], "usageMetadata": usage, "modelVersion": model})
    return chunks


def gemini_object(turn: Turn, model: str, cwd: str, offered: dict[str, set[str]]) -> dict[str, Any]:
    chunks = gemini_chunks(turn, model, cwd, offered)
    parts = [p for chunk in chunks for p in chunk["candidates"][0]["content"]["parts"]]
    return {
        "candidates": [
            {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": chunks[-1]["usageMetadata"],
        "modelVersion": model,
    }


# -- answers ---------------------------------------------------------------------

_ids = itertools.count(1)


def _id(prefix: str) -> str:
    return f"{prefix}_lab{next(_ids):06d}"


def _fill(value: Any, cwd: str) -> Any:
    """Put the agent's working directory into ``{cwd}`` placeholders of a tool input."""
    if isinstance(value, str):
        return value.replace("{cwd}", cwd)
    if isinstance(value, dict):
        return {k: _fill(v, cwd) for k, v in value.items()}
    if isinstance(value, tuple):
        return tuple(_fill(v, cwd) for v in value)
    return value


def _split(text: str, size: int = 24) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def anthropic_events(turn: Turn, model: str, cwd: str) -> list[dict[str, Any]]:
    """The SSE events of one streamed Messages API answer."""
    events: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {
                "id": _id("msg"),
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 12, "output_tokens": 1},
            },
        }
    ]
    index = 0
    if turn.reasoning:
        events.append(
            {
                "type": "content_block_start",
                "index": index,
                "content_block": {"type": "thinking", "thinking": "", "signature": ""},
            }
        )
        for piece in _split(turn.reasoning):
            events.append(
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "thinking_delta", "thinking": piece},
                }
            )
        events.append(
            {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "signature_delta", "signature": "lab-signature"},
            }
        )
        events.append({"type": "content_block_stop", "index": index})
        index += 1
    if turn.text:
        events.append(
            {
                "type": "content_block_start",
                "index": index,
                "content_block": {"type": "text", "text": ""},
            }
        )
        for piece in _split(turn.text):
            events.append(
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "text_delta", "text": piece},
                }
            )
        events.append({"type": "content_block_stop", "index": index})
        index += 1
    calls = [c.claude for c in turn.calls if c.claude is not None]
    for name, tool_input in calls:
        events.append(
            {
                "type": "content_block_start",
                "index": index,
                "content_block": {
                    "type": "tool_use",
                    "id": _id("toolu"),
                    "name": name,
                    "input": {},
                },
            }
        )
        for piece in _split(json.dumps(_fill(tool_input, cwd)), 16):
            events.append(
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": piece},
                }
            )
        events.append({"type": "content_block_stop", "index": index})
        index += 1
    events.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use" if calls else "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": 20},
        }
    )
    events.append({"type": "message_stop"})
    return events


def anthropic_message(turn: Turn, model: str, cwd: str) -> dict[str, Any]:
    """The same answer as one plain (non-streaming) Messages API response."""
    content: list[dict[str, Any]] = []
    if turn.reasoning:
        content.append(
            {"type": "thinking", "thinking": turn.reasoning, "signature": "lab-signature"}
        )
    if turn.text:
        content.append({"type": "text", "text": turn.text})
    calls = [c.claude for c in turn.calls if c.claude is not None]
    for name, tool_input in calls:
        content.append(
            {"type": "tool_use", "id": _id("toolu"), "name": name, "input": _fill(tool_input, cwd)}
        )
    return {
        "id": _id("msg"),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": "tool_use" if calls else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 12, "output_tokens": 20},
    }


def _responses_items(turn: Turn, cwd: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if turn.reasoning:
        items.append(
            {
                "type": "reasoning",
                "id": _id("rs"),
                "summary": [{"type": "summary_text", "text": turn.reasoning}],
            }
        )
    if turn.text:
        items.append(
            {
                "type": "message",
                "id": _id("msg"),
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": turn.text, "annotations": []}],
            }
        )
    for call in turn.calls:
        if call.codex is None:
            continue
        name, arguments = call.codex
        filled = _fill(arguments, cwd)
        if name == "apply_patch" and set(filled) == {"input"}:
            items.append(
                {
                    "type": "custom_tool_call",
                    "id": _id("ctc"),
                    "call_id": _id("call"),
                    "name": name,
                    "input": filled["input"],
                    "status": "completed",
                }
            )
        else:
            call: dict[str, Any] = {
                "type": "function_call",
                "id": _id("fc"),
                "call_id": _id("call"),
                "name": name,
                "arguments": json.dumps(filled),
                "status": "completed",
            }
            namespace, dot, bare = name.rpartition(".")
            if dot:  # a tool of a namespace (Codex's multi_agent_v1.spawn_agent)
                call["namespace"], call["name"] = namespace, bare
            items.append(call)
    return items


def _response_object(rid: str, model: str, output: list[dict[str, Any]], status: str) -> Any:
    return {
        "id": rid,
        "object": "response",
        "created_at": int(time.time()),
        "status": status,
        "model": model,
        "output": output,
        "usage": {
            "input_tokens": 12,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 20,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 32,
        },
    }


def responses_events(turn: Turn, model: str, cwd: str) -> list[dict[str, Any]]:
    """The SSE events of one streamed Responses API answer."""
    rid = _id("resp")
    items = _responses_items(turn, cwd)
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": _response_object(rid, model, [], "in_progress")}
    ]
    for index, item in enumerate(items):
        if item["type"] == "reasoning":
            text = item["summary"][0]["text"]
            events.append(
                {
                    "type": "response.output_item.added",
                    "output_index": index,
                    "item": {**item, "summary": []},
                }
            )
            events.append(
                {
                    "type": "response.reasoning_summary_part.added",
                    "item_id": item["id"],
                    "output_index": index,
                    "summary_index": 0,
                    "part": {"type": "summary_text", "text": ""},
                }
            )
            for piece in _split(text):
                events.append(
                    {
                        "type": "response.reasoning_summary_text.delta",
                        "item_id": item["id"],
                        "output_index": index,
                        "summary_index": 0,
                        "delta": piece,
                    }
                )
        elif item["type"] == "message":
            text = item["content"][0]["text"]
            events.append(
                {
                    "type": "response.output_item.added",
                    "output_index": index,
                    "item": {**item, "status": "in_progress", "content": []},
                }
            )
            for piece in _split(text):
                events.append(
                    {
                        "type": "response.output_text.delta",
                        "item_id": item["id"],
                        "output_index": index,
                        "content_index": 0,
                        "delta": piece,
                    }
                )
        else:
            events.append(
                {"type": "response.output_item.added", "output_index": index, "item": item}
            )
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    events.append(
        {"type": "response.completed", "response": _response_object(rid, model, items, "completed")}
    )
    return events


def responses_object(turn: Turn, model: str, cwd: str) -> dict[str, Any]:
    """The same answer as one plain (non-streaming) Responses API object."""
    return _response_object(_id("resp"), model, _responses_items(turn, cwd), "completed")


# -- the server --------------------------------------------------------------------


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    scenario: str | None = None


@dataclass
class _State:
    requests: list[RecordedRequest] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    cwd: str = "/tmp"
    delay: float = 0.0  # seconds between SSE events, to let a stream be heard arriving


_CWD = re.compile(
    # Claude Code, Codex and opencode; Qwen Code; Gemini CLI's first workspace folder
    r"(?:working directory:\s*|working in the directory:\s*|<cwd>"
    r"|\*\*Workspace Directories:\*\*\s*-\s*)(/[^\s<>\"'\\]+)",
    re.IGNORECASE,
)


def _cwd_of(body: dict[str, Any], default: str) -> str:
    """The agent's working directory, as its system prompt states it."""
    blob = json.dumps(body).replace("\\n", "\n")
    match = _CWD.search(blob)
    return match.group(1).rstrip(".,") if match else default


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output clean; requests are recorded instead

    def _record(self, body: Any, scenario: str | None = None) -> None:
        state = self.server.state
        with state.lock:
            state.requests.append(
                RecordedRequest(self.command, self.path, dict(self.headers.items()), body, scenario)
            )

    def do_HEAD(self) -> None:
        self._record(None)
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        self._record(None)
        self._json(200, {"data": [], "models": []})

    def _json(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _sse(self, events: list[dict[str, Any]], *, named: bool, done: bool = False) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        for event in events:
            head = f"event: {event['type']}\n" if named else ""
            self.wfile.write(f"{head}data: {json.dumps(event)}\n\n".encode())
            self.wfile.flush()
            if self.server.state.delay:
                time.sleep(self.server.state.delay)
        if done:  # Chat Completions ends its stream with a literal [DONE]
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()

    def _wait_for(self, scenario: str, parent: str) -> None:
        """Hold this answer until ``scenario`` has asked the model on this endpoint since
        ``parent``'s previous request (the one that started it), or the wait is over."""
        if not scenario:
            return
        endpoint = self.path.split("?", 1)[0]
        deadline = time.monotonic() + AFTER_WAIT_SECONDS
        while time.monotonic() < deadline:
            with self.server.state.lock:
                requests = list(self.server.state.requests)
            mine = [
                i
                for i, r in enumerate(requests)
                if r.scenario == parent and r.path.split("?", 1)[0] == endpoint
            ]
            started = mine[-2] if len(mine) >= 2 else -1  # [-1] is this request
            if any(
                r.scenario == scenario and r.path.split("?", 1)[0] == endpoint
                for r in requests[started + 1 :]
            ):
                return
            time.sleep(0.05)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            self._record(raw.decode(errors="replace"))
            self._json(400, {"error": {"type": "invalid_request_error", "message": "not JSON"}})
            return
        if not isinstance(body, dict):
            body = {}
        path = self.path.split("?", 1)[0]
        model = body.get("model") if isinstance(body.get("model"), str) else "lab-model"
        cwd = _cwd_of(body, self.server.state.cwd)
        if path.endswith("/messages"):
            scenario = scenario_in(_anthropic_texts(body))
            self._record(body, scenario.name if scenario else None)
            if scenario and scenario.http_error:
                self._json(scenario.http_error, ANTHROPIC_ERROR)
                return
            turn = (
                turn_for(scenario, _anthropic_results(body), "claude")
                if scenario
                else Turn(text=FALLBACK_TEXT)
            )
            if any(SUGGESTION_MODE in text for text in _anthropic_texts(body)):
                turn = Turn(text=SUGGESTED_PROMPT)  # Claude Code predicts the next prompt
            self._wait_for(turn.after, scenario.name if scenario else "")
            if body.get("stream"):
                self._sse(anthropic_events(turn, model, cwd), named=True)
            else:
                self._json(200, anthropic_message(turn, model, cwd))
        elif path.endswith("/responses"):
            scenario = scenario_in(_responses_texts(body))
            self._record(body, scenario.name if scenario else None)
            if scenario and scenario.http_error:
                self._json(scenario.http_error, OPENAI_ERROR)
                return
            turn = (
                turn_for(scenario, _responses_results(body), "codex")
                if scenario
                else Turn(text=FALLBACK_TEXT)
            )
            self._wait_for(turn.after, scenario.name if scenario else "")
            if body.get("stream"):
                self._sse(responses_events(turn, model, cwd), named=True)
            else:
                self._json(200, responses_object(turn, model, cwd))
        elif path.endswith("/chat/completions"):
            scenario, results = _latest_scenario(_chat_entries(body))
            self._record(body, scenario.name if scenario else None)
            if scenario and scenario.http_error:
                self._json(scenario.http_error, OPENAI_ERROR)
                return
            turn = turn_for(scenario, results, "claude") if scenario else Turn(text=FALLBACK_TEXT)
            offered = _chat_offered(body)
            if "shouldBlock" in offered.get("respond_in_schema", set()):
                # Qwen Code's auto-mode classifier asks the model: the lab's allows
                turn = Turn(calls=(Call(("respond_in_schema", {"shouldBlock": False})),))
            if body.get("stream"):
                self._sse(chat_events(turn, model, cwd, offered), named=False, done=True)
            else:
                self._json(200, chat_object(turn, model, cwd, offered))
        elif ":generateContent" in path or ":streamGenerateContent" in path:
            model = path.rsplit("/", 1)[-1].split(":", 1)[0]
            scenario, results = _latest_scenario(_gemini_entries(body))
            self._record(body, scenario.name if scenario else None)
            if scenario and scenario.http_error:
                self._json(scenario.http_error, GEMINI_ERROR)
                return
            turn = turn_for(scenario, results, "claude") if scenario else Turn(text=FALLBACK_TEXT)
            offered = _gemini_offered(body)
            if ":streamGenerateContent" in path:
                self._sse(gemini_chunks(turn, model, cwd, offered), named=False)
            else:
                self._json(200, gemini_object(turn, model, cwd, offered))
        elif path.endswith(":countTokens"):
            self._record(body)
            self._json(200, {"totalTokens": 10})
        else:
            self._record(body)
            self._json(404, {"error": {"type": "not_found_error", "message": f"no {path}"}})


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    state: _State


class FakeModelServer:
    """The fake model on 127.0.0.1 (a free port), served from a background thread.

    ``with FakeModelServer() as server: server.anthropic_url, server.openai_url``.
    """

    def __init__(self, *, cwd: str = "/tmp", delay: float = 0.0) -> None:
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.state = _State(cwd=cwd, delay=delay)
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return http_url(self)

    @property
    def anthropic_url(self) -> str:
        """For ``ANTHROPIC_BASE_URL`` (the CLI adds ``/v1/messages``)."""
        return self.url

    @property
    def openai_url(self) -> str:
        """For a Responses API ``base_url`` (the CLI adds ``/responses``)."""
        return self.url + "/v1"

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._server.state.lock:
            return list(self._server.state.requests)

    def requests_for(self, scenario: str) -> list[RecordedRequest]:
        return [r for r in self.requests if r.scenario == scenario]

    def start(self) -> FakeModelServer:
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


if __name__ == "__main__":  # python -m tests.lab.fake_model: serve until Ctrl-C
    with FakeModelServer() as running:
        print(f"fake model at {running.url} (Ctrl-C stops)", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
