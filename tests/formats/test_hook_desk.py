"""What the hook bridge says around its questions (formats/hooks.py ``HookDesk``), pure and clocked.

Payload shapes are the ones the real CLIs send: Claude Code 2.1 and Codex 0.169 (whose
hook input schemas name every field; PermissionRequest carries no ``tool_use_id``).
"""

from __future__ import annotations

from typing import Any

from announcer.formats import get_adapter
from announcer.formats.hooks import HOLD_PRE_TOOL_USE_SECONDS, HookDesk, MappedHookAdapter
from tests.formats.aaep_schemas import assert_valid

BASH = {"command": "rm -rf build", "description": "Clean the build folder"}
CLAUDE = {"session_id": "s1", "cwd": "/home/me/shop", "transcript_path": "/tmp/t.jsonl"}
CODEX = {
    "session_id": "c1",
    "turn_id": "t1",
    "cwd": "/home/me/shop",
    "model": "gpt-5",
    "permission_mode": "default",
    "transcript_path": None,
}


def desk(agent: str) -> HookDesk:
    adapter = get_adapter(f"{agent}-hooks")
    assert isinstance(adapter, MappedHookAdapter)
    return HookDesk(adapter, hold_pre_tool_use=agent == "codex")


def said(events: list[dict[str, Any]]) -> list[str]:
    return [
        str(e.get("summary_normal") or e.get("chunk"))
        for e in events
        if e.get("summary_normal") or e.get("chunk")
    ]


def test_a_question_decided_in_claude_codes_own_dialog_is_withdrawn_by_post_tool_use():
    d = desk("claude-code")
    token, asked = d.ask(
        dict(CLAUDE, hook_event_name="PermissionRequest", tool_name="Bash", tool_input=BASH),
        0.0,
        50,
    )
    assert token is not None
    assert said(asked)[-1] == (
        "Claude Code wants to run Bash: rm -rf build. It says: Clean the build folder. Allow?"
    )
    # another call first: it does not withdraw this question
    other, withdrawn = d.hook(
        dict(
            CLAUDE,
            hook_event_name="PostToolUse",
            tool_name="Bash",
            tool_use_id="toolu_0",
            tool_input={"command": "ls"},
            tool_response={},
        ),
        1.0,
    )
    assert withdrawn == []
    assert said(other) == ["Running Bash: ls.", "Bash finished: ls."]  # never "Bash was running."
    events, withdrawn = d.hook(
        dict(
            CLAUDE,
            hook_event_name="PostToolUse",
            tool_name="Bash",
            tool_use_id="toolu_1",
            tool_input=BASH,
            tool_response={},
        ),
        2.0,
    )
    assert withdrawn == [token]
    changes = [e for e in events if e["type"] == "aaep:agent.state.changed"]
    assert changes[0]["from_state"] == "awaiting_input"  # §6.8: this withdraws the question
    assert said(events) == [
        "Answered in Claude Code itself.",
        "Running Bash: rm -rf build.",
        "Bash finished: rm -rf build.",
    ]
    assert d.answered(token, "allow", 3.0) == []  # a late key answers nothing
    assert_valid(asked + other + events)


def test_stop_withdraws_what_is_still_open_and_speaks_the_last_message():
    d = desk("claude-code")
    token, _ = d.ask(
        dict(
            CLAUDE,
            hook_event_name="PreToolUse",
            tool_name="Bash",
            tool_use_id="toolu_1",
            tool_input=BASH,
        ),
        0.0,
        50,
    )
    events, withdrawn = d.hook(
        dict(
            CLAUDE,
            hook_event_name="Stop",
            stop_hook_active=False,
            last_assistant_message="I left the **build** folder alone.",
        ),
        5.0,
    )
    assert withdrawn == [token]
    assert said(events) == [
        "Claude Code went on without your answer.",
        "I left the build folder alone.",  # spoken, not read as markdown
        "Claude Code finished responding.",
    ]
    assert_valid(events)


