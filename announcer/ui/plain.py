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
import threading
from collections import deque

from announcer.command_analysis import (
    literal_for_speech,
)
from announcer.engine.announcement import SPEECH_OUTPUT_KIND, Announcement, Urgency, directed
from announcer.engine.answer_guard import (
    accept_needs_two_keys,
    confirm_step_short,
    confirm_step_text,
    is_high_risk,
    reads_literally,
)
from announcer.engine.answer_keys import LONE_ANSWER_WORDS, TYPED_LINE_ANSWER_KEYS
from announcer.engine.earcons import earcon_label
from announcer.engine.prompts import PendingPrompt, UserAnswer
from announcer.formats.acp_logins import LoginChoice, login_env_words
from announcer.i18n.translate import catalog_language
from announcer.runtime.contract import AnswerOutcome, SessionStatus, UiSession
from announcer.ui.plain_commands import COMMAND_NAMES as KNOWN
from announcer.ui.plain_commands import PlainCommands
from announcer.ui.plain_questions import PlainQuestions
from announcer.ui.plain_state import SPEECH_KEPT, _intent, _short_action, _takes_text, clean

# Typed answers to a question; never sent to an agent as a message (see _to_agent).
_ANSWER_WORDS = LONE_ANSWER_WORDS


class PlainUi(PlainCommands, PlainQuestions):
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
        if self.session is not None:
            self.session.input_ended()  # no answer can come from here any more (§5.3.1.4)
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

    # ---- SessionListener ---------------------------------------------------------------

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

    def announcement_said_again(self, announcement: Announcement) -> None:
        """Said again after an urgent message cut it off: its line was printed when it
        first started, so it is not printed twice (issue 29, item 14); a question's keys
        still follow its speech."""
        self._print_announcement(announcement, printed_already=True)

    def _print_announcement(
        self, announcement: Announcement, *, printed_already: bool = False
    ) -> None:
        if announcement.event_id:
            now = self._now()
            self._remember(self._speech_starts, announcement.event_id, now)
            current = self._current
            if current is not None and current.event_id == announcement.event_id:
                whole = announcement.answers_key  # ``w`` says it whole: heard once said through
                self.guard.speech_started(current.reply_token, now, announcement.text, whole=whole)
            if announcement.kind.startswith("agent.awaiting"):
                self._remember(
                    self._question_words, announcement.event_id, clean(announcement.text)
                )
        if printed_already:
            return
        if announcement.kind == SPEECH_OUTPUT_KIND:
            return  # a new voice says the switch; its notice is already on the terminal
        if announcement.kind == "system.ui" and announcement.text in self._own_words:
            self._own_words.remove(announcement.text)
            return  # our own words, echoed back by the runtime: already printed
        # §11.4: the producer's words in their declared direction, isolated, so a
        # right-to-left sentence cannot reorder what is printed around it (issue 29, 15)
        text = directed(clean(announcement.text), announcement.direction)
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

    def _on_line(self, line: str) -> None:
        text = line.strip()
        if self._demo_over:
            self._demo_choice(text)
            return
        if self._login is not None:
            self._login_line(text)
            return
        if text.startswith(":"):
            words = text[1:].split()
            self._command(words)
            if self._current is not None and (not words or words[0].lower() not in KNOWN):
                self._say_line(self._keys_help(self._current))  # help over a question
            return
        if text == "?" and self._current is not None and not _takes_text(self._current.event):
            # every key of the question, in full (a question taking text takes "?" as words)
            self._say_line(self._keys_help(self._current))
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
                cut_off=self.session is not None and self.session.question_cut(prompt),
            )
            if verdict.kind == "confirm_step":
                # The action by its first words: a long command is not read again.
                template = self._tr(confirm_step_text(verdict.intent, typed=True))
                action = _short_action(prompt.event)
                self._print(template.format(action=action))
                short = confirm_step_short(verdict.intent, typed=True)
                if short and not self._detailed():
                    # issue 30 item 2: heard short, as a screen reader says it; the line
                    # printed names the action
                    self._speak(self._tr(short))
                    return
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
            # the answer to the user's own key is heard, not only shown; briefly when
            # nothing else could be meant (issue 30 item 1)
            self._speak(self._short_echo(prompt, answer, outcome) or said)
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

    def _short_echo(
        self, prompt: PendingPrompt, answer: UserAnswer, outcome: AnswerOutcome
    ) -> str | None:
        """ "Sent.", as a screen reader says it, when the answer went to the one question
        the user was answering (issue 30 item 1); None for the whole echo ("Sent: accept."),
        which is always printed: at detailed verbosity, for an "always" answer (it lasts),
        and when another question or agent could be meant."""
        session = self.session
        if session is None or not outcome.sent or outcome.agent or self._detailed():
            return None
        if answer.scope == "always" or self._queue or len(session.agents()) > 1:
            return None
        others = [p for p in session.pending_prompts() if p.reply_token != prompt.reply_token]
        return None if others else self._tr("Sent.")

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

    async def offer_login(self, agent: str, choices: list[LoginChoice], cwd: str) -> int | None:
        """An agent needs a login it can do in this terminal: say so and how, with any
        environment the agent chose for it, run the one the user picks by its number (N:
        not now; a high-risk one takes a second line, C) with the terminal handed to it,
        and return its exit status; None when nothing ran. announcer types nothing into it."""
        loop = self._loop
        if loop is None or self._fd is None or self._input_ended or not choices:
            return None  # input read by a thread (or over): the terminal cannot be handed
        offer = self._tr(
            "{agent} needs you to log in. Type the number of a login to run it here, "
            "in this terminal, or N for not now."
        ).format(agent=clean(agent))
        listed: list[str] = []
        self._print(offer)
        for number, choice in enumerate(choices, start=1):
            program, *arguments = choice.argv
            command = clean(shlex.join([os.path.basename(program), *arguments]))
            listed.append(f"{number}. {clean(choice.name)}: {command}")
            self._print(f"  {listed[-1]}")
            # issue 29 item 3: the environment the agent chose is shown and said, its risk too
            for words in login_env_words(choice.reading, self._tr):
                if words:
                    listed.append(clean(words))
                    self._print(f"     {listed[-1]}")
        self._speak(" ".join([offer, *listed]), at_once=False)  # the agent asks: not a key
        future: asyncio.Future[int | None] = loop.create_future()
        arming = self.session.settings.answer_arming_seconds if self.session is not None else 1.0
        self._login = (future, len(choices), self._now() + arming)
        self._login_risky = {
            index: clean(login_env_words(choice.reading, self._tr)[1])
            for index, choice in enumerate(choices)
            if choice.reading.high_risk
        }
        self._login_confirming = None
        try:
            picked = await future
        finally:
            self._login = None
            self._login_confirming = None
        if picked is None:
            return None
        argv, env = list(choices[picked].argv), choices[picked].env
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
        confirming, self._login_confirming = self._login_confirming, None
        if confirming is not None:  # a high-risk login picked: C runs it, anything else not
            if text.casefold() == "c":
                future.set_result(confirming)
            else:
                self._say_line(self._tr("Not run. Type the number of a login, or N for not now."))
            return
        if text.casefold() in ("n", "no", "not now"):
            future.set_result(None)
        elif text.isdigit() and 1 <= int(text) <= count:
            if self._now() < armed_at:  # typed before the offer could be heard
                self._say_line(self._tr("Not yet."))
                return
            if int(text) - 1 in self._login_risky:  # two keys: say why, then C
                self._login_confirming = int(text) - 1
                confirm = self._tr(
                    "Run login {number}? Type c then Enter to run it; anything else goes back."
                ).format(number=int(text))
                self._say_line(f"{self._login_risky[int(text) - 1]} {confirm}")
                return
            future.set_result(int(text) - 1)
        else:
            self._say_line(
                self._tr("Type a number from 1 to {count}, or N for not now.").format(count=count)
            )
