"""The life of one subscription to one source, as the core sees it: pure logic.

A source (an AAEP producer, an agent, a recorded file) is in exactly one ``LinkState``
at a time. The runtime's transports report what happened; this module decides the
state, and the UIs word the state in the user's language.

Handshake answers (§5.4 accepted, §5.5 rejected, §5.8.1 close) are decided here, in
the manner of websockets' ``ClientProtocol.process_response``: the runtime hands over
the message the protocol decoder read (:func:`read_answer` makes it typed, leniently:
a field of the wrong type is left out, never fatal), asks what follows
(:func:`after_request`, :func:`after_message`), and acts on the answer: go on, retry
after a delay, or give up, with the sentence the user hears already in their language.
No layer above reads handshake dicts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum, StrEnum
from typing import Any, Final

from announcer.engine.phrases import N_
from announcer.i18n.translate import translator
from announcer.protocol._base import WireModel
from announcer.protocol.sanitise import text_field


class LinkState(StrEnum):
    """Where one source's connection stands (replaces a set of booleans)."""

    CONNECTING = "connecting"  # not delivered yet: handshake under way or retrying
    OPEN = "open"  # delivering events
    LOST = "lost"  # was delivering, broke; reconnecting
    CLOSED_BY_PRODUCER = "closed_by_producer"  # the producer refused or ended the subscription
    FINISHED = "finished"  # a finite source (file, stdio, agent) ended normally
    GIVEN_UP = "given_up"  # we stopped retrying


# §5.5.3 reason codes (normative), said as the reason in "X refused the subscription: …".
REJECTION_REASONS: Final[Mapping[str, str]] = {
    "version_unsupported": N_("it does not support this version of the protocol"),
    "manifest_signature_required": N_("it has no signed manifest"),
    "capabilities_incompatible": N_("it cannot serve the settings asked for"),
    "rate_limit": N_("it has too many listeners right now"),
    "authentication_required": N_("it needs a token (use --token-env or --token-file)"),
    "authorization_denied": N_("the token was not accepted"),
    "transport_unavailable": N_("it does not serve this kind of connection"),
    "unknown": N_("it gave no reason"),
}
NO_REJECTION_REASON: Final = REJECTION_REASONS["unknown"]

# §5.8.1: close codes are free; those producers use are said in words, any other as the
# producer wrote it (its underscores as spaces).
CLOSE_REASONS: Final[Mapping[str, str]] = {
    "producer_shutdown": N_("it is shutting down"),
    "shutdown": N_("it is shutting down"),
    "session_ended": N_("its session ended"),
    "session_completed": N_("its session ended"),
    "idle_timeout": N_("it was idle too long"),
    "timeout": N_("it was idle too long"),
    "rate_limit": N_("it has too many listeners right now"),
    "policy_violation": N_("it says a rule was broken"),
    "authorization_revoked": N_("the token is no longer accepted"),
    "superseded": N_("another subscription took its place"),
}
NO_CLOSE_REASON: Final = N_("no reason given")

# Appendix B.2.6: WebSocket close codes, said in plain words (the transport raises them as
# its error text; the runtime's connection_failure translates them).
WEBSOCKET_CLOSE_REASONS: Final[Mapping[int, str]] = {
    4000: N_("the producer closed the subscription"),
    4001: N_("the producer rejected the subscription"),
    4002: N_("authentication failed"),
    4003: N_("authorisation was denied"),
    4004: N_("the producer ended the subscription for a violation"),
    4005: N_("the subscription was ended by this subscriber"),
}

# A producer's retry_after_seconds is honoured up to a day (the schema's own bound).
MAX_RETRY_AFTER_SECONDS: Final = 24 * 3600.0
# How much of a producer's own words (reason_message, a close code) is quoted.
DETAIL_LIMIT: Final = 500
CLOSE_CODE_LIMIT: Final = 80


# ---- typed answers ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Accepted:
    """§5.4 ``subscription.accepted``: the fields the runtime uses, each of the right type."""

    subscription_id: str | None = None
    producer_name: str | None = None  # agent_name, else agent_id; sanitised
    names_producer: bool = False  # it sent a producer object (whose names may be unusable)
    honoured: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Rejected:
    """§5.5 ``subscription.rejected``."""

    reason_code: str = "unknown"
    reason_message: str | None = None  # the producer's words, sanitised and capped
    retry_after: float | None = None  # seconds, when the producer says to try again


@dataclass(frozen=True, slots=True)
class Closed:
    """§5.8.1 ``subscription.close`` from the producer."""

    reason_code: str | None = None  # sanitised and capped
    reason_message: str | None = None
    subscription_id: str | None = None  # the subscription it closes, as sent (capped)


