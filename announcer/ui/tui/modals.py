"""Confirmation and clarification modals (§4.4.1, §4.4.2, chapter 6).

A confirmation may authorise a real, irreversible action, so nothing here
ever answers on the user's behalf: Accept needs ``a``, ``y`` or a press of
the Accept button, and for risky actions the focus starts on Reject. The
question is spoken once with one set of keys: when the engine has just read
it out (without keys, the app tells it so), the modal adds who asks and its
keys; otherwise the modal reads it whole. F2 always reads it whole.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, ClassVar, cast

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen, Screen
from textual.widget import Widget
from textual.widgets import Button, Footer, Input, OptionList, Static
from textual.widgets.option_list import Option

from announcer.engine.announcement import Urgency
from announcer.engine.prompts import PendingPrompt, UserAnswer
from announcer.ui.tui.accessibility import SteadyInput, option_text
from announcer.ui.tui.prompt_view import ClarificationView, ConfirmationView, producer_identity
from announcer.ui.tui.text import _, localize_bindings, one_line

if TYPE_CHECKING:
    from announcer.ui.tui.app import AnnouncerApp

_NUMBER = re.compile(r"[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?")

MODAL_CSS = """
PromptScreen { align: center middle; }
#dialog {
    width: 90%; max-width: 100; height: auto; max-height: 90%;
    border: solid $primary; padding: 0 1; background: $surface;
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
        Binding("f1", "app.help", _("Help")),
        *Screen.BINDINGS,  # Tab and Shift+Tab move focus
    ]

    def __init__(self, prompt: PendingPrompt, *, just_announced: bool = False) -> None:
        super().__init__()
        self.prompt = prompt
        self.answered = False
        # The engine read the question out this moment (AnnouncerApp.open_prompt).
        self.just_announced = just_announced

    @property
    def announcer(self) -> AnnouncerApp:
        return cast("AnnouncerApp", self.app)

    def on_mount(self) -> None:
        # Subclasses must not define on_mount: Textual calls every on_mount in the MRO.
        localize_bindings(self)
        self.set_class(self.announcer.settings.cognitive_load == "low", "-low-load")
        # A question the engine has just read out (the live runtime) gets who asks and
        # the keys; otherwise (no engine, or opened later) the whole question is said here.
        if self.just_announced and getattr(self.announcer.session, "announces_prompts", True):
            # Kept with the question, so it is never said once the question has ended.
            say_after = getattr(self.announcer.session, "say_after_question", None)
            if say_after is not None:
                say_after(self.prompt, self.spoken_intro())
            else:
                self.announcer.say(self.spoken_intro(), Urgency.CRITICAL)
        else:
            self.announcer.say(self.spoken_question(), Urgency.CRITICAL)
        self.focus_initial()

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

    def action_repeat_question(self) -> None:
        self.announcer.say(self.spoken_question(), Urgency.CRITICAL, interrupt=True)

    def send(self, answer: UserAnswer, described: str) -> None:
        """Answer once; a second key press after the first is ignored."""
        if self.answered:
            return
        self.answered = True
        self.announcer.submit_answer(self.prompt, answer, described)
        self.dismiss(None)


