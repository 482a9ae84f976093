"""Shared pydantic configuration for every AAEP message model."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Self

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    StringConstraints,
    field_serializer,
)
from pydantic_core import PydanticCustomError

from announcer.protocol.identifiers import LANGUAGE_TAG, format_timestamp, parse_timestamp


def _aaep_timestamp(value: Any) -> Any:
    """Accept a timezone-aware datetime or a string that follows §3.2.5, nothing else."""
    if isinstance(value, datetime):
        if value.tzinfo is None:
            raise PydanticCustomError("timestamp_format", "must carry Z or an explicit UTC offset")
        return value
    if isinstance(value, str):
        parsed = parse_timestamp(value)
        if parsed is None:
            raise PydanticCustomError(
                "timestamp_format",
                "must be RFC 3339 like 2026-05-24T14:22:11.342Z: 3 or 6 fraction digits "
                "(or none) and Z or an offset such as +01:00",
            )
        return parsed
    raise PydanticCustomError("timestamp_type", "must be a string")


def _unique(items: list[Any]) -> list[Any]:
    seen: list[Any] = []
    for item in items:
        if item in seen:
            raise ValueError("must not list the same entry twice")
        seen.append(item)
    return items


Timestamp = Annotated[datetime, BeforeValidator(_aaep_timestamp)]
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
