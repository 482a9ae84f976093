"""Validate a parsed message: the steps 2-9 of §3.9 for events, the models for the rest."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from announcer.protocol import rules
from announcer.protocol.diagnostics import Diagnostic, make_pointer
from announcer.protocol.events import (
    CORE_CONTEXT,
    CORE_EVENT_TYPES,
    CORE_PREFIX,
    CORE_TYPE_BASE,
    AaepEvent,
    GenericEvent,
    split_language_variant,
)
from announcer.protocol.explain import _from_pydantic
from announcer.protocol.handshake import HandshakeMessage
from announcer.protocol.identifiers import EVENT_ID, ID_RULES, SESSION_ID, parse_timestamp
from announcer.protocol.replies import ReplyMessage

# §3.7 size and complexity limits.
MAX_EVENT_BYTES = 64 * 1024
MAX_ENVELOPE_FIELDS = 32
MAX_DEPTH = 8
MAX_STRING_CHARS = 16 * 1024
MAX_AVAILABLE_LANGUAGES = 32

Kind = Literal["event", "handshake", "reply", "invalid"]
Message = AaepEvent | HandshakeMessage | ReplyMessage

REQUIRED_ENVELOPE: tuple[tuple[str, str], ...] = (
    ("@context", "§3.2.1"),
    ("type", "§3.2.2"),
    ("event_id", "§3.2.3"),
    ("session_id", "§3.2.4"),
    ("timestamp", "§3.2.5"),
    ("producer", "§3.2.6"),
)
ENVELOPE_SECTIONS: dict[str, str] = {
    **dict(REQUIRED_ENVELOPE),
    "verbosity": "§3.3.1",
    "urgency": "§3.3.2",
    "localization_hints": "§11.1.1",
    "sequence_number": "§3.4.1",
    "correlation_id": "§3.4.2",
    "extensions": "§3.4.3",
    "aaep_version": "§3.4.4",
}
JSONLD_RESERVED = frozenset({"@id", "@graph", "@base", "@vocab"})
RESERVED_PREFIXES = frozenset({"aaep", "xsd", "rdf", "rdfs"})  # §7.3.2
_FULL_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://\S+")
_COMPACT = re.compile(r"(?P<prefix>[A-Za-z][A-Za-z0-9_\-]*):(?P<name>\S+)")
_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:\S*")


# Read-only by convention, not frozen: a frozen dataclass's __init__ measured 2.6 times
# slower, and one of these is made for nearly every event (benchmarks/pipeline.py).
@dataclass(slots=True)
class DecodeResult:
    """What one frame turned out to be.

    ``kind`` is ``"invalid"`` whenever a diagnostic of severity ``error`` exists; then
    ``message`` is None. Warnings never make a frame invalid.
    """

    kind: Kind
    message: Message | None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    raw: dict[str, Any] | None = None

    @property
    def ok(self) -> bool:
        return self.kind != "invalid"

    @property
    def event(self) -> AaepEvent | None:
        return self.message if isinstance(self.message, AaepEvent) else None

    @property
    def type(self) -> str | None:
        """The ``type`` the frame claimed, whatever became of it."""
        value = self.raw.get("type") if self.raw is not None else None
        return value if isinstance(value, str) else None

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]

    @property
    def warnings(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "warning"]


def _condemned_keys(limits: list[Diagnostic]) -> set[str]:
    """Top-level keys a limit check already condemned: pydantic need not repeat it."""
    return {d.pointer.split("/")[1] for d in limits if d.pointer.count("/") >= 1}


def _plain_message(
    kind: Kind, model: type[BaseModel], data: dict[str, Any], limits: list[Diagnostic]
) -> DecodeResult:
    section = str(getattr(model, "SECTION", "§5"))
    diagnostics = list(limits)
    prepared = dict(data)
    reported = _condemned_keys(limits)
    diagnostics.extend(_null_fields(data, prepared, reported, section))
    message: Any = None
    try:
        message = model.model_validate(prepared, by_alias=True, by_name=False)
    except ValidationError as exc:
        diagnostics.extend(_from_pydantic(exc, data, lambda _key: section, reported))
    return _result(kind, message, diagnostics, data)


# Objects whose fields are typed by our models; free-form objects (extensions,
# packaged_context, extra_context, modified_action) may hold null anywhere.
_TYPED_OBJECTS = frozenset(
    {"producer", "localization_hints", "progress", "capabilities", "honored_capabilities"}
)


def _null_pointers(data: dict[str, Any]) -> list[tuple[str, ...]]:
    """Where a typed field is null. The schemas give every field a type and none allows
    null, so an optional field must be left out rather than sent as null."""
    found: list[tuple[str, ...]] = [(key,) for key, value in data.items() if value is None]
    for key in _TYPED_OBJECTS:
        inner = data.get(key)
        if isinstance(inner, dict):
            found.extend((key, name) for name, value in inner.items() if value is None)
            filters = inner.get("event_filters")
            if isinstance(filters, dict):
                found.extend(
                    (key, "event_filters", name) for name, value in filters.items() if value is None
                )
    return found


def _null_fields(
    data: dict[str, Any], prepared: dict[str, Any], reported: set[str], section: str
) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    for parts in _null_pointers(data):
        if parts[0] in reported:
            continue
        code = ".".join([*parts, "null"])
        found.append(
            Diagnostic(
                code,
                make_pointer(*parts),
                ENVELOPE_SECTIONS.get(parts[0], section),
                "must not be null (leave an optional field out instead)",
            )
        )
        reported.add(parts[0])
        if len(parts) == 1:
            prepared.pop(parts[0], None)
    return found


def _result(
    kind: Kind, message: Message | None, diagnostics: list[Diagnostic], data: dict[str, Any]
) -> DecodeResult:
    if message is None or any(d.severity == "error" for d in diagnostics):
        return DecodeResult("invalid", None, diagnostics, data)
    return DecodeResult(kind, message, diagnostics, data)


def _context_entries(context: Any) -> list[str]:
    """Extension vocabularies in ``@context`` (everything after the core context)."""
    if isinstance(context, list):
        return [entry for entry in context[1:] if isinstance(entry, str)]
    return []


def _mentions_prefix(entries: list[str], prefix: str) -> bool:
    """We cannot fetch context documents (no I/O), so look for the prefix in the URIs."""
    wanted = prefix.lower()
    for entry in entries:
        parts = re.split(r"[/.:#?=&]+", entry.lower())
        if wanted in parts:
            return True
    return False


_TYPE_MODELS: dict[str, type[AaepEvent]] = {
    **{CORE_PREFIX + name: model for name, model in CORE_EVENT_TYPES.items()},
    **{CORE_TYPE_BASE + name: model for name, model in CORE_EVENT_TYPES.items()},
}
_REQUIRED_KEYS = frozenset(key for key, _ in REQUIRED_ENVELOPE)


def _fast_path(data: dict[str, Any]) -> DecodeResult | None:
    """The common case, a clean core event, without the bookkeeping of the full procedure.

    The model itself checks what the full procedure checks by hand (required fields,
    identifier and timestamp grammars, §3.5 custom fields via its extra-field rule), so
    any doubt surfaces as a ValidationError and the full procedure explains it. Measured
    in benchmarks/validate.py: this halves the time of our own checks;
    tests/protocol/test_protocol_schema_oracle.py checks both paths agree.
    """
    type_value = data.get("type")
    model = _TYPE_MODELS.get(type_value) if type(type_value) is str else None
    if (
        model is None
        or data.get("@context") != CORE_CONTEXT
        or len(data) > MAX_ENVELOPE_FIELDS
        or "extensions" in data
        or None in data.values()
    ):
        return None
    for key in ("producer", "localization_hints", "progress"):
        inner = data.get(key)
        if type(inner) is dict and None in inner.values():
            return None
    try:
        event = model.__pydantic_validator__.validate_python(data, by_alias=True, by_name=False)
    except ValidationError:
        return None
    diagnostics = rules.check_event(event)
    if event.urgency != "critical" and model in rules.CRITICAL_TYPES:
        diagnostics += rules.check_urgency(model, event.urgency)
    if diagnostics and any(d.severity == "error" for d in diagnostics):
        return DecodeResult("invalid", None, diagnostics, data)
    return DecodeResult("event", event, diagnostics, data)


def validate_event_object(
    data: dict[str, Any], limits: list[Diagnostic] | None = None
) -> DecodeResult:
    """§3.9 steps 2-9 on a parsed JSON object (step 1, "is an object", already passed)."""
    if not limits:
        fast = _fast_path(data)
        if fast is not None:
            return fast
    return full_procedure(data, limits)


def full_procedure(data: dict[str, Any], limits: list[Diagnostic] | None = None) -> DecodeResult:
    """The nine steps with every diagnostic; :func:`_fast_path` must agree with it."""
    step2: list[Diagnostic] = []
    step3: list[Diagnostic] = []
    step4: list[Diagnostic] = []
    step5: list[Diagnostic] = []
    step6: list[Diagnostic] = []
    step7: list[Diagnostic] = []
    step8: list[Diagnostic] = []
    step9: list[Diagnostic] = list(limits or [])
    reported = _condemned_keys(step9)

    def report(bucket: list[Diagnostic], code: str, key: str, section: str, message: str) -> None:
        bucket.append(Diagnostic(code, make_pointer(key), section, message))
        reported.add(key)

    # Step 2: required fields present.
    for key, section in REQUIRED_ENVELOPE:
        if key not in data:
            report(step2, f"{key}.missing", key, section, "is required in every event")

    # Step 3: required fields have the right type.
    context = data.get("@context")
    if "@context" in data and not (
        isinstance(context, str)
        or (isinstance(context, list) and context and all(isinstance(c, str) for c in context))
    ):
        report(
            step3, "@context.type", "@context", "§3.2.1", "must be a string or an array of strings"
        )
        context = None
    type_value = data.get("type")
    if "type" in data and (not isinstance(type_value, str) or not type_value):
        report(step3, "type.type", "type", "§3.2.2", "must be a non-empty string")
        type_value = None
    for key, section in (("event_id", "§3.2.3"), ("session_id", "§3.2.4"), ("timestamp", "§3.2.5")):
        if key in data and not isinstance(data[key], str):
            report(step3, f"{key}.type", key, section, "must be a string")
    producer = data.get("producer")
    if "producer" in data:
        if not isinstance(producer, dict):
            report(step3, "producer.type", "producer", "§3.2.6", "must be an object")
        elif not isinstance(producer.get("agent_id"), str) or not producer["agent_id"]:
            step3.append(
                Diagnostic(
                    "producer.agent_id.missing",
                    "/producer/agent_id",
                    "§3.2.6.1",
                    "is required and must be a non-empty string",
                )
            )
            reported.add("producer")

    # Step 4: the core context comes first.
    if isinstance(context, str | list):
        first = context if isinstance(context, str) else context[0]
        if first != CORE_CONTEXT:
            report(
                step4,
                "@context.core",
                "@context",
                "§3.2.1",
                f'must be "{CORE_CONTEXT}" or an array that starts with it',
            )
        elif isinstance(context, list) and not all(_URI.fullmatch(c) for c in context):
            report(step4, "@context.format", "@context", "§3.2.1", "entries must be URIs")
    extension_vocabularies = _context_entries(context)

    # Step 5: the type is known, or belongs to a declared extension vocabulary.
    model: type[AaepEvent] | None = None
    if isinstance(type_value, str):
        model, problem = _classify_type(type_value, extension_vocabularies)
        if (
            problem is not None
            and problem[0] == "type.unknown_core"
            and _FUTURE_CORE_TYPE.fullmatch(type_value)
            and _has_summary(data)
        ):
            # §9.3.2(5): a core type from a newer version, with a summary to say, is
            # announced generically (from that summary) rather than dropped; the
            # unknown type stays on record as a warning (§3.11.3 shows it as a defect).
            model = GenericEvent
            step5.append(
                Diagnostic(
                    "type.unknown_core",
                    make_pointer("type"),
                    "§9.3.2",
                    "is not one of the twelve core event types; announced generically "
                    "from its summary",
                    "warning",
                )
            )
        elif problem is not None:
            code, section, message = problem
            report(step5, code, "type", section, message)

    # Step 6: identifier and timestamp formats.
    prepared = dict(data)
    for key, pattern, rule in (
        ("event_id", EVENT_ID, ID_RULES["evt"]),
        ("session_id", SESSION_ID, ID_RULES["sess"]),
    ):
        value = data.get(key)
        if isinstance(value, str) and pattern.fullmatch(value) is None:
            report(step6, f"{key}.format", key, rule[2], rule[1])
    timestamp = data.get("timestamp")
    if isinstance(timestamp, str):
        moment = parse_timestamp(timestamp)
        if moment is None:
            report(
                step6,
                "timestamp.format",
                "timestamp",
                "§3.2.5",
                "must be RFC 3339 like 2026-05-24T14:22:11.342Z: 3 or 6 fraction digits "
                "(or none) and Z or an offset such as +01:00",
            )
        else:
            prepared["timestamp"] = moment

    # Step 7: the payload of the type.
    event: AaepEvent | None = None
    if model is not None:
        step7.extend(_forbidden_fields(model, data, prepared, reported))
        step7.extend(_null_fields(data, prepared, reported, model.SECTION))
        section = model.SECTION

        def section_of(key: str) -> str:
            return ENVELOPE_SECTIONS.get(key, section)

        try:
            event = model.model_validate(prepared, by_alias=True, by_name=False)
        except ValidationError as exc:
            step7.extend(_from_pydantic(exc, data, section_of, reported))
        if "urgency" not in reported:
            step7.extend(rules.check_urgency(model, data.get("urgency", "normal")))
        if event is not None:
            step7.extend(rules.check_event(event))

    # Step 8: extensions.
    extensions = data.get("extensions")
    if isinstance(extensions, dict):
        for prefix in extensions:
            pointer = make_pointer("extensions", prefix)
            if prefix in RESERVED_PREFIXES or prefix.startswith("@"):
                step8.append(
                    Diagnostic(
                        "extensions.reserved_prefix",
                        pointer,
                        "§7.3.2",
                        "uses a prefix reserved for AAEP, RDF or JSON-LD",
                    )
                )
            elif not extension_vocabularies:
                step8.append(
                    Diagnostic(
                        "extensions.undeclared_prefix",
                        pointer,
                        "§3.4.3",
                        "uses an extension prefix that @context does not declare",
                    )
                )
            elif not _mentions_prefix(extension_vocabularies, prefix):
                step8.append(
                    Diagnostic(
                        "extensions.unconfirmed_prefix",
                        pointer,
                        "§3.4.3",
                        "may not be declared: no @context entry names this prefix "
                        "(context documents are not fetched)",
                        "warning",
                    )
                )

    # Step 9: size and complexity limits (the byte size was checked before parsing).
    field_count = len(data) + (len(extensions) if isinstance(extensions, dict) else 0)
    if field_count > MAX_ENVELOPE_FIELDS:
        step9.append(
            Diagnostic(
                "limits.fields",
                "",
                "§3.7",
                f"has {field_count} top-level fields and extension prefixes; "
                f"at most {MAX_ENVELOPE_FIELDS} are allowed",
            )
        )

    diagnostics = step2 + step3 + step4 + step5 + step6 + step7 + step8 + step9
    return _result("event", event, diagnostics, data)


# A well-formed name a later version could define, like ``aaep:agent.memory.saved``.
_FUTURE_CORE_TYPE = re.compile(r"aaep:[a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*){1,7}")


def _has_summary(data: Mapping[str, Any]) -> bool:
    """A non-empty ``summary_normal`` string: something a listener can be told."""
    summary = data.get("summary_normal")
    return isinstance(summary, str) and bool(summary.strip())


def _classify_type(
    type_value: str, extension_vocabularies: list[str]
) -> tuple[type[AaepEvent] | None, tuple[str, str, str] | None]:
    """The model for a type, or a (code, section, sentence) explaining why there is none."""
    if type_value.startswith(CORE_PREFIX) or type_value.startswith(CORE_TYPE_BASE):
        local = (
            type_value.split(":", 1)[1]
            if type_value.startswith(CORE_PREFIX)
            else (type_value[len(CORE_TYPE_BASE) :])
        )
        core = CORE_EVENT_TYPES.get(local)
        if core is not None:
            return core, None
        return None, (
            "type.unknown_core",
            "§3.2.2",
            "is in the aaep: namespace but is not one of the twelve core event types",
        )
    if _FULL_URI.fullmatch(type_value):
        return GenericEvent, None
    compact = _COMPACT.fullmatch(type_value)
    if compact is None:
        return None, (
            "type.format",
            "§3.2.2",
            'must be a compact "prefix:name" such as "aaep:agent.session.started" or a full URI',
        )
    prefix = compact["prefix"]
    if prefix.lower() in RESERVED_PREFIXES:
        return None, ("type.reserved_prefix", "§7.3.2", "uses a reserved namespace prefix")
    if not extension_vocabularies:
        return None, (
            "type.undeclared_prefix",
            "§3.2.2",
            "uses a namespace prefix that @context does not declare",
        )
    return GenericEvent, None


def _forbidden_fields(
    model: type[AaepEvent], data: dict[str, Any], prepared: dict[str, Any], reported: set[str]
) -> list[Diagnostic]:
    """§3.5: no custom fields at the top level; §11.5.1 language variants are allowed."""
    found: list[Diagnostic] = []
    unknown = data.keys() - _known_keys(model)
    for key in sorted(unknown):
        pointer = make_pointer(key)
        if key.startswith("aaep_"):
            found.append(
                Diagnostic(
                    "envelope.reserved_field",
                    pointer,
                    "§3.5",
                    'is reserved: names beginning with "aaep_" belong to the specification',
                )
            )
        elif key.startswith("@"):
            found.append(
                Diagnostic(
                    "envelope.reserved_field",
                    pointer,
                    "§3.5",
                    "is a JSON-LD keyword and is reserved at the envelope level",
                )
            )
        elif model is GenericEvent:
            continue  # §7.4: extension event types define their own payload fields
        else:
            split = split_language_variant(key)
            if split is not None and split[0] in model.TEXT_FIELDS:
                value = data[key]
                if isinstance(value, str) and len(value) <= MAX_STRING_CHARS:
                    continue
                found.append(
                    Diagnostic(
                        "language_variant.type",
                        pointer,
                        "§11.5.1",
                        f"must be a string of at most {MAX_STRING_CHARS} characters",
                    )
                )
            else:
                found.append(
                    Diagnostic(
                        "envelope.forbidden_field",
                        pointer,
                        "§3.5",
                        f"is not a field of {model.SHORT_TYPE}; custom fields belong "
                        'inside "extensions"',
                    )
                )
        prepared.pop(key, None)
        reported.add(key)
    return found


_KNOWN_KEYS: dict[type[AaepEvent], frozenset[str]] = {}


def _known_keys(model: type[AaepEvent]) -> frozenset[str]:
    keys = _KNOWN_KEYS.get(model)
    if keys is None:
        keys = frozenset((info.alias or name) for name, info in model.model_fields.items())
        _KNOWN_KEYS[model] = keys
    return keys
