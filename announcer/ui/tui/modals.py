"""Confirmation and clarification modals (§4.4.1, §4.4.2, chapter 6).

A confirmation may authorise a real, irreversible action, so nothing here
ever answers on the user's behalf: Accept needs ``a``, ``y`` or a press of
the Accept button, and for risky actions the focus starts on Reject. The
question is spoken once with one set of keys: when the engine has just read
it out (without keys, the app tells it so), the modal adds who asks and its
keys; otherwise the modal reads it whole. F2 always reads it whole.
"""

from __future__ import annotations

from typing import ClassVar, cast

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.events import Key
from textual.screen import ModalScreen, Screen
from textual.widget import Widget
from textual.widgets import Button, Input, OptionList, Static
from textual.widgets.option_list import Option

from announcer.engine.announcement import Urgency
from announcer.engine.answer_guard import (
    ACCEPT_WITHDRAWN,
    KeyVerdict,
    accept_needs_two_keys,
    confirm_step_short,
    confirm_step_text,
    is_high_risk,
)
from announcer.engine.prompts import PendingPrompt, UserAnswer, is_secret
from announcer.i18n.format import format_number
from announcer.i18n.numbers import read_number, typing_pattern
from announcer.ui.tui.accessibility import SteadyInput, WrappingFooter, option_text
from announcer.ui.tui.host import AnnouncerHost
from announcer.ui.tui.prompt_view import ClarificationView, ConfirmationView, producer_identity
from announcer.ui.tui.text import _, current_language, localize_bindings, ngettext, one_line

# How long a dialog waits for the engine to start reading its question before reading it.
ENGINE_READING_WAIT = 3.0

MODAL_CSS = """
PromptScreen { align: center middle; }
#dialog {
    width: 90%; max-width: 100; height: auto; max-height: 90%;
    border: solid $primary; padding: 0 1; background: $surface;
    overflow-y: auto; scrollbar-size-vertical: 1;
}
#details { height: auto; max-height: 60vh; }
.field { margin-bottom: 1; }
#buttons { height: 1; }
Button { margin-right: 2; }
OptionList { height: auto; max-height: 12; }
"""