def test_an_answer_moves_the_session_on_and_an_allowed_call_is_paired_with_its_result():
    d = desk("claude-code")
    payload = dict(CLAUDE, hook_event_name="PermissionRequest", tool_name="Bash", tool_input=BASH)
    token, asked = d.ask(payload, 0.0, 50)
    assert token is not None
    allowed = d.answered(token, "allow", 1.0)
    assert said(allowed) == ["Allowed.", "Running Bash: rm -rf build."]
    assert allowed[0]["from_state"] == "awaiting_input"
    done, withdrawn = d.hook(
        dict(
            CLAUDE,
            hook_event_name="PostToolUse",
            tool_name="Bash",
            tool_use_id="toolu_9",
            tool_input=BASH,
            tool_response={},
        ),
        2.0,
    )
    assert withdrawn == []
    assert said(done) == [
        "Bash finished: rm -rf build."
    ]  # "Running Bash: rm -rf build." was said at "allow"
    invoked = next(e for e in allowed if e["type"] == "aaep:agent.tool.invoked")
    completed = next(e for e in done if e["type"] == "aaep:agent.tool.completed")
    assert invoked["tool_call_id"] == completed["tool_call_id"]
    assert_valid(asked + allowed + done)


def test_no_answer_in_time_says_the_agent_asks_itself():
    d = desk("codex")
    token, asked = d.ask(
        dict(CODEX, hook_event_name="PermissionRequest", tool_name="Bash", tool_input=BASH), 0.0, 23
    )
    confirmation = next(e for e in asked if e["type"] == "aaep:agent.awaiting.confirmation")
    assert confirmation["extra_context"]["on_no_answer"] == "agent_asks"
    assert token is not None
    assert said(d.answered(token, None, 23.0)) == ["No answer in time: Codex will ask you itself."]


def test_a_redundant_permission_notification_is_dropped_and_counted():
    d = desk("claude-code")
    d.ask(
        dict(CLAUDE, hook_event_name="PermissionRequest", tool_name="Bash", tool_input=BASH),
        0.0,
        50,
    )
    notice = dict(
        CLAUDE,
        hook_event_name="Notification",
        message="Claude needs your permission to use Bash",
        notification_type="permission_prompt",
    )
    assert d.hook(notice, 0.5) == ([], [])
    assert d.dropped == {"repeats the question just asked": 1}
    idle = dict(
        CLAUDE,
        hook_event_name="Notification",
        message="Claude is waiting for your input",
        notification_type="idle_prompt",
    )
    assert said(d.hook(idle, 0.6)[0]) == ["Claude Code: Claude is waiting for your input"]


def test_codex_pre_tool_use_is_not_running_while_it_waits_for_the_user():
    d = desk("codex")
    pre = dict(
        CODEX, hook_event_name="PreToolUse", tool_name="Bash", tool_use_id="call_1", tool_input=BASH
    )
    assert d.hook(pre, 0.0) == ([], [])  # held: a question may follow
    assert d.next_due() == HOLD_PRE_TOOL_USE_SECONDS
    token, asked = d.ask(
        dict(CODEX, hook_event_name="PermissionRequest", tool_name="Bash", tool_input=BASH), 0.2, 23
    )
    assert token is not None
    assert not any("Running" in text for text in said(asked))
    assert d.next_due() is None
    denied = d.answered(token, "deny", 1.0)
    assert said(denied) == ["Denied."]
    stop = dict(
        CODEX,
        hook_event_name="Stop",
        stop_hook_active=False,
        last_assistant_message="I did not delete anything.",
    )
    events, _ = d.hook(stop, 2.0)
    heard = said(denied + events)
    assert not any("never reported back" in text or "timed out" in text for text in heard)
    assert heard == ["Denied.", "I did not delete anything.", "Codex finished responding."]
    assert_valid(asked + denied + events)


def test_codex_allowed_call_is_running_once_allowed():
    d = desk("codex")
    pre = dict(
        CODEX, hook_event_name="PreToolUse", tool_name="Bash", tool_use_id="call_1", tool_input=BASH
    )
    d.hook(pre, 0.0)
    token, _ = d.ask(
        dict(CODEX, hook_event_name="PermissionRequest", tool_name="Bash", tool_input=BASH), 0.2, 23
    )
    assert token is not None
    assert said(d.answered(token, "allow", 1.0)) == ["Allowed.", "Running Bash: rm -rf build."]
    post = dict(pre, hook_event_name="PostToolUse", tool_response={"output": ""})
    assert said(d.hook(post, 2.0)[0]) == ["Bash finished: rm -rf build."]


