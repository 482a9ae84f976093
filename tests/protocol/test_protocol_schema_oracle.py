"""The official JSON Schemas as a test-only oracle over a generated corpus.

Hypothesis mutates real valid messages (shared fixtures, the seed chapters' examples,
our benchmark corpus). For each mutant:

- if the official schema rejects it, we must reject it too (the schema's rules are all
  ours);
- if the schema accepts it and we reject it, every reason we give must be one of the
  rules where the prose is stricter than the schema (the spec says prose wins, §3.0 and
  §4.7). Those differences are listed, with the section, in ``PROSE_STRICTER``.
"""

from __future__ import annotations

import copy
import json
import re
from functools import cache
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from protocol_samples import FIXTURES, SCHEMAS, SEEDS, spec_examples
from referencing import Registry, Resource

from announcer.protocol import Diagnostic, decode_frame
from announcer.protocol.events import CORE_TYPE_BASE
from announcer.protocol.validate import _fast_path, full_procedure
from tests.support.examples import examples

# Reason codes (regular expressions) the schema cannot or does not express.
PROSE_STRICTER: dict[str, str] = {
    r"envelope\.forbidden_field": "§3.5: no custom envelope fields; the schema allows any",
    r"envelope\.reserved_field": "§3.5: aaep_* and JSON-LD keywords are reserved",
    r"urgency\.critical_required": "§4.1.3/§4.4: absent urgency means normal; schema "
    "checks the value only when present",
    r"default_decision\.unsafe": "§6.4.1: we also count reversibility=irreversible",
    r"timestamp\.format": "§3.2.5: 3 or 6 fraction digits, Z or offset; schema format "
    "date-time is an annotation by default",
    r"type\.(unknown_core|undeclared_prefix|format|reserved_prefix)": "§3.2.2/§3.9 step 5: "
    "the envelope schema accepts any non-empty type",
    r"extensions\.(undeclared_prefix|reserved_prefix)": "§3.4.3/§7.3.2",
    r"@context\.format": "§3.2.1: entries are URIs (format uri is not asserted)",
    r"(.*\.)?(\w+_uri|supported_extensions)\.format": "format uri is an annotation in the "
    "schema; we require a scheme",
    r"limits\..*": "§3.7 size and complexity limits",
    r"number\.range": "§3.8 integers beyond 2^53",
    r"sequence_number\.start": "§3.4.1: 0 on agent.session.started",
    r".*\.type": "JSON Schema counts 1.0 as an integer; we accept only integers for integer "
    "fields (checked in _explained)",
    r"language_variant\.type": "§11.5.1",
    r"progress\.rule": "same rule as the schema's anyOf, reported by our model",
}
_STRICTER = [re.compile(pattern) for pattern in PROSE_STRICTER]


@cache
def validators() -> dict[str, Draft202012Validator]:
    envelope = json.loads((SCHEMAS / "envelope.schema.json").read_text())
    registry = Registry().with_resource(envelope["$id"], Resource.from_contents(envelope))
    found = {"": Draft202012Validator(envelope, registry=registry)}
    for path in sorted((SCHEMAS / "core").glob("*.json")) + sorted(
        (SCHEMAS / "handshake").glob("*.json")
    ):
        schema = json.loads(path.read_text())
        found[schema["properties"]["type"]["const"]] = Draft202012Validator(
            schema, registry=registry
        )
    return found


def schema_accepts(message: dict[str, Any]) -> bool:
    schema_type = message.get("type")
    if isinstance(schema_type, str) and schema_type.startswith(CORE_TYPE_BASE):
        # §3.2.2: the full-URI form is the same type; the schemas only know "aaep:".
        schema_type = "aaep:" + schema_type[len(CORE_TYPE_BASE) :]
        message = {**message, "type": schema_type}
    validator = validators().get(schema_type if isinstance(schema_type, str) else "")
    return (validator or validators()[""]).is_valid(message)


