"""Wording fixes heard on the real CLIs (issue 15), for the cases the lab cannot script.

Claude Code 2.1.330 has no Glob or Grep tool, and ``codex exec`` never asks a
reviewer, so those stream shapes are written here by hand, in the CLIs' own form.
"""

from __future__ import annotations

import json

from announcer.formats.speakable import command_words, shorten_paths, thought_parts, unwrap_shell
from tests.formats.conftest import run_stream, speech_of
from tests.support.speech_record import spoken_in


def heard(fmt: str, lines: list[dict[str, object]], verbosity: str = "normal") -> list[str]:
    events = run_stream(fmt, [json.dumps(line) for line in lines]).events
    return spoken_in(speech_of(events, verbosity=verbosity))


def told(fmt: str, lines: list[dict[str, object]]) -> list[str]:
    """Our sentences and the agent's text, event by event (before the engine's pacing)."""
    events = run_stream(fmt, [json.dumps(line) for line in lines]).events
    out = []
    for event in events:
        text = event.get("chunk") or event.get("summary_normal")
        if text:
            out.append(text)
    return out


def claude(*blocks: dict[str, object], role: str = "assistant", **extra: object) -> dict:
    return {
        "type": role,
        "session_id": "s1",
        "message": {"id": f"m{len(blocks)}{role}", "content": list(blocks)},
        **extra,
    }


INIT = {"type": "system", "subtype": "init", "session_id": "s1", "cwd": "/work/proj"}
RESULT = {"type": "result", "subtype": "success", "session_id": "s1", "is_error": False}


def test_a_glob_is_read_as_written_and_grep_is_named_by_its_pattern():
    assert command_words({"pattern": "**/*.py"}) == "**/*.py"
    assert command_words({"pattern": "def main", "path": "/work/proj/src"}) == "def main"

    def result(tool_use_id: str, content: str) -> dict:
        return claude(
            {"type": "tool_result", "tool_use_id": tool_use_id, "content": content}, role="user"
        )

    # As the CLI sends them: each call's result comes before the turn's result. (Without
    # them the stream end closes both calls as "never reported back", and that newer news
    # rightly lets a listener at 180 wpm skip Grep's start: speech_of replays at pace.)
    lines = [
        INIT,
        claude({"type": "tool_use", "id": "t1", "name": "Glob", "input": {"pattern": "**/*.py"}}),
        claude({"type": "tool_use", "id": "t2", "name": "Grep", "input": {"pattern": "TODO"}}),
        result("t1", "src/a.py"),
        result("t2", "src/a.py:3: # TODO"),
        RESULT,
    ]
    assert told("claude-code", lines)[1:3] == ["Running Glob: **/*.py.", "Running Grep: TODO."]
    said = heard("claude-code", lines)
    # Issue 20: Grep's start, still waiting when its result came, is said by that result.
    assert said[1:3] == ["Running Glob: **/*.py.", "Glob finished: **/*.py."]
    assert "Grep finished: TODO." in said
    assert not [s for s in said if "timed out" in s or "skipped" in s]


def test_a_shell_wrapper_is_unwrapped_only_when_it_wraps_one_command():
    assert unwrap_shell("/bin/bash -lc 'cargo test --all'") == "cargo test --all"
    assert unwrap_shell("bash -lc ls") == "ls"
    assert unwrap_shell('/usr/bin/zsh -c "git status"') == "git status"
    assert unwrap_shell("/bin/bash -lc 'a' 'b'") == "/bin/bash -lc 'a' 'b'"
    assert unwrap_shell("/bin/bash -lc 'unterminated") == "/bin/bash -lc 'unterminated"
    assert unwrap_shell("bashful -c x") == "bashful -c x"


def test_a_thought_splits_into_headline_and_body():
    assert thought_parts("**Planning**\n\nFirst the tests.") == ("Planning", "First the tests.")
    assert thought_parts("One idea. Then another.") == ("One idea.", "Then another.")
    assert thought_parts("just a thought") == ("just a thought", "")


