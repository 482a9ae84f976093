"""Decode and validate one frame: bytes, text or an already-parsed object.

:func:`decode_frame` never raises and never hangs. The frame's size is checked before
anything is parsed (§3.7), JSON is parsed by the C decoder with hooks that refuse what
RFC 8259 and §3.8 forbid (NaN, Infinity, duplicate keys, integers beyond 2^53), deep
nesting is caught as a RecursionError from the decoder, and the nine steps of §3.9 run
in order. Envelope checks are hand-written so each diagnostic names its own section;
payload shapes are checked by the pydantic models.

Hand-written rather than delegated to ``jsonschema`` over the official schemas because
``benchmarks/validate.py`` shows this path 12-19 times faster (about 50,000 against
3,000-4,400 events/s on the 2-core machine) while also enforcing the prose rules the
schemas cannot express.

Clean core events, the common case, are first read by ``jiter`` (pydantic's Rust JSON
parser) and validated by their model (:func:`_quick_event`); anything in doubt is
decoded again the careful way, which gives every diagnostic.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import jiter
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
from announcer.protocol.handshake import HANDSHAKE_TYPES, HandshakeMessage
from announcer.protocol.identifiers import EVENT_ID, ID_RULES, SESSION_ID, parse_timestamp
from announcer.protocol.replies import REPLY_TYPES, ReplyMessage

# §3.7 size and complexity limits.
MAX_EVENT_BYTES = 64 * 1024
MAX_ENVELOPE_FIELDS = 32
MAX_DEPTH = 8
MAX_STRING_CHARS = 16 * 1024
MAX_AVAILABLE_LANGUAGES = 32
# §3.8: integers must stay within IEEE 754 double precision.
SAFE_INTEGER = 2**53

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
_SAFE_KEY = re.compile(r"[A-Za-z0-9_@.\-]{1,64}")


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


class _Refused(Exception):
    """Raised from inside the JSON decoder's hooks; never escapes this module."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _no_constants(name: str) -> Any:
    raise _Refused("json.non_standard", f"{name} is not a JSON value (RFC 8259)")


def _bounded_int(text: str) -> int:
    value = int(text)
    if -SAFE_INTEGER <= value <= SAFE_INTEGER:
        return value
    raise _Refused("number.range", "integers beyond ±2^53 must be sent as strings")


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isfinite(value):
        return value
    raise _Refused("number.range", "numbers must fit in a double-precision float")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                name = f'"{key}"' if _SAFE_KEY.fullmatch(key) else "a key"
                raise _Refused(
                    "json.duplicate_key",
                    f"{name} appears twice in one object; meaning is ambiguous",
                )
            seen.add(key)
    return result


_DECODER = json.JSONDecoder(
    object_pairs_hook=_unique_keys,
    parse_constant=_no_constants,
    parse_int=_bounded_int,
    parse_float=_finite_float,
)


def loads_strict(text: str) -> Any:
    """JSON as the decoder reads it (§3.8): no duplicate keys, no NaN or Infinity, numbers
    within range. For framing that wraps AAEP messages (stdio's JSON-RPC envelope), so a
    message inside is judged by the same rules as a bare one. Raises ValueError."""
    try:
        return _DECODER.decode(text)
    except _Refused as refused:
        raise ValueError(refused.message) from None
    except RecursionError:
        raise ValueError("nested far too deeply to read") from None


def _invalid(code: str, pointer: str, section: str, message: str) -> DecodeResult:
    return DecodeResult("invalid", None, [Diagnostic(code, pointer, section, message)], None)


def _too_big(size: int) -> DecodeResult:
    return _invalid(
        "limits.size",
        "",
        "§3.7",
        f"is {size} bytes; events larger than {MAX_EVENT_BYTES} bytes are dropped",
    )


