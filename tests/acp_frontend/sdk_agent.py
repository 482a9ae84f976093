"""A scripted ACP agent written with the SDK's agent side, run as a real child process.

``python -m tests.acp_frontend.sdk_agent`` speaks ACP on stdio like claude-agent-acp or codex-acp
do: it streams message and thought chunks, announces each tool call twice (first empty,
then titled, as the real adapters do), asks permission before it writes a file, and
writes it only when allowed. The prompt picks the scenario:

- ``write``: asks to run ``echo hello > out.txt`` (offering allow once, allow always,
  reject once and reject always), appends the option picked to ``choices.txt``, and
  creates ``out.txt`` when allowed;
- ``edit``: a diff on ``app.py`` reported on completion;
- ``plan``: a three-step plan, then an answer;
- ``wait``: asks permission and then waits to be cancelled (the client stops the turn);
- ``think``: a thought in several chunks, then an answer;
- ``commands``: lists two slash commands (``available_commands_update``), then answers;
- ``die``: says a word, then its process ends at once with status 7 (a crash);
- ``sleep N``: runs ``sleep N`` as a command of its own (a tool call in progress), writes
  its own process id and the command's to ``sleep-pids.txt``, and waits for it;
  ``sleep-detached N`` starts it in a session of its own, as Node's ``detached`` does;
  ``sleep-die N`` starts it, then the agent's process ends at once with status 9;
- ``burst N``: N message chunks and N/20 tool calls, for the benchmark;
- ``ask N``: N permission requests in a row, each answer's arrival time logged;
- anything else: a short answer in three chunks.

``--tag NAME`` (several agents in one folder): its title is NAME, every prompt it gets is
appended to ``prompts-NAME.txt``, every permission answer to ``answers-NAME.txt``, its
process id to ``pid-NAME.txt``, and the files it writes are called ``out-NAME.txt`` and
``permission-outcome-NAME.txt``.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any

import acp
from acp import schema


class ScriptedAgent:
    def __init__(self, tag: str | None = None) -> None:
        self.tag = tag
        self.conn: Any = None
        self.cwd = Path.cwd()
        self.cancelled = asyncio.Event()

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, **_: Any) -> schema.InitializeResponse:
        return schema.InitializeResponse(
            protocol_version=acp.PROTOCOL_VERSION,
            agent_info=schema.Implementation(
                name="scripted", title=self.tag or "Scripted Agent", version="1"
            ),
        )

    def file(self, name: str) -> Path:
        """``out.txt``, or ``out-TAG.txt`` when several agents share the folder."""
        if self.tag:
            stem, dot, ext = name.partition(".")
            name = f"{stem}-{self.tag}{dot}{ext}"
        return self.cwd / name

    def log(self, name: str, line: str) -> None:
        if self.tag:
            with self.file(name).open("a", encoding="utf-8") as handle:
                handle.write(line + "\n")

    async def new_session(self, cwd: str, **_: Any) -> schema.NewSessionResponse:
        self.cwd = Path(cwd)
        self.log("pid.txt", str(os.getpid()))
        return schema.NewSessionResponse(session_id="sess-1")

    async def cancel(self, session_id: str, **_: Any) -> None:
        self.cancelled.set()

    async def say(self, session_id: str, *chunks: str) -> None:
        for chunk in chunks:
            await self.conn.session_update(session_id, acp.update_agent_message_text(chunk))

    async def ask(self, session_id: str, call_id: str, title: str, kind: str) -> str | None:
        options = [
            schema.PermissionOption(option_id="always", name="Always allow", kind="allow_always"),
            schema.PermissionOption(option_id="once", name="Allow", kind="allow_once"),
            schema.PermissionOption(option_id="no", name="Reject", kind="reject_once"),
            schema.PermissionOption(option_id="never", name="Always reject", kind="reject_always"),
        ]
        call = schema.ToolCallUpdate(tool_call_id=call_id, title=title, kind=kind)
        answer = await self.conn.request_permission(session_id, call, options)
        outcome = answer.outcome
        choice = getattr(outcome, "option_id", None)
        self.log("answers.txt", f"{call_id} {choice or outcome.outcome}")
        return choice

    async def tool(
        self, session_id: str, call_id: str, title: str, kind: str, **extra: Any
    ) -> None:
        # Real adapters send the call first with no title, then fill it in.
        await self.conn.session_update(
            session_id, acp.start_tool_call(call_id, "", kind=kind, status="pending")
        )
        await self.conn.session_update(
            session_id,
            acp.update_tool_call(call_id, title=title, kind=kind, status="pending", **extra),
        )

    async def prompt(self, prompt: list[Any], session_id: str, **_: Any) -> schema.PromptResponse:
        text = " ".join(getattr(block, "text", "") for block in prompt).strip()
        self.cancelled.clear()
        self.log("prompts.txt", text)
        if text == "write":
            await self.say(session_id, "I will create the file. ")
            await self.tool(
                session_id, "call-1", "echo hello > out.txt", "execute",
                raw_input={"command": "echo hello > out.txt", "description": "Create out.txt"},
            )  # fmt: skip
            choice = await self.ask(session_id, "call-1", "echo hello > out.txt", "execute")
            with self.file("choices.txt").open("a") as log:
                log.write(f"{choice}\n")  # which of its options the client picked
            if choice in ("once", "always"):
                self.file("out.txt").write_text("hello\n")
                await self.conn.session_update(
                    session_id, acp.update_tool_call("call-1", status="completed")
                )
                await self.say(session_id, "Created out.txt.")
            else:
                await self.conn.session_update(
                    session_id, acp.update_tool_call("call-1", status="failed")
                )
                return schema.PromptResponse(stop_reason="end_turn")
        elif text == "edit":
            target = str(self.cwd / "app.py")
            await self.tool(session_id, "call-2", "Edit app.py", "edit",
                            locations=[schema.ToolCallLocation(path=target)])  # fmt: skip
            diff = acp.tool_diff_content(target, "a = 1\nb = 3\nc = 4\n", "a = 1\nb = 2\n")
            await self.conn.session_update(
                session_id, acp.update_tool_call("call-2", status="completed", content=[diff])
            )
            await self.say(session_id, "Edited the file.")
        elif text == "plan":
            entries = [
                acp.plan_entry("Read the code", status="completed"),
                acp.plan_entry("Fix the bug", status="in_progress"),
                acp.plan_entry("Run the tests", status="pending"),
            ]
            await self.conn.session_update(session_id, acp.update_plan(entries))
            await self.conn.session_update(session_id, acp.update_plan(entries))
            await self.say(session_id, "Working on the fix.")
        elif text == "wait":
            await self.tool(session_id, "call-3", "rm -rf build", "delete")
            waiting = asyncio.ensure_future(
                self.ask(session_id, "call-3", "rm -rf build", "delete")
            )
            await self.cancelled.wait()
            choice = await asyncio.wait_for(waiting, 10)
            self.file("permission-outcome.txt").write_text(str(choice))
            return schema.PromptResponse(stop_reason="cancelled")
        elif text == "think":
            for piece in ("The user wants ", "a greeting, ", "so I will greet them."):
                await self.conn.session_update(session_id, acp.update_agent_thought_text(piece))
            await self.say(session_id, "Hello there.")
        elif text == "die":
            await self.say(session_id, "Starting. ")
            print("fatal: the scripted agent crashed on purpose", file=sys.stderr, flush=True)
            os._exit(7)
        elif text.split()[0] in ("sleep", "sleep-detached", "sleep-die"):
            how, seconds = text.split()[:2]
            await self.tool(session_id, "call-sleep", f"sleep {seconds}", "execute")
            await self.conn.session_update(
                session_id, acp.update_tool_call("call-sleep", status="in_progress")
            )
            command = await asyncio.create_subprocess_exec(
                "sleep", seconds, start_new_session=how == "sleep-detached"
            )
            self.file("sleep-pids.txt").write_text(f"{os.getpid()} {command.pid}\n")
            await self.say(session_id, "The command is running. ")
            if how == "sleep-die":
                os._exit(9)
            await command.wait()
        elif text.startswith("ask"):
            # ``ask N``: N permission requests in a row; each answer's arrival time (the
            # system-wide monotonic clock) is appended to ``answers.txt`` for the benchmark.
            count = int(text.split()[1])
            with (self.cwd / "answers.txt").open("a") as log:
                for index in range(count):
                    call = f"ask-{index}"
                    choice = await self.ask(session_id, call, f"touch f{index}", "edit")
                    log.write(f"{time.monotonic()} {choice}\n")
                    log.flush()
        elif text == "commands":
            commands = [
                schema.AvailableCommand(name="review", description="Review the changes"),
                schema.AvailableCommand(name="init", description="Write an AGENTS.md file"),
            ]
            await self.conn.session_update(
                session_id,
                schema.AvailableCommandsUpdate(
                    session_update="available_commands_update", available_commands=commands
                ),
            )
            await self.say(session_id, "Two commands are available.")
        elif text.startswith("burst"):
            count = int(text.split()[1])
            for index in range(count):
                await self.say(
                    session_id, f"Word {index}. " if index % 10 == 9 else f"word{index} "
                )
                if index % 20 == 0:
                    call = f"b-{index}"
                    await self.tool(session_id, call, f"ls dir{index}", "read")
                    await self.conn.session_update(
                        session_id, acp.update_tool_call(call, status="completed")
                    )
        else:
            await self.say(session_id, "Hello. ", "This is the scripted agent. ", "Done.")
        return schema.PromptResponse(stop_reason="end_turn")


def main() -> None:
    if os.environ.get("SDK_AGENT_FAIL_AT_START"):
        print("cannot start: no model configured", file=sys.stderr)
        sys.exit(3)
    tag = sys.argv[sys.argv.index("--tag") + 1] if "--tag" in sys.argv else None
    asyncio.run(acp.run_agent(ScriptedAgent(tag)))


if __name__ == "__main__":
    main()