def _seed_messages() -> list[dict[str, Any]]:
    seeds = [json.loads(p.read_text()) for p in sorted((FIXTURES / "valid").glob("*.json"))]
    for seed in sorted(SEEDS.glob("aaep-ch4*.txt")):
        seeds += [e.value for e in spec_examples(seed) if "event_id" in e.value]
    seeds.append(
        {
            "type": "confirmation.reply",
            "reply_token": "rpl_4f8a2e7d9c1b6a3f",
            "decision": "reject",
            "subscription_id": "sub_8a4f2c9d1e7b5f3a",
            "timestamp": "2026-05-24T14:22:24.812Z",
            "decided_by": "user:folake",
        }
    )
    seeds.append(
        {
            "type": "clarification.reply",
            "reply_token": "rpl_2c8e4a9f7b1d3a6e",
            "response": "67",
            "subscription_id": "sub_8a4f2c9d1e7b5f3a",
            "timestamp": "2026-05-24T14:22:18.121Z",
        }
    )
    seeds.append(
        {
            "type": "subscription.accepted",
            "subscription_id": "sub_8a4f2c9d1e7b5f3a",
            "aaep_version": "1.0.0",
            "producer": {"agent_id": "retirement-planner", "agent_version": "1.4.2"},
            "honored_capabilities": {"max_events_per_second": 3, "languages": ["en-US"]},
        }
    )
    seeds.append(
        {
            "type": "subscription.rejected",
            "reason_code": "rate_limit",
            "reason_message": "Too many subscribers.",
            "retry_after_seconds": 30,
        }
    )
    return seeds


SEED_MESSAGES = _seed_messages()
FIELD_VALUES: dict[str, list[Any]] = {}
for _seed in SEED_MESSAGES:
    for _key, _value in _seed.items():
        FIELD_VALUES.setdefault(_key, []).append(_value)
FIELD_NAMES = sorted(
    {key for message in SEED_MESSAGES for key in message}
    | {
        "custom_field",
        "aaep_secret",
        "@id",
        "summary_normal_yo",
        "extensions",
        "verbosity",
        "urgency",
        "sequence_number",
        "irreversible",
        "risk_level",
        "reversibility",
    }
)
WORDS = [
    "critical",
    "normal",
    "background",
    "reject",
    "accept",
    "high",
    "medium",
    "low",
    "irreversible",
    "reversible",
    "success",
    "error",
    "timeout",
    "human",
    "user",
    "terse",
    "detailed",
    "ltr",
    "rtl",
    "transient",
    "sentence",
    "none",
    "evt_abc123",
    "evt_",
    "sess_x1",
    "rpl_9",
    "call_7",
    "out_1",
    "sub_1",
    "not an id",
    "",
    "en-US",
    "yo-NG",
    "2026-05-24T14:22:11.342Z",
    "2026-05-24T14:22:11Z",
    "2026-05-24T14:22:11.34Z",
    "2026-05-24T15:22:11.342123+01:00",
    "2026-05-24 14:22:11Z",
    "https://example.org/x",
    "aaep:agent.session.started",
    "aaep:agent.purple.flamingo",
    "https://aaep-protocol.org/types/agent.session.errored",
    "medai:thing.done",
    "https://aaep-protocol.org/context/v1",
    "fetch_balance",
    "1.0.0",
    "TOOL_TIMEOUT",
]
leaves = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**54), max_value=2**54)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from(WORDS)
    | st.text(max_size=6)
)
values = st.recursive(
    leaves,
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(
            st.sampled_from([*FIELD_NAMES, "agent_id", "percent", "step"]), children, max_size=3
        )
    ),
    max_leaves=6,
)


@st.composite
def mutants(draw: st.DrawFn) -> dict[str, Any]:
    message = copy.deepcopy(draw(st.sampled_from(SEED_MESSAGES)))
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        action = draw(st.sampled_from(["set", "delete", "nested", "swap", "swap"]))
        if action == "swap" and message:
            # A value some real message uses for this field: mostly well-formed
            # variants, which probe agreement near the edge of validity.
            key = draw(st.sampled_from(sorted(FIELD_VALUES)))
            message[key] = copy.deepcopy(draw(st.sampled_from(FIELD_VALUES[key])))
        elif action == "delete" and message:
            message.pop(draw(st.sampled_from(sorted(message))), None)
        elif action == "nested":
            inner = [k for k, v in message.items() if isinstance(v, dict)]
            if inner:
                target = message[draw(st.sampled_from(sorted(inner)))]
                target[draw(st.sampled_from([*FIELD_NAMES, "agent_id", "percent", "model"]))] = (
                    draw(values)
                )
        else:
            message[draw(st.sampled_from(FIELD_NAMES))] = draw(values)
    return message


