"""What turns frames into speech: the engine when it is installed, else a basic one.

The runtime talks to a :class:`Pipeline` only. ``announcer.engine.pipeline.Engine``
is used when present; until then :class:`BasicPipeline` keeps ``listen`` useful:
it picks the summary for the user's verbosity, keeps urgency, drops what the
user filtered (never critical events, §5.5.4) and puts a session's events back
in ``sequence_number`` order (§8.2.3), waiting at most ``REORDER_WAIT`` seconds
for a gap to fill.
"""

from __future__ import annotations

import importlib
import json
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from announcer.engine.announcement import Announcement, Urgency
from announcer.engine.settings import UserSettings
from announcer.engine.speech_commands import Speak, SpeechCommand

log = logging.getLogger("announcer.runtime")
REORDER_WAIT = 1.5


class Pipeline(Protocol):
    def receive(self, raw_frame: str, source_id: str, now: float) -> list[SpeechCommand]: ...

    def on_speech_done(self, utterance_id: int, now: float) -> list[SpeechCommand]: ...

    def tick(self, now: float) -> list[SpeechCommand]: ...

    def update_settings(self, settings: UserSettings) -> None: ...


def load_pipeline(settings: UserSettings) -> Pipeline:
    try:
        module = importlib.import_module("announcer.engine.pipeline")
    except ImportError:
        return BasicPipeline(settings)
    engine_class = getattr(module, "Engine", None)
    if engine_class is None:
        return BasicPipeline(settings)
    try:
        return _EngineAdapter(engine_class(settings))
    except TypeError:
        return _EngineAdapter(engine_class())


