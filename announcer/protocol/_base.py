"""Shared pydantic configuration for every AAEP message model."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Self

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    GetCoreSchemaHandler,
    StringConstraints,
    field_serializer,
)
from pydantic_core import core_schema

from announcer.protocol.identifiers import LANGUAGE_TAG, TIMESTAMP_GRAMMAR, format_timestamp

_TIMESTAMP_RULE = (
    "must be RFC 3339 like 2026-05-24T14:22:11.342Z: 3 or 6 fraction digits "
    "(or none) and Z or an offset such as +01:00"
)


class _AaepTimestamp:
    """§3.2.5 checked inside pydantic-core: the grammar by its regex, the calendar by its
    datetime parser. A Python validator here cost about 2 µs of every event's ~7 µs of
    validation (benchmarks/pipeline.py); tests/protocol/test_protocol_models.py checks
    this agrees with :func:`parse_timestamp` on generated timestamps.
    """

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        from_text = core_schema.chain_schema(
            [
                core_schema.str_schema(pattern=f"^{TIMESTAMP_GRAMMAR}$", strict=True),
                core_schema.datetime_schema(strict=False, tz_constraint="aware"),
            ]
        )
        return core_schema.union_schema(
            [from_text, core_schema.datetime_schema(strict=True, tz_constraint="aware")],
            mode="left_to_right",
            custom_error_type="timestamp_format",
            custom_error_message=_TIMESTAMP_RULE,
        )


def _unique(items: list[Any]) -> list[Any]:
    seen: list[Any] = []
    for item in items:
        if item in seen:
            raise ValueError("must not list the same entry twice")
        seen.append(item)
    return items


Timestamp = Annotated[datetime, _AaepTimestamp]
Text = Annotated[str, StringConstraints(min_length=1, max_length=16384)]
ShortText = Annotated[str, StringConstraints(min_length=1, max_length=4096)]
AnyText = Annotated[str, StringConstraints(max_length=16384)]
Name = Annotated[str, StringConstraints(min_length=1, max_length=256)]
LanguageTag = Annotated[str, StringConstraints(pattern=f"^{LANGUAGE_TAG.pattern}$")]
Uri = Annotated[str, StringConstraints(pattern=r"^[A-Za-z][A-Za-z0-9+.\-]*:\S*$")]
UniqueList = AfterValidator(_unique)


class WireModel(BaseModel):
    """Strict (no coercion of "5" into 5), immutable, and serialisable back to the wire."""

    model_config = ConfigDict(
        strict=True,
        frozen=True,
        populate_by_name=True,
        extra="forbid",
        ser_json_inf_nan="strings",
    )

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> Self:
        """Build from JSON field names only (``@context``, a clarification's ``context``).

        Prefer this to keyword construction: ``AwaitingClarification(context=...)`` would
        be ambiguous between ``@context`` and the clarification's own ``context``. Raises
        pydantic's ValidationError; :func:`decode_frame` is the never-raising way in.
        """
        return cls.model_validate(data, by_alias=True, by_name=False)

    def to_wire(self) -> dict[str, Any]:
        """JSON-ready dict: aliases applied (``@context``), absent optional fields omitted."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


class TimestampedModel(WireModel):
    timestamp: Timestamp

    @field_serializer("timestamp")
    def _render_timestamp(self, value: datetime) -> str:
        return format_timestamp(value)