class PromptScreen(ModalScreen[None]):
    """Shared behaviour: speak on open, quiet first focus, forward global keys."""

    DEFAULT_CSS = MODAL_CSS
    AUTO_FOCUS = ""  # focus is placed on purpose, on the safe control

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f2", "repeat_question", _("Say again")),
        Binding("ctrl+s", "app.stop_speech", _("Stop speech")),
        Binding("f3,ctrl+w", "app.where_am_i", _("Where am I")),
        Binding("f1,question_mark", "app.help", _("Help"), key_display="?"),
        *Screen.BINDINGS,  # Tab and Shift+Tab move focus
    ]

    def __init__(
        self,
        prompt: PendingPrompt,
        *,
        just_announced: bool = False,
        engine_reads_next: bool = False,
    ) -> None:
        super().__init__()
        self.prompt = prompt
        self.answered = False
        self.closed = False
        # The engine read the question out this moment (AnnouncerApp.open_prompt).
        self.just_announced = just_announced
        # The engine reads a waiting question itself when its turn comes (it presents
        # one question at a time): the dialog then adds who asks and the keys after it.
        self.engine_reads_next = engine_reads_next
        self.intro_pending = False

    @property
    def announcer(self) -> AnnouncerHost:
        return cast("AnnouncerHost", self.app)

    def on_mount(self) -> None:
        # Subclasses must not define on_mount: Textual calls every on_mount in the MRO.
        localize_bindings(self)
        self.set_class(self.announcer.settings.cognitive_load == "low", "-low-load")
        app = self.announcer
        token = self.prompt.reply_token
        # From now on keys answer this question, once it is armed (answer_guard): when
        # its speech starts, or at once (after the arming interval) when no voice works.
        silent = app.no_voice() or app.session.speech_output() == "none"
        app.key_guard.voice_working = not silent
        app.key_guard.present(token, app.session.now())
        # A question the engine has just read out (the live runtime) gets who asks and
        # the keys; otherwise (no engine, or opened later) the whole question is said here.
        engine_speaks = app.session.announces_prompts
        if self.just_announced and engine_speaks:
            started = app.speech_start_of(self.prompt.event_id)
            if started is not None:
                app.key_guard.speech_started(token, started)
            app.say_about(self.prompt, self.spoken_intro())
        elif self.engine_reads_next and engine_speaks:
            # Said when the engine's reading starts (AnnouncerApp._speech_began), so the
            # user hears the question, then who asks and the keys; read here if it never does.
            self.intro_pending = True
            self.set_timer(ENGINE_READING_WAIT, self._read_if_engine_did_not)
        else:
            app.say_about(self.prompt, self.spoken_question())
        self.focus_initial()

    def engine_reading_started(self) -> None:
        """The engine began reading this question: now say who asks and the keys."""
        if self.intro_pending and not self.closed:
            self.intro_pending = False
            self.announcer.say_about(self.prompt, self.spoken_intro())

    def _read_if_engine_did_not(self) -> None:
        if self.intro_pending and not self.closed:
            self.intro_pending = False
            self.announcer.say_about(self.prompt, self.spoken_question())

    def show_feedback(self, text: str) -> None:
        """The latest thing said about this question's keys, shown in the dialog."""
        found = self.query("#feedback")
        if found:
            feedback = found.first(Static)
            feedback.update(text)
        else:
            dialogs = self.query("#dialog")
            if not dialogs:
                return
            feedback = Static(text, markup=False, id="feedback", classes="field")
            dialogs.first().mount(feedback)
        # A full dialog (80x24) scrolls to bring it into view, below everything else.
        self.call_after_refresh(self._bring_into_view, feedback)

    def _bring_into_view(self, widget: Widget) -> None:
        if widget.is_attached and not self.closed:  # not gone with its dialog meanwhile
            widget.scroll_visible(animate=False)

    def focus_initial(self) -> None:
        raise NotImplementedError

    def details(self) -> VerticalScroll:
        """The producer's text scrolls on its own, so a long one never hides the answers."""
        scroll = VerticalScroll(id="details")
        scroll.accessible_name = _("Details")  # type: ignore[attr-defined]
        return scroll

    def focus_quietly(self, widget: Widget) -> None:
        """The question already says the keys; do not also read the focused button."""
        self.focus_spoken = widget
        widget.focus()

    def spoken_question(self) -> str:
        raise NotImplementedError

    def spoken_intro(self) -> str:
        raise NotImplementedError

    def answer_keys_phrase(self) -> str:
        """The dialog's answer keys, said after a key that answers nothing."""
        raise NotImplementedError

    def refuse_key(self, event: Key) -> bool:
        """A printable key that answers nothing here is told why at once, never ignored.

        Keys bound on this screen or the app (answers, help, where am I) and keys typed
        into a text field are not refused. True when the key was refused.
        """
        if isinstance(self.focused, Input) or not event.is_printable or not event.character:
            return False
        if event.key in self.active_bindings or event.character == " ":
            return False
        event.stop()
        self.announcer.say(
            " ".join(
                [
                    _("{key} is not an answer here.").format(key=event.character),
                    self.answer_keys_phrase(),
                ]
            ),
            Urgency.CRITICAL,
            interrupt=True,
        )
        return True

    def action_repeat_question(self) -> None:
        self.announcer.say_about(self.prompt, self.spoken_again(), interrupt=True)

    def spoken_again(self) -> str:
        """What F2 says: the question again."""
        return self.spoken_question()

    def now(self) -> float:
        return self.announcer.session.now()

    def refused(self, verdict: KeyVerdict) -> None:
        """Say why a key did nothing. An early key (issue 20) gets only a two-word cue,
        at most once in a moment, after the words being said: the question goes on, and
        is never read again for it."""
        if verdict.code in ("arming", "not_heard"):
            if verdict.message:
                self.announcer.say_cue(_(verdict.message))
            return
        # The answer to the user's own key, at once (no event_id: not news about it).
        self.announcer.say(_(verdict.message), Urgency.CRITICAL, interrupt=True)

    def send(self, answer: UserAnswer, described: str) -> None:
        """Answer once; a second key press after the first is ignored."""
        if self.answered or self.closed:
            return
        self.answered = True
        self.announcer.submit_answer(self.prompt, answer, described)
        self.close_dialog()

    def close_dialog(self) -> None:
        """Leave the screen and tell the app, which opens the next question."""
        if self.closed:
            return
        self.closed = True
        if self.is_attached and self.app.screen is self:
            self.dismiss(None)
        self.announcer.prompt_dialog_closed(self.prompt.reply_token)


