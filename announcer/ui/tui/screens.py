"""Pending prompts, history and settings screens.

Each is a plain vertical list or form the user moves through with arrows and
Tab; each speaks its name when it opens and Escape always goes back.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, cast, get_args

from pydantic import ValidationError
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Checkbox, Input, Label, OptionList, Select, Static
from textual.widgets.option_list import Option

from announcer.engine.announcement import Urgency
from announcer.i18n.tags import parse_tag
from announcer.protocol.events import Verbosity
from announcer.protocol.handshake import CognitiveLoad
from announcer.protocol.sanitise import clean_display
from announcer.speech.registry import BACKEND_NAMES
from announcer.ui.tui.accessibility import SteadyInput, WrappingFooter, option_text
from announcer.ui.tui.host import AnnouncerHost
from announcer.ui.tui.prompt_view import prompt_title
from announcer.ui.tui.text import N_, _, localize_bindings, ngettext, one_line
from announcer.ui.tui.textual_private import select_overlay

# DEFAULT_CSS is scoped to the screen class that declares it (Textual), so selectors
# here name only what is inside the screen.
SCREEN_CSS = """
OptionList#list { height: 1fr; border: none; padding: 0 1; }
#heading { height: 1; padding: 0 1; background: $panel; }
.row { height: 1; margin: 0 1; }
.row Label { width: 28; }
.row Select, .row Input { width: 32; }
"""


class AnnouncerScreen(Screen[None]):
    DEFAULT_CSS = SCREEN_CSS
    AUTO_FOCUS = ""  # each screen focuses its first control itself
    title_msgid = ""

    @property
    def spoken_title(self) -> str:
        return _(self.title_msgid) if self.title_msgid else ""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "back", N_("Back"))]

    def __init__(self) -> None:
        super().__init__()

    @property
    def announcer(self) -> AnnouncerHost:
        return cast("AnnouncerHost", self.app)

    def on_mount(self) -> None:
        localize_bindings(self)
        self.set_class(self.announcer.settings.cognitive_load == "low", "-low-load")

    def action_back(self) -> None:
        self.dismiss(None)
        self.announcer.say(_("Back."))

    def show_feedback(self, text: str) -> None:
        """What is said while this screen is open (its help on ``?``), shown on it too,
        not only in the transcript behind it (issue 30 item 8)."""
        found = self.query("#feedback")
        if found:
            found.first(Static).update(text)
            return
        self.mount(Static(text, markup=False, id="feedback"))


class ListScreen(AnnouncerScreen):
    """A heading and one OptionList; the highlighted row is spoken."""

    def __init__(self) -> None:
        super().__init__()
        self._speak_highlight = False

    def rows(self) -> list[Option]:
        raise NotImplementedError

    def compose(self) -> ComposeResult:
        yield Static(self.spoken_title, id="heading", markup=False)
        options = OptionList(*self.rows(), id="list", compact=True)
        options.accessible_name = self.spoken_title  # type: ignore[attr-defined]
        yield options
        yield WrappingFooter()

    def on_mount(self) -> None:
        options = self.query_one("#list", OptionList)
        if options.option_count:
            options.highlighted = options.option_count - 1 if self.newest_last else 0
        self.focus_spoken = options
        options.focus()
        self.announcer.say(f"{self.spoken_title}. {self.summary()} {option_text(options)}")
        self.call_after_refresh(self._start_speaking_highlight)

    newest_last = False

    def summary(self) -> str:
        return ""

    def _start_speaking_highlight(self) -> None:
        self._speak_highlight = True

    @on(OptionList.OptionHighlighted)
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if self._speak_highlight:
            self.announcer.say(option_text(event.option_list), interrupt=True)


class PromptListScreen(ListScreen):
    """Pending questions, oldest first; Enter opens one."""

    title_msgid = N_("Pending questions")

    def rows(self) -> list[Option]:
        return [
            Option(Content(prompt_title(state.prompt)), id=token)
            for token, state in self.announcer.prompts.items()
        ]

    def summary(self) -> str:
        count = len(self.announcer.prompts)
        return ngettext("{count} pending.", "{count} pending.", count).format(count=count)

    @on(OptionList.OptionSelected)
    def _open(self, event: OptionList.OptionSelected) -> None:
        token = event.option.id
        self.dismiss(None)
        if token and token in self.announcer.prompts:
            if self.announcer.active_token is None:
                self.announcer.open_prompt(token)
        else:
            self.announcer.say(_("This question is no longer open."), Urgency.CRITICAL)


class AgentSettingsScreen(ListScreen):
    """The agent's modes and config options (model, approval...): Enter picks one.

    The change goes to the agent (``session/set_config_option``, else ``set_mode``) and is
    said from its answer; the current choice of each setting is marked.
    """

    title_msgid = N_("Agent mode and model")

    def __init__(self, rows: list[tuple[str, str, str, bool]]) -> None:
        super().__init__()
        self.choices = rows

    def rows(self) -> list[Option]:
        return [
            Option(
                Content(_("{choice} (now)").format(choice=label) if now else label),
                id=str(index),
            )
            for index, (_setting, _value, label, now) in enumerate(self.choices)
        ]

    @on(OptionList.OptionSelected)
    def _pick(self, event: OptionList.OptionSelected) -> None:
        index = int(event.option.id or 0)
        setting, value, _label, _now = self.choices[index]
        self.dismiss(None)
        self.app.run_worker(self.announcer.session.change_setting(setting, value), exclusive=False)


class SuggestionsScreen(ListScreen):
    """The prompts the agent suggests sending next (issue 33, item 5), most likely first:
    Enter sends the one highlighted, as if typed, to the agent that suggested it."""

    title_msgid = N_("Suggested prompts")

    def __init__(self, agent: str, suggestions: list[str]) -> None:
        super().__init__()
        self.agent = agent
        self.suggestions = suggestions

    def rows(self) -> list[Option]:
        return [
            Option(Content(one_line(text)), id=str(index))
            for index, text in enumerate(self.suggestions)
        ]

    def summary(self) -> str:
        return _("{agent} suggests these. Enter sends the one you pick.").format(agent=self.agent)

    @on(OptionList.OptionSelected)
    def _send(self, event: OptionList.OptionSelected) -> None:
        text = self.suggestions[int(event.option.id or 0)]
        self.dismiss(None)
        # to the agent messages go to, whose list this is (no key reaches the message box
        # while it is open); the session says it back ("Sent to Claude Code: ..."), or why not
        self.announcer.session.send_prompt(text, stop_key=_("Escape"))


class LoginScreen(ListScreen):
    """An agent's own terminal logins (ACP terminal auth) and "Not now": Enter on a login
    runs it in this terminal (the app steps aside while it runs). A login the agent gave
    a risky environment (``risky``: its index and why) takes a second, different key: C.
    """

    title_msgid = N_("Log in")

    def __init__(self, agent: str, logins: list[str], risky: dict[int, str] | None = None) -> None:
        super().__init__()
        self.agent = agent
        self.logins = logins
        self.risky = risky or {}
        self.confirming: int | None = None  # a risky login picked, waiting for C
        self.chosen: asyncio.Future[int | None] = asyncio.get_running_loop().create_future()

    def on_key(self, event: events.Key) -> None:
        """While a risky login waits for its second key: C runs it, any other key not."""
        confirming, self.confirming = self.confirming, None
        if confirming is None:
            return
        if event.key == "c":
            event.stop()
            event.prevent_default()
            self._choose(confirming)
        elif event.key != "enter":  # Enter is said by _pick, as the list selects on it
            self.announcer.say(_("Not run."), interrupt=True)

    def _choose(self, picked: int | None) -> None:
        if not self.chosen.done():
            self.chosen.set_result(picked)
        self.dismiss(None)

    def rows(self) -> list[Option]:
        return [
            *(Option(Content(login), id=str(index)) for index, login in enumerate(self.logins)),
            Option(Content(_("Not now")), id="none"),
        ]

    def summary(self) -> str:
        return _("{agent} needs you to log in. Enter runs the login you pick here.").format(
            agent=self.agent
        )

    @on(OptionList.OptionSelected)
    def _pick(self, event: OptionList.OptionSelected) -> None:
        picked = event.option.id
        index = None if picked in (None, "none") else int(picked)
        if index is not None and index in self.risky:
            # two keys: say why, then C (Enter again only says it again: a different key)
            self.confirming = index
            self.announcer.say(
                f"{self.risky[index]} " + _("Press C to run it; any other key goes back."),
                interrupt=True,
            )
            return
        self._choose(index)

    def on_unmount(self) -> None:
        if not self.chosen.done():  # closed with Escape: not now
            self.chosen.set_result(None)


class HistoryScreen(ListScreen):
    """Past announcements and prompts with their answers; Enter says one again."""

    title_msgid = N_("History")
    newest_last = True

    def rows(self) -> list[Option]:
        return [
            Option(Content(entry.line), id=str(index))
            for index, entry in enumerate(self.announcer.history)
        ]

    def summary(self) -> str:
        count = len(self.announcer.history)
        return ngettext(
            "{count} entry, newest last.", "{count} entries, newest last.", count
        ).format(count=count)

    @on(OptionList.OptionSelected)
    def _respeak(self, event: OptionList.OptionSelected) -> None:
        entry = self.announcer.history[event.option_index]
        self.announcer.say(entry.line, interrupt=True)


class DiagnosticsScreen(ListScreen):
    """What was dropped and why, by reason, and where the log file is; Enter says a line."""

    title_msgid = N_("Diagnostics")

    def __init__(self, lines: list[str]) -> None:
        super().__init__()
        self.lines = lines or [_("Diagnostics: nothing has been dropped.")]

    def rows(self) -> list[Option]:
        return [
            Option(Content(one_line(line.strip())), id=str(index))
            for index, line in enumerate(self.lines)
        ]

    @on(OptionList.OptionSelected)
    def _respeak(self, event: OptionList.OptionSelected) -> None:
        self.announcer.say(one_line(self.lines[event.option_index]), interrupt=True)


class LiteralsScreen(ListScreen):
    """What speech shortens, whole and as the agent wrote it (issue 31 item 14): the last
    code block, one row per line, then each web address. Speech says "code block, 30
    lines, Python" and a URL by its host; here a screen reader reads every character.
    Enter says a row again; only control characters are made visible."""

    title_msgid = N_("Code and links")

    def __init__(self, code: list[str], links: list[str]) -> None:
        super().__init__()
        block = code[-1] if code else ""
        self.code_lines = [clean_display(line).rstrip() for line in block.splitlines()]
        if code and not self.code_lines:
            self.code_lines = [""]
        self.links = [clean_display(link) for link in links]
        self.lines = [
            *(self.code_lines or [_("No code block yet.")]),
            *(self.links or [_("No web address yet.")]),
        ]

    def summary(self) -> str:
        count = len(self.code_lines)
        code = (
            ngettext("code block, {count} line", "code block, {count} lines", count).format(
                count=count
            )
            if self.code_lines
            else ""
        )
        code = f"{code[:1].upper()}{code[1:]}." if code else _("No code block yet.")
        links = (
            _("Web addresses: {count}.").format(count=len(self.links))
            if self.links
            else _("No web address yet.")
        )
        return f"{code} {links}"

    def rows(self) -> list[Option]:
        # Content is plain text: brackets and markup-like text are shown as written
        return [Option(Content(line), id=str(index)) for index, line in enumerate(self.lines)]

    @on(OptionList.OptionSelected)
    def _respeak(self, event: OptionList.OptionSelected) -> None:
        self.announcer.say(self.lines[event.option_index] or _("blank"), interrupt=True)


def validation_reason(problem: Mapping[str, Any]) -> str:
    """A settings rule broken, in the user's words (pydantic's own text is English)."""
    limits = problem.get("ctx") or {}
    if "ge" in limits:
        return _("it must be at least {limit}.").format(limit=limits["ge"])
    if "le" in limits:
        return _("it must be at most {limit}.").format(limit=limits["le"])
    if "gt" in limits:
        return _("it must be more than {limit}.").format(limit=limits["gt"])
    if "lt" in limits:
        return _("it must be less than {limit}.").format(limit=limits["lt"])
    return _("that value is not allowed.")


def toggle_label(label: str, value: bool) -> str:
    """A check box's text with its state in words ("Earcons: on"), not a glyph alone."""
    return _("{label}: {state}").format(label=label, state=_("on") if value else _("off"))


