"""The Textual app: a calm transcript, one status line, and prompts as modals.

Nothing here is only drawn: every change the user must know about is spoken
through the session, because Textual has no screen-reader layer. The screen
stays linear and predictable: an append-only transcript, a status line that
changes only on real changes, no animation, no spinners, no blinking.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable
from typing import ClassVar, get_args

from rich.text import Text
from textual import on
from textual.app import App, ComposeResult, ScreenStackError
from textual.binding import Binding, BindingType
from textual.dom import NoScreen
from textual.events import DescendantFocus
from textual.filter import Monochrome, NoColor
from textual.geometry import Offset
from textual.message import Message
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import RichLog, Static

from announcer.engine.announcement import SPEECH_OUTPUT_KIND, Announcement, Urgency, directed
from announcer.engine.answer_guard import KeyGuard
from announcer.engine.answer_keys import UI_SPEAKS_KEYS
from announcer.engine.prompts import PendingPrompt, UserAnswer, waits_without_deadline
from announcer.engine.settings import UserSettings
from announcer.formats.acp_logins import LoginChoice
from announcer.protocol.events import Verbosity
from announcer.protocol.handshake import CognitiveLoad
from announcer.ui.status import connection_words, producers_words, session_state_words
from announcer.ui.tui.accessibility import WrappingFooter, cursor_offset, spoken_name
from announcer.ui.tui.agent_input import AgentPrompt
from announcer.ui.tui.host import HistoryEntry, PromptState
from announcer.ui.tui.messages import (
    AnnouncementArrived,
    AnnouncementSkipped,
    PromptOpened,
    PromptVoided,
    SpeechNotice,
    StatusChanged,
)
from announcer.ui.tui.modals import ClarifyScreen, ConfirmScreen, PromptScreen
from announcer.ui.tui.prompt_view import (
    ConfirmationView,
    prompt_title,
    reminder_marks,
    speakable_duration,
)
from announcer.ui.tui.screens import (
    AgentSettingsScreen,
    AnnouncerScreen,
    DiagnosticsScreen,
    HistoryScreen,
    LiteralsScreen,
    LoginScreen,
    PromptListScreen,
    SettingsScreen,
    SuggestionsScreen,
)
from announcer.ui.tui.session import AnswerOutcome, UiSession, UiStatus
from announcer.ui.tui.text import (
    N_,
    _,
    localize_bindings,
    ngettext,
    one_line,
    printable,
    set_language,
)

# The kind the runtime gives what ``UiSession.speak`` says.
UI_SPEECH_KIND = "system.ui"
# History entries about the speech output itself.
SPEECH_NOTICE_KIND = "system.speech"
# ``auto``'s last resort when no voice works (``PrintedBackend``): our words are shown.
SILENT_OUTPUTS = frozenset({"printed text"})
HISTORY_SIZE = 5000
#: An answer's echo names what was answered by this many words when another question or
#: agent could be meant (issue 30 item 2); the transcript keeps it whole.
ECHO_WORDS = 8
# When speech about each recent event began (for arming the keys of its question).
SPEECH_STARTS_KEPT = 256
VERBOSITY_CYCLE = get_args(Verbosity)


_KEY_WORDS = {
    "?": N_("question mark"),
    "↑": N_("up"),
    "↓": N_("down"),
    "⏎": N_("Enter"),
    "esc": N_("Escape"),
}


def speakable_key(display: str) -> str:
    """'^q' reads as 'Control q' aloud; symbols get their names."""
    if display.startswith("^") and len(display) > 1:
        return _("Control {key}").format(key=display[1:])
    if display.lower().startswith("shift+") and len(display) > 6:
        return _("Shift {key}").format(key=display[6:].upper())
    if display.lower().startswith("ctrl+") and len(display) > 5:
        return _("Control {key}").format(key=display[5:].upper())
    if len(display) > 1 and display[0] == "f" and display[1:].isdigit():
        return display.upper()
    return _(_KEY_WORDS.get(display, display))


def status_line(status: UiStatus) -> str:
    return ngettext(
        "{connection} · {producers} · {state} · {count} pending",
        "{connection} · {producers} · {state} · {count} pending",
        status.pending_prompts,
    ).format(
        connection=connection_words(status, _),
        producers=producers_words(status, _),
        state=session_state_words(status.session_state, _),
        count=status.pending_prompts,
    )


def spoken_status(status: UiStatus, pending: int) -> str:
    return ngettext(
        "Connection {connection}. Producer {producers}. Session {state}. {count} pending question.",
        "Connection {connection}. Producer {producers}. Session {state}. "
        "{count} pending questions.",
        pending,
    ).format(
        connection=connection_words(status, _),
        producers=producers_words(status, _),
        state=session_state_words(status.session_state, _),
        count=pending,
    )


class Transcript(RichLog):
    """The append-only transcript: wrapped (no sideways scrolling), literal, bounded.

    ``entries`` keeps each logical line as written, for history and tests;
    what is drawn is the same text wrapped to the width.
    """

    def __init__(self, max_lines: int, **kwargs: object) -> None:
        super().__init__(
            max_lines=max_lines,
            min_width=20,  # wrap to the real width, however narrow (magnified screens)
            wrap=True,
            markup=False,
            highlight=False,
            auto_scroll=True,
            **kwargs,  # type: ignore[arg-type]
        )
        self.entries: deque[str] = deque(maxlen=max_lines)

    def write_entry(self, text: str) -> None:
        self.entries.append(text)
        before = len(self.lines)
        self.write(Text(text))  # a Text object is never parsed as markup
        # how many drawn lines the newest entry took (the cursor goes to its first one)
        self.newest_height = max(1, len(self.lines) - before)

    @property
    def newest_line(self) -> int:
        """The first drawn line of the newest entry (0 when empty)."""
        return max(0, len(self.lines) - getattr(self, "newest_height", 1))


class MainScreen(Screen[None]):
    """Transcript, status line, Footer; low cognitive load keeps only the transcript.

    With an agent to talk to (``announcer agent``), a message box below the transcript
    has the focus (announcer/ui/tui/agent_input.py).
    """

    def __init__(self, agent: str | None = None, **kwargs: str) -> None:
        super().__init__(**kwargs)
        self.agent = agent

    def compose(self) -> ComposeResult:
        yield Static("", id="status", markup=False)
        transcript = Transcript(HISTORY_SIZE, id="transcript")
        transcript.accessible_name = _("Transcript")  # type: ignore[attr-defined]
        yield transcript
        if self.agent is not None:
            yield AgentPrompt(self.agent)
        yield WrappingFooter()

    def on_mount(self) -> None:
        if not self.query(Transcript):  # the app closed while starting (a signal, no terminal)
            return
        localize_bindings(self)
        prompt = self.agent_prompt
        if prompt is not None:
            localize_bindings(prompt)
            self.focus_spoken: Widget = prompt  # the welcome says where the user is
            prompt.focus()
        else:
            self.focus_spoken = self.transcript  # the welcome is spoken instead of "Transcript"
        self.app.main_screen_ready()  # type: ignore[attr-defined]

    @property
    def agent_prompt(self) -> AgentPrompt | None:
        found = self.query(AgentPrompt)
        return found.first() if found else None

    @property
    def transcript(self) -> Transcript:
        return self.query_one("#transcript", Transcript)

    @property
    def status_widget(self) -> Static:
        return self.query_one("#status", Static)


class _TerminalGone(Exception):
    """The terminal closed while a login had it: nothing to resume on."""


class LoginOffered(Message):
    """An agent's terminal logins to offer (from the agent's task to the app's)."""

    def __init__(
        self,
        agent: str,
        choices: list[LoginChoice],
        cwd: str,
        answer: asyncio.Future[int | None],
    ) -> None:
        super().__init__()
        self.agent = agent
        self.choices = choices
        self.cwd = cwd
        self.answer = answer


