"""AEP mapping files (``schema_version: aep.mapping/v1``): native hook payloads -> AEP envelopes.

A mapping file lists, per native hook event, the AEP ``canonical_event``, the
``when`` conditions (JSON Pointer -> expected value, or a list of accepted
values) and the ``fields`` to fill, each from a JSON Pointer ``source`` (or a
constant ``value``) with an optional ``display_style``. A user makes another
agent audible by writing one such file; we ship ones for Claude Code and Codex.
Parsing is pure: callers pass the YAML text in.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from announcer.agents.catalogue import title_of
from announcer.formats.base import JsonObject
from announcer.formats.builder_fields import digest, iso_timestamp
from announcer.protocol.extensions import ANNOUNCER_EXTENSION

SCHEMA_VERSION = "aep.mapping/v1"
_MISSING = object()


class MappingError(ValueError):
    """A mapping file that breaks a rule; the message names the field and the rule."""


def resolve_pointer(document: object, pointer: str) -> object:
    """RFC 6901 JSON Pointer; returns a private sentinel when the path is absent."""
    if pointer == "":
        return document
    if not pointer.startswith("/"):
        raise MappingError(f"JSON Pointer {pointer!r} must start with '/'")
    current = document
    for raw in pointer[1:].split("/"):
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(current, dict):
            if token not in current:
                return _MISSING
            current = current[token]
        elif isinstance(current, list):
            if not token.isdigit() or int(token) >= len(current):
                return _MISSING
            current = current[int(token)]
        else:
            return _MISSING
    return current


@dataclass(frozen=True, slots=True)
class FieldRule:
    target: str
    source: str | None
    value: Any
    style: str | None


@dataclass(frozen=True, slots=True)
class EventRule:
    id: str
    source_event: str | None
    when: dict[str, Any]
    canonical_event: str
    fields: tuple[FieldRule, ...]
    content: tuple[tuple[str, FieldRule], ...]

    def matches(self, payload: object) -> bool:
        for pointer, expected in self.when.items():
            actual = resolve_pointer(payload, pointer)
            if isinstance(expected, list):
                if actual not in expected:
                    return False
            elif actual != expected:
                return False
        return True


@dataclass(frozen=True, slots=True)
class Mapping:
    agent: str
    display_name: str
    events: tuple[EventRule, ...]
    session_source: str | None = None
    version_source: str | None = None
    extras: dict[str, Any] = field(default_factory=dict)

    def rule_for(self, payload: object) -> EventRule | None:
        return next((rule for rule in self.events if rule.matches(payload)), None)

    def to_aep(
        self, payload: JsonObject, now: float, rule: EventRule | None = None
    ) -> JsonObject | None:
        """Build the AEP envelope for one native payload, or None when no rule matches."""
        rule = rule or self.rule_for(payload)
        if rule is None:
            return None
        envelope: JsonObject = {
            "aep_version": "0.1",
            "id": "evt_" + digest(self.agent, rule.id, sorted_json(payload), length=26),
            "type": rule.canonical_event,
            "time": iso_timestamp(now),
            "agent": {"slug": self.agent, "display_name": self.display_name},
        }
        if rule.source_event:
            envelope["hook"] = rule.source_event
        styles: dict[str, str] = {}
        for rule_field in rule.fields:
            value = field_value(rule_field, payload)
            if value is _MISSING:
                continue
            set_dotted(envelope, rule_field.target, value)
            if rule_field.style:
                styles[rule_field.target] = rule_field.style
        content = []
        for kind, text_rule in rule.content:
            value = field_value(text_rule, payload)
            if value is _MISSING or value in (None, ""):
                continue
            block: JsonObject = {"type": kind, "text": value}
            if text_rule.style:
                block["style"] = text_rule.style
            content.append(block)
        if content:
            envelope["content"] = content
        if styles:
            envelope.setdefault("extensions", {})[ANNOUNCER_EXTENSION] = {"display_styles": styles}
        return envelope


def sorted_json(value: object) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def field_value(rule: FieldRule, payload: object) -> Any:
    if rule.source is not None:
        value = resolve_pointer(payload, rule.source)
        if value is _MISSING and rule.value is not None:
            return rule.value
        return value
    return rule.value if rule.value is not None else _MISSING


def set_dotted(target: JsonObject, path: str, value: object) -> None:
    keys = path.split(".")
    node = target
    for key in keys[:-1]:
        child = node.get(key)
        if not isinstance(child, dict):
            child = {}
            node[key] = child
        node = child
    node[keys[-1]] = value


def _field_rule(target: str, spec: object, where: str) -> FieldRule:
    if isinstance(spec, str):
        return FieldRule(target, spec, None, None)
    if not isinstance(spec, dict):
        raise MappingError(
            f"{where}: must be a JSON Pointer string or an object with 'source' or 'value'"
        )
    source = spec.get("source")
    if source is not None and (
        not isinstance(source, str) or not (source == "" or source.startswith("/"))
    ):
        raise MappingError(f"{where}.source: must be a JSON Pointer starting with '/'")
    if source is None and "value" not in spec:
        raise MappingError(f"{where}: needs 'source' (a JSON Pointer) or 'value' (a constant)")
    style = spec.get("display_style", spec.get("style"))
    if style is not None and not isinstance(style, str):
        raise MappingError(f"{where}.display_style: must be a string")
    return FieldRule(target, source, spec.get("value"), style)


def parse_mapping(text: str) -> Mapping:
    """Parse and check a mapping file; raise :class:`MappingError` naming the bad field."""
    import yaml  # only hook formats read a mapping: other commands start without PyYAML

    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise MappingError(f"not valid YAML: {exc}") from None
    if not isinstance(doc, dict):
        raise MappingError("a mapping file must be a YAML mapping at the top level")
    if doc.get("schema_version") != SCHEMA_VERSION:
        raise MappingError(f"schema_version: must be {SCHEMA_VERSION!r}")
    agent = doc.get("agent")
    if not isinstance(agent, str) or not agent:
        raise MappingError("agent: must be a non-empty string (the agent's slug)")
    # a built-in mapping's agent is named by its agent file (announcer/agents/*.toml)
    display = doc.get("display_name") or title_of(agent) or agent
    events = doc.get("events")
    if not isinstance(events, list) or not events:
        raise MappingError("events: must be a non-empty list")
    rules = []
    for index, spec in enumerate(events):
        where = f"events[{index}]"
        if not isinstance(spec, dict):
            raise MappingError(f"{where}: must be a mapping")
        canonical = spec.get("canonical_event")
        if not isinstance(canonical, str) or not canonical:
            raise MappingError(f"{where}.canonical_event: must be a non-empty string")
        when = spec.get("when") or {}
        if not isinstance(when, dict) or not all(
            isinstance(k, str) and k.startswith("/") for k in when
        ):
            raise MappingError(f"{where}.when: keys must be JSON Pointers starting with '/'")
        fields_spec = spec.get("fields") or {}
        if not isinstance(fields_spec, dict):
            raise MappingError(f"{where}.fields: must be a mapping of AEP field path -> source")
        fields = tuple(
            _field_rule(str(k), v, f"{where}.fields.{k}") for k, v in fields_spec.items()
        )
        content_spec = spec.get("content") or []
        if not isinstance(content_spec, list):
            raise MappingError(f"{where}.content: must be a list")
        content = []
        for c_index, block in enumerate(content_spec):
            c_where = f"{where}.content[{c_index}]"
            if not isinstance(block, dict) or "text" not in block:
                raise MappingError(f"{c_where}: needs 'type' and 'text'")
            rule = _field_rule("text", block["text"], f"{c_where}.text")
            style = block.get("style") or rule.style
            content.append(
                (str(block.get("type", "text")), FieldRule("text", rule.source, rule.value, style))
            )
        source_event = spec.get("source_event")
        rules.append(
            EventRule(
                id=str(spec.get("id") or f"{agent}.{index}"),
                source_event=str(source_event) if source_event is not None else None,
                when=dict(when),
                canonical_event=canonical,
                fields=fields,
                content=tuple(content),
            )
        )
    return Mapping(agent=agent, display_name=str(display), events=tuple(rules))


def builtin_mappings() -> tuple[str, ...]:
    """The names of the mapping files shipped in ``announcer/formats/mappings`` (an agent
    file's ``[cli.hooks] name`` each: tests/agents/test_catalogue_names.py)."""
    folder = resources.files("announcer.formats").joinpath("mappings")
    return tuple(
        sorted(e.name.removesuffix(".yaml") for e in folder.iterdir() if e.name.endswith(".yaml"))
    )


def builtin_mapping(name: str) -> Mapping:
    """One of the mapping files shipped in ``announcer/formats/mappings``."""
    known = builtin_mappings()
    if name not in known:
        raise MappingError(f"no built-in mapping named {name!r}; known: {', '.join(known)}")
    text = (
        resources.files("announcer.formats").joinpath("mappings", f"{name}.yaml").read_text("utf-8")
    )
    return parse_mapping(text)
