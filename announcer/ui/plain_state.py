"""What the plain line interface holds, and the steps every room of it uses.

Its state (the output, the waiting questions, what was said lately), printing and
speaking a line, the clock, and reading a question's event (kind, action, choices).
The rooms above build on it: :mod:`announcer.ui.plain_questions` (asking and reading
answers), :mod:`announcer.ui.plain_commands` (``:`` commands) and
:mod:`announcer.ui.plain` (``PlainUi``: wiring, announcements, lines typed, logins).
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import sys
import threading
from collections import OrderedDict, deque
from typing import Any, TextIO

from announcer.engine.announcement import Urgency
from announcer.engine.answer_guard import (
    KeyGuard,
    command_of,
    confirm_step_action,
)
from announcer.engine.prompts import PendingPrompt, UserAnswer, set_aside_choice
from announcer.i18n.translate import catalog_language, translator
from announcer.protocol.sanitise import clean_display
from announcer.runtime.contract import UiSession

SPEECH_KEPT = 256


def clean(text: str) -> str:
    """Producer text, literally, minus anything that could drive the terminal."""
    return clean_display(text).strip()


class PlainState:
    """The plain UI's state and the steps every room uses."""

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
        # the offered logins that take two keys (issue 29 item 3), and the one picked,
        # waiting for its confirming line
        self._login_risky: dict[int, str] = {}
        self._login_confirming: int | None = None

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

    def _voice_works(self) -> bool:
        session = self.session
        return session is not None and session.speech_output() not in ("none", "printed text")

    def _languages(self) -> list[str]:
        return self.session.settings.languages if self.session is not None else ["en"]

    def _detailed(self) -> bool:
        """Detailed verbosity: our own sentences in their long forms (issue 30 item 2)."""
        return self.session is not None and self.session.settings.verbosity == "detailed"

    def _ngettext(self, singular: str, plural: str, count: int) -> str:
        languages = self.session.settings.languages if self.session is not None else ["en"]
        return translator(catalog_language(languages)).ngettext(singular, plural, count)

    def _say_line(self, text: str) -> str:
        self._print(text)
        self._speak(text)
        return text

    def _accept_open(self, prompt: PendingPrompt) -> bool:
        """The engine's word on whether accept may still be sent (§6.4)."""
        return self.session is None or self.session.accept_open(prompt)


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


def _action_as_written(event: object) -> str:
    """The action on one line with its own last stop (an action of several sentences)."""
    text = event_field(event, "action") or event_field(event, "summary_normal") or "?"
    return clean(" ".join(str(text).split()))


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


def _numbered(event: object) -> list[tuple[str, str]]:
    """The choices typed by number: all but announcer's own ways out of a form (issue 30
    item 3: decline and cancel are typed as words)."""
    return [pair for pair in _choices(event) if not set_aside_choice(event, pair[0])]


def _set_aside(event: object) -> list[tuple[str, str]]:
    """(value, label) of announcer's own ways out of a form: decline, cancel."""
    return [pair for pair in _choices(event) if set_aside_choice(event, pair[0])]


def _choices(event: object) -> list[tuple[str, str]]:
    """(value, label) pairs, from a protocol model or a plain dict."""
    pairs = []
    for choice in event_field(event, "choices") or []:
        value = event_field(choice, "value")
        label = event_field(choice, "label") or value
        if isinstance(value, str):
            pairs.append((value, str(label)))
    return pairs
