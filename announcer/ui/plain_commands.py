"""The plain UI's ``:`` commands: settings, status, help and the agent's own commands."""

from __future__ import annotations

import asyncio

from announcer.engine.phrases import N_
from announcer.engine.settings import UserSettings
from announcer.i18n.translate import catalog_language, translator
from announcer.protocol.sanitise import clean_display
from announcer.runtime.contract import SessionStatus
from announcer.ui.plain_state import PlainState, clean
from announcer.ui.status import connection_words, sources_words

# Without an agent here (AAEP producers, hooks, the demo): no :cancel, no :commands
# (issue 30 item 8: help names only what works).
PRODUCER_HELP = N_(
    "Commands: :verbosity terse|normal|detailed, :load low|medium|high, :status, :repeat, "
    ":diagnostics, :quit"
)
HELP = N_(
    "Commands: :verbosity terse|normal|detailed, :load low|medium|high, :status, :repeat, "
    ":diagnostics, :cancel (stop the agent's turn), :commands (the agent's slash commands), "
    ":quit"
)
# Said with :help when agents run (issue 33, item 2).
DIGEST_HELP = N_(":digest says what happened in the agent's turn, or in the last one.")
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
# Said with :help when an agent runs here (issue 33, item 5).
SUGGESTIONS_HELP = N_(
    ":suggestions lists the prompts the agent suggests sending next; :suggestions N sends one."
)
# Said with :help: what speech shortens, printed whole (issue 31, item 14).
LITERALS_HELP = N_(":code prints the last code block whole; :links prints the web addresses whole.")


#: the commands that do something other than help; any other ``:`` line prints the help
COMMAND_NAMES = frozenset(
    {
        "quit", "q", "exit", "status", "repeat", "digest", "what", "diagnostics", "diag",
        "cancel", "to", "agents", "mode", "model", "sessions", "code", "links", "commands",
        "suggestions", "verbosity", "load",
    }
)  # fmt: skip


class PlainCommands(PlainState):
    """Lines starting with ``:``: the user's settings, the status line and help."""

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
        elif name in ("digest", "what"):
            session.say_digest()
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
        elif name in ("code", "links"):
            # what speech shortened ("code block, 30 lines", a URL's host), whole and as
            # written; only control characters are made visible
            literals = session.literals(name)
            if not literals:
                self._print(
                    self._tr("No code block yet.")
                    if name == "code"
                    else self._tr("No web address yet.")
                )
            for text in literals:
                for line in text.splitlines() or [""]:
                    self._print(clean_display(line).rstrip())
        elif name == "commands":
            target = " ".join(args).lstrip("@") or None
            found = session.agent_commands(target)
            if not found:
                self._print(self._tr("The agent has listed no commands."))
            for command, description in found:
                self._print(clean(f"/{command}: {description}" if description else f"/{command}"))
        elif name == "suggestions":
            # ":suggestions [NAME]" lists; ":suggestions [NAME] N" sends the Nth, as typed
            chosen = args[-1] if args and args[-1].isdigit() else None
            words = args[:-1] if chosen is not None else args
            target = " ".join(words).lstrip("@") or None
            offered = session.agent_suggestions(target)
            if not offered:
                self._print(self._tr("The agent has suggested nothing to send next."))
            elif chosen is None:
                for number, text in enumerate(offered, 1):
                    self._print(clean(f"{number}. {text}"))
            elif 1 <= int(chosen) <= len(offered):
                session.send_prompt(offered[int(chosen) - 1], target)
            else:
                self._print(
                    self._tr("There is no suggestion {number}; there are {count}.").format(
                        number=chosen, count=len(offered)
                    )
                )
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
        agents = self.session.agents() if self.session is not None else []
        self._print(self._tr(HELP if agents else PRODUCER_HELP))
        self._print(self._tr(LITERALS_HELP))
        if agents:
            self._print(self._tr(AGENT_SETTINGS_HELP))
            self._print(self._tr(AGENT_SESSIONS_HELP))
            self._print(self._tr(SUGGESTIONS_HELP))
            self._print(self._tr(DIGEST_HELP))
        if len(agents) > 1:
            self._print(self._tr(AGENTS_HELP))
