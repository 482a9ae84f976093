"""The agent's sessions, modes and settings: ``:sessions``, ``:mode``, ``:model``.

Only what the agent says it can (``sessionCapabilities``, ``configOptions``, modes); the
sentence to say is returned when nothing changed, a change is said from the agent's answer.
"""

from __future__ import annotations

import asyncio
import time

from announcer.transports.acp_process import START_TIMEOUT_SECONDS, AcpProcess, _dump, log


class AcpSettings(AcpProcess):
    """Listing and resuming the agent's sessions; changing its mode and config options."""

    async def sessions(self, choice: str = "") -> str:
        """``:sessions`` lists the agent's sessions; ``:sessions N`` resumes one.

        Only where the agent says it can (``sessionCapabilities.list`` / ``resume``); the
        sentence to say is returned.
        """
        capabilities = getattr(self._agent_capabilities, "session_capabilities", None)
        if self._conn is None or self.stopped or getattr(capabilities, "list", None) is None:
            return self.adapter.sessions_refused("list")
        if not choice:
            try:
                listed = await asyncio.wait_for(
                    self._conn.list_sessions(cwd=self.cwd), START_TIMEOUT_SECONDS
                )
            except Exception as exc:
                log.warning("%s: session/list failed: %s", self.description, exc)
                return self.adapter.sessions_refused("list")
            self._listed = [
                (str(item.session_id), " ".join(str(item.title or item.updated_at or
                                                     item.session_id).split()))
                for item in (listed.sessions or [])[:20]
            ]  # fmt: skip
            return self.adapter.sessions_said(self._listed)
        if getattr(capabilities, "resume", None) is None:
            return self.adapter.sessions_refused("resume")
        if self.busy:
            return self.adapter.sessions_refused("busy")
        if not choice.isdigit() or not 1 <= int(choice) <= len(self._listed):
            return self.adapter.sessions_refused("number")
        session_id, title = self._listed[int(choice) - 1]
        try:
            resumed = await asyncio.wait_for(
                self._conn.resume_session(session_id=session_id, cwd=self.cwd, mcp_servers=[]),
                START_TIMEOUT_SECONDS,
            )
        except Exception as exc:
            log.warning("%s: session/resume failed: %s", self.description, exc)
            return self.adapter.sessions_refused("resume")
        self.session_id = session_id
        self._queue(self.adapter.session_resumed(session_id, title, time.time()).events)
        self._queue(
            self.adapter.settings_known(
                session_id,
                _dump(getattr(resumed, "modes", None)),
                [_dump(o) for o in getattr(resumed, "config_options", None) or []],
                time.time(),
                say=False,
            ).events
        )
        return ""

    def setting_rows(self) -> list[tuple[str, str, str, bool]]:
        """The agent's mode and config choices, for the Textual picker."""
        return self.adapter.setting_rows(self.session_id or "")

    async def change_setting(self, kind: str, wanted: str | bool, *, quiet: bool = False) -> str:
        """``:mode NAME`` / ``:model NAME``: ``session/set_config_option``, else ``set_mode``.

        Returns the sentence to say when nothing changed (a listing or a refusal); a
        change itself is said from the agent's answer, as the session's own news.
        """
        if self.session_id is None or self._conn is None or self.stopped:
            return self.adapter.setting_refused(kind, str(wanted), "")
        if isinstance(wanted, bool):
            plan: tuple[str, str, str | bool] | str = ("config", kind, wanted)
        else:
            plan = self.adapter.setting_plan(self.session_id, kind, wanted)
            if isinstance(plan, str) and quiet and kind != "mode":
                plan = ("config", kind, wanted)  # not announced yet: the agent decides
            elif isinstance(plan, str) and quiet:
                plan = ("mode", "", wanted)
        if isinstance(plan, str):
            return plan
        how, config_id, value = plan
        try:
            if how == "config":
                answer = await asyncio.wait_for(
                    self._conn.set_config_option(
                        config_id=config_id, session_id=self.session_id, value=value
                    ),
                    START_TIMEOUT_SECONDS,
                )
                options = [_dump(o) for o in getattr(answer, "config_options", None) or []]
                if quiet and options:
                    self._start_config = options
                if not quiet:
                    self._queue(
                        self.adapter.config_changed(self.session_id, options, time.time()).events
                    )
            else:
                await asyncio.wait_for(
                    self._conn.set_session_mode(session_id=self.session_id, mode_id=str(value)),
                    START_TIMEOUT_SECONDS,
                )
                if not quiet:
                    self._queue(
                        self.adapter.mode_changed(self.session_id, str(value), time.time()).events
                    )
        except Exception as exc:  # the agent refused or does not know the method
            detail = " ".join((str(exc) or type(exc).__name__).split())[:200]
            log.warning("%s: could not set %s to %s: %s", self.description, kind, value, detail)
            return self.adapter.setting_refused(kind, str(value), detail)
        return ""
