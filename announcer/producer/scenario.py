"""Demo scenarios: what the built-in producer's pretend agent does, as data.

A scenario is a JSON or YAML file (``announcer/producer/scenarios/NAME.json``)
holding ``agent`` (the producer identity), ``languages`` (what the texts are
written in) and ``steps``. Keeping scenarios as data lets anyone write a new
demo without touching code; this module only loads and checks them, so a bad
file fails with a sentence naming the step and the rule it breaks.

Step kinds (exactly one key of these per step):

- ``{"emit": "agent.tool.invoked", "fields": {...}}`` one event.
- ``{"pause": 0.5}`` wait that many seconds (scaled by the producer's speed).
- ``{"confirm": {...}, "if_accepted": [...], "if_rejected": [...],
  "cancel_after_seconds": 2}`` a blocking confirmation (§6.1).
- ``{"clarify": {...}, "then": [...]}`` a blocking clarification; ``{answer}``
  in texts of ``then`` is replaced with the user's answer.

Any text value may be a mapping from language tag to text, for multilingual
output (chapter 11); the producer picks the subscription's language.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from announcer.protocol.events import CORE_EVENT_TYPES

STEP_KINDS = ("emit", "pause", "confirm", "clarify")
_EVENT_TYPES = frozenset(CORE_EVENT_TYPES)  # Ch. 4: the core event types


class ScenarioError(ValueError):
    """A scenario file breaks a rule; the message names the step and the rule."""


@dataclass(frozen=True, slots=True)
class Scenario:
    name: str
    description: str
    agent: dict[str, str]
    languages: list[str]
    steps: list[dict[str, Any]] = field(default_factory=list)


def available_scenarios() -> list[str]:
    folder = resources.files("announcer.producer") / "scenarios"
    names = []
    for entry in folder.iterdir():
        stem, _, suffix = entry.name.rpartition(".")
        if suffix in ("json", "yaml", "yml"):
            names.append(stem)
    return sorted(names)


def load_scenario(name_or_path: str) -> Scenario:
    """Load a bundled scenario by name, or any scenario file by path."""
    path = Path(name_or_path)
    if path.suffix in (".json", ".yaml", ".yml") and path.exists():
        return parse_scenario(path.read_text(encoding="utf-8"), source=str(path))
    folder = resources.files("announcer.producer") / "scenarios"
    for suffix in ("json", "yaml", "yml"):
        candidate = folder / f"{name_or_path}.{suffix}"
        if candidate.is_file():
            return parse_scenario(candidate.read_text(encoding="utf-8"), source=name_or_path)
    known = ", ".join(available_scenarios())
    raise ScenarioError(f"scenario {name_or_path!r} not found; bundled scenarios: {known}")


def parse_scenario(text: str, *, source: str = "scenario") -> Scenario:
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise ScenarioError(f"{source}: neither JSON nor YAML ({exc})") from exc
    if not isinstance(data, dict):
        raise ScenarioError(f"{source}: the top level must be an object")
    agent = data.get("agent")
    if not isinstance(agent, dict) or not isinstance(agent.get("agent_id"), str):
        raise ScenarioError(f"{source}: 'agent.agent_id' must be a string")
    languages = data.get("languages", ["en"])
    if (
        not isinstance(languages, list)
        or not languages
        or not all(isinstance(lang, str) for lang in languages)
    ):
        raise ScenarioError(f"{source}: 'languages' must be a non-empty list of language tags")
    steps = data.get("steps")
    if not isinstance(steps, list) or not steps:
        raise ScenarioError(f"{source}: 'steps' must be a non-empty list")
    _check_steps(steps, f"{source}: steps")
    return Scenario(
        name=str(data.get("name", source)),
        description=str(data.get("description", "")),
        agent={k: str(v) for k, v in agent.items()},
        languages=list(languages),
        steps=steps,
    )


def _check_steps(steps: list[Any], where: str) -> None:
    for index, step in enumerate(steps):
        here = f"{where}[{index}]"
        if not isinstance(step, dict):
            raise ScenarioError(f"{here}: a step must be an object")
        kinds = [kind for kind in STEP_KINDS if kind in step]
        if len(kinds) != 1:
            raise ScenarioError(f"{here}: a step needs exactly one of {', '.join(STEP_KINDS)}")
        kind = kinds[0]
        if kind == "emit":
            if step["emit"] not in _EVENT_TYPES:
                raise ScenarioError(f"{here}.emit: unknown event type {step['emit']!r}")
            if step["emit"].startswith("agent.awaiting."):
                raise ScenarioError(f"{here}.emit: use a 'confirm' or 'clarify' step for prompts")
            if not isinstance(step.get("fields", {}), dict):
                raise ScenarioError(f"{here}.fields: must be an object")
        elif kind == "pause":
            if not isinstance(step["pause"], int | float) or step["pause"] < 0:
                raise ScenarioError(f"{here}.pause: must be a number of seconds >= 0")
        elif kind == "confirm":
            fields = step["confirm"]
            for required in ("action", "consequence", "timeout_seconds", "default_decision"):
                if not isinstance(fields, dict) or required not in fields:
                    raise ScenarioError(f"{here}.confirm: '{required}' is required (§4.4.1)")
            for branch in ("if_accepted", "if_rejected"):
                _check_steps(step.get(branch, []), f"{here}.{branch}")
        elif kind == "clarify":
            fields = step["clarify"]
            for required in ("question", "timeout_seconds"):
                if not isinstance(fields, dict) or required not in fields:
                    raise ScenarioError(f"{here}.clarify: '{required}' is required (§4.4.2)")
            _check_steps(step.get("then", []), f"{here}.then")


def pick_language(available: list[str], wanted: list[str]) -> str:
    """§11.1.3-style choice: first wanted tag matching exactly, then by primary subtag."""
    lowered = {tag.lower(): tag for tag in available}
    for tag in wanted:
        if tag.lower() in lowered:
            return lowered[tag.lower()]
    for tag in wanted:
        primary = tag.split("-")[0].lower()
        for candidate in available:
            if candidate.split("-")[0].lower() == primary:
                return candidate
    return available[0]


def localise(value: Any, language: str, answer: str | None = None) -> Any:
    """Resolve ``{"en": ..., "fr": ...}`` texts for one language, recursively."""
    if isinstance(value, dict):
        if (
            value
            and all(isinstance(k, str) and _looks_like_tag(k) for k in value)
            and all(isinstance(v, str) for v in value.values())
        ):
            chosen = value.get(language) or value.get(language.split("-")[0])
            if chosen is None:
                chosen = next(iter(value.values()))
            return _fill(chosen, answer)
        return {k: localise(v, language, answer) for k, v in value.items()}
    if isinstance(value, list):
        return [localise(v, language, answer) for v in value]
    if isinstance(value, str):
        return _fill(value, answer)
    return value


def _looks_like_tag(key: str) -> bool:
    head = key.split("-")[0]
    return 2 <= len(head) <= 3 and head.isalpha() and head.islower()


def _fill(text: str, answer: str | None) -> str:
    return text.replace("{answer}", answer) if answer is not None else text
