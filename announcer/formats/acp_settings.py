"""The agent's modes and settings (ACP session modes, config options), its saved
sessions and its login: said when they change, and what ``:mode``, ``:model``,
``:sessions`` and the settings picker ask of the agent.
"""

from __future__ import annotations

from announcer.formats.acp_session import AcpSessions, _Session
from announcer.formats.acp_shapes import ConfigOption, _config_options, _mode_list
from announcer.formats.base import AdapterOutput, get_str
from announcer.formats.builder_fields import mark_start_line
from announcer.formats.speakable import clip


class AcpSettings(AcpSessions):
    """Modes, config options, sessions to resume and logins."""

    def _mode(self, session: _Session, mode: str | None, now: float) -> None:
        if not mode or mode == session.mode:
            return
        session.mode = mode
        if any(o.category == "mode" for o in session.config.values()):
            return  # the mode is also a config option: its change is said from that update
        name = dict(session.modes).get(mode) or mode.replace("_", " ")
        self._setting_said(session, self._t("Mode: {mode}.").format(mode=name), now)

    def _setting_said(self, session: _Session, said: str, now: float) -> None:
        """A mode or setting that changed: a finished step (percent 100), which the
        progress rate never folds away: who asks before acting is never news to skip.

        While the session starts (its settings known, not yet said) a change is the start
        settings taking effect: the settings line says them once (issue 31, item 11)."""
        if session.settings_said is False:
            return
        self.builder.progress(
            session.state, now, description=said, percent=100, normal=said, urgency="normal"
        )

    def no_preset_said(self, session_id: str, title: str, now: float) -> AdapterOutput:
        """A registry agent started with no preset of ours (issue 33, item 1): one sentence
        that it may act without asking, its modes, and those of them that ask first."""

        def step() -> None:
            session = self._session(session_id, now)
            choices = list(session.modes)
            option = next((o for o in session.config.values() if o.category == "mode"), None)
            if option is not None:
                choices = list(option.choices)
            said = self._t("No preset for {agent}: it may act without asking.").format(
                agent=clip(title, 120)
            )
            if choices:
                said += " " + self._t("Its modes are {modes}; :mode changes it.").format(
                    modes=", ".join(name for _, name in choices[:12])
                )
                asking = [name for mode_id, name in choices[:12] if asks_first(mode_id, name)]
                if asking:
                    said += " " + self._t("Modes that ask first: {modes}.").format(
                        modes=", ".join(asking)
                    )
            else:
                said += " " + self._t("It offers no modes to choose from.")
            self._say_sentence(session, now, said)

        return self._run(step)

    def settings_known(
        self,
        session_id: str,
        modes: object,
        config_options: object,
        now: float,
        say: bool = True,
        message_waiting: bool = False,
    ) -> AdapterOutput:
        """``session/new`` answered with the agent's modes and config options: say them once
        (``message_waiting``: after the turn of the user's message that waited, issue 31,
        item 11)."""

        def step() -> None:
            session = self._session(session_id, now)
            session.message_waited = session.message_waited or message_waiting
            if isinstance(modes, dict):
                session.modes = _mode_list(modes.get("availableModes"))
                session.mode = get_str(modes, "currentModeId")
            session.config = _config_options(config_options)
            session.settings_said = say or bool(session.settings_said)
            said = self._settings_sentence(session)
            if said and say:
                # the mode and the model, whole, at normal verbosity (never cut mid-list,
                # issue 31 item 13); every setting in the description, at detailed
                brief = self._settings_sentence(session, brief=True) or said
                if session.message_waited and session.turn == 0:
                    # issue 31, item 11: the user's message waits for the agent; its answer
                    # comes first, the settings line after that turn
                    session.settings_after_turn = (said, brief)
                else:
                    self._say_settings(session, said, brief, now)

        return self._run(step)

    def _say_settings(self, session: _Session, said: str, brief: str, now: float) -> None:
        before = len(self.builder.events)
        self.builder.progress(
            session.state,
            now,
            description=clip(said, 4096),
            normal=brief,
            terse=brief,
            urgency="normal",
        )
        if len(self.builder.events) > before:
            mark_start_line(self.builder.events[-1])  # moot once the user writes

    def settings(self, session_id: str) -> tuple[list[tuple[str, str]], dict[str, ConfigOption]]:
        """The session's modes and config options, for ``:mode``, ``:model`` and the picker."""
        session = self.sessions.get(session_id)
        if session is None:
            return [], {}
        return list(session.modes), dict(session.config)

    def setting_plan(
        self, session_id: str, kind: str, wanted: str
    ) -> tuple[str, str, str | bool] | str:
        """What ``:mode NAME`` / ``:model NAME`` asks of the agent, or the sentence to say.

        ``("config", option id, value)`` for ``session/set_config_option`` (preferred),
        ``("mode", "", mode id)`` for ``session/set_mode`` (the fallback). With no
        ``wanted`` (or one the agent does not offer), the sentence names the current value
        and the choices. ``kind`` is ``mode``, ``model`` or a config option's own id.
        """
        session = self.sessions.get(session_id)
        if session is None:
            return self._t("{agent} has no session yet.").format(agent=self.agent_name)
        option = session.config.get(kind) or next(
            (o for o in session.config.values() if o.category == kind), None
        )
        if option is not None:
            listing = self._t("{setting}: {value}. Choices: {choices}.").format(
                setting=option.name,
                value=option.said_value(),
                choices=", ".join(name for _, name in option.choices[:30]),
            )
            if not wanted:
                return listing
            value = option.find(wanted)
            if value is None and kind == "mode":
                # ``:mode plan`` with Codex: "Plan" is its collaboration mode, not its mode
                other = [
                    o for o in session.config.values()
                    if o is not option and o.category != "model" and o.find(wanted) is not None
                ]  # fmt: skip
                if len(other) == 1:
                    option, value = other[0], other[0].find(wanted)
            if value is None:
                return (
                    self._t("{agent} offers no such choice: {wanted}.").format(
                        agent=self.agent_name, wanted=clip(wanted, 100)
                    )
                    + " "
                    + listing
                )
            if option.choices == (("true", "on"), ("false", "off")):
                return ("config", option.id, value == "true")
            return ("config", option.id, value)
        if kind == "mode" and session.modes:
            current = dict(session.modes).get(session.mode or "", session.mode or "?")
            listing = self._t("{setting}: {value}. Choices: {choices}.").format(
                setting=self._t("Mode"),
                value=current,
                choices=", ".join(name for _, name in session.modes),
            )
            folded = " ".join(wanted.split()).casefold()
            found = next(
                (m for m, name in session.modes if folded in (m.casefold(), name.casefold())),
                None,
            )
            if not wanted:
                return listing
            if found is None:
                return (
                    self._t("{agent} offers no such choice: {wanted}.").format(
                        agent=self.agent_name, wanted=clip(wanted, 100)
                    )
                    + " "
                    + listing
                )
            return ("mode", "", found)
        return self._t("{agent} offers no choice of {setting}.").format(
            agent=self.agent_name, setting=kind
        )

    def login_hint(self, methods: object, command: list[str]) -> str:
        """What to do when the agent says it needs a login (ACP ``authMethods``).

        A terminal method is the agent's own command with its arguments, to run in a
        terminal; an environment-variable method names its variables; any other is said
        by its name and description. announcer never types a credential itself.
        """
        import shlex

        steps: list[str] = []
        for method in methods if isinstance(methods, list) else []:
            if not isinstance(method, dict):
                continue
            name = clip(get_str(method, "name") or get_str(method, "id") or "", 80)
            description = clip(get_str(method, "description") or "", 160)
            args = method.get("args")
            if method.get("type") == "terminal" and isinstance(args, list):
                line = shlex.join([*command, *(str(a) for a in args[:20])])
                steps.append(
                    self._t("for {method}, run in a terminal: {command}").format(
                        method=name, command=line
                    )
                )
            elif method.get("type") == "env_var" and isinstance(method.get("vars"), list):
                names = [get_str(v, "name") for v in method["vars"][:5]]
                steps.append(
                    self._t("for {method}, set {variables}").format(
                        method=name, variables=", ".join(n for n in names if n)
                    )
                )
            elif name:
                steps.append(f"{name}: {description}" if description else name)
        if not steps:
            return self._t("{agent} needs you to log in; it did not say how.").format(
                agent=self.agent_name
            )
        return self._t("{agent} needs you to log in: {steps}.").format(
            agent=self.agent_name, steps="; ".join(steps[:4])
        )

    def sessions_said(self, sessions: list[tuple[str, str]]) -> str:
        """``:sessions``: the agent's sessions, numbered as ``:sessions N`` resumes them."""
        if not sessions:
            return self._t("{agent} has no sessions to resume.").format(agent=self.agent_name)
        listed = "; ".join(f"{i}. {clip(title, 120)}" for i, (_, title) in enumerate(sessions, 1))
        return self._t("Sessions of {agent}: {sessions}.").format(
            agent=self.agent_name, sessions=listed
        )

    def sessions_refused(self, why: str) -> str:
        """Why ``:sessions`` cannot list or resume: ``list``, ``resume``, ``busy``, ``number``."""
        sentences = {
            "list": self._t("{agent} cannot list its sessions."),
            "resume": self._t("{agent} cannot resume a session."),
            "busy": self._t("{agent} is working; stop its turn first."),
            "number": self._t("No such session; type :sessions to list them."),
        }
        return sentences.get(why, sentences["list"]).format(agent=self.agent_name)

    def session_resumed(self, session_id: str, title: str, now: float) -> AdapterOutput:
        """``session/resume`` answered: the conversation goes on in that session."""

        def step() -> None:
            session = self._open(session_id, self._latest_cwd(), now)
            self.builder.progress(
                session.state,
                now,
                description=clip(title, 4096) or session_id,
                percent=100,
                normal=self._t("Resumed: {title}.").format(title=clip(title, 200) or session_id),
                urgency="normal",
            )

        return self._run(step)

    def setting_refused(self, kind: str, value: str, reason: str) -> str:
        """The sentence said when the agent did not take a setting."""
        said = self._t("{agent} did not change {setting} to {value}.").format(
            agent=self.agent_name, setting=kind, value=clip(value, 100)
        )
        return f"{said} {clip(reason, 200)}".strip()

    def setting_rows(self, session_id: str) -> list[tuple[str, str, str, bool]]:
        """Every choice of the agent's settings, for a picker: (setting, value, label, now).

        Config options first (a select's every choice, a boolean's on and off); the session
        modes when no config option is the mode. ``setting`` is what :meth:`setting_plan`
        takes as ``kind``.
        """
        session = self.sessions.get(session_id)
        if session is None:
            return []
        rows: list[tuple[str, str, str, bool]] = []
        for option in session.config.values():
            for value, name in option.choices[:50]:
                rows.append((option.id, value, f"{option.name}: {name}", value == option.current))
        if not any(o.category == "mode" for o in session.config.values()):
            for mode_id, name in session.modes:
                label = f"{self._t('Mode')}: {name}"
                rows.append(("mode", mode_id, label, mode_id == session.mode))
        return rows[:200]

    def current_mode(self, session_id: str) -> str | None:
        session = self.sessions.get(session_id)
        return session.mode if session is not None else None

    def _settings_sentence(self, session: _Session, brief: bool = False) -> str:
        """Every setting ("Mode: Manual. Model: Opus. Effort: High."), or ``brief``: the
        mode and the model alone."""
        parts: list[str] = []
        mode_option = next((o for o in session.config.values() if o.category == "mode"), None)
        if session.mode and mode_option is None:
            name = dict(session.modes).get(session.mode) or session.mode
            parts.append(self._t("Mode: {mode}.").format(mode=name))
        options = list(session.config.values())[:8]
        if brief:
            options = [o for o in options if o.category in ("mode", "model")]
        for option in options:
            parts.append(
                self._t("{setting}: {value}.").format(
                    setting=option.name, value=option.said_value()
                )
            )
        return " ".join(parts)

    def _config(self, session: _Session, value: object, now: float) -> None:
        """``config_option_update``: each setting whose value changed is said."""
        fresh = _config_options(value)
        if not fresh:
            return
        changed = [
            option
            for key, option in fresh.items()
            if key in session.config and session.config[key].current != option.current
        ]
        session.config = fresh
        for option in changed[:8]:
            said = self._t("{setting} is now {value}.").format(
                setting=option.name, value=option.said_value()
            )
            self._setting_said(session, said, now)

    def config_changed(self, session_id: str, config_options: object, now: float) -> AdapterOutput:
        """``session/set_config_option`` answered with every option: say what changed."""
        return self._run(lambda: self._config(self._session(session_id, now), config_options, now))

    def mode_changed(self, session_id: str, mode_id: str, now: float) -> AdapterOutput:
        """``session/set_mode`` answered: the mode is said (once, if the agent says it too)."""
        return self._run(lambda: self._mode(self._session(session_id, now), mode_id, now))


#: words in a mode's id or name that say it asks before acting, and words that say it does not
_ASKING_WORDS = ("ask", "approv", "confirm", "read-only", "read only", "readonly", "plan",
                 "default", "manual", "permission", "review each", "suggest")  # fmt: skip
_NOT_ASKING_WORDS = ("auto", "bypass", "yolo", "full", "accept", "dontask", "don't ask",
                     "never", "without", "skip", "trust", "unrestricted")  # fmt: skip


def asks_first(mode_id: str, name: str) -> bool:
    """Whether a mode the agent declares reads as one that asks before it edits or runs
    anything ("Ask before edits", "default", "read-only", "plan"); anything that also
    reads as automatic ("Auto review", "acceptEdits", "bypassPermissions") does not."""
    words = f"{mode_id} {name}".casefold().replace("_", " ")
    if any(word in words for word in _NOT_ASKING_WORDS):
        return False
    return any(word in words for word in _ASKING_WORDS)
