"""§5.3.1.4 and §9.4.2(2): what announcer declares about answering, from its settings."""

from __future__ import annotations

from announcer.engine.settings import UserSettings
from announcer.runtime.capabilities import capabilities_from_settings


def test_a_subscriber_that_can_answer_declares_level_2_reply_support() -> None:
    declared = capabilities_from_settings(UserSettings())
    assert declared["supports_confirmation_reply"] is True
    assert declared["supports_clarification_reply"] is True
    assert 2 in declared["supported_conformance_levels"]


def test_a_subscriber_that_cannot_answer_says_so_and_claims_level_1_only() -> None:
    declared = capabilities_from_settings(UserSettings(), can_reply=False)
    assert declared["supports_confirmation_reply"] is False
    assert declared["supported_conformance_levels"] == [1]


def test_no_rate_is_declared_unless_the_user_sets_one_and_then_as_a_whole_number() -> None:
    """§5.6.2: a subscriber declares only a rate it can sustain: the user's own bound."""
    assert "max_events_per_second" not in capabilities_from_settings(UserSettings())
    declared = capabilities_from_settings(UserSettings(max_events_per_second=7.5))
    assert declared["max_events_per_second"] == 7


def test_no_signed_manifest_is_ever_required() -> None:
    """§9.5.2(8) binds a subscriber that asks for signed manifests; announcer never asks."""
    for can_reply in (True, False):
        declared = capabilities_from_settings(UserSettings(), can_reply=can_reply)
        assert "accept_signed_manifests_only" not in declared
