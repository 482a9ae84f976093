"""Handshake outcomes in the core (issue 24 item 3): a typed accept, reject or close becomes
what the user hears, in their language, and whether and when to retry (§5.4, §5.5, §5.8)."""

from __future__ import annotations

from typing import Any

import pytest

from announcer.engine.subscription import (
    CLOSE_REASONS,
    REJECTION_REASONS,
    WEBSOCKET_CLOSE_REASONS,
    Accepted,
    After,
    Closed,
    LinkState,
    Next,
    Rejected,
    Unexpected,
    after_message,
    after_request,
    agreement_news,
    close_reason,
    read_answer,
)
from announcer.i18n.translate import translator
from announcer.protocol.handshake import SubscriptionAccepted, SubscriptionRejected
from announcer.runtime.failures import connection_failure
from announcer.transports.failure import Cause, Fault

OSC_TITLE = "\x1b]0;pwned\x07"
ACCEPTED: dict[str, Any] = {
    "type": "subscription.accepted",
    "subscription_id": "sub_8a4f2c9d1e7b5f3a",
    "aaep_version": "1.0.0",
    "producer": {"agent_id": "bank", "agent_name": "Banking assistant"},
    "honored_capabilities": {"preferred_verbosity": "normal", "languages": ["fr"]},
}


def rejected(**fields: Any) -> dict[str, Any]:
    return {
        "type": "subscription.rejected",
        "reason_code": "rate_limit",
        "reason_message": "Too busy.",
        **fields,
    }


# ---- reading ---------------------------------------------------------------------------------


def test_an_acceptance_is_read_with_the_fields_the_runtime_uses() -> None:
    answer = read_answer(ACCEPTED)
    assert answer == Accepted(
        subscription_id="sub_8a4f2c9d1e7b5f3a",
        producer_name="Banking assistant",
        names_producer=True,
        honoured={"preferred_verbosity": "normal", "languages": ["fr"]},
    )


def test_a_validated_model_reads_the_same_as_the_decoded_message() -> None:
    assert read_answer(SubscriptionAccepted.model_validate(ACCEPTED)) == read_answer(ACCEPTED)
    model = SubscriptionRejected.model_validate(rejected(retry_after_seconds=30))
    assert read_answer(model) == Rejected("rate_limit", "Too busy.", 30.0)


@pytest.mark.parametrize("name", [{"x": 1}, 12345, ["a"], None, "   "])
def test_a_name_that_is_not_a_string_leaves_the_agent_id(name: Any) -> None:
    answer = read_answer({**ACCEPTED, "producer": {"agent_id": "bank", "agent_name": name}})
    assert isinstance(answer, Accepted) and answer.producer_name == "bank"


def test_wrong_types_are_as_if_absent_never_fatal() -> None:
    answer = read_answer(
        {"type": "subscription.accepted", "producer": "me", "honored_capabilities": [1]}
    )
    assert answer == Accepted(subscription_id=None, producer_name=None, honoured={})
    assert not answer.names_producer  # the name the user knows the source by is kept
    bad = read_answer(rejected(retry_after_seconds="soon", reason_message={"x": 1}))
    assert bad == Rejected("rate_limit", None, None)
    assert read_answer(rejected(retry_after_seconds=-5)).retry_after is None  # type: ignore[union-attr]


def test_producer_words_are_sanitised_and_capped() -> None:
    answer = read_answer(rejected(reason_message=f"No{OSC_TITLE} way.\u202e" + "x" * 900))
    assert isinstance(answer, Rejected) and answer.reason_message is not None
    assert answer.reason_message.startswith("No way.") and "\x1b" not in answer.reason_message
    assert len(answer.reason_message) <= 500
    closed = read_answer({"type": "subscription.close", "reason_code": f"bye{OSC_TITLE}"})
    assert closed == Closed("bye", None)


def test_a_request_is_no_answer() -> None:
    assert read_answer({"type": "subscription.request"}) == Unexpected("subscription.request")
    assert read_answer({"type": 7}) == Unexpected(None)


# ---- the answer to our request -----------------------------------------------------------------


def test_no_answer_and_an_acceptance_go_on() -> None:
    assert after_request(None, name="x", language="en").next is Next.PROCEED
    step = after_request(read_answer(ACCEPTED), name="x", language="en")
    assert step.next is Next.PROCEED and step.say == ""
    assert step.accepted is not None and step.accepted.subscription_id == "sub_8a4f2c9d1e7b5f3a"
    assert step.link is LinkState.CONNECTING  # open only once the stream delivers


