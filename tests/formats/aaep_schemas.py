"""Validate produced events against the official AAEP JSON Schemas (test-only)."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker
from referencing import Registry, Resource

from tests.shared_data import SHARED as SHARED_ROOT

# the shared data (official schemas, peer fixtures) may live elsewhere on another machine
SHARED = SHARED_ROOT
SCHEMAS = SHARED / "aaep" / "schemas"
PEERS = SHARED / "peers"


@cache
def _registry() -> Registry:
    registry: Registry = Registry()
    for path in SCHEMAS.rglob("*.schema.json"):
        schema = json.loads(path.read_text())
        registry = registry.with_resource(schema["$id"], Resource.from_contents(schema))
    return registry


@cache
def _validator(event_type: str) -> Draft202012Validator:
    name = event_type.removeprefix("aaep:")
    schema = json.loads((SCHEMAS / "core" / f"{name}.schema.json").read_text())
    return Draft202012Validator(schema, registry=_registry(), format_checker=FormatChecker())


def schema_errors(event: dict[str, Any]) -> list[str]:
    validator = _validator(event["type"])
    return [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(event)
    ]


def assert_valid(events: list[dict[str, Any]]) -> None:
    problems = {e.get("event_id"): schema_errors(e) for e in events}
    problems = {k: v for k, v in problems.items() if v}
    assert not problems, problems


def protocol_problems(events: list[dict[str, Any]], *, warnings: bool = True) -> list[str]:
    """Our own decoder (§3.9) and stream checks (§3.4.1, §4.5) on a produced stream."""
    from announcer.protocol import StreamChecker, decode_frame

    checker = StreamChecker()
    problems: list[str] = []
    for event in events:
        result = decode_frame(json.dumps(event))
        found = list(result.diagnostics)
        if result.event is not None:
            found += checker.feed(result.event)
        problems += [
            f"{event.get('event_id')} {d}" for d in found if warnings or d.severity == "error"
        ]
    return problems
