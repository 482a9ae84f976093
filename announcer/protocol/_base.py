"""Shared pydantic configuration for every AAEP message model."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    StringConstraints,
    field_serializer,
)

from announcer.protocol.identifiers import LANGUAGE_TAG, format_timestamp, parse_timestamp


def _aaep_timestamp(value: Any) -> Any:
    """Accept a timezone-aware datetime or a string that follows §3.2.5, nothing else."""
    if isinstance(value, datetime):
        if value.tzinfo is None:
            raise ValueError("must carry Z or an explicit UTC offset")
        return value
    if isinstance(value, str):
        parsed = parse_timestamp(value)
        if parsed is None:
            raise ValueError(
                "must be YYYY-MM-DDTHH:MM:SS with 3 or 6 fraction digits (or none) "
                "and Z or an offset"
            )
        return parsed
    raise ValueError("must be a timestamp string")


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

    def to_wire(self) -> dict[str, Any]:
        """JSON-ready dict: aliases applied (``@context``), absent optional fields omitted."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


class TimestampedModel(WireModel):
    timestamp: Timestamp

    @field_serializer("timestamp")
    def _render_timestamp(self, value: datetime) -> str:
        return format_timestamp(value)