def test_paths_in_an_agents_message_are_said_by_their_last_parts():
    said = shorten_paths("cannot write /home/me/proj/src/lib.rs (see ~/notes/a.md)")
    assert said == "cannot write lib.rs in src (see a.md in notes)"
    assert shorten_paths("a link https://x.org/a/b stays") == "a link https://x.org/a/b stays"


def test_a_codex_reviewers_decline_is_a_decline_not_a_failure():
    item = {"id": "i1", "type": "command_execution", "command": "/bin/bash -lc 'rm -rf /'"}
    said = heard(
        "codex",
        [
            {"type": "thread.started", "thread_id": "th"},
            {"type": "item.started", "item": {**item, "status": "in_progress"}},
            {"type": "item.completed", "item": {**item, "status": "declined"}},
        ],
    )
    assert "Running shell: rm -rf /." in said
    assert "Shell was declined by the reviewer." in said
    assert not [s for s in said if "failed" in s.lower()]


def test_a_codex_retry_notice_is_a_warning_and_a_failure_is_said_once():
    lines = [
        {"type": "thread.started", "thread_id": "th"},
        {"type": "turn.started"},
        {"type": "error", "message": "Reconnecting... 1/5"},
        {"type": "item.completed", "item": {"id": "e", "type": "error", "message": "slow"}},
        {"type": "error", "message": "stream disconnected"},
        {"type": "turn.failed", "error": {"message": "stream disconnected"}},
        {"type": "error", "message": "stream disconnected"},
    ]
    events = run_stream("codex", [json.dumps(line) for line in lines]).events
    summaries = [e.get("summary_normal") for e in events]
    assert "Codex warning: Reconnecting... 1/5" in summaries
    assert "Codex warning: slow" in summaries  # (heard unless the engine's pace drops it)
    assert not [s for s in summaries if s and "Codex error" in s]
    said = heard("codex", lines)
    assert "Codex warning: Reconnecting... 1/5" in said
    assert sum("stream disconnected" in s for s in said) == 1
    # Critical news at once (issue 30 item 4): the failure cuts in, and the warnings it
    # went before follow it.
    assert "Error. Codex failed: stream disconnected." in said
    assert said.count("Codex started.") == 1


def test_codex_new_and_deleted_files_are_said_so_with_their_names():
    def item(kind: str, status: str) -> dict:
        path = f"/work/proj/src/{kind}.py"
        return {
            "id": kind,
            "type": "file_change",
            "status": status,
            "changes": [{"path": path, "kind": kind}],
        }

    def change(kind: str) -> list[dict]:
        # as Codex 0.169 sends a patch (seen in the lab): started, then completed
        return [
            {"type": "item.started", "item": item(kind, "in_progress")},
            {"type": "item.completed", "item": item(kind, "completed")},
        ]

    start = {"type": "thread.started", "thread_id": "th"}
    lines = [start, *change("add"), *change("delete"), *change("update")]
    assert told("codex", lines)[1:7] == [
        "Creating add.py.",
        "Created add.py.",
        "Deleting delete.py.",
        "Deleted delete.py.",
        "Editing update.py.",
        "Edited update.py.",
    ]
    said = heard("codex", lines)
    assert {"Creating add.py.", "Deleting delete.py.", "Editing update.py."} <= set(said)
    assert {"Created add.py.", "Deleted delete.py."} <= set(said)
    terse = heard("codex", lines, "terse")
    assert {"Creating add.py.", "Deleting delete.py.", "Editing update.py."} <= set(terse)
    detailed = heard("codex", [start, *change("add")], "detailed")
    assert "Creating add.py in src." in detailed
    # Only the ends, all at once (an older Codex): whatever a listener at 180 wpm has
    # skipped, what is heard of a patch names its file, never the tool "Apply patch".
    ends = [start, *(change(kind)[1] for kind in ("add", "delete", "update"))]
    for verbosity in ("terse", "normal", "detailed"):
        for sentence in heard("codex", ends, verbosity):
            assert "patch" not in sentence.lower(), sentence