class AnnouncerApp(App[None]):
    """Hear an agent and answer it from the keyboard."""

    TITLE = "announcer"
    ENABLE_COMMAND_PALETTE = False
    CSS = """
    Screen { background: $background; }
    #status { height: 1; padding: 0 1; background: $panel; }
    #transcript { height: 1fr; border: none; }
    /* Low cognitive load: only the transcript and the prompts, no borders. */
    .-low-load #status, .-low-load #heading { display: none; }
    .-low-load MainScreen Footer { display: none; }
    .-low-load #dialog { border: none; padding: 0; }
    .-low-load .field { margin-bottom: 0; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("l", "repeat_last", N_("Repeat")),
        Binding("s", "stop_speech", N_("Stop speech")),
        Binding("w", "where_am_i", N_("Where am I")),
        Binding("v", "cycle_verbosity", N_("Verbosity")),
        Binding("c", "toggle_low_load", N_("Low load")),
        Binding("p", "list_prompts", N_("Pending")),
        Binding("h", "history", N_("History")),
        Binding("o", "settings", N_("Settings")),
        Binding("d", "diagnostics", N_("Diagnostics")),
        Binding("question_mark,f1", "help", N_("Help"), key_display="?"),
        Binding("ctrl+q", "quit", N_("Quit"), priority=True),  # also from inside dialogs
        # Only once the demo is over (check_action): run it again, or quit with one key
        # (said when the demo ends).
        Binding("r", "demo_again", N_("Run the demo again")),
        Binding("q", "demo_quit", N_("Quit"), show=False),  # the Footer has ^q Quit already
        # Keys that work while typing a message to an agent (letters are typed there).
        Binding("f2", "repeat_last", show=False),
        Binding("f3", "where_am_i", show=False),
        Binding("ctrl+s", "stop_speech", show=False),
        Binding("slash", "agent_commands", show=False),
        Binding("f4", "agent_settings", show=False),
        Binding("f5", "say_digest", show=False),  # what happened in the turn (issue 33)
        Binding("f7", "agent_suggestions", show=False),  # the agent's suggested prompts
        # the last code block and the web addresses, whole (issue 31 item 14; :code, :links)
        Binding("f6", "show_literals", show=False),
        Binding("escape", "stop_turn", show=False),
    ]

    def __init__(
        self,
        session: UiSession,
        *,
        save_settings: Callable[[UserSettings], object] | None = None,
        theme: str = "ansi-dark",
    ) -> None:
        super().__init__()
        self._readable_without_colour()
        self.session = session
        # The dialogs say who asks and their own keys; the engine's question must not name
        # keys as well (announcer.engine.answer_keys): one set of keys, said once.
        if session.announces_prompts:
            session.set_answer_keys(UI_SPEAKS_KEYS)
        # Persists what the user changes (announcer.config); None when the session does it.
        self.save_settings = save_settings
        # Called when the terminal has closed under a login (the runner ends everything).
        self.terminal_gone: Callable[[], object] = self.exit
        # Issue 6 §7: no animation anywhere.
        self.animation_level = "none"
        self.theme = theme
        # Bounded like the transcript: a session may run for days.
        self.history: deque[HistoryEntry] = deque(maxlen=HISTORY_SIZE)
        self.prompts: dict[str, PromptState] = {}
        self.active_token: str | None = None
        # One rule for every dialog: which question a key answers, and when it may.
        settings = session.settings
        self.key_guard = KeyGuard(
            settings.answer_arming_seconds, settings.pace_wpm, settings.two_key_accept
        )
        self._speech_starts: OrderedDict[str, float] = OrderedDict()
        self.dialog_closed_at = float("-inf")
        self.ui_status = session.status
        self._producers_seen: set[str] = set()
        # The demo's agent is done (``demo_over``): R runs it again, Q quits.
        self.demo_is_over = False
        self._told_no_voice = False
        # An agent that takes messages (``announcer agent``) gets a message box.
        self.agent: str | None = None
        if session.takes_prompts:
            set_language(self._language())  # the fallback name is in the user's language
            producers = self.ui_status.producers
            self.agent = one_line(producers[0]) if producers else _("the agent")
        self._main = MainScreen(self.agent, id="main")
        self._previous_load: CognitiveLoad = (
            "medium"
            if session.settings.cognitive_load == "low"
            else (session.settings.cognitive_load)
        )

    def _readable_without_colour(self) -> None:
        """NO_COLOR: the terminal's own colours, never black on black (issue 20).

        Textual's grey-scale filter turns the ANSI theme's colours into black on black
        in every cell. Dropping colour instead leaves the user's own foreground and
        background; what is focused or highlighted is shown in reverse video (CSS below).
        """
        if self.no_color:
            self._filters = [
                NoColor() if isinstance(each, Monochrome) else each for each in self._filters
            ]

    # -- life cycle -------------------------------------------------------

    def get_default_screen(self) -> Screen[None]:
        return self._main

    def on_mount(self) -> None:
        set_language(self._language())
        localize_bindings(self)
        self.set_interval(0.5, self.check_deadlines)

    def _listen_to_speech_notices(self) -> None:
        """Which output speaks, and why others failed: shown here, never on stderr
        (again after the settings screen switched the backend)."""
        held = self.session.speech_notices()
        if held is not None:
            held.listen(lambda text: self.post_message(SpeechNotice(text)))

    def main_screen_ready(self) -> None:
        """Called once the transcript exists: only then may the session talk to us."""
        self._apply_load_class()
        self._show_status(self.session.status, announce=False)
        self._listen_to_speech_notices()
        if self.no_voice():
            self._tell_no_voice()
        if self.agent is not None:
            self.say(
                _("Message to {agent}: type, then press Enter. F1 for help.").format(
                    agent=self.agent
                )
            )
        else:
            self.say(_("announcer is listening. Press question mark for help."))
        self.session.subscribe(self)

    @property
    def settings(self) -> UserSettings:
        return self.session.settings

    @property
    def main_screen(self) -> MainScreen:
        return self._main

    # -- UiListener: any thread -------------------------------------------

    def announcement_made(self, announcement: Announcement) -> None:
        self.post_message(AnnouncementArrived(announcement))

    def prompt_opened(self, prompt: PendingPrompt) -> None:
        self.post_message(PromptOpened(prompt))

    def announcement_skipped(self, announcement: Announcement) -> None:
        self.post_message(AnnouncementSkipped(announcement))

    def prompt_voided(self, reply_token: str, reason: str) -> None:
        self.post_message(PromptVoided(reply_token, reason))

    def status_changed(self, status: UiStatus) -> None:
        self.post_message(StatusChanged(status))

    def demo_over(self) -> None:
        """The demo's agent is done: say and show so, with the keys to go on (issue 14)."""
        self.call_later(self._demo_over)

    def _demo_over(self) -> None:
        self.demo_is_over = True
        self.refresh_bindings()
        text = _("The demo is over. Press R to run it again, or Q to quit.")
        self.history.append(HistoryEntry(text, kind=UI_SPEECH_KIND))
        self.write_transcript(text)
        self.say(text)

    # -- speech helpers ---------------------------------------------------

    def say(self, text: str, urgency: Urgency = Urgency.NORMAL, interrupt: bool = False) -> None:
        self._show_in_dialog(text)
        self._show_if_silent(text)
        self.session.speak(text, urgency, interrupt)

    def say_cue(self, text: str) -> None:
        """An early key's cue: after the words being said, cutting nothing off (issue 20)."""
        self._show_in_dialog(text)
        self._show_if_silent(text)
        self.session.say_cue(text)

    def _show_in_dialog(self, text: str) -> None:
        """What we say while a question's dialog is open (a refused key, "not a number")
        is shown in the dialog itself, not only in the transcript hidden behind it."""
        screen = self.screen if self.screen_stack else None
        if isinstance(screen, PromptScreen) and not screen.closed:
            screen.show_feedback(one_line(text))

    def no_voice(self) -> bool:
        """No speech output works (or none was chosen): our words are only on screen."""
        return self.session.speech_output() in SILENT_OUTPUTS

    def _show_if_silent(self, text: str) -> None:
        """With no voice, what we would say goes into the transcript (the screen reader's
        and the braille display's way in), as producer news does."""
        if self.no_voice():
            self.write_transcript(one_line(text))

    def _tell_no_voice(self) -> None:
        """Once: no voice works, so everything is on screen only; and how to get one."""
        if self._told_no_voice:
            return
        self._told_no_voice = True
        text = self._no_voice_text()
        self.history.append(HistoryEntry(text, kind=SPEECH_NOTICE_KIND))
        self.write_transcript(text)

    def _no_voice_text(self) -> str:
        """The notice names the real cause: no audio device, or which package is missing."""
        from announcer.speech.auto import why_no_voice

        cause = why_no_voice(self.session.speech_skipped())
        if cause.kind == "no_audio_device":
            return _(
                "No voice works here: no audio device could be opened ({detail}). "
                "Announcements are only shown on screen. Connect speakers or headphones, "
                "or start your screen reader, then start announcer again. For a braille "
                "display, --ui plain --speech text writes every announcement as a line."
            ).format(detail=one_line(cause.detail))
        if cause.kind == "missing_package":
            return _(
                "No voice works here: {package} is not installed. Announcements are only "
                "shown on screen. To hear them, install it ({command}) or start your screen "
                "reader, then start announcer again. For a braille display, "
                "--ui plain --speech text writes every announcement as a line."
            ).format(package=cause.package, command=cause.install)
        return _(
            "No voice works here, so announcements are only shown on screen. To hear "
            "them, install espeak-ng (on Debian: sudo apt install espeak-ng) or start your "
            "screen reader, then start announcer again. For a braille display, "
            "--ui plain --speech text writes every announcement as a line."
        )

    @on(SpeechNotice)
    def _speech_notice(self, message: SpeechNotice) -> None:
        line = _("Speech output: {notice}").format(notice=one_line(message.text))
        self.history.append(HistoryEntry(line, kind=SPEECH_NOTICE_KIND))
        self.write_transcript(line)
        if self.no_voice():
            self._tell_no_voice()

    def say_about(
        self,
        prompt: PendingPrompt,
        text: str,
        urgency: Urgency = Urgency.CRITICAL,
        interrupt: bool = False,
    ) -> None:
        """Say something about a question; its keys arm once this speech has begun.

        A session that reports when speech starts (the live runtime echoes each
        utterance as it begins) tells us through ``announcement_made``; for the others
        the request is taken as the start.
        """
        self._show_if_silent(text)
        if self.session.reports_speech_start:
            self.session.speak(text, urgency, interrupt, event_id=prompt.event_id)
        else:
            self.session.speak(text, urgency, interrupt)
            self.key_guard.speech_started(prompt.reply_token, self.session.now(), text)

    def speech_start_of(self, event_id: str) -> float | None:
        return self._speech_starts.get(event_id)

    def write_transcript(self, line: str) -> None:
        """Append producer or UI text literally (never interpreted as markup)."""
        self.main_screen.transcript.write_entry(line)

    # -- session events ---------------------------------------------------

    @on(AnnouncementArrived)
    def _announcement(self, message: AnnouncementArrived) -> None:
        announcement = message.announcement
        if announcement.event_id:
            self._speech_began(
                announcement.event_id, announcement.text, whole=announcement.answers_key
            )
        if announcement.kind in (UI_SPEECH_KIND, SPEECH_OUTPUT_KIND):
            # our own words, echoed back by the runtime: not producer news; a new voice's
            # word on taking over is already in the transcript as "Speech output: ..."
            return
        if announcement.producer_id:
            self._producers_seen.add(announcement.producer_id)
        # §11.4: the producer's words shown in their declared direction (isolated, so
        # our own words around them keep theirs)
        text = directed(one_line(announcement.text), announcement.direction)
        if announcement.producer_id and self._several_producers():
            text = f"{text} — {one_line(announcement.producer_id)}"
        self.history.append(HistoryEntry(text, kind=announcement.kind))
        self.write_transcript(text)

    @on(AnnouncementSkipped)
    def _skipped(self, message: AnnouncementSkipped) -> None:
        """Speech fell behind and skipped this news ("3 more: 2 edits and 1 command."): shown here
        and in History, so nothing is lost (issue 14 e)."""
        announcement = message.announcement
        if announcement.kind == UI_SPEECH_KIND or not announcement.text.strip():
            return
        text = _("Skipped: {text}").format(text=one_line(announcement.text))
        self.history.append(HistoryEntry(text, kind=announcement.kind))
        self.write_transcript(text)

    def _speech_began(self, event_id: str, text: str = "", *, whole: bool = False) -> None:
        """Speech about an event started: a question shown for it may arm its keys
        (``text``: what began, so the guard knows when the question was said through;
        ``whole``: the answer to a key that says it whole, W or F2)."""
        now = self.session.now()
        self._speech_starts[event_id] = now
        self._speech_starts.move_to_end(event_id)
        while len(self._speech_starts) > SPEECH_STARTS_KEPT:
            self._speech_starts.popitem(last=False)
        state = self.prompts.get(self.key_guard.shown or "")
        if state is not None and state.prompt.event_id == event_id:
            self.key_guard.speech_started(state.prompt.reply_token, now, text, whole=whole)
            screen = self.screen_stack[-1] if self.screen_stack else None  # none: closing
            if getattr(screen, "prompt", None) is state.prompt:
                # the question's dialog (its prompt matched): a PromptScreen
                screen.engine_reading_started()  # type: ignore[union-attr]

    def _several_producers(self) -> bool:
        """Subscribers' Guide §9: name the producer only when there is more than one."""
        return len(self._producers_seen) > 1 or len(self.ui_status.producers) > 1

    @on(StatusChanged)
    def _status(self, message: StatusChanged) -> None:
        if not self.main_screen.is_attached or not self.main_screen.query("#status"):
            return  # news that arrives while the app closes has no line left to show it on
        self._show_status(message.status)

    def _show_status(self, status: UiStatus, announce: bool = True) -> None:
        old_connection = connection_words(self.ui_status, _)
        self.ui_status = status
        widget = self.main_screen.status_widget
        line = status_line(status)
        if str(widget.content) != line:  # changes only on real changes
            widget.update(line)
        prompt = self.main_screen.agent_prompt if self.agent is not None else None
        if prompt is not None and status.producers:
            prompt.rename(one_line(status.producers[0]))  # the agent's own name, once known
            prompt.follow_target()  # with several agents: the one messages go to
        if announce and connection_words(status, _) != old_connection:
            self.say(_("Connection: {state}.").format(state=connection_words(status, _)))

    @on(PromptOpened)
    def _prompt_opened(self, message: PromptOpened) -> None:
        prompt = message.prompt
        if prompt.reply_token in self.prompts:
            return
        self.prompts[prompt.reply_token] = PromptState(prompt)
        title = prompt_title(prompt)
        self.history.append(HistoryEntry(title, kind=prompt.kind, reply_token=prompt.reply_token))
        self.write_transcript(title)
        if self.active_token is None:
            self.open_prompt(prompt.reply_token, just_announced=True)
        elif not self._engine_presents():  # an engine that presents says how many wait
            self.say(
                ngettext(
                    "Another question is waiting. {count} pending. Press P to list them.",
                    "Another question is waiting. {count} pending. Press P to list them.",
                    len(self.prompts),
                ).format(count=len(self.prompts)),
                Urgency.CRITICAL,
            )

    @on(PromptVoided)
    def _prompt_voided(self, message: PromptVoided) -> None:
        # An engine that says why the question closed has said it (issue 30 item 1).
        quiet = self.session.announces_withdrawals and message.reason != "answered"
        self.void_prompt(message.reply_token, message.reason, say=not quiet)

    # -- prompts ----------------------------------------------------------

    def open_prompt(self, reply_token: str, *, just_announced: bool = False) -> None:
        """Show one pending prompt as a modal; the modal speaks it.

        ``just_announced``: the engine has this moment read the question out, so the
        modal adds only who asks and the keys. A question opened later is read whole,
        by the modal, or by the engine when it presents one question at a time
        (``session.presented_prompt``): then the modal adds who asks and the keys after.
        """

        state = self.prompts.get(reply_token)
        if state is None or self.active_token is not None:
            return
        state.deferred = False
        self.active_token = reply_token
        engine_reads_next = False
        if not just_announced and self._engine_presents():
            just_announced, engine_reads_next = self._engine_reading(state.prompt)
        reading = {"just_announced": just_announced, "engine_reads_next": engine_reads_next}
        screen = (
            ConfirmScreen(state.prompt, **reading)
            if state.prompt.kind == "confirmation"
            else ClarifyScreen(state.prompt, **reading)
        )
        # No result callback: Textual runs it on whatever handled the message that opened
        # the dialog, and the pending list that opened it is gone by then (issue 14). The
        # dialog tells the app itself when it closes (prompt_dialog_closed).
        self.push_screen(screen)

    def _engine_presents(self) -> bool:
        """The engine presents one question at a time and reads each when its turn comes."""
        return self.session.presents_prompts and self.session.announces_prompts

    def _engine_reading(self, prompt: PendingPrompt) -> tuple[bool, bool]:
        """(just read by the engine, to be read by the engine) for a dialog opening now."""
        presented = self.session.presented_prompt()
        if presented is not None and presented.reply_token == prompt.reply_token:
            started = self.speech_start_of(prompt.event_id)
            if started is not None and started >= self.dialog_closed_at:
                return True, False  # its turn came and the engine read it already
            return False, True
        # picked from the list: the engine reads this one now
        self.session.present(prompt.reply_token)
        return False, True

    def prompt_dialog_closed(self, reply_token: str) -> None:
        """A dialog closed (answered, withdrawn, put off): the next question may open."""
        self.dialog_closed_at = self.session.now()
        self.key_guard.hide(reply_token)
        if self.active_token == reply_token:
            self.active_token = None
        # On the app's own queue, after the dialog has left the screen stack.
        self.call_later(self.open_next_prompt)

    def open_next_prompt(self) -> None:
        if self.active_token is not None:
            return
        for token, state in self.prompts.items():
            if not state.deferred:
                self.open_prompt(token)
                return

    def defer_prompt(self, reply_token: str) -> None:
        """Escape on a clarification: leave it pending, unanswered."""
        state = self.prompts.get(reply_token)
        if state is not None:
            state.deferred = True
            self.say(
                ngettext(
                    "Question left for later. {count} pending. Press P to list them.",
                    "Question left for later. {count} pending. Press P to list them.",
                    len(self.prompts),
                ).format(count=len(self.prompts))
            )

    def submit_answer(self, prompt: PendingPrompt, answer: UserAnswer, described: str) -> None:
        """Send an answer once; the outcome is spoken and recorded when it is known.

        A session on this event loop (the live runtime) is awaited through its
        ``answer_async`` so the user hears whether the reply really went out.
        """
        if self.prompts.pop(prompt.reply_token, None) is None:
            self.say(_("This question is no longer open."), Urgency.CRITICAL)
            return
        if not self.session.awaits_delivery:
            self._report_outcome(prompt, described, self.session.answer(answer), answer.scope)
            return
        answer_async = self.session.answer_async

        async def send() -> None:
            try:
                outcome = await answer_async(answer)
            except Exception as error:  # the runtime failed: say so, never retry silently
                outcome = AnswerOutcome(False, printable(str(error)))
            self._report_outcome(prompt, described, outcome, answer.scope)

        self.run_worker(send(), group="answers")

    def _report_outcome(
        self,
        prompt: PendingPrompt,
        described: str,
        outcome: AnswerOutcome,
        scope: str = "once",
    ) -> None:
        spoken = None
        if outcome.held:  # the agent's follow-up question first: nothing went out yet
            result = one_line(outcome.message)
        elif outcome.sent and outcome.agent:  # several sources: whose question it answered
            result = _("{answer}. Sent to {agent}.").format(answer=described, agent=outcome.agent)
            spoken = self._short_echo(prompt, described, agent=outcome.agent)
        elif outcome.sent:
            result = _("{answer}. Sent.").format(answer=described)
            spoken = self._short_echo(prompt, described, lasting=scope == "always")
        else:
            reason = one_line(outcome.message) or _("no reason given")
            result = _("Your answer was not sent. {reason}").format(
                reason=reason[:1].upper() + reason[1:]
            )
        self._set_outcome(prompt.reply_token, result)
        self.write_transcript(result)
        self.say(spoken or result, Urgency.CRITICAL)

    def _short_echo(
        self,
        prompt: PendingPrompt,
        described: str,
        agent: str | None = None,
        *,
        lasting: bool = False,
    ) -> str | None:
        """What is said when an answer went out (issue 30 item 2), None for the long form.

        "Sent.", as a screen reader says it: the user has just answered the question in
        front of them. When another question or agent could be meant, the echo names what
        was answered by its first words; at detailed verbosity it is said whole (and the
        transcript and History always keep it whole).
        """
        if self.session.settings.verbosity == "detailed":
            return None
        askers = {p.producer_id for p in self.session.pending_prompts()} | {prompt.producer_id}
        alone = not self.prompts and len(askers) == 1 and len(self.session.agents()) <= 1
        if agent is None and alone and not lasting:  # an "always" is named: it lasts
            return _("Sent.")
        words = described.split()
        if len(words) > ECHO_WORDS:
            described = " ".join(words[:ECHO_WORDS]).rstrip(".,;:") + "…"
        if agent is not None:  # issue 31 item 3: with several agents, the echo names its agent
            return _("{answer}. Sent to {agent}.").format(answer=described, agent=agent)
        return _("{answer}. Sent.").format(answer=described)

    def _set_outcome(self, reply_token: str, outcome: str) -> None:
        for entry in reversed(self.history):
            if entry.reply_token == reply_token:
                entry.outcome = outcome
                return

    def void_prompt(self, reply_token: str, reason: str, *, say: bool = True) -> None:
        """§6.8: a cancelled, timed-out or orphaned prompt closes and the user is told why.

        ``say``: False when the session's engine has already told why, in one notice
        (``announces_withdrawals``): the dialog only closes, and History keeps the reason.
        """
        state = self.prompts.pop(reply_token, None)
        if state is None:
            return
        reason = one_line(reason).rstrip(" .")
        self._set_outcome(reply_token, _("withdrawn: {reason}").format(reason=reason))
        if say:
            text = _("Question withdrawn: {title}. Reason: {reason}.").format(
                title=prompt_title(state.prompt), reason=reason
            )
            self.write_transcript(text)
            self.say(text, Urgency.CRITICAL, interrupt=True)
        # The dialog is normally on top; if not, a key pressed in it later only
        # hears "no longer open" and closes it: nothing can be sent for a void token.
        self.key_guard.hide(reply_token)
        screen = self.screen
        if self.active_token == reply_token and getattr(screen, "prompt", None) is state.prompt:
            screen.close_dialog()  # type: ignore[attr-defined]

    def check_deadlines(self) -> None:
        """Speak the time left at half and at ten seconds; close prompts whose time is up."""
        try:
            screen = self.screen
        except ScreenStackError:
            return  # the app is closing: its screens are gone (a last tick can still come)
        now = self.session.now()
        if isinstance(screen, ConfirmScreen):
            screen.check_accept_open()  # §6.4: reject only once accept's time is over
        for token, state in list(self.prompts.items()):
            if waits_without_deadline(state.prompt.event):
                continue  # the agent waits: no time left to say (the engine reminds instead)
            remaining = state.prompt.deadline - now
            if remaining <= 0 and self.session.voids_at_deadline:
                continue  # the engine closes it and says why (its prompt_voided is on its way)
            if remaining <= 0:
                view_default = (
                    ConfirmationView.of(state.prompt).default_decision
                    if state.prompt.kind == "confirmation"
                    else None
                )
                if view_default == "accept":
                    reason = _("time ran out; by default the agent goes ahead")
                elif view_default:
                    reason = _("time ran out; by default it is rejected")
                else:
                    reason = _("time ran out")
                self.void_prompt(token, reason)
                continue
            for mark in reminder_marks(state.prompt.timeout_seconds):
                if remaining <= mark and mark not in state.spoken_marks:
                    state.spoken_marks.update(
                        m for m in reminder_marks(state.prompt.timeout_seconds) if m >= mark
                    )
                    self.say(
                        _("{time} left to answer: {title}").format(
                            time=speakable_duration(remaining, self._language()),
                            title=prompt_title(state.prompt),
                        ),
                        Urgency.CRITICAL,
                    )
                    break

    def _language(self) -> str:
        return self.settings.languages[0] if self.settings.languages else "en"

    # -- focus follows the cursor -----------------------------------------

    @on(DescendantFocus)
    def _focus_moved(self, event: DescendantFocus) -> None:
        """Move the terminal cursor onto the control and say its name (once per move)."""
        widget = event.widget
        try:
            screen = widget.screen
        except NoScreen:
            return  # a key closed the dialog before its focus event arrived (issue 14)
        self.call_after_refresh(self._place_cursor, widget)
        previous = getattr(screen, "focus_spoken", None)
        if previous is widget:
            return
        screen.focus_spoken = widget  # type: ignore[attr-defined]
        if previous is not None and previous.parent is widget:
            return  # back from a Select's own list: the choice was already spoken
        self.say(spoken_name(widget))

    def _place_cursor(self, widget: object) -> None:
        from textual.widget import Widget

        if isinstance(widget, Widget) and widget.is_attached:  # not gone already
            self._cursor_widget = widget

    # Textual draws the terminal cursor at ``cursor_position`` on every update; computed
    # from the focused control at that moment, it follows the highlighted row and any
    # layout change (a footer growing, a dialog re-centred), not only focus changes.
    @property  # type: ignore[override]
    def cursor_position(self) -> Offset:
        widget = getattr(self, "_cursor_widget", None)
        if widget is None or not widget.is_attached or widget.screen is not self.screen:
            # The control it was on left with its dialog (issue 30 item 8): the focus came
            # back to this screen without a focus event, so follow it (the transcript's
            # newest line), not the closed dialog's field.
            widget = self.focused
        if widget is not None and widget.is_attached and widget.screen is self.screen:
            try:
                return cursor_offset(widget)
            except Exception:  # a control mid-removal: keep the last place
                pass
        return getattr(self, "_cursor_fallback", Offset(0, 0))

    @cursor_position.setter
    def cursor_position(self, value: Offset) -> None:
        self._cursor_fallback = value

    # -- settings ---------------------------------------------------------

    def apply_settings(self, settings: UserSettings, spoken: str | None = None) -> None:
        """Apply, persist and renegotiate through the session, then tell the user."""
        switched = settings.backend != self.settings.backend
        try:
            self.session.update_settings(settings)
        except Exception as error:  # a store or a producer refused it
            self.say(_("Setting not changed: {error}").format(error=printable(str(error))))
            return
        if switched:
            self._listen_to_speech_notices()
        set_language(self._language())
        self.key_guard.configure(
            settings.answer_arming_seconds, settings.pace_wpm, settings.two_key_accept
        )
        self._apply_load_class()
        for node in (self, *self.screen_stack):
            localize_bindings(node)
        self.refresh_bindings()
        if spoken:
            self.say(spoken)
        if self.save_settings is not None:
            try:
                self.save_settings(settings)
            except Exception as error:  # e.g. the file is not valid TOML: nothing written
                self.say(
                    _("Applied for now, but not saved: {error}").format(error=printable(str(error)))
                )

    def _apply_load_class(self) -> None:
        low = self.settings.cognitive_load == "low"
        for screen in self.screen_stack:
            screen.set_class(low, "-low-load")
        self.set_class(low, "-low-load")

    # -- actions ----------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("demo_again", "demo_quit"):
            return self.demo_is_over  # hidden, and the keys unbound, until the demo ends
        if action == "show_literals":
            return self.screen is self.main_screen  # never over a question's dialog
        return True

    def action_demo_again(self) -> None:
        self.session.request_again()
        self.exit()

    def action_demo_quit(self) -> None:
        self.exit()

    def action_help_quit(self) -> None:
        """Ctrl+C does not quit (it copies in text fields); say how to quit, not only show it."""
        self.say(_("To quit, press Control Q."))

    def action_repeat_last(self) -> None:
        self.session.repeat_last()

    def action_stop_speech(self) -> None:
        self.session.stop_speech()

    def action_where_am_i(self) -> None:
        screen = getattr(self.screen, "spoken_title", "") or _("Main screen")
        # The answer to the user's own key: at once, even over a question (docs/speech.md).
        self.say(f"{screen}. {spoken_status(self.ui_status, len(self.prompts))}", interrupt=True)

    def action_cycle_verbosity(self) -> None:
        current = self.settings.verbosity
        index = VERBOSITY_CYCLE.index(current) if current in VERBOSITY_CYCLE else 0
        new = VERBOSITY_CYCLE[(index + 1) % len(VERBOSITY_CYCLE)]
        self.apply_settings(
            self.settings.model_copy(update={"verbosity": new}),
            _("Verbosity {level}.").format(level=_(new)),
        )

    def action_toggle_low_load(self) -> None:
        if self.settings.cognitive_load == "low":
            new, spoken = self._previous_load, _("Low cognitive load off.")
        else:
            self._previous_load = self.settings.cognitive_load
            new, spoken = "low", _("Low cognitive load on.")
        self.apply_settings(self.settings.model_copy(update={"cognitive_load": new}), spoken)

    def action_list_prompts(self) -> None:

        if not self.prompts:
            self.say(_("No pending questions."))
            return
        self.push_screen(PromptListScreen())

    def action_history(self) -> None:

        self.push_screen(HistoryScreen())

    def action_diagnostics(self) -> None:
        """What was dropped and why, readable without a debug flag."""

        self.push_screen(DiagnosticsScreen(self.session.diagnostics_report()))

    def action_settings(self) -> None:

        self.push_screen(SettingsScreen())

    def action_help(self) -> None:
        focused = self.focused
        if isinstance(focused, AgentPrompt):
            self.say(focused.help_text(), interrupt=True)
            return
        text = self.help_text()
        self.say(text)
        screen = self.screen
        if isinstance(screen, AnnouncerScreen):
            # History, Settings: the help on that screen, not in the transcript behind it
            screen.show_feedback(one_line(text))

    def action_agent_commands(self) -> None:
        """``/`` outside the message box: the agent's slash commands."""
        prompt = self.main_screen.agent_prompt
        if prompt is None:
            self.say(_("No agent to ask: this source takes no messages."))
            return
        self.say(prompt.commands_text(), interrupt=True)

    def action_say_digest(self) -> None:
        """F5: what happened in the agent's turn (now, else the last), the engine's digest."""
        self.session.say_digest()

    def action_agent_suggestions(self) -> None:
        """F7: the prompts the agent suggests sending next, a list; Enter sends one
        (``:suggestions`` and ``:suggestions N`` in the plain UI)."""
        prompt = self.main_screen.agent_prompt
        if prompt is None:
            self.say(_("No agent to ask: this source takes no messages."))
            return
        offered = self.session.agent_suggestions()
        if not offered:
            self.say(_("The agent has suggested nothing to send next."), interrupt=True)
            return
        self.push_screen(SuggestionsScreen(prompt.agent, offered))

    def action_show_literals(self) -> None:
        """F6: the last code block and the web addresses the agents wrote, whole and
        literally, a row each (``:code`` and ``:links`` in the plain UI)."""
        self.push_screen(
            LiteralsScreen(self.session.literals("code"), self.session.literals("links"))
        )

    def action_agent_settings(self) -> None:
        """F4: the agent's mode and model, a picker (``:mode``/``:model`` in the plain UI)."""
        rows = self.session.agent_settings()
        if not rows:
            self.say(_("This agent offers no modes or settings."), interrupt=True)
            return
        self.push_screen(AgentSettingsScreen(rows))

    async def offer_login(self, agent: str, choices: list[LoginChoice], cwd: str) -> int | None:
        """An agent needs a login it can do in a terminal (ACP terminal auth): a list of
        its logins and "Not now"; the one picked runs in this terminal while the app is
        suspended. Its exit status, or None when nothing ran.

        Called from the agent's own task: the list is the app's, so it is handed over as
        a message, and its worker answers."""
        import asyncio

        answer: asyncio.Future[int | None] = asyncio.get_running_loop().create_future()
        self.post_message(LoginOffered(agent, choices, cwd, answer))
        return await answer

    def on_login_offered(self, message: LoginOffered) -> None:
        async def run() -> None:
            code: int | None = None
            try:
                code = await self._run_login(message.agent, message.choices, message.cwd)
            except Exception:
                code = None
            finally:  # also when the app stops during the login: the agent hears "none"
                if not message.answer.done():
                    message.answer.set_result(code)

        self.run_worker(run(), exclusive=False)

    async def _run_login(self, agent: str, choices: list[LoginChoice], cwd: str) -> int | None:
        import os
        import shlex

        from announcer.formats.acp_logins import login_env_words
        from announcer.ui.terminal_login import run_login, terminal_gone

        def command(argv: list[str]) -> str:
            return shlex.join([os.path.basename(argv[0]), *argv[1:]])

        rows: list[str] = []
        risky: dict[int, str] = {}
        for index, choice in enumerate(choices):
            # issue 29 item 3: the environment the agent chose is shown and said, its risk too
            shown, risk = login_env_words(choice.reading, _)
            words = [f"{choice.name}: {command(list(choice.argv))}", shown, risk]
            rows.append(printable(" ".join(w for w in words if w)))
            if risk:
                risky[index] = printable(risk)
        screen = LoginScreen(printable(agent), rows, risky)
        await self.push_screen(screen)
        picked = await screen.chosen
        if picked is None:
            return None
        argv, env = list(choices[picked].argv), choices[picked].env
        self.say(
            _("Logging in with {command}. announcer goes on when it ends.").format(
                command=printable(command(argv))
            ),
            Urgency.CRITICAL,
        )
        code: int | None = None
        try:
            with self.suspend():  # the login has the terminal; announcer reads no keys
                # awaited, not run here: the loop must still hear SIGHUP, SIGTERM, SIGINT
                code = await run_login(argv, env, cwd)
                if self._driver is not None and not self.is_headless and terminal_gone():
                    raise _TerminalGone  # leave without resuming on a closed terminal
        except _TerminalGone:
            self.terminal_gone()
            return None
        except Exception as exc:  # no terminal to hand over (headless), or no program
            self.say(printable(str(exc)), Urgency.CRITICAL)
        if code == 0:
            self.say(
                _("The login is done. Starting {agent} again.").format(agent=printable(agent)),
                Urgency.CRITICAL,
            )
        else:
            self.say(
                _("The login did not finish (status {code}).").format(code=code), Urgency.CRITICAL
            )
        return code

    def action_stop_turn(self) -> None:
        """Escape on the main screen: stop the agent's turn (as in the message box)."""
        prompt = self.main_screen.agent_prompt
        if prompt is not None:
            prompt.action_stop_turn()

    def help_text(self) -> str:
        """The keys the Footer shows for the current screen, as a sentence."""
        lines = self.key_help(self.screen.active_bindings.values())
        extra = getattr(self.screen, "extra_help", None)
        if callable(extra) and extra():
            lines.append(extra())
        return " ".join(lines)

    def key_help(self, active: Iterable[object]) -> list[str]:
        lines: list[str] = []
        seen: set[str] = set()
        for item in active:
            binding = item.binding  # type: ignore[attr-defined]
            if not binding.show or not binding.description:
                continue
            entry = _("{key}: {description}.").format(
                key=speakable_key(self.get_key_display(binding)),
                description=binding.description,
            )
            if entry not in seen:
                seen.add(entry)
                lines.append(entry)
        return lines
