"""Typed AAEP events: the envelope of chapter 3 and the twelve core types of chapter 4.

Attribute names are the JSON field names (``@context`` is ``context`` with an alias).
``type`` keeps what the producer sent; ``short_type`` is the normalised local name
(``agent.tool.invoked``) whether the producer used the compact or the full-URI form.
Validation rules that need several fields or a spec section in the diagnostic live in
:mod:`announcer.protocol.decode` and :mod:`announcer.protocol.rules`; these models
check shapes, enums and lengths.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, ClassVar, Literal

from pydantic import ConfigDict, Field, StringConstraints, model_validator

from announcer.protocol._base import (
    AnyText,
    LanguageTag,
    Name,
    ShortText,
    Text,
    TimestampedModel,
    UniqueList,
    Uri,
    WireModel,
)
from announcer.protocol.diagnostics import safe_name
from announcer.protocol.identifiers import LANGUAGE_TAG

CORE_CONTEXT = "https://aaep-protocol.org/context/v1"
CORE_PREFIX = "aaep:"
CORE_TYPE_BASE = "https://aaep-protocol.org/types/"

Urgency = Literal["background", "normal", "critical"]
Verbosity = Literal["terse", "normal", "detailed"]
RiskLevel = Literal["low", "medium", "high"]
#: §4.11 a confirmation's answer, and the default a producer applies without one
Decision = Literal["accept", "reject"]
Reversibility = Literal["reversible", "reversible_with_effort", "irreversible"]

EventId = Annotated[str, StringConstraints(pattern=r"^evt_[A-Za-z0-9]{1,64}$")]
SessionId = Annotated[str, StringConstraints(pattern=r"^sess_[A-Za-z0-9]{1,64}$")]
ReplyToken = Annotated[str, StringConstraints(pattern=r"^rpl_[A-Za-z0-9]{1,64}$")]
ToolCallId = Annotated[str, StringConstraints(pattern=r"^call_[A-Za-z0-9]{1,64}$")]
OutputId = Annotated[str, StringConstraints(pattern=r"^out_[A-Za-z0-9]{1,64}$")]
ToolName = Annotated[
    str,
    StringConstraints(min_length=1, max_length=256, pattern=r"^[A-Za-z_][A-Za-z0-9_.\-]{0,255}$"),
]
StateName = Annotated[str, StringConstraints(min_length=1, max_length=64)]
Duration = Annotated[int, Field(ge=0, le=86_400_000)]
# §3.8: integers stay within ±2^53; bounded here too, so a model never holds a count
# the careful JSON decoder would have refused (protocol/decode.py reads quickly first).
Count = Annotated[int, Field(ge=0, le=2**53)]
Ordinal = Annotated[int, Field(ge=1, le=2**53)]
Timeout = Annotated[int, Field(ge=1, le=86_400)]
SemVer = Annotated[str, StringConstraints(pattern=r"^[0-9]+\.[0-9]+\.[0-9]+(-[A-Za-z0-9.\-]+)?$")]

SUMMARY_LEVELS: tuple[str, ...] = ("terse", "normal", "detailed")
_SUMMARY_FIELDS: frozenset[str] = frozenset(f"summary_{level}" for level in SUMMARY_LEVELS)
# §3.6: the recommended field order (order carries no meaning, but people read it).
ENVELOPE_ORDER: tuple[str, ...] = (
    "@context",
    "aaep_version",
    "type",
    "event_id",
    "session_id",
    "sequence_number",
    "timestamp",
    "producer",
    "verbosity",
    "urgency",
    "localization_hints",
    "correlation_id",
)
# §11.5.1: a per-field language variant is "<field>_<BCP 47 tag>".
_VARIANT = re.compile(r"(?P<base>[a-z_]+?)_(?P<lang>[a-zA-Z]{2,3}(?:-[a-zA-Z0-9]{1,8})*)")


def short_type_of(type_value: str) -> str:
    """``aaep:agent.tool.invoked`` and the full-URI form both give ``agent.tool.invoked``."""
    if type_value.startswith(CORE_PREFIX):
        return type_value[len(CORE_PREFIX) :]
    if type_value.startswith(CORE_TYPE_BASE):
        return type_value[len(CORE_TYPE_BASE) :]
    return type_value


def split_language_variant(name: str) -> tuple[str, str] | None:
    """``summary_normal_yo-NG`` -> (``summary_normal``, ``yo-NG``); None if not that shape."""
    match = _VARIANT.fullmatch(name)
    if match is None or LANGUAGE_TAG.fullmatch(match["lang"]) is None:
        return None
    return match["base"], match["lang"]


_ATTRIBUTES: dict[tuple[type[WireModel], str], str | None] = {}


def _attribute_for(model: type[WireModel], json_name: str) -> str | None:
    """The attribute behind a JSON field name (``context`` is ``context_`` on clarifications)."""
    key = (model, json_name)
    if key not in _ATTRIBUTES:
        _ATTRIBUTES[key] = next(
            (
                name
                for name, info in model.model_fields.items()
                if (info.alias or name) == json_name
            ),
            None,
        )
    return _ATTRIBUTES[key]


class Producer(WireModel):
    """§3.2.6: who emits the event; only ``agent_id`` is required."""

    agent_id: Annotated[str, StringConstraints(min_length=1)]
    agent_version: str | None = None
    agent_name: str | None = None
    model: str | None = None
    manifest_uri: Uri | None = None

    model_config = ConfigDict(protected_namespaces=())


class LocalizationHints(WireModel):
    """§3.3.3 and §11.1.1: language and text characteristics of the human-readable fields."""

    primary_language: LanguageTag | None = None
    text_direction: Literal["ltr", "rtl", "auto"] | None = None
    available_languages: Annotated[list[LanguageTag] | None, Field(max_length=32), UniqueList] = (
        None
    )
    fallback_chain: Annotated[list[LanguageTag] | None, Field(max_length=16)] = None
    script: Annotated[str, StringConstraints(pattern=r"^[A-Z][a-z]{3}$")] | None = None
    calendar: str | None = None


class AaepEvent(TimestampedModel):
    """The envelope every event carries (§3.2-§3.4) plus the summaries most types share.

    Language variants such as ``summary_normal_yo`` (§11.5.1) are kept as extra fields;
    read them with :meth:`summary` or :meth:`language_variants`.
    """

    model_config = ConfigDict(extra="allow")

    SHORT_TYPE: ClassVar[str] = ""
    SECTION: ClassVar[str] = "§3"
    # Payload fields whose §11.5.1 language variants are allowed at the top level.
    TEXT_FIELDS: ClassVar[frozenset[str]] = frozenset(
        {"summary_terse", "summary_normal", "summary_detailed"}
    )

    context: Annotated[str | list[str], Field(alias="@context")]
    aaep_version: SemVer | None = None
    type: Annotated[str, StringConstraints(min_length=1)]
    event_id: EventId
    session_id: SessionId
    sequence_number: Count | None = None
    producer: Producer
    verbosity: Verbosity | None = None
    urgency: Urgency = "normal"
    localization_hints: LocalizationHints | None = None
    correlation_id: str | None = None
    extensions: dict[str, dict[str, Any]] | None = None

    summary_terse: ShortText | None = None
    summary_normal: Text | None = None
    summary_detailed: Text | None = None

    @model_validator(mode="after")
    def _only_language_variants_as_extra(self) -> AaepEvent:
        # §3.5: custom top-level fields are forbidden; §11.5.1 variants are not custom.
        extra = self.__pydantic_extra__
        if extra and type(self).SHORT_TYPE:
            for name, value in extra.items():
                split = split_language_variant(name)
                if split is None or split[0] not in type(self).TEXT_FIELDS:
                    raise ValueError(f'"{safe_name(name)}" is not an AAEP field')
                if not isinstance(value, str) or len(value) > 16384:
                    raise ValueError(
                        f'"{safe_name(name)}" must be a string of at most 16384 characters'
                    )
        return self

    @property
    def short_type(self) -> str:
        return short_type_of(self.type)

    def to_wire(self) -> dict[str, Any]:
        """JSON-ready dict in the §3.6 recommended order: envelope, payload, extensions."""
        wire = super().to_wire()
        ordered = {key: wire.pop(key) for key in ENVELOPE_ORDER if key in wire}
        extensions = wire.pop("extensions", None)
        ordered.update(wire)
        if extensions is not None:
            ordered["extensions"] = extensions
        return ordered

    @property
    def primary_language(self) -> str | None:
        """The primary language of the event's text, if the producer declared it."""
        hints = self.localization_hints
        return hints.primary_language if hints is not None else None

    def language_variants(self) -> dict[str, dict[str, str]]:
        """``{"summary_normal": {"yo": "...", "yo-NG": "..."}}`` for every §11.5.1 variant."""
        found: dict[str, dict[str, str]] = {}
        for name, value in (self.__pydantic_extra__ or {}).items():
            split = split_language_variant(name)
            if split is not None and isinstance(value, str):
                found.setdefault(split[0], {})[split[1]] = value
        return found

    def text(self, field: str, language: str | None = None) -> str | None:
        """A text field in ``language`` when the producer sent that variant, else the default.

        Matching follows §11.1.3: exact tag, then the tag without its region (``yo`` for
        ``yo-NG``), then any variant of the same base language; tags compare case-blind.
        """
        if language:
            variants = self.language_variants().get(field, {})
            if variants:
                by_tag = {tag.lower(): text for tag, text in variants.items()}
                wanted = language.lower()
                if wanted in by_tag:
                    return by_tag[wanted]
                base = wanted.split("-", 1)[0]
                if base in by_tag:
                    return by_tag[base]
                for tag, text in by_tag.items():
                    if tag.split("-", 1)[0] == base:
                        return text
        attribute = _attribute_for(type(self), field)
        value = getattr(self, attribute, None) if attribute is not None else None
        if value is None and self.__pydantic_extra__:
            value = self.__pydantic_extra__.get(field)
        return value if isinstance(value, str) else None

    def summary(self, level: str = "normal", language: str | None = None) -> str | None:
        """``summary_<level>`` in the preferred language, or None when the producer sent none."""
        return self.text(f"summary_{level}", language)


