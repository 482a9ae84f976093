"""Pydantic's validation errors said as diagnostics: a code, a pointer, a section, a sentence."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import ValidationError

from announcer.protocol.diagnostics import Diagnostic, make_pointer


def _pointer_in(data: Any, loc: tuple[int | str, ...]) -> tuple[str, ...]:
    """Follow ``loc`` through the real data; pydantic adds union tags we must drop."""
    parts: list[str] = []
    node = data
    for item in loc:
        if isinstance(node, dict) and isinstance(item, str):
            if item in node:
                node = node[item]
                parts.append(item)
                continue
            if _looks_like_field(item):
                parts.append(item)  # a missing field: name it
            break
        if isinstance(node, list) and isinstance(item, int) and 0 <= item < len(node):
            node = node[item]
            parts.append(str(item))
            continue
        break
    return tuple(parts)


def _looks_like_field(item: str) -> bool:
    return re.fullmatch(r"@?[a-z][a-z0-9_]*", item) is not None


_RULE_NAMES: dict[str, str] = {
    "missing": "missing",
    "extra_forbidden": "unknown_field",
    "literal_error": "enum",
    "string_pattern_mismatch": "format",
    "string_too_short": "empty",
    "string_too_long": "too_long",
    "too_short": "too_few",
    "too_long": "too_many",
    "greater_than_equal": "range",
    "less_than_equal": "range",
    "greater_than": "range",
    "less_than": "range",
    "value_error": "rule",
    "timestamp_format": "format",
    "timestamp_type": "type",
}

_PATTERN_SENTENCES: dict[str, str] = {
    "reply_token": 'must be "rpl_" followed by 1-64 letters or digits',
    "tool_call_id": 'must be "call_" followed by 1-64 letters or digits',
    "output_id": 'must be "out_" followed by 1-64 letters or digits',
    "subscription_id": 'must be "sub_" followed by 1-64 letters or digits',
    "event_id": 'must be "evt_" followed by 1-64 letters or digits',
    "session_id": 'must be "sess_" followed by 1-64 letters or digits',
    "tool": "must start with a letter or underscore, then letters, digits, _ . or -",
    "aaep_version": 'must be a semantic version such as "1.0.0"',
    "error_code": "must be upper-case letters, digits and underscores, starting with a letter",
    "cancellation_reason": "must be a short snake_case code",
    "content_type": 'must be a MIME type such as "text/plain"',
    "script": 'must be an ISO 15924 script code such as "Latn"',
    "signed_manifest": "must be a compact JWS (three dot-separated parts)",
}
_URI_FIELDS = frozenset(
    {
        "manifest_uri",
        "result_uri",
        "error_uri",
        "target_uri",
        "subscriber_manifest_uri",
        "alternative_manifest_uri",
        "supported_extensions",
    }
)
_LANGUAGE_FIELDS = frozenset(
    {"primary_language", "available_languages", "fallback_chain", "languages", "language"}
)


_UNION_SENTENCES: dict[str, str] = {
    "response": "must be a non-empty string, true or false, or a number",
}


def _number(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _sentence(error: Mapping[str, Any], name: str) -> str:
    kind = str(error["type"])
    ctx: Mapping[str, Any] = error.get("ctx") or {}
    if kind == "missing":
        return "is required"
    if kind == "extra_forbidden":
        return "is not a field here"
    if kind == "literal_error":
        expected = str(ctx.get("expected", "")).replace("'", '"')
        return f"must be one of {expected}"
    if kind == "string_type":
        return "must be a string"
    if kind in {"int_type", "int_from_float"}:
        return "must be an integer"
    if kind == "bool_type":
        return "must be true or false"
    if kind in {"float_type", "int_parsing", "float_parsing"}:
        return "must be a number"
    if kind in {"dict_type", "model_type", "model_attributes_type"}:
        return "must be an object"
    if kind == "list_type":
        return "must be an array"
    if kind == "string_too_short":
        return "must not be empty"
    if kind == "string_too_long":
        return f"must be at most {ctx.get('max_length')} characters"
    if kind == "too_short":
        return f"must have at least {ctx.get('min_length')} entries"
    if kind == "too_long":
        return f"must have at most {ctx.get('max_length')} entries"
    if kind in {"greater_than_equal", "greater_than"}:
        return f"must be at least {_number(ctx.get('ge', ctx.get('gt')))}"
    if kind in {"less_than_equal", "less_than"}:
        return f"must be at most {_number(ctx.get('le', ctx.get('lt')))}"
    if kind == "string_pattern_mismatch":
        if name in _URI_FIELDS:
            return "must be a URI with a scheme, such as https://..."
        if name in _LANGUAGE_FIELDS:
            return 'must be a BCP 47 language tag such as "en-US"'
        return _PATTERN_SENTENCES.get(name, "does not have the required format")
    if kind in {"timestamp_format", "timestamp_type"}:
        return str(error.get("msg", ""))
    if kind == "value_error":
        message = str(error.get("msg", ""))
        return message.removeprefix("Value error, ")
    if kind.startswith("datetime"):
        return "must be an RFC 3339 timestamp"
    return "has the wrong type or value"


def _from_pydantic(
    exc: ValidationError,
    data: dict[str, Any],
    section_of: Callable[[str], str],
    reported: set[str],
) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    seen: set[tuple[str, str]] = set()
    union_reported: set[str] = set()
    for error in exc.errors(include_url=False, include_input=False):
        parts = _pointer_in(data, tuple(error["loc"]))
        top = parts[0] if parts else ""
        if top in reported:
            continue
        named = [p for p in parts if not p.isdigit()]
        name = named[-1] if named else "message"
        rule = _RULE_NAMES.get(str(error["type"]), "type")
        if name in _UNION_SENTENCES and len(error["loc"]) > len(parts):
            # Each member of a union reports its own complaint; say it once, as a whole.
            pointer = make_pointer(*parts)
            if pointer not in union_reported:
                union_reported.add(pointer)
                found.append(
                    Diagnostic(
                        ".".join([*named, "type"]),
                        pointer,
                        section_of(top),
                        _UNION_SENTENCES[name],
                    )
                )
            continue
        code = ".".join([*named, rule]) if named else f"message.{rule}"
        section = section_of(top) if top else section_of("")
        if top == "producer":
            section = "§3.2.6"
        elif top == "localization_hints" and name == "available_languages" and rule == "too_many":
            section = "§3.7"
        pointer = make_pointer(*parts)
        if (pointer, code) in seen:
            continue
        seen.add((pointer, code))
        found.append(Diagnostic(code, pointer, section, _sentence(error, name)))
    return found