class _EngineAdapter:
    """Normalise the engine's return values (some methods may return None)."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine

    def receive(self, raw_frame: str, source_id: str, now: float) -> list[SpeechCommand]:
        return list(self.engine.receive(raw_frame, source_id, now) or [])

    def on_speech_done(self, utterance_id: int, now: float) -> list[SpeechCommand]:
        return list(self.engine.on_speech_done(utterance_id, now) or [])

    def tick(self, now: float) -> list[SpeechCommand]:
        return list(self.engine.tick(now) or [])

    def update_settings(self, settings: UserSettings) -> None:
        self.engine.update_settings(settings)


@dataclass(slots=True)
class _SessionOrder:
    expected: int | None = None
    held: dict[int, tuple[dict[str, Any], str, float]] = field(default_factory=dict)
    # Critical events skip the wait (§5.5.4); their numbers still fill gaps.
    delivered: set[int] = field(default_factory=set)


class BasicPipeline:
    def __init__(self, settings: UserSettings) -> None:
        self.settings = settings
        self._next_id = 0
        self._orders: dict[tuple[str, str], _SessionOrder] = {}

    def update_settings(self, settings: UserSettings) -> None:
        self.settings = settings

    def on_speech_done(self, utterance_id: int, now: float) -> list[SpeechCommand]:
        return []

    def receive(self, raw_frame: str, source_id: str, now: float) -> list[SpeechCommand]:
        try:
            event = json.loads(raw_frame)
        except ValueError:
            log.warning("dropped a frame that is not JSON (from %s)", source_id)
            return []
        if not isinstance(event, dict) or not str(event.get("type", "")).startswith("aaep:"):
            return []
        return self._commands(self._in_order(event, source_id, now))

    def tick(self, now: float) -> list[SpeechCommand]:
        released: list[tuple[dict[str, Any], str]] = []
        for order in self._orders.values():
            while order.held and min(t for _e, _s, t in order.held.values()) + REORDER_WAIT < now:
                # The gap did not fill in time: go on from the lowest held event.
                lowest = min(order.held)
                order.expected = lowest
                released.extend(self._release(order))
        return self._commands(released)

    def _in_order(
        self, event: dict[str, Any], source_id: str, now: float
    ) -> list[tuple[dict[str, Any], str]]:
        sequence = event.get("sequence_number")
        session = str(event.get("session_id", ""))
        if not isinstance(sequence, int):
            return [(event, source_id)]
        order = self._orders.setdefault((source_id, session), _SessionOrder())
        if event.get("urgency") == "critical":
            if order.expected is None:
                order.expected = sequence
            if sequence >= order.expected:
                order.delivered.add(sequence)
            return [(event, source_id), *self._release(order)]
        if order.expected is None or sequence == order.expected:
            order.expected = sequence
            order.held[sequence] = (event, source_id, now)
            return self._release(order)
        if sequence < order.expected:
            return [(event, source_id)]  # late, already skipped past: say it anyway
        order.held[sequence] = (event, source_id, now)
        return []

    @staticmethod
    def _release(order: _SessionOrder) -> list[tuple[dict[str, Any], str]]:
        out = []
        while order.expected is not None:
            if order.expected in order.delivered:
                order.delivered.discard(order.expected)
            elif order.expected in order.held:
                event, source_id, _t = order.held.pop(order.expected)
                out.append((event, source_id))
            else:
                break
            order.expected += 1
        return out

    def _commands(self, events: Iterable[tuple[dict[str, Any], str]]) -> list[SpeechCommand]:
        commands: list[SpeechCommand] = []
        for event, source_id in events:
            announcement = self._announce(event, source_id)
            if announcement is not None:
                self._next_id += 1
                commands.append(Speak(self._next_id, announcement))
        return commands

    def _announce(self, event: dict[str, Any], source_id: str) -> Announcement | None:
        short = str(event["type"]).removeprefix("aaep:")
        urgency_text = event.get("urgency", "normal")
        urgency = (
            Urgency(urgency_text)
            if urgency_text in ("background", "normal", "critical")
            else (Urgency.NORMAL)
        )
        if urgency is not Urgency.CRITICAL and not self._wanted(short):
            return None
        if short == "agent.progress.updated" and self.settings.cognitive_load == "low":
            return None
        text = self._text(event, short)
        if not text:
            return None
        hints = event.get("localization_hints")
        language = hints.get("primary_language") if isinstance(hints, dict) else None
        producer = event.get("producer") if isinstance(event.get("producer"), dict) else {}
        return Announcement(
            text=text,
            language=str(language or (self.settings.languages or ["en"])[0]),
            urgency=urgency,
            interrupt=urgency is Urgency.CRITICAL and not self.settings.do_not_interrupt,
            event_id=event.get("event_id"),
            session_id=event.get("session_id"),
            producer_id=producer.get("agent_id") or source_id,
            kind=short,
        )

    def _wanted(self, short: str) -> bool:
        filters = self.settings.filters

        def match(pattern: str) -> bool:
            pattern = pattern.removeprefix("aaep:")
            return pattern == "*" or (
                short.startswith(pattern[:-1]) if pattern.endswith("*") else pattern == short
            )

        if any(match(p) for p in filters.exclude):
            return False
        return any(match(p) for p in filters.include)

    def _text(self, event: dict[str, Any], short: str) -> str:
        order = {
            "terse": ("summary_terse", "summary_normal", "summary_detailed"),
            "normal": ("summary_normal", "summary_terse", "summary_detailed"),
            "detailed": ("summary_detailed", "summary_normal", "summary_terse"),
        }[self.settings.verbosity]
        summary = next((event[k] for k in order if isinstance(event.get(k), str)), "")
        if short == "agent.awaiting.confirmation":
            action = event.get("action", summary)
            consequence = event.get("consequence", "")
            return f"Confirmation needed: {action}. {consequence}".strip()
        if short == "agent.awaiting.clarification":
            return f"Question: {event.get('question', summary)}"
        if short == "agent.output.streaming" and not summary:
            return str(event.get("chunk", "")).strip()
        if short == "agent.session.errored":
            hint = event.get("remediation_hint")
            return f"Error: {summary} {hint}".strip() if hint else f"Error: {summary}"
        if short == "agent.handoff.requested" and not summary:
            return f"Handoff requested: {event.get('reason', '')}"
        return str(summary)