class SessionStarted(AaepEvent):
    SHORT_TYPE = "agent.session.started"
    SECTION = "§4.1.1"
    TEXT_FIELDS = AaepEvent.TEXT_FIELDS | {"request_text"}

    summary_normal: Text
    expected_duration_ms: Duration | None = None
    requested_by: Name | None = None
    request_text: AnyText | None = None
    tools_available: Annotated[list[Name] | None, Field(max_length=256), UniqueList] = None


class SessionCompleted(AaepEvent):
    SHORT_TYPE = "agent.session.completed"
    SECTION = "§4.1.2"
    TEXT_FIELDS = AaepEvent.TEXT_FIELDS | {"output_summary"}

    summary_normal: Text
    duration_ms: Duration | None = None
    tool_invocations_count: Count | None = None
    output_summary: AnyText | None = None
    result_uri: Uri | None = None


class SessionErrored(AaepEvent):
    SHORT_TYPE = "agent.session.errored"
    SECTION = "§4.1.3"
    TEXT_FIELDS = AaepEvent.TEXT_FIELDS | {"remediation_hint"}

    error_category: Literal["transient", "permanent", "requires_user", "unknown"]
    summary_normal: Text
    error_code: Annotated[str, StringConstraints(pattern=r"^[A-Z][A-Z0-9_]{1,63}$")] | None = None
    error_uri: Uri | None = None
    recoverable: bool | None = None
    remediation_hint: ShortText | None = None


