"""The plain line interface: one line per announcement, answers typed on standard input.

For screen-reader users who prefer a shell to a full-screen UI, and for
scripts. Output is append-only and never redraws. Every prompt line names what it
asks about (``Accept or reject: Delete the database? [a/r]``); clarifications ask by
kind (free text, yes/no,
numbered choices, numbers checked before sending), and the engine's spoken
questions name these typed answers (``TYPED_LINE_ANSWER_KEYS``), not the
Textual dialogs' single keys. A line answers only the question printed and spoken
before it: after a question appears or replaces another, answers wait out the arming
interval (announcer.engine.answer_guard), and accepting a risky confirmation takes a
second line, ``c``. Lines starting with ``:``
are commands (``:help``). Producer text is printed literally, with terminal
control characters removed so a producer cannot drive the terminal.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import shlex
import stat
import sys
import threading
from collections import OrderedDict, deque
from typing import Any, TextIO

from announcer.command_analysis import (
    analyse,
    for_display,
    literal_for_speech,
    scan_text,
    whole_for_speech,
)
from announcer.engine.announcement import Announcement, Urgency
from announcer.engine.answer_guard import (
    KeyGuard,
    KeyVerdict,
    accept_needs_two_keys,
    command_of,
    confirm_step_action,
    confirm_step_text,
    is_high_risk,
    plan_for_display,
    plan_for_speech,
    plan_of,
    reads_literally,
    withdrawn_text,
)
from announcer.engine.answer_keys import LONE_ANSWER_WORDS, TYPED_LINE_ANSWER_KEYS
from announcer.engine.earcons import earcon_label
from announcer.engine.phrases import N_
from announcer.engine.prompts import PendingPrompt, UserAnswer, always_decisions
from announcer.engine.settings import UserSettings
from announcer.i18n.format import format_number
from announcer.i18n.numbers import read_number
from announcer.i18n.translate import catalog_language, translator
from announcer.protocol.sanitise import clean_display
from announcer.runtime.contract import SessionStatus, UiSession
from announcer.ui.status import connection_words, sources_words

# Typed answers to a question; never sent to an agent as a message (see _to_agent).
_ANSWER_WORDS = LONE_ANSWER_WORDS
# Typed answers that the agent remembers (ACP "allow always" / "reject always").
_ALWAYS_WORDS = {"always": "accept", "never": "reject"}
SPEECH_KEPT = 256
HELP = N_(
    "Commands: :verbosity terse|normal|detailed, :load low|medium|high, :status, :repeat, "
    ":diagnostics, :cancel (stop the agent's turn), :commands (the agent's slash commands), "
    ":quit"
)
# Said with :help when several agents run side by side.
AGENTS_HELP = N_(
    "With several agents: @NAME message sends to that agent (later messages go there too), "
    ":to NAME switches, :to alone says where messages go, :cancel NAME and :commands NAME "
    "act on that agent."
)

# Said with :help when an agent runs here.
AGENT_SETTINGS_HELP = N_(
    ":mode and :model say the agent's mode and model and their choices; :mode NAME or "
    ":model NAME changes it."
)
# Said with :help when an agent runs here, after the line above.
AGENT_SESSIONS_HELP = N_(":sessions lists the agent's sessions; :sessions N resumes one.")


def clean(text: str) -> str:
    """Producer text, literally, minus anything that could drive the terminal."""
    return clean_display(text).strip()


class PlainUi:
    def __init__(self, out: TextIO | None = None, inp: TextIO | None = None) -> None:
        self.out = out or sys.stdout
        self.inp = inp or sys.stdin
        self.session: UiSession | None = None
        self._queue: deque[PendingPrompt] = deque()
        self._current: PendingPrompt | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._tasks: set[asyncio.Future[Any]] = set()
        self.guard = KeyGuard()
        # When speech about each recent event began, and the engine's words for questions.
        self._speech_starts: OrderedDict[str, float] = OrderedDict()
        self._question_words: OrderedDict[str, str] = OrderedDict()
        self._own_words: deque[str] = deque(maxlen=32)
        self._closed_at = float("-inf")  # when the last question left the screen
        # questions whose reject-only line was shown once accept's time was over (§6.4)
        self._accept_over_shown: set[str] = set()
        self._reader: threading.Thread | None = None
        # Input is being read (in the loop or a thread): attached again, it goes on so.
        self._reading = False
        # The demo ended (``demo_over``): a line now chooses to run it again or to quit.
        self._demo_over = False
        self._input_ended = False
        # Typed input read by the event loop (_read_in_loop): bytes to text, line by line.
        self._decoder: codecs.IncrementalDecoder = codecs.getincrementaldecoder("utf-8")(
            errors="replace"
        )
        self._partial = ""
        # the input read in the event loop (its fd), so it can be handed to a login
        self._fd: int | None = None
        # an agent's terminal login offered: (its answer, how many logins, when keys work)
        self._login: tuple[asyncio.Future[int | None], int, float] | None = None

    # ---- wiring ------------------------------------------------------------------------

    def attach(self, session: UiSession) -> None:
        self.session = session
        self._loop = asyncio.get_running_loop()
        settings = session.settings
        self.guard.configure(
            settings.answer_arming_seconds, settings.pace_wpm, settings.two_key_accept
        )
        # Spoken questions say "Type A to accept or R to reject, then press Enter."
        session.set_answer_keys(TYPED_LINE_ANSWER_KEYS)
        # Attached again (the demo run again): a fresh start, on the same input reader.
        self._queue.clear()
        self._current = None
        self._demo_over = False
        session.subscribe(self)
        if self._reading:
            return
        self._reading = True
        if self._read_in_loop():
            return
        self._reader = threading.Thread(target=self._read_lines, name="plain-ui-input", daemon=True)
        self._reader.start()

    def _read_in_loop(self) -> bool:
        """Read a pipe or a terminal in the event loop itself (POSIX), not in a thread.

        A line is then handled in the loop turn after it arrives. From a thread it first
        waited for the interpreter lock and then for a turn: under a flood, with the
        machine busy, that hop alone was up to 75 ms of a key's answer
        (benchmarks/flood.py). Files, Windows and test streams keep the thread.
        """
        loop = self._loop
        try:
            fd = self.inp.fileno()
            mode = os.fstat(fd).st_mode
        except (AttributeError, OSError, ValueError):
            return False
        if loop is None or not (stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or stat.S_ISSOCK(mode)):
            return False
        encoding = getattr(self.inp, "encoding", None) or "utf-8"
        try:
            self._decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
            loop.add_reader(fd, self._readable, fd)
        except (LookupError, NotImplementedError, OSError, ValueError, RuntimeError):
            return False
        self._fd = fd
        return True

    def _readable(self, fd: int) -> None:
        try:
            data = os.read(fd, 65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:  # end of input: the last line, even without its line ending
            if self._loop is not None:
                self._loop.remove_reader(fd)
            rest = self._partial + self._decoder.decode(b"", final=True)
            self._partial = ""
            if rest:
                self._on_line(rest.rstrip("\r"))
            self._end_of_input()
            return
        self._partial += self._decoder.decode(data)
        while "\n" in self._partial:
            line, _, self._partial = self._partial.partition("\n")
            self._on_line(line.rstrip("\r"))

    def _read_lines(self) -> None:
        loop = self._loop
        assert loop is not None
        for line in self.inp:
            with contextlib.suppress(RuntimeError):  # the loop has closed
                loop.call_soon_threadsafe(self._on_line, line.rstrip("\r\n"))
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(self._end_of_input)

    def _end_of_input(self) -> None:
        self._input_ended = True
        if self._demo_over:
            self._quit_when_quiet()

    # ---- the demo's end ----------------------------------------------------------------

    def demo_over(self) -> None:
        """The demo's agent is done: say so, and how to run it again or leave (issue 14)."""
        self._demo_over = True
        self._say_demo_over()
        if self._input_ended:  # a script piped its lines in: nobody is left to choose
            self._quit_when_quiet()

    def _say_demo_over(self) -> None:
        text = self._tr(
            "The demo is over. Type r and press Enter to run it again, "
            "or q and press Enter to quit."
        )
        self._print(text)
        self._speak(text, at_once=False)

    def _demo_choice(self, text: str) -> None:
        session = self.session
        if session is None:
            return
        choice = text.lower().lstrip(":")
        if choice in ("r", "again") and session.request_again():
            return
        if choice in ("q", "quit", "exit"):
            session.stop()
            return
        self._say_demo_over()

    def _quit_when_quiet(self) -> None:
        """Stop once the last words are said (bounded: a stuck voice never keeps us here)."""

        async def wait() -> None:
            session = self.session
            for _ in range(150):
                if session is None or session.is_quiet():
                    break
                await asyncio.sleep(0.1)
            if session is not None:
                session.stop()

        task = asyncio.ensure_future(wait())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _tr(self, message: str) -> str:
        """The interface's own words, in the user's language (babel.cfg extracts ``_tr``)."""
        languages = self.session.settings.languages if self.session is not None else ["en"]
        return translator(catalog_language(languages)).gettext(message)

    def _print(self, text: str) -> None:
        with contextlib.suppress(BrokenPipeError, ValueError):
            print(text, file=self.out, flush=True)

    # ---- SessionListener ---------------------------------------------------------------

    def _now(self) -> float:
        return float(self.session.now()) if self.session is not None else self._loop_time()

    def _loop_time(self) -> float:
        return self._loop.time() if self._loop is not None else 0.0

    def _remember(self, table: OrderedDict[str, Any], key: str, value: Any) -> None:
        table[key] = value
        table.move_to_end(key)
        while len(table) > SPEECH_KEPT:
            table.popitem(last=False)

    def _speak(
        self, text: str, prompt: PendingPrompt | None = None, *, at_once: bool = True
    ) -> None:
        """Say a sentence of ours; tied to its question if any.

        ``at_once``: the answer to the user's own line, cutting what is being said;
        otherwise it follows what is being said (a question read again).
        """
        session = self.session
        self._own_words.append(text)
        if session is None:
            if prompt is not None:  # nothing speaks: the printed line is the presentation
                self.guard.speech_started(prompt.reply_token, self._now())
            return
        if prompt is not None and session.reports_speech_start:
            session.speak(text, Urgency.CRITICAL, at_once, event_id=prompt.event_id)
            return
        session.speak(text, Urgency.CRITICAL, at_once)
        if prompt is not None:
            self.guard.speech_started(prompt.reply_token, self._now(), text)

    def announcement_made(self, announcement: Announcement) -> None:
        self._print_announcement(announcement)
        current = self._current
        if (
            announcement.kind == "system.accept_over"
            and current is not None
            and current.kind == "confirmation"
            and current.reply_token not in self._accept_over_shown
            and not self._accept_open(current)
        ):
            # The engine said accept's time is over: the key line now offers reject only.
            if len(self._accept_over_shown) > SPEECH_KEPT:
                self._accept_over_shown.clear()
            self._accept_over_shown.add(current.reply_token)
            self._ask(current, command=False)

    def _print_announcement(self, announcement: Announcement) -> None:
        if announcement.event_id:
            now = self._now()
            self._remember(self._speech_starts, announcement.event_id, now)
            current = self._current
            if current is not None and current.event_id == announcement.event_id:
                # ``w``'s answer says the whole question: heard once it is said through.
                self.guard.speech_started(
                    current.reply_token, now, announcement.text, whole=announcement.answers_key
                )
            if announcement.kind.startswith("agent.awaiting"):
                self._remember(
                    self._question_words, announcement.event_id, clean(announcement.text)
                )
        if announcement.kind == "system.ui" and announcement.text in self._own_words:
            self._own_words.remove(announcement.text)
            return  # our own words, echoed back by the runtime: already printed
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

    def announcement_skipped(self, announcement: Announcement) -> None:
        """Speech fell behind and skipped this news: printed, marked, so nothing is lost."""
        text = clean(announcement.text)
        if announcement.kind == "system.ui" or not text:
            return
        self._print(self._tr("Skipped: {text}").format(text=text))

    def prompt_opened(self, prompt: PendingPrompt) -> None:
        self._queue.append(prompt)
        if self._current is None:
            self._next_prompt(fresh=True)

    def prompt_voided(self, reply_token: str, reason: str) -> None:
        self._queue = deque(p for p in self._queue if p.reply_token != reply_token)
        if self._current is not None and self._current.reply_token == reply_token:
            self.guard.hide(reply_token)
            self._closed_at = self._now()
            self._current = None
            self._next_prompt()

    def status_changed(self, status: SessionStatus) -> None:
        return None

    # ---- prompts -----------------------------------------------------------------------

    def _next_prompt(self, *, fresh: bool = False) -> None:
        """Show the next waiting question; its answer keys arm from now (answer_guard).

        ``fresh``: it arrived this moment, so the engine is reading it out now; a
        question shown later (after another closed) is read out again here, unless the
        engine presents one question at a time (``session.presented_prompt``) and reads
        it itself when its turn comes.
        """
        self._current = self._queue.popleft() if self._queue else None
        prompt = self._current
        if prompt is None:
            return
        # With no voice the printed line is what the user was told: keys arm at once
        # (after the arming interval); with one, once the question's speech has started.
        self.guard.voice_working = self._voice_works()
        self.guard.present(prompt.reply_token, self._now())
        started = self._speech_starts.get(prompt.event_id)
        engine_reads_it = self.session is not None and self.session.presents_prompts
        if started is not None and (fresh or (engine_reads_it and started >= self._closed_at)):
            # read out this turn; its words say when it will have been said through
            words = self._question_words.get(prompt.event_id, "")
            self.guard.speech_started(prompt.reply_token, started, words)
        line = self._ask(prompt)
        if not fresh and not engine_reads_it:
            words = self._question_words.get(prompt.event_id) or line
            now_answering = self._tr("Now answering: {question}").format(question=words)
            self._speak(now_answering, prompt, at_once=False)

    def _voice_works(self) -> bool:
        session = self.session
        return session is not None and session.speech_output() not in ("none", "printed text")

    def _print_command(self, prompt: PendingPrompt) -> None:
        """What will run, whole, line by line (issue 22: never cut, never only a title)."""
        command = command_of(prompt.event)
        plan = plan_of(prompt.event)
        if command is None and plan is not None:
            # a plan approval: the whole plan, line by line (said by steps; W reads it whole)
            self._print(self._tr("Plan:"))
            for line in plan_for_display(plan):
                self._print(f"  | {line}")
            return
        if command is None:
            # a producer's own words naming a dangerous command: shown, so the two keys
            # it takes are explained (risk follows the command, never the label alone)
            found = scan_text(str(event_field(prompt.event, "action") or ""))
            if found is not None:
                self._print(self._tr("Dangerous: {parts}").format(parts="; ".join(found.dangerous)))
            return
        analysis = analyse(command)
        lines = for_display(analysis).split("\n")
        self._print(self._tr("Command:") + (" " + lines[0] if len(lines) == 1 else ""))
        if len(lines) > 1:
            for line in lines:
                self._print(f"  | {line}")
        if analysis.hidden:
            self._print(
                self._ngettext(
                    "It had {count} hidden character, taken out here.",
                    "It had {count} hidden characters, taken out here.",
                    analysis.hidden,
                ).format(count=analysis.hidden)
            )

    def _languages(self) -> list[str]:
        return self.session.settings.languages if self.session is not None else ["en"]

    def _ngettext(self, singular: str, plural: str, count: int) -> str:
        languages = self.session.settings.languages if self.session is not None else ["en"]
        return translator(catalog_language(languages)).ngettext(singular, plural, count)

    def _read_whole(self, prompt: PendingPrompt) -> None:
        """``w``: what will run (or a plan approval's plan), whole and literally, printed
        and said at once."""
        languages = self.session.settings.languages if self.session is not None else ["en"]
        command = command_of(prompt.event)
        plan = plan_of(prompt.event)
        if command is not None:
            text = whole_for_speech(analyse(command), catalog_language(languages))
        elif plan is not None:
            text = plan_for_speech(plan, catalog_language(languages))
        else:
            text = _action(prompt.event)
        self._print_command(prompt)
        # About the question: it cuts the question off at once, and once said through the
        # question counts as heard (docs/speech.md).
        self._speak(text, prompt)

    def _ask(self, prompt: PendingPrompt, *, command: bool = True) -> str:
        """Print the prompt line, which always names what it asks about (and, the first
        time, the whole command it would run)."""
        event = prompt.event
        who = f" ({clean(prompt.producer_name)})" if prompt.producer_name else ""
        if prompt.kind == "confirmation" and getattr(prompt, "malformed", False):
            # §10.1.3: shown so it can be rejected; accept is never offered.
            line = self._tr("Reject only, this request was malformed: {action}? [r]").format(
                action=_action(event)
            )
            self._print(line + who)
            return line + who
        if prompt.kind == "confirmation" and not self._accept_open(prompt):
            # §6.4: accept's time is over; reject stays possible until the deadline.
            line = self._tr("Reject only, the time to accept is over: {action}? [r]").format(
                action=_action(event)
            )
            self._print(line + who)
            return line + who
        if prompt.kind == "confirmation":
            if command:
                self._print_command(prompt)
            always = always_decisions(event)
            if always:
                line = self._tr(
                    "Accept or reject: {action}? [a/r; always or never: from now on]"
                ).format(action=_action(event))
            else:
                line = self._tr("Accept or reject: {action}? [a/r]").format(action=_action(event))
            self._print(line + who)
            return line + who
        kind = _clarification_kind(event)
        question = _question(event)
        if kind == "yes_no":
            line = self._tr("Yes or no: {question} [y/n]").format(question=question)
        elif kind == "multiple_choice":
            for number, choice in enumerate(_choices(event), start=1):
                self._print(f"  {number}. {clean(choice[1])}")
            if _takes_text(event):
                line = self._tr(
                    "Choose a number from 1 to {count}, or type your own answer: {question}"
                ).format(count=len(_choices(event)), question=question)
            elif _also_numeric(event):
                line = self._tr(
                    "Choose a number from 1 to {count}, or type any other number: {question}"
                ).format(count=len(_choices(event)), question=question)
            else:
                line = self._tr("Choose a number from 1 to {count}: {question}").format(
                    count=len(_choices(event)), question=question
                )
        elif kind == "numeric":
            line = self._tr("Type a number: {question}").format(question=question)
        else:
            line = self._tr("Type your answer and press Enter: {question}").format(
                question=question
            )
        self._print(line + who)
        return line + who

    def _refused(self, prompt: PendingPrompt, verdict: KeyVerdict) -> None:
        """Say why a line did nothing. A line before the question was heard gets a
        two-word cue (at most once in a moment) and nothing more: the question goes on,
        and is never read again for it (issue 20)."""
        if not verdict.message:
            self._print(self._tr("Not yet."))
            return
        reason = self._tr(verdict.message)
        self._print(reason)
        # An early key's cue follows the words being said: cutting the question off would
        # read it again from its start, and a user pressing on would never hear it whole.
        self._speak(reason, at_once=verdict.code not in ("arming", "not_heard"))

    def _on_line(self, line: str) -> None:
        text = line.strip()
        if self._demo_over:
            self._demo_choice(text)
            return
        if self._login is not None:
            self._login_line(text)
            return
        if text.startswith(":"):
            self._command(text[1:].split())
            return
        if text.startswith("@") and self._to_agent(text) is not None:
            return  # "@codex fix it" is a message, never an answer, even with a question open
        prompt = self._current
        if prompt is None:
            # With an agent, the line is a message to it (its answer is announced, and so
            # printed); otherwise there is nothing to answer.
            if text and self._to_agent(text) is None:
                self._say_line(self._tr("No question is waiting. Type :help for commands."))
            return
        if prompt.kind == "confirmation" and text.lower() in ("w", "whole"):
            self._read_whole(prompt)
            return
        if self.guard.confirming and self.guard.shown == prompt.reply_token:
            answer = self._confirm_step(prompt, text.lower())
            if answer is None:
                return
        else:
            answer = self._parse(prompt, text)
            if answer is None:
                self._ask(prompt, command=False)
                return
            confirmation = prompt.kind == "confirmation"
            verdict = self.guard.press(
                prompt.reply_token,
                _intent(prompt, answer),
                self._now(),
                two_keys=confirmation
                and accept_needs_two_keys(prompt.event, self.guard.two_key_rule),
                key=text.lower(),
                must_be_heard=confirmation and is_high_risk(prompt.event),
            )
            if verdict.kind == "confirm_step":
                # The action by its first words: a long command is not read again.
                template = self._tr(confirm_step_text(verdict.intent, typed=True))
                action = _short_action(prompt.event)
                self._print(template.format(action=action))
                if reads_literally(prompt.event):  # a command's symbols named (issue 21)
                    action = literal_for_speech(action, catalog_language(self._languages()))
                self._speak(template.format(action=action))
                return
            if not verdict.sends:
                self._refused(prompt, verdict)
                return
        assert self.session is not None
        session = self.session
        self._current = None
        self.guard.hide(prompt.reply_token)
        self._closed_at = self._now()

        async def send() -> None:
            outcome = await session.answer_async(answer)
            said = clean(outcome.message)
            self._print(said)
            self._speak(said)  # the answer to the user's own key is heard, not only shown
            if self._current is not None:
                return  # another question is already on screen
            still_open = any(p.reply_token == prompt.reply_token for p in session.pending_prompts())
            if not outcome.sent and still_open:
                self._current = prompt  # the answer was not usable: ask again
                self.guard.present(prompt.reply_token, self._now())
                self.guard.speech_started(prompt.reply_token, self._now())
                self._ask(prompt)
                return
            self._next_prompt()

        task = asyncio.ensure_future(send())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _confirm_step(self, prompt: PendingPrompt, typed: str) -> UserAnswer | None:
        """The second line of a risky accept: ``c`` confirms, r rejects, anything else goes back."""
        token = prompt.reply_token
        if typed in ("c", "confirm"):
            verdict = self.guard.press(token, "confirm", self._now(), key=typed)
            if verdict.sends:
                decision, _, always = verdict.intent.partition("_")
                return UserAnswer(
                    token,
                    event_id=prompt.event_id,
                    decision=decision,
                    scope="always" if always else "once",
                )
            self._refused(prompt, verdict)
            return None
        if typed in ("r", "reject", "n"):
            self.guard.press(token, "back", self._now(), key=typed)
            verdict = self.guard.press(token, "reject", self._now(), key=typed)
            if verdict.sends:
                return UserAnswer(token, event_id=prompt.event_id, decision="reject")
            self._refused(prompt, verdict)
            return None
        back = self.guard.press(token, "back", self._now(), key=typed)
        withdrawn = self._tr(back.message or withdrawn_text("accept"))
        self._print(withdrawn)
        self._speak(withdrawn)
        self._ask(prompt, command=False)
        return None

    def _to_agent(self, text: str) -> str | None:
        """With an agent (``announcer agent``), a line with no question open is a message.

        A lone answer word ("a", "reject") is never sent: it was meant for a question that
        has just closed, and the user hears that none is waiting instead.
        """
        session = self.session
        if session is None or text.lower() in _ANSWER_WORDS:
            return None
        if text.startswith("@"):
            # "@codex fix the test": to that agent only (and later messages go there too)
            target, _, message = text[1:].partition(" ")
            if not message.strip():
                # "@codex" alone is ":to codex"; "@" alone is ":agents" (the session speaks)
                said = session.address_agent(target)
                if said is None:
                    return self._say_line(
                        self._tr("Type @ and an agent's name, a space, then your message.")
                    )
                return str(said)
            return session.send_prompt(message.strip(), target)
        return session.send_prompt(text)

    # ---- an agent's own terminal login (ACP "terminal" auth methods) --------------------

    async def offer_login(
        self, agent: str, choices: list[tuple[str, list[str], dict[str, str]]], cwd: str
    ) -> int | None:
        """An agent needs a login it can do in this terminal: say so and how, run the one
        the user picks by its number (N: not now) with the terminal handed to it, and
        return its exit status; None when nothing ran. announcer types nothing into it."""
        loop = self._loop
        if loop is None or self._fd is None or self._input_ended or not choices:
            return None  # input read by a thread (or over): the terminal cannot be handed
        offer = self._tr(
            "{agent} needs you to log in. Type the number of a login to run it here, "
            "in this terminal, or N for not now."
        ).format(agent=clean(agent))
        listed = [
            f"{number}. {clean(name)}: {clean(shlex.join([os.path.basename(argv[0]), *argv[1:]]))}"
            for number, (name, argv, _env) in enumerate(choices, start=1)
        ]
        self._print(offer)
        for line in listed:
            self._print(f"  {line}")
        self._speak(" ".join([offer, *listed]), at_once=False)  # the agent asks: not a key
        future: asyncio.Future[int | None] = loop.create_future()
        arming = self.session.settings.answer_arming_seconds if self.session is not None else 1.0
        self._login = (future, len(choices), self._now() + arming)
        try:
            picked = await future
        finally:
            self._login = None
        if picked is None:
            return None
        _name, argv, env = choices[picked]
        self._say_line(
            self._tr("Logging in with {command}. announcer goes on when it ends.").format(
                command=clean(shlex.join([os.path.basename(argv[0]), *argv[1:]]))
            )
        )
        fd = self._fd
        loop.remove_reader(fd)  # the login reads the terminal now, not announcer
        code: int | None = None
        from announcer.ui.terminal_login import run_login

        try:  # on the loop: a signal still ends announcer, and the login with it
            code = await run_login(argv, env, cwd)
        except OSError as exc:
            self._print(str(exc))
        finally:
            if not self._input_ended:
                loop.add_reader(fd, self._readable, fd)
        if code == 0:
            self._say_line(self._tr("The login is done. Starting {agent} again.").format(
                agent=clean(agent)))  # fmt: skip
        else:
            self._say_line(self._tr("The login did not finish (status {code}).").format(code=code))
        return code

    def _login_line(self, text: str) -> None:
        assert self._login is not None
        future, count, armed_at = self._login
        if future.done():
            return
        if text.casefold() in ("n", "no", "not now"):
            future.set_result(None)
        elif text.isdigit() and 1 <= int(text) <= count:
            if self._now() < armed_at:  # typed before the offer could be heard
                self._say_line(self._tr("Not yet."))
                return
            future.set_result(int(text) - 1)
        else:
            self._say_line(
                self._tr("Type a number from 1 to {count}, or N for not now.").format(count=count)
            )

    def _say_line(self, text: str) -> str:
        self._print(text)
        self._speak(text)
        return text

    def _accept_open(self, prompt: PendingPrompt) -> bool:
        """The engine's word on whether accept may still be sent (§6.4)."""
        return self.session is None or self.session.accept_open(prompt)

    def _parse(self, prompt: PendingPrompt, text: str) -> UserAnswer | None:
        lowered = text.lower()
        if prompt.kind == "confirmation":
            # a/r as printed and spoken; y/n too, as the Textual dialog also takes them.
            if lowered in ("a", "accept", "y") and getattr(prompt, "malformed", False):
                refusal = self._tr("This request was malformed, so only reject is offered.")
                self._print(refusal)
                self._speak(refusal)
                return None
            if lowered in ("a", "accept", "y", "always") and not self._accept_open(prompt):
                refusal = self._tr(
                    "Too late to accept: the agent's time for this ran out. You can still reject."
                )
                self._print(refusal)
                self._speak(refusal)
                return None
            if lowered in ("a", "accept", "y"):
                return UserAnswer(prompt.reply_token, event_id=prompt.event_id, decision="accept")
            if lowered in ("r", "reject", "n"):
                return UserAnswer(prompt.reply_token, event_id=prompt.event_id, decision="reject")
            always = always_decisions(prompt.event)
            if lowered in _ALWAYS_WORDS and _ALWAYS_WORDS[lowered] in always:
                return UserAnswer(
                    prompt.reply_token,
                    event_id=prompt.event_id,
                    decision=_ALWAYS_WORDS[lowered],
                    scope="always",
                )
            if lowered in _ALWAYS_WORDS:
                self._say_line(self._tr("The agent offers no always answer for this question."))
            self._print(
                self._tr("Please type a to accept or r to reject: {action}").format(
                    action=_action(prompt.event)
                )
            )
            # every refusal is heard, not only printed (issue 20); briefly
            self._speak(self._tr("Type A to accept or R to reject, then press Enter."))
            return None
        event = prompt.event
        kind = _clarification_kind(event)
        if kind == "yes_no":
            if lowered in ("y", "yes"):
                return UserAnswer(prompt.reply_token, event_id=prompt.event_id, response=True)
            if lowered in ("n", "no"):
                return UserAnswer(prompt.reply_token, event_id=prompt.event_id, response=False)
            self._say_line(self._tr("Please type y for yes or n for no."))
            return None
        if kind == "multiple_choice":
            choices = _choices(event)
            if text.isdigit() and 1 <= int(text) <= len(choices):
                return UserAnswer(
                    prompt.reply_token, event_id=prompt.event_id, response=choices[int(text) - 1][0]
                )
            for value, _label in choices:
                if text.strip() == value:  # the choice's own value, as typed
                    return UserAnswer(prompt.reply_token, event_id=prompt.event_id, response=value)
            if text.strip() and not text.isdigit() and _takes_text(event):
                # choices or your own words, as the question says (§4.4.2 several kinds)
                return UserAnswer(prompt.reply_token, event_id=prompt.event_id, response=text)
            if not _also_numeric(event):
                self._say_line(
                    self._tr("Please type a number from 1 to {count}.").format(count=len(choices))
                )
                return None
            # §6.5.2: "the producer accepts any of the listed kinds": any other number
        if kind in ("numeric", "multiple_choice"):
            # §6.5.2: a plain number as the user's language writes it; never 2.5e3.
            languages = self.session.settings.languages if self.session is not None else ["en"]
            language = catalog_language(languages)
            reading = read_number(text, language)
            if reading.value is None:
                if reading.problem == "too_large":
                    self._say_line(self._tr("That number is too large to send exactly."))
                else:
                    self._say_line(
                        self._tr(
                            "That is not a number. Please type a number, like 3 or {example}."
                        ).format(example=format_number(2.5, language))
                    )
                return None
            return UserAnswer(prompt.reply_token, event_id=prompt.event_id, response=reading.value)
        if not text:
            self._say_line(self._tr("The answer is empty."))
            return None
        return UserAnswer(prompt.reply_token, event_id=prompt.event_id, response=text)

    def _command(self, words: list[str]) -> None:
        session = self.session
        if session is None or not words:
            self._help()
            return
        name, args = words[0].lower(), words[1:]
        if name in ("quit", "q", "exit"):
            session.stop()
        elif name == "status":
            self._print(self._status_line(session.status))
        elif name == "repeat":
            session.repeat_last()
        elif name in ("diagnostics", "diag"):
            for line in session.diagnostics_report() or [
                self._tr("Diagnostics: nothing has been dropped.")
            ]:
                self._print(clean_display(line).rstrip())
        elif name == "cancel":
            target = " ".join(args).lstrip("@") or None
            task = asyncio.ensure_future(session.cancel_turn(target))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        elif name in ("to", "agents"):
            target = " ".join(args).lstrip("@") if name == "to" else ""
            said = session.address_agent(target)
            if said is None:
                self._print(self._tr("No agent is running here."))
        elif name in ("mode", "model"):
            # the agent's own mode or model: listed with no name, changed with one
            change = session.change_setting(name, " ".join(args))
            task = asyncio.ensure_future(change)
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        elif name == "sessions":
            # the agent's sessions (session/list), and :sessions N resumes one
            listing = session.agent_sessions(" ".join(args))
            task = asyncio.ensure_future(listing)
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        elif name == "commands":
            target = " ".join(args).lstrip("@") or None
            found = session.agent_commands(target)
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
                unknown = (
                    self._tr("Unknown verbosity {value}.")
                    if name == "verbosity"
                    else self._tr("Unknown load {value}.")
                )
                self._print(f"{unknown.format(value=repr(args[0]))} {self._tr(HELP)}")
                return
            session.update_settings(updated)
            now_is = (
                self._tr("Verbosity is now {level}.")
                if name == "verbosity"
                else self._tr("Load is now {level}.")
            )
            self._print(now_is.format(level=self._tr(args[0])))
        else:
            self._help()

    def _status_line(self, status: SessionStatus) -> str:
        """``:status``: the connection, the producers and the questions waiting, in words."""
        languages = self.session.settings.languages if self.session is not None else ["en"]
        t = translator(catalog_language(languages))
        return t.ngettext(
            "{connection}; {producers}; {count} question waiting",
            "{connection}; {producers}; {count} questions waiting",
            status.pending_prompts,
        ).format(
            connection=connection_words(status, t.gettext),
            producers=sources_words(status, t.gettext),
            count=status.pending_prompts,
        )

    def _help(self) -> None:
        self._print(self._tr(HELP))
        agents = self.session.agents() if self.session is not None else []
        if agents:
            self._print(self._tr(AGENT_SETTINGS_HELP))
            self._print(self._tr(AGENT_SESSIONS_HELP))
        if len(agents) > 1:
            self._print(self._tr(AGENTS_HELP))


