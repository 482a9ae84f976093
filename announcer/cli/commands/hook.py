"""``announcer hook claude-code|codex``: a hook command that asks the running announcer.

Register it in Claude Code's settings.json (docs/hooks.md). For PreToolUse and
PermissionRequest it forwards the payload over the hook bridge socket, waits for
the user's keyboard answer and prints Claude Code's hook output JSON. If no
announcer runs or nobody answers in time it prints ``ask`` so Claude Code shows
its own prompt: this command never allows by default. Other hook events are
forwarded without waiting and print nothing. ``announcer hook codex`` does the same
for Codex's PermissionRequest (its PreToolUse cannot answer "ask", so there it only
announces), and stays silent instead of "ask" so Codex shows its own approval.

``announcer hook serve`` is the announcer side with the plain line UI: it
prints what the agent does and asks each confirmation on the terminal
(y = allow, n = deny), in the user's language (``--language`` or the settings
file). The full runtime can host the same bridge.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from announcer.agents.files import hook_agents
from announcer.config.flags import add_language_flag

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Iterable

    from announcer.engine.settings import UserSettings
    from announcer.formats.hooks import HookDesk
    from announcer.transports.hook_client import HookAnswer

# Claude Code and Codex start `hook claude-code|codex` on every tool call and wait for
# it: this module imports only what parsing needs; the hook itself is
# `transports.hook_client` (standard library only) and `hook serve` imports the rest
# when it starts (benchmarks/startup.py).

# Claude Code's default command-hook timeout is 60 s; answer before it gives up.
DEFAULT_WAIT_SECONDS = 55.0


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "hook",
        help="coding-agent hook bridge: approve Claude Code and Codex tool calls by keyboard",
        description="Hook commands for coding agents (see docs/hooks.md).",
    )
    inner = parser.add_subparsers(dest="hook_command", metavar="AGENT")
    # ``hook AGENT`` for each agent file with ``[cli.hooks]``, read without pydantic (lean)
    for agent, known in hook_agents().items():
        hook = inner.add_parser(agent, help=f"run as a {known.title} hook (payload on stdin)")
        hook.add_argument("--socket", type=Path, default=None, help="hook bridge socket path")
        hook.add_argument(
            "--timeout",
            type=float,
            default=DEFAULT_WAIT_SECONDS,
            help="seconds to wait for your answer before answering 'ask' (default 55)",
        )
        hook.add_argument(
            "--detach",
            action="store_true",
            help="announce-only events: send from a background process and exit at once"
            ' (for hooks registered with "async": true; see docs/hooks.md)',
        )
        hook.set_defaults(func=run_hook, agent=agent)
    serve = inner.add_parser("serve", help="listen for hooks and answer them on this terminal")
    serve.add_argument("--socket", type=Path, default=None, help="hook bridge socket path")
    serve.add_argument(
        "--config", type=Path, default=None, metavar="PATH", help="settings file to use"
    )
    add_language_flag(serve)
    serve.set_defaults(func=run_serve)

    def show_help(_args: argparse.Namespace) -> int:
        parser.print_help()
        return 2

    parser.set_defaults(func=show_help)


def run_hook(args: argparse.Namespace) -> int:
    from announcer.transports.hook_client import run_hook as ask_and_print

    return ask_and_print(
        args.agent, timeout=float(args.timeout), path=args.socket, background=args.detach
    )


class PlainHookUi:
    """The plain line UI for the bridge: one line per announcement, y/n for confirmations."""

    def __init__(
        self,
        desks: dict[str, HookDesk],
        language: str = "en",
        settings: UserSettings | None = None,
        clock: Any = time.monotonic,
    ) -> None:
        import asyncio
        import threading

        from announcer.engine.answer_guard import KeyGuard
        from announcer.engine.settings import UserSettings
        from announcer.i18n.translate import translator

        self.desks = desks
        self.language = language
        self._ = translator(language).gettext  # our own words, in the user's language
        settings = settings or UserSettings()
        self.guard = KeyGuard(
            settings.answer_arming_seconds, settings.pace_wpm, settings.two_key_accept
        )
        # Printed only: the question on screen is its presentation (answer_guard).
        self.guard.voice_working = False
        self.clock = clock
        self.lock = asyncio.Lock()
        self.lines: asyncio.Queue[str | None] = asyncio.Queue()
        self.closed = False
        self._loop = asyncio.get_running_loop()
        # token -> set when the agent decided elsewhere (its own dialog, Stop)
        self.withdrawn: dict[str, asyncio.Future[None]] = {}
        self._timer: asyncio.TimerHandle | None = None
        threading.Thread(target=self._read_stdin, daemon=True).start()

    def _read_stdin(self) -> None:
        for line in sys.stdin:
            self._loop.call_soon_threadsafe(self.lines.put_nowait, line)
        self._loop.call_soon_threadsafe(self.lines.put_nowait, None)

    def say(self, events: Iterable[dict[str, Any]]) -> None:
        from announcer.formats.builder_fields import kept_quiet

        for event in events:
            if kept_quiet(event):
                continue  # on the record only: "Bash finished: ls." right after its start
            text = event.get("summary_normal") or event.get("chunk")
            if text:
                from announcer.protocol.sanitise import clean_display

                print(clean_display(str(text)), flush=True)  # agent text, never terminal codes

    async def handle(
        self, payload: dict[str, Any], blocking: bool, timeout: float, agent: str
    ) -> HookAnswer | None:
        import asyncio

        now = time.time()
        desk = self.desks[agent]
        if not blocking:
            events, withdrawn = desk.hook(payload, now)
            self.say(events)
            for token in withdrawn:
                future = self.withdrawn.get(token)
                if future is not None and not future.done():
                    future.set_result(None)
            self._schedule()
            return None
        # answer before the hook gives up, counting the wait for an earlier question too
        budget = max(0.5, timeout - 2)
        asked: list[str] = []  # the question's token, once it is asked
        withdrawn_here: asyncio.Future[None] = self._loop.create_future()
        ask = asyncio.ensure_future(self._ask(desk, payload, now, timeout, asked, withdrawn_here))
        try:
            racing: set[asyncio.Future[Any]] = {ask, withdrawn_here}
            done, _pending = await asyncio.wait(
                racing, timeout=budget, return_when=asyncio.FIRST_COMPLETED
            )
        except asyncio.CancelledError as stop:
            ask.cancel()  # no key may answer a question whose hook is gone
            from announcer.transports.hook_bridge import hook_hung_up

            if hook_hung_up(stop) and asked:
                self.say(desk.hung_up(asked[0], time.time()))
            raise
        finally:
            for token in asked:
                self.withdrawn.pop(token, None)
        if ask in done:
            answer = ask.result()
            if asked and answer is not None:
                # "Allowed." / "Denied." were printed with the key; say what follows
                self.say(
                    event
                    for event in desk.answered(asked[0], answer.decision, time.time())
                    if event.get("type") != "aaep:agent.state.changed"
                )
            return answer
        ask.cancel()
        if withdrawn_here.done():
            return None  # said when it was withdrawn; the agent no longer waits
        if asked:
            self.say(desk.answered(asked[0], None, time.time()))
        else:
            from announcer.formats.hooks import no_answer_sentence, unattended

            agent_name = desk.builder.agent_name
            print(no_answer_sentence(self._, agent_name, unattended(payload)), flush=True)
        return None

    def _schedule(self) -> None:
        """Say held Codex PreToolUse calls once their wait is over."""
        due = min(
            (d for d in (desk.next_due() for desk in self.desks.values()) if d is not None),
            default=None,
        )
        if due is None:
            return
        if self._timer is not None:
            self._timer.cancel()

        def release() -> None:
            self._timer = None
            for desk in self.desks.values():
                self.say(desk.due(time.time()))
            self._schedule()

        self._timer = self._loop.call_later(max(0.0, due - time.time()) + 0.01, release)

    async def _ask(
        self,
        desk: HookDesk,
        payload: dict[str, Any],
        now: float,
        timeout: float,
        asked: list[str],
        withdrawn: asyncio.Future[None],
    ) -> HookAnswer | None:
        async with self.lock:  # one question at a time
            self._drop_typed_ahead()
            if self.closed or withdrawn.done():
                return None
            from announcer.engine.answer_guard import accept_needs_two_keys

            token, events = desk.ask(payload, time.time(), timeout_seconds=int(timeout))
            if token is not None:
                asked.append(token)
                self.withdrawn[token] = withdrawn
            question = next(
                (e for e in events if str(e.get("type", "")).endswith("confirmation")), {}
            )
            key_token = token or f"hook-{now}"
            two_keys = accept_needs_two_keys(question, self.guard.two_key_rule)
            self.say(events)
            self._print_command(question)
            # Printed is presented: this question's keys arm from now (no speech here),
            # before its keys line, so whoever reads that line knows the arming has begun.
            self.guard.present(key_token, self.clock())
            self.guard.speech_started(key_token, self.clock())
            self._keys_line(two_keys)
            try:
                return await self._answer(key_token, two_keys, [question] if question else [])
            finally:
                self.guard.hide(key_token)

    def _print_command(self, question: dict[str, Any]) -> None:
        """What will run, whole, line by line (issue 22): never cut, never a title alone."""
        from announcer.command_analysis import for_display, why_sentences
        from announcer.engine.answer_guard import command_analysis_of

        analysis = command_analysis_of(question)
        if analysis is None:
            return
        print(self._("Command:"), flush=True)
        for line in for_display(analysis).split("\n"):
            print(f"  | {line}", flush=True)
        why = why_sentences(analysis, self.language)
        if why:  # cut, hidden, decoded...: why it cannot be read in full
            print(" ".join(why), flush=True)

    def _keys_line(self, two_keys: bool) -> None:
        if two_keys:
            print(
                self._("Press y then Enter, then c then Enter, to allow; n then Enter to deny."),
                flush=True,
            )
        else:
            print(self._("Press y then Enter to allow, n then Enter to deny."), flush=True)

    def _drop_typed_ahead(self) -> None:
        """Keys typed before the question was asked never answer it (never auto-accept)."""
        while not self.lines.empty():
            if self.lines.get_nowait() is None:
                self.closed = True

    async def _answer(
        self, token: str, two_keys: bool, events: list[dict[str, Any]]
    ) -> HookAnswer | None:
        from announcer.engine.answer_guard import ACCEPT_WITHDRAWN
        from announcer.transports.hook_client import HookAnswer

        guard = self.guard
        while True:
            line = await self.lines.get()
            if line is None:
                self.closed = True
                return None  # input closed: no decision, so the hook answers ask
            key = line.strip().lower()
            now = self.clock()
            if guard.confirming:
                if key in ("c", "confirm"):
                    verdict = guard.press(token, "confirm", now, key=key)
                elif key in ("n", "no", "d", "deny", "r", "reject"):
                    guard.press(token, "back", now, key=key)
                    verdict = guard.press(token, "reject", now, key=key)
                else:
                    guard.press(token, "back", now, key=key)
                    print(self._(ACCEPT_WITHDRAWN), flush=True)
                    self._keys_line(two_keys)
                    continue
                decision = "allow" if verdict.code == "confirmed" else "deny"
            elif key in ("y", "yes", "a", "allow", "accept"):
                verdict = guard.press(token, "accept", now, two_keys=two_keys, key=key)
                decision = "allow"
            elif key in ("n", "no", "d", "deny", "r", "reject"):
                verdict = guard.press(token, "reject", now, key=key)
                decision = "deny"
            else:
                print(self._("Please type y to allow or n to deny."), flush=True)
                continue
            if verdict.kind == "confirm_step":
                print(
                    self._("Allow? Type c then Enter to confirm; anything else goes back."),
                    flush=True,
                )
                continue
            if not verdict.sends:
                self._refused(verdict, token, events, two_keys)
                continue
            if decision == "allow":
                print(self._("Allowed."), flush=True)
                return HookAnswer("allow", "Allowed by the user in announcer.")
            print(self._("Denied."), flush=True)
            return HookAnswer("deny", "Denied by the user in announcer.")

    def _refused(
        self, verdict: Any, token: str, events: list[dict[str, Any]], two_keys: bool
    ) -> None:
        """Say why nothing was decided: a key before the question armed gets a two-word
        cue, and the question is not shown again (issue 20)."""
        print(self._(verdict.message or "Not yet."), flush=True)


async def _serve(path: Path, language: str, settings: UserSettings | None = None) -> None:
    import asyncio

    from announcer.formats import get_adapter
    from announcer.formats.hooks import HookDesk, MappedHookAdapter
    from announcer.i18n.translate import translator
    from announcer.transports.hook_bridge import HookBridgeServer

    desks = {}
    for agent, known in hook_agents().items():
        adapter = get_adapter(f"{agent}-hooks", language=language)
        assert isinstance(adapter, MappedHookAdapter)
        desks[agent] = HookDesk(adapter, hold_pre_tool_use=known.hold_pre_tool_use)
    ui = PlainHookUi(desks, language, settings)
    async with HookBridgeServer(ui.handle, path) as server:
        listening = translator(language).gettext(
            "Listening for Claude Code and Codex hooks on {path}."
        )
        print(listening.format(path=server.path), flush=True)
        await asyncio.Event().wait()


def run_serve(args: argparse.Namespace) -> int:
    import asyncio

    from announcer.config import load_settings
    from announcer.i18n.translate import catalog_language
    from announcer.transports.hook_client import default_socket_path

    path = args.socket or default_socket_path()
    settings = load_settings(args.config, flags={"language": args.language})
    try:
        asyncio.run(_serve(path, catalog_language(settings.languages), settings))
    except KeyboardInterrupt:
        return 0
    return 0


__all__ = ["register"]