def _text_of(raw: bytes | bytearray | memoryview | str | Mapping[str, Any]) -> str | DecodeResult:
    """The frame as text, refusing oversized or non-UTF-8 input before any parsing."""
    # The common case: ASCII holds no surrogate and no byte-order mark, and its length
    # is its size in bytes.
    if type(raw) is str:
        if len(raw) <= MAX_EVENT_BYTES and raw.isascii():
            return raw
    elif type(raw) is bytes and len(raw) <= MAX_EVENT_BYTES and raw.isascii():
        return raw.decode("ascii")
    if isinstance(raw, bytes | bytearray | memoryview):
        data = raw if type(raw) is bytes else bytes(raw)
        if len(data) > MAX_EVENT_BYTES:
            return _too_big(len(data))
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            return _invalid(
                "encoding.utf8", "", "§3.8", f"is not UTF-8 (bad byte at offset {exc.start})"
            )
    elif isinstance(raw, str):
        text = raw
        if len(text) > MAX_EVENT_BYTES:
            return _too_big(len(text))
    elif isinstance(raw, Mapping):
        try:
            text = json.dumps(raw, ensure_ascii=False, separators=(",", ":"), allow_nan=True)
        except RecursionError:
            return _invalid("limits.depth", "", "§3.7", "is nested far too deeply to read")
        except (TypeError, ValueError):
            return _invalid(
                "json.not_serializable", "", "§3.8", "holds values that JSON cannot represent"
            )
    else:
        return _invalid("message.not_object", "", "§3.9", "must be a JSON object")
    if not isinstance(raw, bytes | bytearray | memoryview) and not text.isascii():
        # Text handed over as str may hold raw surrogates that bytes never can.
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return _invalid(
                "encoding.surrogate",
                "",
                "§3.8",
                "holds an unpaired UTF-16 surrogate, which is not Unicode text",
            )
    if len(text) * 4 > MAX_EVENT_BYTES:
        size = len(text.encode("utf-8", "surrogatepass"))
        if size > MAX_EVENT_BYTES:
            return _too_big(size)
    if text.startswith("\ufeff"):
        return _invalid(
            "encoding.bom", "", "§3.8", "starts with a byte-order mark, which JSON forbids"
        )
    return text


@dataclass(slots=True)
class _Walk:
    depth: int = 0
    long_strings: list[str] = field(default_factory=list)
    surrogates: list[str] = field(default_factory=list)


def _walk(value: Any, check_strings: bool, check_surrogates: bool) -> _Walk:
    """Depth and string facts, iteratively (no recursion, whatever the input)."""
    found = _Walk()
    stack: list[tuple[Any, str, int]] = [(value, "", 0)]
    while stack:
        node, pointer, depth = stack.pop()
        if isinstance(node, dict):
            found.depth = max(found.depth, depth)
            for key, child in node.items():
                child_pointer = pointer + make_pointer(key)
                if check_surrogates and not _encodable(key):
                    found.surrogates.append(child_pointer)
                stack.append((child, child_pointer, depth + 1))
        elif isinstance(node, list):
            found.depth = max(found.depth, depth)
            for index, child in enumerate(node):
                stack.append((child, f"{pointer}/{index}", depth + 1))
        elif isinstance(node, str):
            if check_strings and len(node) > MAX_STRING_CHARS:
                found.long_strings.append(pointer)
            if check_surrogates and not _encodable(node):
                found.surrogates.append(pointer)
    return found


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def decode_frame(raw: bytes | bytearray | str | Mapping[str, Any]) -> DecodeResult:
    """Decode one frame and validate it as an AAEP event, handshake or reply message."""
    try:
        return _decode(raw)
    except Exception:  # a bug of ours must not take the subscriber down
        return _invalid(
            "internal.error", "", "§3.9", "could not be checked because of an internal error"
        )


def _decode(raw: bytes | bytearray | str | Mapping[str, Any]) -> DecodeResult:
    text = _text_of(raw)
    if isinstance(text, DecodeResult):
        return text
    quick = _quick_event(text)
    if quick is not None:
        return quick
    return _decode_carefully(text)


