"""Whose words these are when several agents speak (engine.speakers, Subscribers' Guide §9)."""

from __future__ import annotations

from announcer.engine.announcement import Announcement
from announcer.engine.speakers import SpeakerNames


def _said(names: SpeakerNames, *items: tuple[str | None, str, str]) -> list[str]:
    return [
        names.name(Announcement(text=text, producer_id=producer, kind=kind)).text
        for producer, kind, text in items
    ]


def test_the_name_is_said_when_the_speaker_changes_and_only_then() -> None:
    names = SpeakerNames()
    names.learn("alpha", "alpha")
    names.learn("beta", "beta")
    out = "agent.output.streaming"
    assert _said(
        names,
        ("alpha", out, "Hello."),
        ("alpha", out, "Still me."),
        ("beta", out, "Hi."),
        ("alpha", out, "Back."),
    ) == ["alpha: Hello.", "Still me.", "beta: Hi.", "alpha: Back."]


def test_a_sentence_that_names_its_agent_is_not_named_and_our_own_words_name_the_next() -> None:
    names = SpeakerNames()
    names.learn("beta", "beta")
    assert _said(
        names,
        ("beta", "agent.awaiting.confirmation", "Confirmation needed. Beta wants to run: ls."),
        ("beta", "agent.output.streaming", "Listing."),  # still beta: not named again
        (None, "system.ui", "Sent to alpha."),
        ("beta", "agent.output.streaming", "Listed."),  # our words came between: named
    ) == [
        "Confirmation needed. Beta wants to run: ls.",
        "Listing.",
        "Sent to alpha.",
        "beta: Listed.",
    ]


def test_a_later_part_of_one_message_is_never_named_and_an_unknown_producer_goes_by_its_id() -> (
    None
):
    names = SpeakerNames(gettext=lambda message: message)
    first = names.name(Announcement(text="Tests pass.", producer_id="bot-7", kind="agent.x"))
    part = names.name(
        Announcement(text="In French.", producer_id="bot-7", kind="agent.x", continues=True)
    )
    assert (first.text, part.text) == ("bot-7: Tests pass.", "In French.")


def test_the_named_form_is_translated() -> None:
    names = SpeakerNames(gettext=lambda message: "{agent} — {text}")
    names.learn("a", "codex")
    said = names.name(Announcement(text="Done.", producer_id="a", kind="agent.output.streaming"))
    assert said.text == "codex — Done."