LEVEL_LABELS = {
    "terse": N_("terse"),
    "normal": N_("normal"),
    "detailed": N_("detailed"),
    "low": N_("low"),
    "medium": N_("medium"),
    "high": N_("high"),
}

# Backends a listener can pick without extra arguments (wav and jsonl need a path);
# a name set in the config file but not listed here is kept.
BACKENDS = tuple(name for name in BACKEND_NAMES if name not in ("wav", "jsonl", "paced"))


class SettingsScreen(AnnouncerScreen):
    """Every change is applied at once, persisted, spoken and renegotiated."""

    title_msgid = N_("Settings")

    def compose(self) -> ComposeResult:
        settings = self.announcer.settings
        yield Static(self.spoken_title, id="heading", markup=False)
        # Not focusable: Tab goes from the last setting back to the first, never to the
        # container itself (which had only its class name to say).
        with VerticalScroll(can_focus=False):
            yield from self._row(
                _("Verbosity"),
                Select(
                    [(_(LEVEL_LABELS[v]), v) for v in get_args(Verbosity)],
                    value=settings.verbosity,
                    allow_blank=False,
                    compact=True,
                    id="verbosity",
                ),
            )
            yield from self._row(
                _("Cognitive load"),
                Select(
                    [(_(LEVEL_LABELS[v]), v) for v in get_args(CognitiveLoad)],
                    value=settings.cognitive_load,
                    allow_blank=False,
                    compact=True,
                    id="cognitive_load",
                ),
            )
            backends = list(BACKENDS)
            if settings.backend not in backends:
                backends.append(settings.backend)
            yield from self._row(
                _("Speech backend"),
                Select(
                    [(b, b) for b in backends],
                    value=settings.backend,
                    allow_blank=False,
                    compact=True,
                    id="backend",
                ),
            )
            language = settings.languages[0] if settings.languages else "en"
            yield from self._row(
                _("Voice"), SteadyInput(settings.voices.get(language, ""), id="voice", compact=True)
            )
            yield from self._row(
                _("Rate, words per minute"),
                SteadyInput(
                    str(settings.rate_wpm or ""), type="integer", id="rate_wpm", compact=True
                ),
            )
            yield from self._row(
                _("Earcons"),
                Checkbox(
                    toggle_label(_("Earcons"), settings.earcons),
                    settings.earcons,
                    id="earcons",
                    compact=True,
                ),
            )
            yield from self._row(
                _("Do not interrupt"),
                Checkbox(
                    toggle_label(_("Do not interrupt"), settings.do_not_interrupt),
                    settings.do_not_interrupt,
                    id="do_not_interrupt",
                    compact=True,
                ),
            )
            yield from self._row(
                _("Languages, first preferred"),
                SteadyInput(", ".join(settings.languages), id="languages", compact=True),
            )
        yield WrappingFooter()

    def _row(self, label: str, control: Any) -> ComposeResult:
        """One setting per line: its name, then the control (checkboxes carry their own)."""
        control.accessible_name = label
        with Horizontal(classes="row"):
            if not isinstance(control, Checkbox):
                yield Label(label, markup=False)
            yield control

    def on_mount(self) -> None:
        # A Select's open list keeps its highlight messages to itself; watch the highlight
        # so each item is spoken as the arrows move through it.
        for select in self.query(Select):
            for overlay in select.query(select_overlay()):
                self.watch(overlay, "highlighted", self._speak_overlay(overlay), init=False)
        first = self.query_one("#verbosity", Select)
        self.focus_spoken = first
        first.focus()
        self.announcer.say(
            _("Settings. Tab moves between settings; changes apply at once. Escape goes back.")
        )

    def _update(self, field: str, value: object, spoken: str) -> None:
        current = self.announcer.settings
        if getattr(current, field) == value:
            return
        try:
            new = current.model_copy(update={field: value})
            type(current).model_validate(new.model_dump())
        except ValidationError as error:
            control = next(iter(self.query(f"#{field}")), None)
            label = str(getattr(control, "accessible_name", "") or field)
            self.announcer.say(
                _("{field} not changed: {reason}").format(
                    field=label, reason=validation_reason(error.errors()[0])
                ),
                Urgency.CRITICAL,
                interrupt=True,
            )
            return
        self.announcer.apply_settings(new, spoken)

    def _speak_overlay(self, overlay: OptionList) -> Callable[[], None]:
        def speak() -> None:
            if overlay.has_focus:  # moving in the open list, not a value set from code
                self.announcer.say(option_text(overlay), interrupt=True)

        return speak

    @on(Select.Changed)
    def _select_changed(self, event: Select.Changed) -> None:
        control = event.select
        if control.id is None or event.value is Select.NULL:
            return
        label = str(getattr(control, "accessible_name", control.id))
        value = str(event.value)
        spoken = f"{label}: {_(LEVEL_LABELS.get(value, value))}."
        if control.id == "backend" and not self.announcer.session.applies_backend_live:
            # This session keeps its speech output; the saved choice applies next start.
            # (A live session switches at once and says this through the new backend.)
            spoken += " " + _("This takes effect the next time announcer starts.")
        self._update(control.id, value, spoken)

    @on(Checkbox.Changed)
    def _checkbox_changed(self, event: Checkbox.Changed) -> None:
        control = event.checkbox
        label = str(getattr(control, "accessible_name", control.id))
        control.label = toggle_label(label, event.value)  # the state in words, not colour
        state = _("on") if event.value else _("off")
        self._update(str(control.id), event.value, f"{label}: {state}.")

    @on(Input.Submitted)
    def _input_submitted(self, event: Input.Submitted) -> None:
        control = event.input
        label = str(getattr(control, "accessible_name", control.id))
        text = one_line(event.value)
        settings = self.announcer.settings
        if control.id == "rate_wpm":
            value: object = int(text) if text.strip("+-") else None
            spoken = f"{label}: {text or _('default')}."
        elif control.id == "languages":
            tags = [part.strip() for part in text.split(",") if part.strip()] or ["en"]
            bad = next((tag for tag in tags if parse_tag(tag) is None), None)
            if bad is not None:
                # Refused here: an unusable tag would be applied, then fail every later save.
                control.value = ", ".join(settings.languages)
                self.announcer.say(
                    _(
                        "Languages not changed: {tag} is not a language code "
                        "such as en, es or pt-BR."
                    ).format(tag=bad),
                    Urgency.CRITICAL,
                    interrupt=True,
                )
                return
            value = tags
            spoken = f"{label}: {', '.join(tags)}."
        elif control.id == "voice":
            language = settings.languages[0] if settings.languages else "en"
            voices = dict(settings.voices)
            if text:
                voices[language] = text
            else:
                voices.pop(language, None)
            value, spoken = voices, f"{label}: {text or _('default')}."
            self._update("voices", value, spoken)
            return
        else:
            return
        self._update(str(control.id), value, spoken)
