"""Validate produced events against the official AAEP JSON Schemas (test-only)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker
from referencing import Registry, Resource

SCHEMAS = Path("/work/shared/aaep/schemas")
PEERS = Path("/work/shared/peers")


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