class SessionCancelled(AaepEvent):
    SHORT_TYPE = "agent.session.cancelled"
    SECTION = "§4.1.4"
    TEXT_FIELDS = AaepEvent.TEXT_FIELDS | {"partial_result"}

    cancelled_by: Literal["user", "producer", "timeout", "system"]
    summary_normal: Text
    cancellation_reason: (
        Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{1,63}$")] | None
    ) = None
    partial_result: AnyText | None = None


class StateChanged(AaepEvent):
    SHORT_TYPE = "agent.state.changed"
    SECTION = "§4.2.1"

    from_state: StateName
    to_state: StateName
    expected_duration_ms: Duration | None = None


class Progress(WireModel):
    """§4.2.2: at least one of the four fields."""

    percent: Annotated[float, Field(ge=0, le=100)] | None = None
    step: Ordinal | None = None
    total_steps: Ordinal | None = None
    description: ShortText | None = None

    @model_validator(mode="after")
    def _not_empty(self) -> Progress:
        if (self.percent, self.step, self.total_steps, self.description) == (None,) * 4:
            raise ValueError("must contain percent, step, total_steps or description")
        return self


class ProgressUpdated(AaepEvent):
    SHORT_TYPE = "agent.progress.updated"
    SECTION = "§4.2.2"

    progress: Progress
    eta_ms: Duration | None = None


class ToolInvoked(AaepEvent):
    SHORT_TYPE = "agent.tool.invoked"
    SECTION = "§4.3.1"
    TEXT_FIELDS = AaepEvent.TEXT_FIELDS | {"description", "args_summary"}

    tool: ToolName
    summary_normal: Text
    description: ShortText | None = None
    args_summary: AnyText | None = None
    expected_duration_ms: Duration | None = None
    risk_level: RiskLevel = "low"
    irreversible: bool = False
    tool_call_id: ToolCallId | None = None


class ToolCompleted(AaepEvent):
    SHORT_TYPE = "agent.tool.completed"
    SECTION = "§4.3.2"
    TEXT_FIELDS = AaepEvent.TEXT_FIELDS | {"error_message"}

    tool: ToolName
    status: Literal["success", "error", "timeout"]
    tool_call_id: ToolCallId | None = None
    duration_ms: Duration | None = None
    error_message: ShortText | None = None


CoalesceHint = Literal["none", "word", "sentence", "paragraph", "completion"]