class ConfirmScreen(PromptScreen, inherit_bindings=False):
    """Accept with ``a``/``y``; reject with ``r``/``n``/Escape (§6.1)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a,y", "accept", _("Accept"), key_display="a"),
        Binding("r,n,escape", "reject", _("Reject"), key_display="r"),
        Binding("i", "repeat_question", _("Say again"), show=False),
        *PromptScreen.BINDINGS,
    ]

    def __init__(self, prompt: PendingPrompt, *, just_announced: bool = False) -> None:
        super().__init__(prompt, just_announced=just_announced)
        self.view = ConfirmationView.of(prompt)
        self.spoken_title = _("Confirmation")

    def compose(self) -> ComposeResult:
        view = self.view
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
            with Horizontal(id="buttons"):
                yield Button(_("Accept (A)"), id="accept", variant="warning", compact=True)
                yield Button(_("Reject (R)"), id="reject", variant="primary", compact=True)
        yield Footer(show_command_palette=False, compact=True)

    def focus_initial(self) -> None:
        safe = "#reject" if self.view.is_risky else "#accept"
        self.focus_quietly(self.query_one(safe, Button))

    def spoken_question(self) -> str:
        return self.view.spoken_question(self.announcer.settings.languages[0])

    def spoken_intro(self) -> str:
        return " ".join(
            [
                _("Asked by {producer}.").format(producer=producer_identity(self.prompt)),
                _("Press A to accept, or R to reject."),
                _("F2 says the question again."),
            ]
        )

    @on(Button.Pressed, "#accept")
    def action_accept(self) -> None:
        self.send(
            UserAnswer(self.prompt.reply_token, decision="accept"),
            _("Accepted: {action}").format(action=one_line(self.view.action).rstrip(".")),
        )

    @on(Button.Pressed, "#reject")
    def action_reject(self) -> None:
        self.send(
            UserAnswer(self.prompt.reply_token, decision="reject"),
            _("Rejected: {action}").format(action=one_line(self.view.action).rstrip(".")),
        )


class NumericInput(SteadyInput):
    """A number field that says why a key was refused instead of beeping."""

    def restricted(self) -> None:
        app = cast("AnnouncerApp", self.app)
        app.say(_("Only a number is accepted here, for example 42."))


def parse_number(text: str) -> int | float | None:
    """§6.5.2: a numeric response is a JSON number; refuse anything else."""
    text = text.strip().replace("_", "")
    if not _NUMBER.fullmatch(text):
        return None
    value = float(text)
    if not math.isfinite(value):
        return None
    return (
        int(value) if value.is_integer() and "." not in text and "e" not in text.lower() else value
    )


class ClarifyScreen(PromptScreen, inherit_bindings=False):
    """One input per accepted response kind; Enter sends, Escape leaves it pending."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "later", _("Later")),
        *PromptScreen.BINDINGS,
    ]

    def __init__(self, prompt: PendingPrompt, *, just_announced: bool = False) -> None:
        super().__init__(prompt, just_announced=just_announced)
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
                        Option(Content(f"{index}. {choice.label}"), id=str(index))
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
                    type="number",
                    id="answer",
                    classes="field",
                    compact=True,
                )
                number.accessible_name = _("A number")  # type: ignore[attr-defined]
                yield number
            yield Static(view.keys_phrase(), markup=False, id="keys", classes="field")
        yield Footer(show_command_palette=False, compact=True)

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
        return self.view.spoken_question(self.announcer.settings.languages[0])

    def spoken_intro(self) -> str:
        return " ".join(
            [
                _("Asked by {producer}.").format(producer=producer_identity(self.prompt)),
                self.view.keys_phrase(),
                _("F2 says the question again."),
            ]
        )

    def on_key(self, event: object) -> None:
        """Digits 1-9 pick a choice and y/n answer, unless the user is typing."""
        from textual.events import Key

        if not isinstance(event, Key) or isinstance(self.focused, Input):
            return
        key = event.key
        if key.isdigit() and key != "0" and "multiple_choice" in self.view.kinds:
            index = int(key) - 1
            if index < len(self.view.choices):
                choices = self.query_one("#choices", OptionList)
                choices.focus()
                choices.highlighted = index
                event.stop()
        elif key in ("y", "n") and "yes_no" in self.view.kinds:
            event.stop()
            self._send_yes_no(key == "y")

    @on(OptionList.OptionHighlighted, "#choices")
    def _choice_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if not self._quiet_highlight:
            self.announcer.say(option_text(event.option_list), interrupt=True)

    @on(OptionList.OptionSelected, "#choices")
    def _choice_selected(self, event: OptionList.OptionSelected) -> None:
        choice = self.view.choices[event.option_index]
        self.send(
            UserAnswer(self.prompt.reply_token, response=choice.value),
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
            UserAnswer(self.prompt.reply_token, response=value),
            _("Answered: {answer}").format(answer=_("yes") if value else _("no")),
        )

    @on(Input.Submitted, "#answer")
    def _submitted(self, event: Input.Submitted) -> None:
        text = event.value
        if "freetext" in self.view.kinds:
            if not text.strip():
                self.announcer.say(_("The answer is empty. Type something, then press Enter."))
                return
            self.send(
                UserAnswer(self.prompt.reply_token, response=text),
                _("Answered: {answer}").format(answer=one_line(text)),
            )
            return
        number = parse_number(text)
        if number is None:
            self.announcer.say(
                _("{text} is not a number. Type a number, for example 42.").format(
                    text=one_line(text) or _("Nothing")
                )
            )
            return
        self.send(
            UserAnswer(self.prompt.reply_token, response=number),
            _("Answered: {answer}").format(answer=number),
        )

    def action_later(self) -> None:
        if self.answered:
            return
        self.answered = True
        self.announcer.defer_prompt(self.prompt.reply_token)
        self.dismiss(None)
