"""Subscription handshake messages of chapter 5 (§5.2-§5.8).

Capability objects allow extension capabilities (§5.3.2) as extra keys whose values
must be objects, exactly as the official schema says.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import ConfigDict, Field, StringConstraints, model_validator

from announcer.protocol._base import LanguageTag, UniqueList, Uri, WireModel
from announcer.protocol.diagnostics import safe_name
from announcer.protocol.events import CoalesceHint, Producer, SemVer, Verbosity

SubscriptionId = Annotated[str, StringConstraints(pattern=r"^sub_[A-Za-z0-9]{1,64}$")]
FilterPattern = Annotated[str, StringConstraints(min_length=1, max_length=256)]
#: the boundaries a subscriber accepts are the producer's coalesce hints (§4.3.3)
Boundary = CoalesceHint
#: Subscribers' Guide §7: how much the listener can take in at once
CognitiveLoad = Literal["low", "medium", "high"]


class EventFilters(WireModel):
    include: Annotated[list[FilterPattern] | None, UniqueList] = None
    exclude: Annotated[list[FilterPattern] | None, UniqueList] = None


class Capabilities(WireModel):
    """§5.3.1. Absent fields mean "no preference"; the spec defaults are in DEFAULTS."""

    model_config = ConfigDict(extra="allow")

    DEFAULTS: ClassVar[dict[str, Any]] = {
        "preferred_verbosity": "normal",
        "languages": ["en-US"],
        "supports_confirmation_reply": False,
        "supports_clarification_reply": False,
        "coalesce_boundaries": ["sentence", "completion"],
        "supported_conformance_levels": [1],
        "supported_extensions": [],
        "cognitive_load": "medium",
        "accept_signed_manifests_only": False,
    }

    max_events_per_second: Annotated[int, Field(ge=1, le=100_000)] | None = None
    preferred_verbosity: Verbosity | None = None
    languages: Annotated[
        list[LanguageTag] | None, Field(min_length=1, max_length=32), UniqueList
    ] = None
    supports_confirmation_reply: bool | None = None
    supports_clarification_reply: bool | None = None
    coalesce_boundaries: Annotated[
        list[Boundary] | None, Field(min_length=1, max_length=5), UniqueList
    ] = None
    event_filters: EventFilters | None = None
    supported_conformance_levels: Annotated[
        list[Literal[1, 2, 3]] | None, Field(min_length=1, max_length=3), UniqueList
    ] = None
    supported_extensions: Annotated[list[Uri] | None, Field(max_length=64), UniqueList] = None
    cognitive_load: CognitiveLoad | None = None
    pace_wpm: Annotated[int, Field(ge=50, le=1000)] | None = None
    accept_signed_manifests_only: bool | None = None

    @model_validator(mode="after")
    def _extension_capabilities_are_objects(self) -> Capabilities:
        for name, value in (self.__pydantic_extra__ or {}).items():
            if not isinstance(value, dict):
                raise ValueError(
                    f'extension capability "{safe_name(name)}" must be an object (§5.3.2)'
                )
        return self

    def extension_capabilities(self) -> dict[str, dict[str, Any]]:
        return dict(self.__pydantic_extra__ or {})


class SubscriptionRequest(WireModel):
    """§5.2: the subscriber opens the handshake."""

    SECTION: ClassVar[str] = "§5.2"

    type: Literal["subscription.request"] = "subscription.request"
    aaep_version: SemVer
    subscriber_id: Annotated[str, StringConstraints(min_length=1, max_length=256)]
    capabilities: Capabilities
    subscriber_name: Annotated[str, StringConstraints(max_length=256)] | None = None
    subscriber_version: Annotated[str, StringConstraints(max_length=64)] | None = None
    subscriber_manifest_uri: Uri | None = None
    correlation_id: str | None = None
    extensions: dict[str, dict[str, Any]] | None = None


class SubscriptionAccepted(WireModel):
    """§5.4: the producer's answer with the capabilities it commits to."""

    SECTION: ClassVar[str] = "§5.4"

    type: Literal["subscription.accepted"] = "subscription.accepted"
    subscription_id: SubscriptionId
    aaep_version: SemVer
    producer: Producer
    honored_capabilities: Capabilities
    manifest_uri: Uri | None = None
    signed_manifest: (
        Annotated[
            str, StringConstraints(pattern=r"^[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]+$")
        ]
        | None
    ) = None
    negotiation_notes: Annotated[str, StringConstraints(max_length=4096)] | None = None


RejectionReason = Literal[
    "version_unsupported",
    "manifest_signature_required",
    "capabilities_incompatible",
    "rate_limit",
    "authentication_required",
    "authorization_denied",
    "transport_unavailable",
    "unknown",
]


class SubscriptionRejected(WireModel):
    """§5.5: the producer cannot serve the subscription."""

    SECTION: ClassVar[str] = "§5.5"

    type: Literal["subscription.rejected"] = "subscription.rejected"
    reason_code: RejectionReason
    reason_message: Annotated[str, StringConstraints(min_length=1, max_length=4096)]
    retry_after_seconds: Annotated[int, Field(ge=0, le=86_400)] | None = None
    alternative_manifest_uri: Uri | None = None


class SubscriptionRenegotiate(WireModel):
    """§5.7.1: only the capabilities listed change (the spec publishes no schema for it)."""

    SECTION: ClassVar[str] = "§5.7.1"

    type: Literal["subscription.renegotiate"] = "subscription.renegotiate"
    subscription_id: SubscriptionId
    capabilities: Capabilities


class SubscriptionClose(WireModel):
    """§5.8.1: either side ends the subscription (no published schema; codes are free)."""

    SECTION: ClassVar[str] = "§5.8.1"

    type: Literal["subscription.close"] = "subscription.close"
    subscription_id: SubscriptionId | None = None
    reason_code: Annotated[str, StringConstraints(min_length=1, max_length=256)] | None = None
    reason_message: Annotated[str, StringConstraints(max_length=4096)] | None = None


HandshakeMessage = (
    SubscriptionRequest
    | SubscriptionAccepted
    | SubscriptionRejected
    | SubscriptionRenegotiate
    | SubscriptionClose
)

HANDSHAKE_TYPES: dict[str, type[WireModel]] = {
    "subscription.request": SubscriptionRequest,
    "subscription.accepted": SubscriptionAccepted,
    "subscription.rejected": SubscriptionRejected,
    "subscription.renegotiate": SubscriptionRenegotiate,
    "subscription.close": SubscriptionClose,
}