def event_field(event: object, name: str) -> Any:
    """A field of a prompt's event: a protocol model, or a plain dict from elsewhere."""
    if isinstance(event, dict):
        return event.get(name)
    return getattr(event, name, None)


def _intent(prompt: PendingPrompt, answer: UserAnswer) -> Any:
    if prompt.kind != "confirmation":
        return "answer"
    decision = "accept" if answer.decision == "accept" else "reject"
    return f"{decision}_always" if answer.scope == "always" else decision


def _action(event: object) -> str:
    """What a confirmation asks to do, on one line (the prompt line names it)."""
    text = event_field(event, "action") or event_field(event, "summary_normal") or "?"
    return clean(" ".join(str(text).split())).rstrip(".?")


def _short_action(event: object) -> str:
    """The action by its first sentence, for the confirm step (the question was just heard)."""
    return confirm_step_action(_action(event), command_of(event))


def _question(event: object) -> str:
    text = event_field(event, "question") or event_field(event, "summary_normal") or ""
    return clean(" ".join(str(text).split()))


def _clarification_kind(event: object) -> str:
    kinds = event_field(event, "accepted_response_kinds") or ["freetext"]
    if "multiple_choice" in kinds and _choices(event):
        return "multiple_choice"
    for kind in ("yes_no", "numeric", "freetext"):
        if kind in kinds:
            return kind
    return "freetext"


def _takes_text(event: object) -> bool:
    return "freetext" in (event_field(event, "accepted_response_kinds") or [])


def _also_numeric(event: object) -> bool:
    """A multiple choice that also takes a number (§4.4.2's own example: ages)."""
    return "numeric" in (event_field(event, "accepted_response_kinds") or [])


def _choices(event: object) -> list[tuple[str, str]]:
    """(value, label) pairs, from a protocol model or a plain dict."""
    pairs = []
    for choice in event_field(event, "choices") or []:
        value = event_field(choice, "value")
        label = event_field(choice, "label") or value
        if isinstance(value, str):
            pairs.append((value, str(label)))
    return pairs