class ConfirmScreen(PromptScreen, inherit_bindings=False):
    """Accept with ``a``/``y`` (then Enter when risky); reject with ``r``/``n``/Escape (§6.1).

    Where the agent offers them (ACP), Shift+A allows and Shift+R rejects "from now on";
    the agent remembers those, so each always takes Enter as a second key.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        # Every answer key is a priority binding, like Enter: priority bindings run as
        # each key arrives, the others only once the focused button has seen the key, so
        # "a" (or Shift+R) and Enter typed in one breath would otherwise reach the dialog
        # as Enter first, pressing the focused Reject button instead of confirming.
        Binding("a,y", "accept('letter')", _("Accept"), key_display="a", priority=True),
        Binding("r,n", "reject('letter')", _("Reject"), key_display="r", priority=True),
        # Not in the Footer (it would not fit 80 columns in every language): the dialog
        # shows and says these keys only when the agent offers them (extra_help).
        Binding("A", "always('accept_always')", _("Always allow"), show=False, priority=True),
        Binding("R", "always('reject_always')", _("Always reject"), show=False, priority=True),
        Binding("escape", "escape", _("Reject"), show=False, priority=True),
        # Enter confirms a pending accept whatever has focus; otherwise it presses the button.
        Binding("enter", "enter", show=False, priority=True),
        Binding("i", "repeat_question", _("Say again"), show=False),
        # Reads what will run, whole and literally (a long command is said as a summary).
        Binding("w", "read_whole", _("Whole command"), show=False),
        *PromptScreen.BINDINGS,
    ]

    def __init__(self, prompt: PendingPrompt, **reading: bool) -> None:
        super().__init__(prompt, **reading)
        self.view = ConfirmationView.of(prompt)
        self.spoken_title = _("Confirmation")
        self.two_keys = False  # set on mount, from the user's two_key_accept setting
        # accept's time is over (§6.4): only reject is shown, said and taken
        self.accept_over = False

    def compose(self) -> ComposeResult:
        view = self.view
        # a question late on arrival may offer reject only from the start (§6.4)
        self.accept_over = not view.malformed and not self.announcer.session.accept_open(
            self.prompt
        )
        with Vertical(id="dialog"):
            with self.details():
                yield Static(
                    _("Confirmation requested by {producer}").format(
                        producer=producer_identity(self.prompt)
                    ),
                    markup=False,
                    id="producer",
                    classes="field",
                )
                yield Static(
                    _("Action: {action}").format(action=view.action),
                    markup=False,
                    id="action",
                    classes="field",
                )
                if view.command is not None:
                    # What will run, whole, line by line (issue 22: never only the title).
                    yield Static(
                        _("Command:") + "\n" + view.command_display(),
                        markup=False,
                        id="command",
                        classes="field",
                    )
                    if view.hidden_note():
                        yield Static(view.hidden_note(), markup=False, id="hidden")
                elif view.plan is not None:
                    # a plan approval: the whole plan (said by steps; W reads it whole)
                    yield Static(
                        _("Plan:") + "\n" + view.plan_display(),
                        markup=False,
                        id="plan",
                        classes="field",
                    )
                elif view.dangerous_note():
                    yield Static(view.dangerous_note(), markup=False, id="dangerous")
                yield Static(
                    _("Consequence: {consequence}").format(consequence=view.consequence),
                    markup=False,
                    id="consequence",
                    classes="field",
                )
                yield Static(
                    f"{view.risk_phrase()}. {view.reversibility_phrase()}.",
                    markup=False,
                    id="risk",
                    classes="field",
                )
                yield Static(view.default_phrase(), markup=False, id="time", classes="field")
            if self._always_phrase():
                yield Static(self._always_phrase(), markup=False, id="always", classes="field")
            with Horizontal(id="buttons"):
                if not view.malformed and not self.accept_over:  # otherwise: reject only
                    yield Button(_("Accept (A)"), id="accept", variant="warning", compact=True)
                yield Button(_("Reject (R)"), id="reject", variant="primary", compact=True)
            # The second step of an accept, shown only while it waits for Enter.
            step = Static("", markup=False, id="step")
            step.display = False
            yield step
        yield WrappingFooter()

    def focus_initial(self) -> None:
        risky = self.view.is_risky or self.two_keys or self.view.malformed
        safe = "#reject" if risky else "#accept"
        self.focus_quietly(self.query_one(safe, Button))

    def spoken_question(self) -> str:
        self.two_keys = self._needs_two_keys()
        return self.view.spoken_question(
            self.announcer.settings.languages[0], self.two_keys, not self.accept_over
        )

    def spoken_again(self) -> str:
        """F2: the question again, no longer than its first reading (issue 30 item 8);
        whole, with who asks and the field names, at detailed verbosity."""
        self.two_keys = self._needs_two_keys()
        return self.view.spoken_question(
            self.announcer.settings.languages[0],
            self.two_keys,
            not self.accept_over,
            detailed=self.announcer.settings.verbosity == "detailed",
        )

    def _needs_two_keys(self) -> bool:
        return accept_needs_two_keys(self.prompt.event, self.announcer.settings.two_key_accept)

    def spoken_intro(self) -> str:
        """One short line of keys (issue 20); who asks only at detailed verbosity."""
        self.two_keys = self._needs_two_keys()
        settings = self.announcer.settings
        detailed = settings.verbosity == "detailed"
        brief = settings.verbosity == "terse" or settings.cognitive_load == "low"
        parts = [
            self.view.keys_phrase(
                self.two_keys, not self.accept_over, repeat=detailed, brief=brief and not detailed
            )
        ]
        if detailed:
            parts.insert(
                0, _("Asked by {producer}.").format(producer=producer_identity(self.prompt))
            )
        return " ".join(parts)

    def action_read_whole(self) -> None:
        """W: what will run, whole and literally, at once."""
        self.announcer.say_about(
            self.prompt,
            self.view.whole_for_speech(self.announcer.settings.languages[0]),
            interrupt=True,
        )

    def answer_keys_phrase(self) -> str:
        return self.view.keys_phrase(self.two_keys, not self.accept_over, repeat=True)

    def check_accept_open(self) -> None:
        """Once the engine says accept's time is over (§6.4), the dialog shows only reject:
        the accept button goes, the keys line and F2 say reject only, a pending accept's
        second step is withdrawn. The engine itself says so once; nothing is said here."""
        if self.accept_over or self.closed or self.view.malformed:
            return
        if self.announcer.session.accept_open(self.prompt):
            return
        self.accept_over = True
        guard = self.announcer.key_guard
        token = self.prompt.reply_token
        if guard.shown == token and guard.confirming_intent.startswith("accept"):
            guard.press(token, "back", self.now(), key="escape")  # the accept step ends
            self._show_step("")
        for button in self.query("#accept"):
            if button.has_focus:
                self.focus_quietly(self.query_one("#reject", Button))
            button.remove()
        for line in self.query("#always"):
            if self._always_phrase():
                cast("Static", line).update(self._always_phrase())
            else:
                line.remove()
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Accept keys leave the footer once accept's time is over (they are refused)."""
        accept_key = action == "accept" or (
            action == "always" and parameters[:1] == ("accept_always",)
        )
        return not (self.accept_over and accept_key)

    def _refuse_late_accept(self) -> None:
        self.announcer.say(
            " ".join(
                [
                    _(
                        "Too late to accept: the agent's time for this ran out. "
                        "You can still reject."
                    ),
                    self.answer_keys_phrase(),
                ]
            ),
            Urgency.CRITICAL,
            interrupt=True,
        )

    def extra_help(self) -> str:
        """Said after the Footer's keys by help: the agent's "always" keys, if offered,
        and W for a question about a command."""
        whole = (
            _("W reads the whole command.")
            if self.view.command is not None
            else _("W reads the whole plan.")
            if self.view.plan is not None
            else ""
        )
        return " ".join(part for part in (self._always_phrase(), whole) if part)

    def _always_phrase(self) -> str:
        """The agent's "always" keys; once accept's time is over, only Shift+R's."""
        if not self.accept_over:
            return self.view.always_phrase()
        if "reject" in self.view.always:
            return _("Shift+R then Enter rejects it from now on.")
        return ""

    def on_key(self, event: Key) -> None:
        if self.accept_over and event.key in ("a", "y", "A"):
            # the accept keys, no longer bound: refused at once, nothing is sent
            event.stop()
            self._refuse_late_accept()
            return
        self.refuse_key(event)

    def _press(self, intent: str, key: str) -> KeyVerdict:
        return self.announcer.key_guard.press(
            self.prompt.reply_token,
            intent,  # type: ignore[arg-type]
            self.now(),
            two_keys=self.two_keys,
            key=key,
            must_be_heard=is_high_risk(self.prompt.event),
            cut_off=self.announcer.session.question_cut(self.prompt),
        )

    def _action_words(self) -> str:
        return one_line(self.view.action).rstrip(".")

    def _short_action(self) -> str:
        return self.view.short_action()

    @on(Button.Pressed, "#accept")
    def _accept_button(self) -> None:
        self.action_accept("enter")

    @on(Button.Pressed, "#reject")
    def _reject_button(self) -> None:
        self.action_reject("enter")

    def action_accept(self, key: str = "letter") -> None:
        if self.answered or self.closed:
            return
        if self.view.malformed:
            self.announcer.say(
                _("This request was malformed, so only reject is offered."),
                Urgency.CRITICAL,
                interrupt=True,
            )
            return
        self.check_accept_open()
        if self.accept_over:
            self._refuse_late_accept()
            return
        verdict = self._press("accept", key)
        if verdict.kind == "confirm_step":
            # Issue 12: an irreversible or risky accept takes a second, different key.
            self._ask_second_key(verdict)
        elif verdict.sends:
            self._send_accept()
        else:
            self.refused(verdict)

    def action_always(self, intent: str) -> None:
        """Shift+A / Shift+R: the agent's "always" option, then Enter (it is remembered)."""
        if self.answered or self.closed:
            return
        decision = intent.partition("_")[0]
        if decision == "accept" and not self.view.malformed:
            self.check_accept_open()
            if self.accept_over:
                self._refuse_late_accept()
                return
        if self.view.malformed or decision not in self.view.always:
            self.announcer.say(
                " ".join(
                    [
                        _("The agent offers no always answer for this question."),
                        self.answer_keys_phrase(),
                    ]
                ),
                Urgency.CRITICAL,
                interrupt=True,
            )
            return
        verdict = self._press(intent, "shift")
        if verdict.kind == "confirm_step":
            self._ask_second_key(verdict)
        else:
            self.refused(verdict)

    def _ask_second_key(self, verdict: KeyVerdict) -> None:
        # The action by its first words: the question was just heard; a long command is
        # not read a second time (issue 20).
        template = _(confirm_step_text(verdict.intent))
        step = template.format(action=self._short_action())
        self._show_step(step)
        short = confirm_step_short(verdict.intent)
        if short and self.announcer.settings.verbosity != "detailed":
            # Issue 30 item 2: as a screen reader, "Enter."; the step naming
            # the action stays on screen, on F2 and at detailed verbosity.
            self.announcer.say(_(short), Urgency.CRITICAL, interrupt=True)
            return
        self.announcer.say(self._long_step(verdict.intent), Urgency.CRITICAL, interrupt=True)

    def _long_step(self, intent: str) -> str:
        """The confirm step naming the action, a command's symbols named (issue 21)."""
        template = _(confirm_step_text(intent))
        return template.format(action=self.view.spoken_words(self._short_action()))

    def action_repeat_question(self) -> None:
        """F2; in the confirm step, the step in its long form (what Enter will send)."""
        guard = self.announcer.key_guard
        intent = guard.confirming_intent
        if intent and guard.shown == self.prompt.reply_token:
            self.announcer.say(self._long_step(intent), Urgency.CRITICAL, interrupt=True)
            return
        super().action_repeat_question()

    def _show_step(self, text: str) -> None:
        step = self.query_one("#step", Static)
        step.update(text)
        step.display = bool(text)

    def _send_accept(self) -> None:
        self.check_accept_open()
        if self.accept_over:
            self._refuse_late_accept()
            return
        self.send(
            UserAnswer(self.prompt.reply_token, event_id=self.prompt.event_id, decision="accept"),
            _("Accepted: {action}").format(action=self._action_words()),
        )

    def _send_confirmed(self, intent: str) -> None:
        """The second key confirmed ``intent``: accept, or one of the "always" answers."""
        if intent == "accept_always":
            self.check_accept_open()
            if self.accept_over:
                self._refuse_late_accept()
                return
            described = _("Always allowed: {action}")
        elif intent == "reject_always":
            described = _("Always rejected: {action}")
        else:
            self._send_accept()
            return
        self.send(
            UserAnswer(
                self.prompt.reply_token,
                event_id=self.prompt.event_id,
                decision=intent.partition("_")[0],
                scope="always",
            ),
            described.format(action=self._action_words()),
        )

    def action_reject(self, key: str = "letter") -> None:
        if self.answered or self.closed:
            return
        verdict = self._press("reject", key)
        if not verdict.sends:
            self.refused(verdict)
            return
        self.send(
            UserAnswer(self.prompt.reply_token, event_id=self.prompt.event_id, decision="reject"),
            _("Rejected: {action}").format(action=self._action_words()),
        )

    def action_enter(self) -> None:
        guard = self.announcer.key_guard
        if guard.confirming and guard.shown == self.prompt.reply_token:
            verdict = self._press("confirm", "enter")
            if verdict.sends:
                self._send_confirmed(verdict.intent)
            else:
                self.refused(verdict)
            return
        focused = self.focused
        if isinstance(focused, Button):
            focused.press()

    def action_escape(self) -> None:
        guard = self.announcer.key_guard
        if guard.confirming and guard.shown == self.prompt.reply_token:
            back = self._press("back", "escape")
            self._show_step("")
            self.announcer.say(
                _(back.message or ACCEPT_WITHDRAWN), Urgency.CRITICAL, interrupt=True
            )
            return
        self.action_reject("escape")