def test_a_rejection_with_retry_after_retries_after_that_long_and_says_so_once() -> None:
    step = after_request(read_answer(rejected(retry_after_seconds=30)), name="Bank", language="en")
    assert step.next is Next.RETRY and step.retry_after == 30.0
    assert step.reason == (
        "Bank refused the subscription: it has too many listeners right now. It said: Too busy."
    )
    assert step.say == step.reason + " Trying again in 30 seconds."
    # the same refusal again has the same reason (the runtime says it once)
    again = after_request(read_answer(rejected(retry_after_seconds=30)), name="Bank", language="en")
    assert again.reason == step.reason


def test_a_delay_longer_than_a_day_is_a_day() -> None:
    step = after_request(read_answer(rejected(retry_after_seconds=10**9)), name="B", language="en")
    assert step.retry_after == 24 * 3600


def test_a_rejection_without_retry_after_gives_up() -> None:
    step = after_request(read_answer(rejected(reason_code="weird")), name="Bank", language="en")
    assert step.next is Next.GIVE_UP and step.link is LinkState.GIVEN_UP
    assert step.say.startswith("Bank refused the subscription: it gave no reason.")


def test_something_else_as_the_answer_gives_up() -> None:
    step = after_request(Unexpected("subscription.request"), name="Bank", language="en")
    assert step.next is Next.GIVE_UP
    assert step.say == "Bank answered the subscription with something unexpected."


@pytest.mark.parametrize("language", ["es", "fr", "de", "pt-BR", "ar", "yo"])
def test_a_refusal_is_heard_in_the_users_language(language: str) -> None:
    """A German listener no longer hears "it gave no reason" (issue 24)."""
    for code, english in REJECTION_REASONS.items():
        step = after_request(read_answer(rejected(reason_code=code)), name="B", language=language)
        why = translator(language).gettext(english)
        assert why != english, (language, english)
        assert why in step.say and english not in step.say


# ---- messages on an open subscription ----------------------------------------------------------


def test_an_accepted_renegotiation_changes_settings() -> None:
    step = after_message(read_answer(ACCEPTED), name="Bank", language="en")
    assert step.after is After.SETTINGS_CHANGED and step.accepted is not None


def test_a_rejected_renegotiation_ends_the_subscription() -> None:
    step = after_message(read_answer(rejected()), name="Bank", language="en")
    assert step.after is After.ENDED
    assert step.say == "Bank refused the new settings: it has too many listeners right now."
    odd = after_message(read_answer(rejected(reason_code="too_odd")), name="Bank", language="en")
    assert odd.say == "Bank refused the new settings: too_odd."


def test_a_close_names_its_reason_in_words() -> None:
    step = after_message(
        read_answer({"type": "subscription.close", "reason_code": "producer_shutdown"}),
        name="Bank",
        language="en",
    )
    assert step.after is After.CLOSED_BY_PRODUCER
    assert step.say == "Bank closed the subscription (it is shutting down). Reconnecting."
    assert close_reason(Closed("maintenance_window"), "en") == "maintenance window"
    assert close_reason(Closed(None), "en") == "no reason given"
    assert close_reason(Closed(None), "de") == translator("de").gettext("no reason given")
    for english in CLOSE_REASONS.values():
        assert translator("fr").gettext(english) != english


def test_a_request_on_an_open_subscription_is_ignored() -> None:
    step = after_message(Unexpected("subscription.request"), name="Bank", language="en")
    assert step.after is After.IGNORED and step.say == ""


# ---- what the producer granted ------------------------------------------------------------------


def test_what_was_granted_less_is_said_when_it_changes() -> None:
    requested = {
        "languages": ["en"],
        "supports_confirmation_reply": True,
        "max_events_per_second": 5,
        "preferred_verbosity": "normal",
    }
    honoured = {
        "languages": ["fr"],
        "supports_confirmation_reply": False,
        "max_events_per_second": 2,
    }
    news = agreement_news(requested, honoured, None, name="Bank", language="en")
    assert news == (
        "Bank agreed, but it will not send confirmation questions; it applies its own default "
        "instead; it will send at most 2 events a second; it will speak fr."
    )
    assert agreement_news(requested, honoured, dict(honoured), name="Bank", language="en") == ""
    german = agreement_news(requested, honoured, None, name="Bank", language="de")
    assert german and "it will" not in german


def test_websocket_close_codes_are_translated_where_they_are_said() -> None:
    closed = Cause(Fault.CLOSE_CODE, detail=WEBSOCKET_CLOSE_REASONS[4002])
    assert connection_failure(closed, "en") == "authentication failed"
    german = connection_failure(closed, "de")
    assert german == translator("de").gettext("authentication failed") != "authentication failed"
