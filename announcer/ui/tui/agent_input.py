"""The message box for an agent (``announcer agent``): type, send, recall, stop.

Shown on the main screen only when the session takes prompts (an ACP agent). It is
what has focus there, so letters are typed, not taken as the main screen's keys (Tab
moves to the transcript, where they work). Keys, all spoken by ``?`` on an empty box
and by F1:

* Enter sends; Shift+Enter makes a new line, and so do Control+J and Alt+Enter, for
  the many terminals that cannot send Shift+Enter. What was sent is said back briefly.
* Up on the first line and Down on the last recall earlier messages of this run.
* Escape stops the agent's turn (ACP ``session/cancel``).
* With several agents, ``@NAME message`` sends to one of them; ``@NAME`` alone makes it
  the one messages and Escape go to; ``@`` alone says which that is and what each does.
* ``/`` as the first character lists the agent's slash commands.

A question from the agent opens in its own dialog, which takes the keys until it is
answered (Escape there rejects it once); then the focus comes back here with the
message as it was. A lone answer word ("y", "reject") is never sent to the agent: it
was meant for a question that has just closed.
"""

from __future__ import annotations

from typing import ClassVar, cast

from textual.binding import Binding, BindingType
from textual.content import Content
from textual.events import Key
from textual.widgets import TextArea

from announcer.engine.announcement import Urgency
from announcer.engine.answer_guard import SAME_KEY_CONFIRM_SECONDS
from announcer.engine.answer_keys import LONE_ANSWER_WORDS
from announcer.ui.tui.host import AnnouncerHost
from announcer.ui.tui.text import _, ngettext, one_line

#: messages kept for Up and Down (this run only; never written anywhere)
HISTORY_KEPT = 200
#: commands read out when the user asks for them; the rest are counted
COMMANDS_READ = 30


class PromptHistory:
    """Earlier messages of this run, browsed with Up and Down like a shell's history.

    Leaving the newest end keeps what was being typed (the draft); coming back past
    the newest message restores it.
    """

    def __init__(self, kept: int = HISTORY_KEPT) -> None:
        self.kept = kept
        self.entries: list[str] = []
        self._index: int | None = None  # None: not browsing (at the draft)
        self._draft = ""

    def add(self, text: str) -> None:
        if not self.entries or self.entries[-1] != text:
            self.entries.append(text)
            del self.entries[: -self.kept]
        self._index = None
        self._draft = ""

    @property
    def position(self) -> int | None:
        """1-based place of the message shown, counted from the newest; None: the draft."""
        return None if self._index is None else len(self.entries) - self._index

    def back(self, current: str) -> str | None:
        """The message before the one shown (None: there is none)."""
        if not self.entries or self._index == 0:
            return None
        if self._index is None:
            self._draft = current
            self._index = len(self.entries)
        self._index -= 1
        return self.entries[self._index]

    def forward(self) -> str | None:
        """The message after the one shown, or the draft past the newest (None: not browsing)."""
        if self._index is None:
            return None
        self._index += 1
        if self._index >= len(self.entries):
            self._index = None
            return self._draft
        return self.entries[self._index]