def _decode_carefully(text: str) -> DecodeResult:
    """Every check in order, with a diagnostic for each problem found."""
    try:
        data = _DECODER.decode(text)
    except _Refused as refused:
        return _invalid(refused.code, "", "§3.8", refused.message)
    except RecursionError:
        return _invalid("limits.depth", "", "§3.7", "is nested far too deeply to read")
    except json.JSONDecodeError as exc:
        return _invalid(
            "json.syntax",
            "",
            "§3.8",
            f"is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})",
        )
    except ValueError:  # e.g. an integer with thousands of digits
        return _invalid("number.range", "", "§3.8", "holds a number JSON cannot carry exactly")
    # §3.9 step 1
    if not isinstance(data, dict):
        kind = type(data).__name__
        names = {"list": "an array", "str": "a string", "NoneType": "null", "bool": "a boolean"}
        what = names.get(kind, "a number")
        return _invalid("message.not_object", "", "§3.9", f"must be a JSON object, not {what}")

    limits: list[Diagnostic] = []
    check_depth, check_strings, check_surrogates = _walks_needed(text)
    if check_depth or check_strings or check_surrogates:
        walk = _walk(data, check_strings, check_surrogates)
        if walk.depth > MAX_DEPTH:
            limits.append(
                Diagnostic(
                    "limits.depth",
                    "",
                    "§3.7",
                    f"nests {walk.depth} levels deep; at most {MAX_DEPTH} are allowed",
                )
            )
        for pointer in walk.long_strings:
            limits.append(
                Diagnostic(
                    "limits.string",
                    pointer,
                    "§3.7",
                    f"is longer than {MAX_STRING_CHARS} characters",
                )
            )
        for pointer in walk.surrogates:
            limits.append(
                Diagnostic(
                    "encoding.surrogate",
                    pointer,
                    "§3.8",
                    "holds an unpaired UTF-16 surrogate, which is not Unicode text",
                )
            )

    kind_type = data.get("type")
    if isinstance(kind_type, str):
        handshake = HANDSHAKE_TYPES.get(kind_type)
        if handshake is not None:
            return _plain_message("handshake", handshake, data, limits)
        reply = REPLY_TYPES.get(kind_type)
        if reply is not None:
            return _plain_message("reply", reply, data, limits)
    return validate_event_object(data, limits)


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


def _walks_needed(text: str) -> tuple[bool, bool, bool]:
    """Whether the text could break the depth, string-length or surrogate rules (§3.7,
    §3.8): cheap counts that may say yes wrongly but never say no wrongly."""
    depth = text.count("{") + text.count("[") > MAX_DEPTH
    strings = len(text) > MAX_STRING_CHARS
    # One-character searches are the cheap ones; most frames hold no backslash at all.
    surrogates = "\\" in text and "\\u" in text and ("\\ud" in text or "\\uD" in text)
    return depth, strings, surrogates


# Payload objects that are free-form: their numbers are typed by no model.
_FREE_FORM_FIELDS = ("extensions", "extra_context", "packaged_context")


def _quick_event(text: str) -> DecodeResult | None:
    """A clean core event read by jiter and validated by its model, or None for the careful way.

    jiter refuses duplicate keys, NaN and Infinity as the careful decoder does, but reads
    integers beyond 2^53 and floats that overflow. Those can only sit in typed fields
    here (events with free-form objects go the careful way), where the models bound
    them (``Count``, ``Ordinal``, ``percent``), so the event fails validation and the
    careful decoder reads the text again and explains it. Texts long or nested enough
    to need the §3.7 limit checks, or holding escaped surrogates, go the careful way at
    once. tests/protocol/test_protocol_json_reading.py checks with hypothesis that both
    ways give the same result. Measured on benchmark frames: jiter about 4 µs against
    6-8 µs for the standard decoder with hooks.
    """
    if True in _walks_needed(text):
        return None
    try:
        data = jiter.from_json(
            text.encode(), allow_inf_nan=False, catch_duplicate_keys=True, cache_mode="keys"
        )
    except ValueError:
        return None
    if type(data) is not dict:
        return None
    for name in _FREE_FORM_FIELDS:
        if name in data:
            return None
    return _fast_path(data)


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


# ---------------------------------------------------------------- pydantic errors


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