def _value_at(message: Any, pointer: str) -> Any:
    for part in pointer.lstrip("/").split("/") if pointer else []:
        message = message[int(part)] if isinstance(message, list) else message[part]
    return message


def _schema_properties(message: dict[str, Any]) -> set[str]:
    found = set(validators()[""].schema["properties"])
    validator = validators().get(str(message.get("type")))
    if validator is not None:
        found |= set(validator.schema.get("properties", {}))
    return found


def _explained(diagnostic: Diagnostic, message: dict[str, Any]) -> bool:
    top = diagnostic.pointer.split("/")[1] if diagnostic.pointer else ""
    if top and top not in _schema_properties(message) and "type" in message:
        # §3.5 forbids unlisted fields, and we type summary_* on every event type; where
        # the type's schema does not list a field it has no opinion on its value.
        return True
    if diagnostic.code.endswith(".format"):
        value = _value_at(message, diagnostic.pointer)
        if isinstance(value, str) and value.endswith("\n"):
            # The schema's "$" (Python re.search) also matches before a final newline.
            return True
    if diagnostic.code.endswith(".type"):
        value = _value_at(message, diagnostic.pointer)
        return isinstance(value, float) and value.is_integer()
    return any(pattern.fullmatch(diagnostic.code) for pattern in _STRICTER)


@settings(max_examples=examples(1500), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutants())
def test_our_verdict_agrees_with_the_official_schemas(message: dict[str, Any]) -> None:
    ours = decode_frame(message)
    assert "internal.error" not in [d.code for d in ours.diagnostics]
    if not schema_accepts(message):
        assert not ours.ok, f"schema rejects, we accept: {json.dumps(message)[:400]}"
        return
    unexplained = [str(d) for d in ours.errors if not _explained(d, message)]
    assert unexplained == [], json.dumps(message)[:400]


@settings(max_examples=examples(800), deadline=None)
@given(mutants())
def test_fast_path_agrees_with_the_full_procedure(message: dict[str, Any]) -> None:
    roundtrip = json.loads(json.dumps(message))
    fast = _fast_path(roundtrip)
    if fast is None:
        return
    full = full_procedure(roundtrip)
    assert fast.kind == full.kind
    assert fast.diagnostics == full.diagnostics
    assert fast.message == full.message


def test_the_named_differences_really_occur() -> None:
    # Each prose-stricter rule is a real case where the schema says yes and we say no.
    confirmation = json.loads((FIXTURES / "valid" / "agent.awaiting.confirmation.json").read_text())
    started = json.loads((FIXTURES / "valid" / "agent.session.started.json").read_text())
    cases = {
        "envelope.forbidden_field": {**started, "custom_field": "value"},
        "urgency.critical_required": {k: v for k, v in confirmation.items() if k != "urgency"},
        "default_decision.unsafe": {
            **{k: v for k, v in confirmation.items() if k != "irreversible"},
            "reversibility": "irreversible",
            "default_decision": "accept",
        },
        "timestamp.format": {**started, "timestamp": "2026-06-30T14:22:11.3Z"},
        "sequence_number.start": {**started, "sequence_number": 4},
        "expected_duration_ms.type": {**started, "expected_duration_ms": 30000.0},
        "event_id.format": {**started, "event_id": "evt_abc\n"},
        "producer.manifest_uri.format": {
            **started,
            "producer": {"agent_id": "a", "manifest_uri": "no scheme"},
        },
    }
    for code, message in cases.items():
        assert schema_accepts(message), code
        result = decode_frame(message)
        assert [d.code for d in result.errors] == [code]


def test_fast_path_takes_every_clean_core_event() -> None:
    # Otherwise the agreement test above would prove nothing.
    lines = [
        line
        for path in sorted(FIXTURES.glob("captured-*.jsonl"))
        for line in path.read_text().splitlines()
        if line.strip()
    ]
    for line in lines:
        data = json.loads(line)
        fast = _fast_path(data)
        assert fast is not None and fast.ok
        assert fast == full_procedure(data)