class AgentPrompt(TextArea):
    """A multi-line message box whose Enter sends the message to the agent."""

    # Enter and the new-line keys are handled in ``_on_key``, in order with the typed
    # letters: as priority bindings they ran ahead of letters still queued for the box,
    # so a fast typist (or a paste) sent half a message. These entries show them in the
    # Footer and in help.
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "send", _("Send")),
        Binding("shift+enter,ctrl+j,alt+enter", "new_line", _("New line"), key_display="^j"),
        Binding("up", "history_back", show=False),
        Binding("down", "history_forward", show=False),
        # the last code block and links, and the agent's suggested prompts, as everywhere
        # in the app (TextArea's own F6 and F7 select the line and all; Shift+Home,
        # Shift+End and the arrows with Shift still select)
        Binding("f6", "app.show_literals", show=False),
        Binding("f7", "app.agent_suggestions", show=False),
        Binding("escape", "stop_turn", _("Stop the agent"), key_display="esc"),
    ]
    _NEW_LINE_KEYS: ClassVar[frozenset[str]] = frozenset({"shift+enter", "ctrl+j", "alt+enter"})

    DEFAULT_CSS = """
    AgentPrompt { height: auto; min-height: 3; max-height: 10; }
    """

    def __init__(self, agent: str) -> None:
        super().__init__(
            "",
            soft_wrap=True,
            tab_behavior="focus",  # Tab leaves the box: the transcript's keys are one Tab away
            show_line_numbers=False,
            compact=False,
            id="agent-prompt",
        )
        self.sent = PromptHistory()
        self.agent = ""
        self.rename(agent)

    def follow_target(self) -> None:
        """Label the box with the agent messages now go to (several agents: ``@NAME``)."""
        agent = self.announcer.session.prompt_target()
        if agent is not None:
            self.rename(one_line(agent.description))

    def rename(self, agent: str) -> None:
        """The agent said its own name (ACP ``initialize``): the box is labelled with it."""
        if agent and agent != self.agent:
            self.agent = agent
            # Content, not a str: the agent's own name is shown as written, never as markup
            # (a title of "[@click=app.quit]" must not become a link that quits).
            self.border_title = Content(_("Message to {agent}").format(agent=agent))
            self.accessible_name = _("Message to {agent}").format(agent=agent)

    @property
    def announcer(self) -> AnnouncerHost:
        return cast("AnnouncerHost", self.app)

    def on_mount(self) -> None:
        self.cursor_blink = False  # issue 6 §7: nothing blinks

    def say(self, text: str, urgency: Urgency = Urgency.NORMAL) -> None:
        self.announcer.say(text, urgency, interrupt=True)

    # -- keys ---------------------------------------------------------------------------

    async def _on_key(self, event: Key) -> None:
        if event.key == "enter" or event.key in self._NEW_LINE_KEYS:
            event.stop()
            event.prevent_default()
            if event.key == "enter":
                self.action_send()
            else:
                self.action_new_line()
            return
        if event.character == "?" and not self.text:
            event.stop()
            event.prevent_default()
            self.say(self.help_text())
            return
        await super()._on_key(event)
        if event.character == "/" and self.text == "/":
            self.say(self.commands_text())

    def action_send(self) -> None:
        text = self.text
        if not text.strip():
            self.say(_("Nothing to send: the message is empty."))
            return
        if text.strip().lower() in LONE_ANSWER_WORDS:
            # Meant for a question that has just closed, never a message to the agent.
            self.say(
                _(
                    "Not sent: {word} alone looks like an answer, and no question is open. "
                    "Type a longer message."
                ).format(word=text.strip()),
                Urgency.CRITICAL,
            )
            return
        session = self.announcer.session
        if not session.takes_prompts:
            self.say(_("This source does not take messages."))
            return
        target: str | None = None
        if text.startswith("@"):
            # "@codex fix the test": to that agent only (and later messages go there too)
            name, _space, rest = text.strip()[1:].partition(" ")
            if not rest.strip():
                self._address(name)
                return
            target, text = name, rest.strip()
        # The session says it back ("Sent to Claude Code: ..."), or why not.
        session.send_prompt(text, target, stop_key=_("Escape"))
        self.follow_target()
        if session.prompt_taken:
            self.sent.add(self.text)
            self.announcer.write_transcript(_("You: {text}").format(text=one_line(text)))
            self.load_text("")

    def _address(self, name: str) -> None:
        """``@NAME`` alone: later messages, and Escape, go to that agent (the session says
        so); ``@`` alone: which agent messages go to, and what each one is doing."""
        said = self.announcer.session.address_agent(name)
        if said is None:
            self.say(_("Type @ and an agent's name, a space, then your message."))
            return
        self.follow_target()
        self.load_text("")

    def action_new_line(self) -> None:
        self.insert("\n")
        self.say(_("New line."))

    def action_history_back(self) -> None:
        if self.cursor_location[0] > 0:
            self.action_cursor_up()
            return
        recalled = self.sent.back(self.text)
        if recalled is None:
            self.say(_("No earlier message.") if self.sent.entries else _("Nothing sent yet."))
            return
        self._show(recalled)
        self.say(
            _("Message {position} of {count}: {text}").format(
                position=self.sent.position, count=len(self.sent.entries), text=recalled
            )
        )

    def action_history_forward(self) -> None:
        if self.cursor_location[0] < self.document.line_count - 1:
            self.action_cursor_down()
            return
        recalled = self.sent.forward()
        if recalled is None:
            self.say(_("This is the newest; nothing comes after it."))
            return
        self._show(recalled)
        if self.sent.position is None:
            self.say(
                _("Your draft: {text}").format(text=recalled) if recalled else _("Empty message.")
            )
        else:
            self.say(
                _("Message {position} of {count}: {text}").format(
                    position=self.sent.position,
                    count=len(self.sent.entries),
                    text=recalled,
                )
            )

    def _show(self, text: str) -> None:
        self.load_text(text)
        self.move_cursor(self.document.end)

    def action_stop_turn(self) -> None:
        closed_at = getattr(self.announcer, "dialog_closed_at", float("-inf"))
        if self.announcer.session.now() - closed_at < SAME_KEY_CONFIRM_SECONDS:
            # The Escape that rejected a question, pressed twice: not a stop as well.
            self.say(_("Press Escape again to stop {agent}.").format(agent=self.agent))
            return
        # the session says what happened
        self.run_worker(self.announcer.session.cancel_turn(), group="agent")

    # -- words --------------------------------------------------------------------------

    def help_text(self) -> str:
        return " ".join(
            [
                _("Type a message to {agent} and press Enter to send it.").format(agent=self.agent),
                _("Shift+Enter, or Control J, starts a new line."),
                _("Up and Down recall earlier messages."),
                _("Escape stops the agent's turn."),
                _(
                    "With several agents: @ and a name before a message sends it to that "
                    "agent; @ and a name alone makes it the one messages and Escape go to; "
                    "@ alone says which one that is and what each is doing."
                ),
                _("A slash at the start lists the agent's commands."),
                _("F4 chooses the agent's mode and model."),
                _("F5 says what happened in the agent's turn."),
                _("F7 lists the prompts the agent suggests; Enter sends one."),
                _("F6 shows the last code block and the web addresses, whole."),
                _(
                    "A question from the agent opens in its own dialog; "
                    "question mark there says its keys."
                ),
                _("Tab moves to the transcript, where single letters are keys; F1 says them."),
                _("F2 repeats the last message, F3 says where you are, Control S stops speech."),
                _("Control Q quits."),
            ]
        )

    def commands_text(self) -> str:
        found = self.announcer.session.agent_commands()
        if not found:
            return _("{agent} has listed no commands.").format(agent=self.agent)
        read = [
            f"/{one_line(name)}: {one_line(about)}" if about else f"/{one_line(name)}"
            for name, about in found[:COMMANDS_READ]
        ]
        more = len(found) - len(read)
        text = _("Commands of {agent}: {commands}.").format(
            agent=self.agent, commands="; ".join(read)
        )
        if more > 0:
            text += " " + ngettext("And {count} more.", "And {count} more.", more).format(
                count=more
            )
        return text