def test_a_claude_tool_block_cut_off_by_the_stream_end_is_still_said():
    start = {
        "type": "stream_event",
        "session_id": "s1",
        "event": {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "tool_use", "id": "t1", "name": "Bash", "input": {}},
        },
    }
    delta = {
        "type": "stream_event",
        "session_id": "s1",
        "event": {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": '{"command": "ls"}'},
        },
    }
    said = heard("claude-code", [INIT, start, delta])
    assert "Running Bash: ls." in said
    assert "Bash timed out. It never reported back before the stream ended." in said


def test_a_failure_whose_message_does_not_name_the_tool_keeps_the_lead():
    said = heard(
        "claude-code",
        [
            INIT,
            claude({"type": "tool_use", "id": "t1", "name": "WebFetch", "input": {}}),
            claude(
                {
                    "type": "tool_result",
                    "tool_use_id": "t1",
                    "is_error": True,
                    "content": "Exit code 7",
                },
                role="user",
            ),
            RESULT,
        ],
    )
    assert "WebFetch failed. Exit code 7." in said


def test_a_subagents_own_prompt_and_words_are_not_read_as_the_users():
    said = heard(
        "claude-code",
        [
            INIT,
            claude(
                {
                    "type": "tool_use",
                    "id": "a1",
                    "name": "Task",
                    "input": {"description": "Find the bug", "prompt": "A very long prompt"},
                }
            ),
            claude(
                {"type": "text", "text": "A very long prompt"}, role="user", parent_tool_use_id="a1"
            ),
            claude({"type": "text", "text": "I found it."}, parent_tool_use_id="a1"),
            claude({"type": "tool_result", "tool_use_id": "a1", "content": "ok"}, role="user"),
            RESULT,
        ],
    )
    assert said[1:3] == ["Starting a subagent: Find the bug.", "Subagent finished: Find the bug."]
    assert not [s for s in said if "prompt" in s.lower() or "I found it." in s]


def test_claude_going_on_after_its_result_is_a_resumed_session_and_a_second_end():
    notification = {
        "type": "system",
        "subtype": "task_notification",
        "session_id": "s1",
        "tool_use_id": "a1",
        "status": "completed",
        "description": "Find the bug",
    }
    said = told(
        "claude-code",
        [
            INIT,
            claude({"type": "text", "text": "Started a helper."}),
            RESULT,
            notification,
            claude({"type": "text", "text": "The helper found it."}),
            RESULT,
            RESULT,  # back to back: the same end, said once
        ],
    )
    assert said[1:] == [
        "Started a helper.",
        "Claude Code finished.",
        "Claude Code resumed the session.",
        "Subagent finished: Find the bug.",
        "The helper found it.",
        "Claude Code finished.",
    ]


def test_parallel_calls_name_every_end_whatever_order_they_finish_in():
    def call(n: str) -> dict:
        return claude(
            {"type": "tool_use", "id": n, "name": "Bash", "input": {"command": f"echo {n}"}}
        )

    def done(n: str) -> dict:
        return claude({"type": "tool_result", "tool_use_id": n, "content": n}, role="user")

    said = told("claude-code", [INIT, call("a"), call("b"), done("b"), done("a"), RESULT])
    assert said[3:5] == ["Bash finished: echo b.", "Bash finished: echo a."]
    alone = told("claude-code", [INIT, call("a"), done("a"), call("b"), done("b"), RESULT])
    assert alone.count("Bash finished.") == 0  # issue 30 item 8: each end named
    assert [t for t in alone if t.startswith("Bash finished")] == [
        "Bash finished: echo a.",
        "Bash finished: echo b.",
    ]