@dataclass(frozen=True, slots=True)
class Unexpected:
    """A ``subscription.*`` message that is no answer (a request, a renegotiation)."""

    type: str | None = None


HandshakeAnswer = Accepted | Rejected | Closed | Unexpected


def read_answer(message: Mapping[str, Any] | WireModel) -> HandshakeAnswer:
    """A handshake message, typed. A field of the wrong type is as if absent.

    The message is what the protocol decoder read (a mapping, even when the models found
    a field wrong, so a bad ``agent_name`` does not cost the user the subscription) or a
    validated model from :mod:`announcer.protocol.handshake`.
    """
    data: Mapping[str, Any] = (
        message.model_dump(exclude_none=True) if isinstance(message, WireModel) else message
    )
    kind = data.get("type")
    if kind == "subscription.accepted":
        producer = data.get("producer")
        name = None
        if isinstance(producer, Mapping):
            # Only a string is a name ({"x": 1} or 12345 is not), and it is sanitised.
            name = text_field(producer.get("agent_name")) or text_field(producer.get("agent_id"))
        honoured = data.get("honored_capabilities")
        return Accepted(
            subscription_id=str(data.get("subscription_id") or "") or None,
            producer_name=name,
            names_producer=isinstance(producer, Mapping),
            honoured=dict(honoured) if isinstance(honoured, Mapping) else {},
        )
    if kind == "subscription.rejected":
        retry = data.get("retry_after_seconds")
        return Rejected(
            reason_code=str(data.get("reason_code", "unknown")),
            reason_message=text_field(data.get("reason_message"), limit=DETAIL_LIMIT),
            retry_after=(
                float(min(retry, MAX_RETRY_AFTER_SECONDS))
                if isinstance(retry, int | float) and retry >= 0
                else None
            ),
        )
    if kind == "subscription.close":
        named = data.get("subscription_id")
        return Closed(
            reason_code=text_field(data.get("reason_code"), limit=CLOSE_CODE_LIMIT),
            reason_message=text_field(data.get("reason_message"), limit=DETAIL_LIMIT),
            subscription_id=named[:200] if isinstance(named, str) else None,
        )
    return Unexpected(kind if isinstance(kind, str) else None)


# ---- decisions ------------------------------------------------------------------------------


class Next(Enum):
    """What the runtime does after a handshake answer."""

    PROCEED = "proceed"  # read events (accepted, or a Level 1/2 producer that never answered)
    RETRY = "retry"  # close, wait ``retry_after`` (never less than the backoff), ask again
    GIVE_UP = "give_up"  # stop trying this source; ``say`` tells the user why


@dataclass(frozen=True, slots=True)
class HandshakeStep:
    """The verdict on the answer to a ``subscription.request``."""

    next: Next
    accepted: Accepted | None = None
    say: str = ""  # the whole sentence the user hears ("" for nothing)
    reason: str = ""  # the refusal alone, so a retried refusal is said once, not each time
    retry_after: float = 0.0

    @property
    def link(self) -> LinkState:
        return LinkState.GIVEN_UP if self.next is Next.GIVE_UP else LinkState.CONNECTING


def after_request(answer: HandshakeAnswer | None, *, name: str, language: str) -> HandshakeStep:
    """The verdict on the answer to our ``subscription.request`` (§5.4, §5.5, §9.3.3).

    ``None``: the producer never answered (Level 1/2): its defaults apply, go on.
    ``name`` is how the user knows the source.
    """
    t = translator(language)
    if answer is None:
        return HandshakeStep(Next.PROCEED)
    if isinstance(answer, Accepted):
        return HandshakeStep(Next.PROCEED, accepted=answer)
    if isinstance(answer, Rejected):
        why = t.gettext(REJECTION_REASONS.get(answer.reason_code, NO_REJECTION_REASON))
        sentence = t.gettext("{name} refused the subscription: {why}.").format(name=name, why=why)
        if answer.reason_message:
            sentence += " " + t.gettext("It said: {detail}").format(detail=answer.reason_message)
        if answer.retry_after is None:
            return HandshakeStep(Next.GIVE_UP, say=sentence, reason=sentence)
        again = t.gettext("Trying again in {seconds} seconds.").format(
            seconds=f"{answer.retry_after:g}"
        )
        return HandshakeStep(
            Next.RETRY, say=f"{sentence} {again}", reason=sentence, retry_after=answer.retry_after
        )
    unexpected = t.gettext("{name} answered the subscription with something unexpected.")
    return HandshakeStep(Next.GIVE_UP, say=unexpected.format(name=name))


class After(Enum):
    """What a handshake message on an open subscription changes."""

    SETTINGS_CHANGED = "settings_changed"  # §5.7: a renegotiation was accepted
    ENDED = "ended"  # §5.7: a rejected renegotiation ends the subscription; start afresh
    CLOSED_BY_PRODUCER = "closed_by_producer"  # §5.8: its questions are void; reconnect
    IGNORED = "ignored"
    NOT_OURS = "not_ours"  # §5.8.1: a close naming another subscription closes nothing here