class OutputStreaming(AaepEvent):
    SHORT_TYPE = "agent.output.streaming"
    SECTION = "§4.3.3"

    chunk: AnyText
    position: Count
    complete: bool
    coalesce_hint: CoalesceHint | None = None
    output_id: OutputId | None = None
    content_type: (
        Annotated[
            str,
            StringConstraints(pattern=r"^[a-zA-Z][a-zA-Z0-9.+_\-]*/[a-zA-Z][a-zA-Z0-9.+_\-]*$"),
        ]
        | None
    ) = None
    language: LanguageTag | None = None

    @model_validator(mode="before")
    @classmethod
    def _empty_summaries_are_absent(cls, data: Any) -> Any:
        # §4.3.3 requires no summary on a chunk, and the TypeScript reference producer
        # sends ``"summary_normal": ""`` on every one: read an empty summary as none
        # and speak the chunk (liberal where the spec allows).
        # (a chunk seldom has a summary at all: one set operation in C says so)
        if (
            isinstance(data, dict)
            and not _SUMMARY_FIELDS.isdisjoint(data)
            and any(data.get(name) == "" for name in _SUMMARY_FIELDS if name in data)
        ):
            return {
                key: value
                for key, value in data.items()
                if not (key in _SUMMARY_FIELDS and value == "")
            }
        return data

    @property
    def chunk_language(self) -> str | None:
        """§11.5.3: the chunk's own language overrides the envelope's."""
        return self.language or self.primary_language


class AwaitingConfirmation(AaepEvent):
    SHORT_TYPE = "agent.awaiting.confirmation"
    SECTION = "§4.4.1"
    TEXT_FIELDS = AaepEvent.TEXT_FIELDS | {"action", "consequence"}

    action: Text
    consequence: Text
    reply_token: ReplyToken
    timeout_seconds: Timeout
    default_decision: Decision
    risk_level: RiskLevel | None = None
    irreversible: bool | None = None
    reversibility: Reversibility | None = None
    allowed_replies: Annotated[list[str] | None, Field(min_length=1, max_length=32), UniqueList] = (
        None
    )
    extra_context: dict[str, Any] | None = None

    @property
    def is_irreversible(self) -> bool:
        """Either way of saying it counts (§6.4.1 read conservatively)."""
        return self.irreversible is True or self.reversibility == "irreversible"

    @property
    def replies(self) -> list[str]:
        return list(self.allowed_replies or ["accept", "reject"])


class Choice(WireModel):
    value: Annotated[str, StringConstraints(min_length=1, max_length=256)]
    label: Annotated[str, StringConstraints(min_length=1, max_length=1024)]


ResponseKind = Literal["freetext", "yes_no", "multiple_choice", "numeric"]


class AwaitingClarification(AaepEvent):
    SHORT_TYPE = "agent.awaiting.clarification"
    SECTION = "§4.4.2"
    TEXT_FIELDS = AaepEvent.TEXT_FIELDS | {"question", "context"}

    question: Text
    reply_token: ReplyToken
    timeout_seconds: Timeout
    accepted_response_kinds: Annotated[
        list[ResponseKind] | None, Field(min_length=1, max_length=4), UniqueList
    ] = None
    choices: Annotated[list[Choice] | None, Field(min_length=2, max_length=32), UniqueList] = None
    # Named like the JSON field; it is a free-text string, not a JSON-LD context.
    context_: Annotated[ShortText | None, Field(alias="context")] = None
    default_response: Annotated[str, StringConstraints(max_length=4096)] | None = None


class HandoffRequested(AaepEvent):
    SHORT_TYPE = "agent.handoff.requested"
    SECTION = "§4.4.3"
    TEXT_FIELDS = AaepEvent.TEXT_FIELDS | {"reason"}

    reason: Text
    target_kind: Literal["human", "specialist_agent", "escalation_queue"]
    target_uri: Uri | None = None
    packaged_context: dict[str, Any] | None = None
    urgency_for_handoff: RiskLevel | None = None


class GenericEvent(AaepEvent):
    """An event type from a foreign namespace (§3.2.2, §7.4): announced generically."""

    SECTION = "§7.4"


CORE_EVENT_TYPES: dict[str, type[AaepEvent]] = {
    cls.SHORT_TYPE: cls
    for cls in (
        SessionStarted,
        SessionCompleted,
        SessionErrored,
        SessionCancelled,
        StateChanged,
        ProgressUpdated,
        ToolInvoked,
        ToolCompleted,
        OutputStreaming,
        AwaitingConfirmation,
        AwaitingClarification,
        HandoffRequested,
    )
}

TERMINAL_TYPES: frozenset[str] = frozenset(
    {"agent.session.completed", "agent.session.errored", "agent.session.cancelled"}
)