class NumericInput(SteadyInput):
    """A number field that says why a key was refused instead of beeping.

    A refused key inside a number taints the entry (issue 22 item 6): the digits after
    it would make another number (``2.5e3`` became 2.53), so Enter refuses the whole
    entry and says why, until the field is emptied.
    """

    tainted = False

    def restricted(self) -> None:
        if self.value:
            self.tainted = True
        app = cast("AnnouncerHost", self.app)
        app.say(_("Only a number is accepted here, for example 42."), Urgency.CRITICAL)

    @on(Input.Changed)
    def _emptied(self, event: Input.Changed) -> None:
        if not event.value:
            self.tainted = False


def parse_number(text: str, language: str = "en") -> int | float | None:
    """§6.5.2: a plain number as the user's language writes it; anything else is None."""
    return read_number(text, language).value


def number_refusal(text: str, language: str) -> str | None:
    """Why a typed number cannot be sent, in words; None when it can."""
    reading = read_number(text, language)
    if reading.problem is None:
        return None
    shown = one_line(text) or _("Nothing")
    if reading.problem == "too_large":
        return _("{text} is too large to send exactly. Type a smaller number.").format(text=shown)
    return _("{text} is not a number. Type a number, for example {example}.").format(
        text=shown, example=format_number(2.5, language)
    )