def test_codex_pre_tool_use_with_no_question_is_said_after_the_hold():
    d = desk("codex")
    d.hook(
        dict(
            CODEX,
            hook_event_name="PreToolUse",
            tool_name="Bash",
            tool_use_id="call_2",
            tool_input={"command": "ls"},
        ),
        0.0,
    )
    assert d.due(HOLD_PRE_TOOL_USE_SECONDS / 2) == []
    assert said(d.due(HOLD_PRE_TOOL_USE_SECONDS)) == ["Codex session started.", "Running Bash: ls."]
    # a result arriving before the hold ends releases it first, in order
    d.hook(
        dict(
            CODEX,
            hook_event_name="PreToolUse",
            tool_name="Bash",
            tool_use_id="call_3",
            tool_input={"command": "pwd"},
        ),
        5.0,
    )
    post = dict(
        CODEX,
        hook_event_name="PostToolUse",
        tool_name="Bash",
        tool_use_id="call_3",
        tool_input={"command": "pwd"},
        tool_response={},
    )
    assert said(d.hook(post, 5.1)[0]) == ["Running Bash: pwd.", "Bash finished: pwd."]


def test_codex_interrupt_and_post_compact_are_heard():
    d = desk("codex")
    heard = said(d.hook(dict(CODEX, hook_event_name="PostCompact", trigger="auto"), 0.0)[0])
    assert heard[-1] == "Codex compacted its context."
    heard = said(d.hook(dict(CODEX, hook_event_name="Interrupt"), 1.0)[0])
    assert heard[-1] == "Codex stopped: the turn was interrupted."


def test_the_engine_and_the_textual_ui_say_the_agent_asks_itself_never_rejected():
    """What the user hears and reads for a hook question, and when its time is up."""
    import time

    from announcer.engine.pipeline import Engine
    from announcer.engine.speech_commands import Speak, SpeechCommand
    from announcer.ui.tui.prompt_view import ConfirmationView

    d = desk("codex")
    now = time.time()
    _token, events = d.ask(
        dict(CODEX, hook_event_name="PermissionRequest", tool_name="Bash", tool_input=BASH), now, 23
    )
    engine = Engine()
    spoken: list[str] = []

    def speak(commands: list[SpeechCommand], at: float) -> None:
        # a speech driver: each utterance ends before the next is asked for (the engine
        # paces its speech, so a question waits for the words before it to be said)
        while commands:
            command = commands.pop(0)
            if isinstance(command, Speak):
                spoken.append(command.announcement.text)
                commands += engine.on_speech_done(command.utterance_id, at)

    for event in events:
        speak(engine.receive(event, "hooks:test", now), now)
    speak(engine.tick(now + 0.1), now + 0.1)
    question = next(text for text in spoken if "Codex wants to run" in text)
    assert "It says: Clean the build folder." in question
    assert "If you do not answer within 23 seconds, Codex will ask you itself." in question
    assert "rejected" not in question
    [prompt] = engine.pending_prompts()
    phrase = ConfirmationView.of(prompt).default_phrase("en")
    assert phrase == "If you do not answer within 23 seconds, Codex will ask you itself."
    # time is up: the hook answers "ask", so the agent asks; nothing was rejected
    del spoken[:]
    speak(engine.tick(now + 24), now + 24)
    assert spoken == [
        "Time is up; the agent will ask you itself: "
        "Codex wants to run Bash: rm -rf build. It says: Clean the build folder."
    ]
    assert engine.pending_prompts() == []
    assert not [e for e in engine.transcript() if "rejected" in e.announcement.text]


def test_what_the_desk_remembers_stays_bounded():
    from announcer.formats.hooks import MAX_REMEMBERED

    d = desk("claude-code")
    for number in range(MAX_REMEMBERED + 50):
        payload = dict(
            CLAUDE,
            session_id=f"s{number}",
            hook_event_name="PermissionRequest",
            tool_name="Bash",
            tool_input={"command": f"echo {number}"},
        )
        token, _ = d.ask(payload, float(number), 50)
        assert token is not None
        d.answered(token, "allow", float(number))  # allowed calls that never report back
    assert len(d.opened) <= MAX_REMEMBERED
    assert len(d.last_asked) <= MAX_REMEMBERED
    assert d.questions == {}


