"""The plain line interface: one line per announcement, answers typed on standard input.

For screen-reader users who prefer a shell to a full-screen UI, and for
scripts. Output is append-only and never redraws. Confirmations ask
``Accept or reject? [a/r]``; clarifications ask by kind (free text, yes/no,
numbered choices, numbers checked before sending), and the engine's spoken
questions name these typed answers (``TYPED_LINE_ANSWER_KEYS``), not the
Textual dialogs' single keys. Lines starting with ``:``
are commands (``:help``). Producer text is printed literally, with terminal
control characters removed so a producer cannot drive the terminal.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import sys
import threading
from collections import deque
from typing import Any, Protocol, TextIO

from announcer.engine.announcement import Announcement, Urgency
from announcer.engine.answer_keys import TYPED_LINE_ANSWER_KEYS
from announcer.engine.earcons import earcon_label
from announcer.engine.phrases import N_
from announcer.engine.prompts import PendingPrompt, UserAnswer
from announcer.engine.settings import UserSettings
from announcer.i18n.translate import catalog_language, translator
from announcer.protocol.sanitise import clean_display

# Typed answers to a question; never sent to an agent as a message (see _to_agent).
_ANSWER_WORDS = frozenset({"a", "r", "y", "n", "accept", "reject", "yes", "no"})
HELP = N_(
    "Commands: :verbosity terse|normal|detailed, :load low|medium|high, :status, :repeat, "
    ":diagnostics, :cancel (stop the agent's turn), :commands (the agent's slash commands), "
    ":quit"
)


class _Session(Protocol):
    settings: UserSettings

    def subscribe(self, listener: Any) -> None: ...

    async def answer_async(self, answer: UserAnswer) -> Any: ...

    def update_settings(self, settings: UserSettings) -> None: ...

    def pending_prompts(self) -> list[PendingPrompt]: ...

    def repeat_last(self) -> None: ...

    def stop(self) -> None: ...

    @property
    def status(self) -> Any: ...


def clean(text: str) -> str:
    """Producer text, literally, minus anything that could drive the terminal."""
    return clean_display(text).strip()


class PlainUi:
    def __init__(self, out: TextIO | None = None, inp: TextIO | None = None) -> None:
        self.out = out or sys.stdout
        self.inp = inp or sys.stdin
        self.session: _Session | None = None
        self._queue: deque[PendingPrompt] = deque()
        self._current: PendingPrompt | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._tasks: set[asyncio.Future[None]] = set()

    # ---- wiring ------------------------------------------------------------------------

    def attach(self, session: _Session) -> None:
        self.session = session
        self._loop = asyncio.get_running_loop()
        # Spoken questions say "Type A to accept or R to reject, then press Enter."
        set_answer_keys = getattr(session, "set_answer_keys", None)
        if set_answer_keys is not None:
            set_answer_keys(TYPED_LINE_ANSWER_KEYS)
        session.subscribe(self)
        thread = threading.Thread(target=self._read_lines, name="plain-ui-input", daemon=True)
        thread.start()

    def _read_lines(self) -> None:
        loop = self._loop
        assert loop is not None
        for line in self.inp:
            with contextlib.suppress(RuntimeError):  # the loop has closed
                loop.call_soon_threadsafe(self._on_line, line.rstrip("\r\n"))

    def _tr(self, message: str) -> str:
        """The interface's own words, in the user's language once a catalog has them.

        Not yet extracted into the catalogs (they need translating into every shipped
        language first); until then this returns the English text.
        """
        languages = self.session.settings.languages if self.session is not None else ["en"]
        return translator(catalog_language(languages)).gettext(message)

    def _print(self, text: str) -> None:
        with contextlib.suppress(BrokenPipeError, ValueError):
            print(text, file=self.out, flush=True)

    # ---- SessionListener ---------------------------------------------------------------

    def announcement_made(self, announcement: Announcement) -> None:
        text = clean(announcement.text)
        label = earcon_label(announcement.earcon)
        if label is not None and (self.session is None or self.session.settings.earcons):
            # the earcon's text equivalent: "[needs you] Confirmation needed. …"
            text = f"{self._tr(label)} {text}".strip()
        if not text:
            return
        if announcement.urgency is Urgency.CRITICAL and not announcement.kind.startswith(
            "agent.awaiting"
        ):
            text = f"! {text}"
        self._print(text)

    def prompt_opened(self, prompt: PendingPrompt) -> None:
        self._queue.append(prompt)
        if self._current is None:
            self._next_prompt()

    def prompt_voided(self, reply_token: str, reason: str) -> None:
        self._queue = deque(p for p in self._queue if p.reply_token != reply_token)
        if self._current is not None and self._current.reply_token == reply_token:
            self._current = None
            self._next_prompt()

    def status_changed(self, status: Any) -> None:
        return None

    # ---- prompts -----------------------------------------------------------------------

    def _next_prompt(self) -> None:
        self._current = self._queue.popleft() if self._queue else None
        if self._current is not None:
            self._ask(self._current)

    def _ask(self, prompt: PendingPrompt) -> None:
        event = prompt.event
        who = f" ({clean(prompt.producer_name)})" if prompt.producer_name else ""
        if prompt.kind == "confirmation":
            self._print(self._tr("Accept or reject? [a/r]") + who)
            return
        kind = _clarification_kind(event)
        if kind == "yes_no":
            self._print(self._tr("Yes or no? [y/n]") + who)
        elif kind == "multiple_choice":
            for number, choice in enumerate(_choices(event), start=1):
                self._print(f"  {number}. {clean(choice[1])}")
            self._print(
                self._tr("Choose a number from 1 to {count}:").format(count=len(_choices(event)))
                + who
            )
        elif kind == "numeric":
            self._print(self._tr("Type a number:") + who)
        else:
            self._print(self._tr("Type your answer and press Enter:") + who)

    def _on_line(self, line: str) -> None:
        text = line.strip()
        if text.startswith(":"):
            self._command(text[1:].split())
            return
        prompt = self._current
        if prompt is None:
            # With an agent, the line is a message to it (its answer is announced, and so
            # printed); otherwise there is nothing to answer.
            if text and self._to_agent(text) is None:
                self._print(self._tr("No question is waiting. Type :help for commands."))
            return
        answer = self._parse(prompt, text)
        if answer is None:
            self._ask(prompt)
            return
        assert self.session is not None
        session = self.session
        self._current = None

        async def send() -> None:
            outcome = await session.answer_async(answer)
            self._print(clean(outcome.message))
            if self._current is not None:
                return  # another question is already on screen
            still_open = any(p.reply_token == prompt.reply_token for p in session.pending_prompts())
            if not outcome.sent and still_open:
                self._current = prompt  # the answer was not usable: ask again
                self._ask(prompt)
                return
            self._next_prompt()

        task = asyncio.ensure_future(send())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _to_agent(self, text: str) -> str | None:
        """With an agent (``announcer agent``), a line with no question open is a message.

        A lone answer word ("a", "reject") is never sent: it was meant for a question that
        has just closed, and the user hears that none is waiting instead.
        """
        send = getattr(self.session, "send_prompt", None)
        if not callable(send) or text.lower() in _ANSWER_WORDS:
            return None
        said: str | None = send(text)
        return said

    def _parse(self, prompt: PendingPrompt, text: str) -> UserAnswer | None:
        lowered = text.lower()
        if prompt.kind == "confirmation":
            # a/r as printed and spoken; y/n too, as the Textual dialog also takes them.
            if lowered in ("a", "accept", "y"):
                return UserAnswer(prompt.reply_token, decision="accept")
            if lowered in ("r", "reject", "n"):
                return UserAnswer(prompt.reply_token, decision="reject")
            self._print(self._tr("Please type a to accept or r to reject."))
            return None
        event = prompt.event
        kind = _clarification_kind(event)
        if kind == "yes_no":
            if lowered in ("y", "yes"):
                return UserAnswer(prompt.reply_token, response=True)
            if lowered in ("n", "no"):
                return UserAnswer(prompt.reply_token, response=False)
            self._print(self._tr("Please type y for yes or n for no."))
            return None
        if kind == "multiple_choice":
            choices = _choices(event)
            if text.isdigit() and 1 <= int(text) <= len(choices):
                return UserAnswer(prompt.reply_token, response=choices[int(text) - 1][0])
            self._print(
                self._tr("Please type a number from 1 to {count}.").format(count=len(choices))
            )
            return None
        if kind == "numeric":
            try:
                number = float(text.replace(",", "."))
            except ValueError:
                number = math.nan
            if not math.isfinite(number):
                self._print(self._tr("That is not a number. Please type a number, like 3 or 2.5."))
                return None
            value: int | float = int(number) if number.is_integer() else number
            return UserAnswer(prompt.reply_token, response=value)
        if not text:
            self._print(self._tr("The answer is empty."))
            return None
        return UserAnswer(prompt.reply_token, response=text)

    def _command(self, words: list[str]) -> None:
        session = self.session
        if session is None or not words:
            self._print(self._tr(HELP))
            return
        name, args = words[0].lower(), words[1:]
        if name in ("quit", "q", "exit"):
            session.stop()
        elif name == "status":
            status = session.status
            self._print(
                f"{status.connection}; {', '.join(status.producers)}; "
                f"{status.pending_prompts} question(s) waiting"
            )
        elif name == "repeat":
            session.repeat_last()
        elif name in ("diagnostics", "diag"):
            report = getattr(session, "diagnostics_report", None)
            lines = report() if callable(report) else []
            for line in lines or [self._tr("Diagnostics: nothing has been dropped.")]:
                self._print(clean_display(line).rstrip())
        elif name == "cancel" and callable(getattr(session, "cancel_turn", None)):
            task = asyncio.ensure_future(session.cancel_turn())  # type: ignore[attr-defined]
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        elif name == "commands" and callable(getattr(session, "agent_commands", None)):
            found = session.agent_commands()  # type: ignore[attr-defined]
            if not found:
                self._print(self._tr("The agent has listed no commands."))
            for command, description in found:
                self._print(clean(f"/{command}: {description}" if description else f"/{command}"))
        elif name in ("verbosity", "load") and args:
            key = "verbosity" if name == "verbosity" else "cognitive_load"
            try:
                updated = session.settings.model_copy(update={key: args[0]})
                updated = UserSettings.model_validate(updated.model_dump())
            except ValueError:
                self._print(f"Unknown {name} {args[0]!r}. {self._tr(HELP)}")
                return
            session.update_settings(updated)
            self._print(f"{name.capitalize()} is now {args[0]}.")
        else:
            self._print(self._tr(HELP))


def event_field(event: object, name: str) -> Any:
    """A field of a prompt's event: a protocol model, or a plain dict from elsewhere."""
    if isinstance(event, dict):
        return event.get(name)
    return getattr(event, name, None)


def _clarification_kind(event: object) -> str:
    kinds = event_field(event, "accepted_response_kinds") or ["freetext"]
    if "multiple_choice" in kinds and _choices(event):
        return "multiple_choice"
    for kind in ("yes_no", "numeric", "freetext"):
        if kind in kinds:
            return kind
    return "freetext"


def _choices(event: object) -> list[tuple[str, str]]:
    """(value, label) pairs, from a protocol model or a plain dict."""
    pairs = []
    for choice in event_field(event, "choices") or []:
        value = event_field(choice, "value")
        label = event_field(choice, "label") or value
        if isinstance(value, str):
            pairs.append((value, str(label)))
    return pairs