class ClarifyScreen(PromptScreen, inherit_bindings=False):
    """One input per accepted response kind; Enter sends, Escape leaves it pending."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "later", _("Later")),
        *PromptScreen.BINDINGS,
    ]

    def __init__(self, prompt: PendingPrompt, **reading: bool) -> None:
        super().__init__(prompt, **reading)
        self.view = ClarificationView.of(prompt)
        self.spoken_title = _("Question")
        self._quiet_highlight = True

    def compose(self) -> ComposeResult:
        view = self.view
        with Vertical(id="dialog"):
            with self.details():
                yield Static(
                    _("Question from {producer}").format(producer=producer_identity(self.prompt)),
                    markup=False,
                    id="producer",
                    classes="field",
                )
                yield Static(view.question, markup=False, id="question", classes="field")
                if view.context:
                    yield Static(view.context, markup=False, id="context", classes="field")
            if "multiple_choice" in view.kinds:
                choices = OptionList(
                    *[
                        # a form's ways out (decline, cancel) carry no number (issue 30 item 3)
                        Option(
                            Content(
                                choice.label if choice.set_aside else f"{index}. {choice.label}"
                            ),
                            id=str(index),
                        )
                        for index, choice in enumerate(view.choices, 1)
                    ],
                    id="choices",
                    classes="field",
                    compact=True,
                )
                choices.accessible_name = _("Choices")  # type: ignore[attr-defined]
                yield choices
            if "yes_no" in view.kinds:
                with Horizontal(id="buttons", classes="field"):
                    yield Button(_("Yes (Y)"), id="yes", compact=True)
                    yield Button(_("No (N)"), id="no", compact=True)
            if "freetext" in view.kinds:
                field = SteadyInput(
                    placeholder=_("Your answer"), id="answer", classes="field", compact=True
                )
                field.accessible_name = _("Your answer")  # type: ignore[attr-defined]
                yield field
            elif "numeric" in view.kinds:
                number = NumericInput(
                    placeholder=_("A number"),
                    restrict=typing_pattern(current_language()),
                    id="answer",
                    classes="field",
                    compact=True,
                )
                number.accessible_name = _("A number")  # type: ignore[attr-defined]
                yield number
            yield Static(view.keys_phrase(detailed=True), markup=False, id="keys", classes="field")
        yield WrappingFooter()

    def focus_initial(self) -> None:
        for selector in ("#choices", "#no", "#answer"):
            found = self.query(selector)
            if found:
                self.focus_quietly(found.first())
                break
        self.call_after_refresh(self._end_quiet_highlight)

    def _end_quiet_highlight(self) -> None:
        self._quiet_highlight = False

    def spoken_question(self) -> str:
        return self.view.spoken_question(
            self.announcer.settings.languages[0],
            detailed_keys=self.announcer.settings.verbosity == "detailed",
        )

    def spoken_again(self) -> str:
        """F2: the question again, with every key in full (issue 30 item 2)."""
        return self.view.spoken_question(self.announcer.settings.languages[0], detailed_keys=True)

    def extra_help(self) -> str:
        """Said after the Footer's keys by help: every answer key in full."""
        return self.view.keys_phrase(detailed=True)

    def spoken_intro(self) -> str:
        detailed = self.announcer.settings.verbosity == "detailed"
        parts = [self.view.keys_phrase(detailed=detailed)]
        if detailed:
            parts.append(_("F2 repeats."))  # issue 30 item 2: known words, long form only
            parts.insert(
                0, _("Asked by {producer}.").format(producer=producer_identity(self.prompt))
            )
        return " ".join(parts)

    def answer_keys_phrase(self) -> str:
        return self.view.keys_phrase(detailed=True)

    def on_key(self, event: Key) -> None:
        """Digits 1-9 pick a choice and y/n answer, unless the user is typing.

        Any other printable key is refused with its reason ("9 is not a choice; there
        are 3"), at once: a silent key leaves the user guessing.
        """
        if isinstance(self.focused, Input):
            return
        key = event.key
        if key.isdigit() and "multiple_choice" in self.view.kinds:
            index = int(key) - 1
            count = len(self.view.numbered)  # a form's ways out are not numbered
            event.stop()
            if 0 <= index < count:
                choices = self.query_one("#choices", OptionList)
                choices.focus()
                choices.highlighted = index
            else:
                self.announcer.say(
                    ngettext(
                        "{key} is not a choice; there is {count}.",
                        "{key} is not a choice; there are {count}.",
                        count,
                    ).format(key=key, count=count),
                    Urgency.CRITICAL,
                    interrupt=True,
                )
        elif key in ("y", "n") and "yes_no" in self.view.kinds:
            event.stop()
            self._send_yes_no(key == "y")
        else:
            self.refuse_key(event)

    @on(OptionList.OptionHighlighted, "#choices")
    def _choice_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if not self._quiet_highlight:
            self.announcer.say(option_text(event.option_list), interrupt=True)

    @on(OptionList.OptionSelected, "#choices")
    def _choice_selected(self, event: OptionList.OptionSelected) -> None:
        choice = self.view.choices[event.option_index]
        self.send(
            UserAnswer(
                self.prompt.reply_token, event_id=self.prompt.event_id, response=choice.value
            ),
            _("Answered: {answer}").format(answer=choice.label),
        )

    @on(Button.Pressed, "#yes")
    def _yes(self) -> None:
        self._send_yes_no(True)

    @on(Button.Pressed, "#no")
    def _no(self) -> None:
        self._send_yes_no(False)

    def _send_yes_no(self, value: bool) -> None:
        self.send(
            UserAnswer(self.prompt.reply_token, event_id=self.prompt.event_id, response=value),
            _("Answered: {answer}").format(answer=_("yes") if value else _("no")),
        )

    @on(Input.Submitted, "#answer")
    def _submitted(self, event: Input.Submitted) -> None:
        text = event.value
        if "freetext" in self.view.kinds:
            if not text.strip():
                self.announcer.say(_("The answer is empty. Type something, then press Enter."))
                return
            # a secret (x-announcer secret: Codex's isSecret) is never said back
            said = _("your answer, not read back") if is_secret(self.prompt.event) else text
            self.send(
                UserAnswer(self.prompt.reply_token, event_id=self.prompt.event_id, response=text),
                _("Answered: {answer}").format(answer=one_line(said)),
            )
            return
        language = current_language()
        field = self.query_one("#answer", NumericInput)
        if field.tainted:
            self.announcer.say(
                _(
                    "A key you typed in {text} was not part of a number, so nothing was "
                    "sent. Type the whole number again."
                ).format(text=one_line(text)),
                Urgency.CRITICAL,
                interrupt=True,
            )
            field.value = ""
            return
        refusal = number_refusal(text, language)
        number = read_number(text, language).value
        if refusal is not None or number is None:
            self.announcer.say(refusal or "", Urgency.CRITICAL, interrupt=True)
            return
        self.send(
            UserAnswer(self.prompt.reply_token, event_id=self.prompt.event_id, response=number),
            _("Answered: {answer}").format(answer=number),
        )

    def send(self, answer: UserAnswer, described: str) -> None:
        """Every answer key waits for the question to be armed (answer_guard)."""
        if self.answered or self.closed:
            return
        verdict = self.announcer.key_guard.press(self.prompt.reply_token, "answer", self.now())
        if not verdict.sends:
            self.refused(verdict)
            return
        super().send(answer, described)

    def action_later(self) -> None:
        if self.answered or self.closed:
            return
        self.answered = True
        self.announcer.defer_prompt(self.prompt.reply_token)
        self.close_dialog()