@dataclass(frozen=True, slots=True)
class MessageStep:
    """The verdict on a handshake message that arrives on an open subscription."""

    after: After
    accepted: Accepted | None = None
    say: str = ""


def after_message(
    answer: HandshakeAnswer, *, name: str, language: str, subscription_id: str | None = None
) -> MessageStep:
    """A handshake message during the subscription: a renegotiation's answer or a close.

    ``subscription_id`` is ours on this connection: a ``subscription.close`` that names
    another one does not close ours (its questions stay open), and is logged by the
    runtime, never honoured in silence or in error.

    For an accepted renegotiation ``say`` is worded after the runtime applied it (the
    producer may have sent a new name): see :func:`settings_changed`.
    """
    t = translator(language)
    if isinstance(answer, Accepted):
        return MessageStep(After.SETTINGS_CHANGED, accepted=answer)
    if isinstance(answer, Closed):
        named = answer.subscription_id
        if named is not None and subscription_id is not None and named != subscription_id:
            return MessageStep(After.NOT_OURS)
        return MessageStep(After.CLOSED_BY_PRODUCER, say=closed_sentence(answer, name, language))
    if isinstance(answer, Rejected):
        code = answer.reason_code
        known = REJECTION_REASONS.get(code)
        why = (
            t.gettext(known)
            if known is not None
            else (text_field(code) or t.gettext(NO_REJECTION_REASON))
        )
        return MessageStep(
            After.ENDED,
            say=t.gettext("{name} refused the new settings: {why}.").format(name=name, why=why),
        )
    return MessageStep(After.IGNORED)


def settings_changed(name: str, language: str) -> str:
    return translator(language).gettext("Settings changed with {name}.").format(name=name)


def close_reason(closed: Closed, language: str) -> str:
    """Why the producer closed the subscription, in the user's language (§5.8.1)."""
    t = translator(language)
    code = closed.reason_code
    if not code or not code.strip():
        return t.gettext(NO_CLOSE_REASON)
    known = CLOSE_REASONS.get(code.strip().lower())
    return t.gettext(known) if known is not None else code.replace("_", " ")


def closed_sentence(closed: Closed, name: str, language: str) -> str:
    """§5.8: "X closed the subscription (it is shutting down). Reconnecting." """
    return (
        translator(language)
        .gettext("{name} closed the subscription ({reason}). Reconnecting.")
        .format(name=name, reason=close_reason(closed, language))
    )


def honoured_differences(
    requested: Mapping[str, Any], honoured: Mapping[str, Any], language: str
) -> list[str]:
    """§5.4.4: each way the producer granted less than asked, as a translated phrase."""
    t = translator(language)
    notes: list[str] = []
    if requested.get("supports_confirmation_reply") and (
        honoured.get("supports_confirmation_reply") is False
    ):
        notes.append(
            t.gettext("it will not send confirmation questions; it applies its own default instead")
        )
    if requested.get("supports_clarification_reply") and (
        honoured.get("supports_clarification_reply") is False
    ):
        notes.append(
            t.gettext(
                "it will not send clarification questions; it applies its own default instead"
            )
        )
    wanted_rate = requested.get("max_events_per_second")
    rate = honoured.get("max_events_per_second")
    if isinstance(rate, int | float) and (wanted_rate is None or rate < wanted_rate):
        notes.append(
            t.gettext("it will send at most {rate} events a second").format(rate=f"{rate:g}")
        )
    languages = honoured.get("languages")
    if isinstance(languages, list) and languages and languages != requested.get("languages"):
        notes.append(
            t.gettext("it will speak {languages}").format(
                languages=", ".join(str(lang) for lang in languages)
            )
        )
    verbosity = honoured.get("preferred_verbosity")
    if verbosity and verbosity != requested.get("preferred_verbosity"):
        notes.append(t.gettext("its summaries will be {verbosity}").format(verbosity=verbosity))
    return notes


def agreement_news(
    requested: Mapping[str, Any],
    honoured: Mapping[str, Any],
    previous: Mapping[str, Any] | None,
    *,
    name: str,
    language: str,
) -> str:
    """ "X agreed, but it will speak fr." when the producer granted less than asked; said
    when what it honours changed, not at every reconnection ("" otherwise)."""
    if previous is not None and dict(honoured) == dict(previous):
        return ""
    notes = honoured_differences(requested, honoured, language)
    if not notes:
        return ""
    return (
        translator(language)
        .gettext("{name} agreed, but {notes}.")
        .format(name=name, notes="; ".join(notes))
    )