def test_in_claude_p_no_answer_is_said_to_be_a_rejection_because_it_is_one():
    """`claude -p` has no dialog: a hook's "ask" is a denial (seen in the agent lab)."""
    import time

    from announcer.engine.pipeline import Engine
    from announcer.engine.speech_commands import Speak
    from announcer.formats.hooks import UNATTENDED_KEY
    from announcer.transports.hook_client import UNATTENDED_KEY as SENT_AS
    from announcer.transports.hook_client import agent_attended
    from announcer.ui.tui.prompt_view import ConfirmationView

    # what Claude Code 2.1.330 puts in its hooks' environment
    assert agent_attended("claude-code", {"CLAUDE_CODE_SESSION_ATTENDED": "0"}) is False
    assert agent_attended("claude-code", {"CLAUDE_CODE_ENTRYPOINT": "sdk-cli"}) is False
    assert (
        agent_attended(
            "claude-code", {"CLAUDE_CODE_SESSION_ATTENDED": "1", "CLAUDE_CODE_ENTRYPOINT": "cli"}
        )
        is True
    )
    assert agent_attended("claude-code", {}) is None
    assert agent_attended("codex", {"CLAUDE_CODE_SESSION_ATTENDED": "0"}) is None
    assert SENT_AS == UNATTENDED_KEY

    d = desk("claude-code")
    now = time.time()
    payload = dict(CLAUDE, hook_event_name="PermissionRequest", tool_name="Bash", tool_input=BASH)
    token, events = d.ask({**payload, UNATTENDED_KEY: True}, now, 23)
    assert token is not None
    engine = Engine()
    spoken: list[str] = []
    commands = [c for event in events for c in engine.receive(event, "hooks:test", now)]
    while commands:
        command = commands.pop(0)
        if isinstance(command, Speak):
            spoken.append(command.announcement.text)
            commands += engine.on_speech_done(command.utterance_id, now)
    question = next(text for text in spoken if "Claude Code wants to run" in text)
    assert "If you do not answer within 23 seconds, it will be rejected." in question
    assert "ask you itself" not in question
    [prompt] = engine.pending_prompts()
    assert ConfirmationView.of(prompt).default_phrase("en") == (
        "If you do not answer within 23 seconds, it will be rejected."
    )
    assert said(d.answered(token, None, now + 24)) == [
        "No answer in time: Claude Code will not run it."
    ]
    # with someone at Claude Code's own dialog, or when we cannot tell: it asks itself
    token, _ = d.ask({**payload, UNATTENDED_KEY: False}, now + 30, 23)
    assert token is not None
    assert said(d.answered(token, None, now + 54)) == [
        "No answer in time: Claude Code will ask you itself."
    ]


async def test_the_textual_dialog_and_its_timeout_say_the_agent_asks_itself():
    """The real Textual app (Pilot) on the real engine: the dialog's line, then time's up."""
    import json

    from announcer.ui.tui.app import AnnouncerApp
    from announcer.ui.tui.modals import ConfirmScreen
    from tests.ui.test_with_engine import EngineHarness

    h = EngineHarness()
    d = desk("codex")
    _token, events = d.ask(
        dict(CODEX, hook_event_name="PermissionRequest", tool_name="Bash", tool_input=BASH),
        h.clock.now,
        23,
    )
    app = AnnouncerApp(h.session)
    async with app.run_test() as pilot:
        for event in events:
            h.session.receive(json.dumps(event), "hooks:test")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ConfirmScreen)
        line = str(screen.query_one("#time").content)
        assert line == "If you do not answer within 23 seconds, Codex will ask you itself."
        h.clock.now += 24
        # The app's own half-second timer may run before the engine's void reaches it (a
        # loaded run did): it must leave the closing, and its words, to the engine.
        app.check_deadlines()
        h.session.tick()
        await pilot.pause()
        assert not isinstance(app.screen, ConfirmScreen)
    assert h.said(
        "Time is up; the agent will ask you itself: Codex wants to run Bash: rm -rf build."
    )
    assert not [text for text in h.spoken() if "rejected" in text]
