"""What the agent CLI streams announce alike, and the small readers they share."""

from __future__ import annotations

from announcer.agents.catalogue import stream_presets
from announcer.formats.speakable import clip, speak_duration_ms
from announcer.formats.wrapper import Hints, NativeStreamAdapter


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def sentence_of(text: str) -> str:
    """End an agent's message with a full stop so speech pauses after it."""
    text = text.strip()
    return text if not text or text[-1] in ".!?…" else text + "."


class _CliStreamAdapter(NativeStreamAdapter):
    """What the four CLI streams announce alike; each adapter passes only its own words.

    Who the stream belongs to comes from the agent file whose ``[cli] stream_format`` is the
    adapter's ``name`` (announcer/agents/*.toml): its title, and the id its events carry.
    """

    def __init__(self) -> None:
        preset = stream_presets()[self.name]  # KeyError: a stream with no agent file
        assert preset.cli is not None
        self.agent_id = preset.cli.stream_agent_id
        self.agent_kind = self.agent_id.replace("-", "_")
        self.agent_name = preset.title
        super().__init__()

    def _status(self, message: str, hints: Hints, now: float) -> None:
        self.push(self.wrapper("Status", channel="status", message=message, hints=hints), now)

    def _error(self, message: str, hints: Hints, now: float) -> None:
        self.push(self.wrapper("Error", channel="error", message=message, hints=hints), now)

    def _started(self, hints: Hints, now: float, *, summary: str, terse: str) -> None:
        hints.lifecycle = "session_started"
        hints.summary = summary
        hints.terse = terse
        self._status("session started", hints, now)

    def _turn(self, lifecycle: str, summary: str, message: str, hints: Hints, now: float) -> None:
        hints.lifecycle = lifecycle
        hints.summary = summary
        self._status(message, hints, now)

    def _agent_error(
        self, message: str, hints: Hints, now: float, *, said: str | None = None, agent: str = ""
    ) -> None:
        """A non-fatal error or warning line, spoken with the agent's own message clipped."""
        said = said or self._t("{agent} error: {message}")
        hints.summary = said.format(agent=agent or self.agent_name, message=clip(message, 300))
        self._error(message, hints, now)

    def _failed(
        self, summary: str, message: str, hints: Hints, now: float, *, agent: str = ""
    ) -> None:
        hints.fatal = True
        hints.summary = summary
        hints.terse = self._t("{agent} failed.").format(agent=agent or self.agent_name)
        self._error(message, hints, now)

    def _took(self, duration: int | None) -> list[str]:
        if duration is None:
            return []
        return [
            self._t("took {duration}").format(duration=speak_duration_ms(duration, self.language))
        ]

    def _finished(
        self, details: list[str], hints: Hints, now: float, *, agent: str, note: str = ""
    ) -> None:
        """The session's end; ``note`` is a sentence every verbosity but terse adds."""
        hints.lifecycle = "session_completed"
        finished = self._t("{agent} finished.").format(agent=agent)
        hints.summary = f"{finished} {note}" if note else finished
        # not a bare "Done.": a tool's end sounds like that at terse verbosity
        hints.terse = finished
        hints.detailed = (
            self._t("{agent} finished, {details}.").format(agent=agent, details=", ".join(details))
            if details
            else finished
        )
        if note:
            hints.detailed = f"{hints.detailed} {note}"
        self._status("finished", hints, now)
