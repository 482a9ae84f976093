"""Our phrases about a question: its subject, why it ended, in the user's language (§11.5)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, Final

from announcer.engine.announcement import Announcement, Urgency
from announcer.engine.phrases import N_
from announcer.engine.policy import Policy
from announcer.engine.policy_questions import agent_asks_itself
from announcer.engine.policy_words import Spoken, by_language, same_language
from announcer.engine.prompts import PendingPrompt
from announcer.engine.raw_frames import _as_sentence, _raw_words
from announcer.engine.text_hygiene import clean_for_speech
from announcer.engine.tracker import SessionTracker
from announcer.i18n.translate import translator
from announcer.protocol.events import AaepEvent, AwaitingClarification, AwaitingConfirmation

SHORT_SUBJECT_WORDS: Final = 12


class QuestionNotices:
    """Builds the announcements that name a question (never queues them)."""

    def __init__(self, policy: Policy, tracker: SessionTracker) -> None:
        self.policy = policy
        self.tracker = tracker

    def system_announcement(
        self, text: str, prompt: PendingPrompt, *, kind: str, critical: bool = False
    ) -> Announcement:
        return Announcement(
            text=text,
            language=self.policy.phrase_language,
            urgency=Urgency.CRITICAL if critical else Urgency.NORMAL,
            interrupt=critical,
            event_id=prompt.event_id,
            session_id=prompt.session_id,
            producer_id=prompt.producer_id,
            kind=kind,
        )

    def prompt_subject(self, prompt: PendingPrompt) -> Spoken:
        """What the question was about, in the language the producer wrote it in."""
        event = prompt.event
        field = "action" if isinstance(event, AwaitingConfirmation) else "question"
        if prompt.malformed:
            # A best-effort reading: its text is whatever string the frame held.
            raw = getattr(event, field, "")
            text = raw if isinstance(raw, str) else ""
            language = self.policy.phrase_language
            return Spoken(clean_for_speech(text, language, max_chars=160), language)
        spoken = (
            self.policy.producer_text(event, field)
            if isinstance(event, (AwaitingConfirmation, AwaitingClarification))
            else None
        )
        if spoken is None:
            return Spoken("", self.policy.phrase_language)
        return Spoken(
            clean_for_speech(spoken.text, spoken.language, max_chars=160), spoken.language
        )

    def short_subject(self, prompt: PendingPrompt) -> Spoken:
        """The question named briefly, for news that it ended (issue 14 e).

        Read out whole, "No answer needed any more: <the whole question>" took 5.5 s at
        180 words a minute while newer news waited. Its first ``SHORT_SUBJECT_WORDS``
        words name it (a producer's ``summary_terse`` is often generic: "Permission
        needed."); the whole question stays on screen and in History.
        """
        subject = self.prompt_subject(prompt)
        return Spoken(_first_words(subject.text), subject.language)

    def notice(
        self,
        msgid: str,
        prompt: PendingPrompt,
        *,
        kind: str,
        critical: bool = False,
        short: bool = False,
        why: str = "",
        reason: Spoken | None = None,
    ) -> list[Announcement]:
        """Our phrase about a question, naming it by its subject (``{what}``).

        A subject in another language than our phrase is its own part, read by its
        own voice (§11.5); the parts are one message (``continues``). ``short`` names
        the question by its short subject (:meth:`short_subject`). ``reason``: the
        agent's own words about why (its withdrawing state change's summary), said
        after the subject in their own language, in place of ``why``.
        """
        template = translator(self.policy.phrase_language).gettext(msgid)
        subject = self.short_subject(prompt) if short else self.prompt_subject(prompt)
        if reason is not None and reason.text.strip():
            return self._notice_with_reason(template, subject, reason, prompt, kind, critical)
        if why:
            # Why it ended, a sentence after the subject: "…: <action>. <why>" (issue 20).
            text = subject.text.rstrip()
            if text and not text.endswith((".", "!", "?", "…", "。", "؟", "।")):
                text += "."
            subject = Spoken(text, subject.language)
            template = f"{template} {why}"
        phrase_language = self.policy.phrase_language
        if same_language(subject.language, phrase_language) or template.count("{what}") != 1:
            texts = [Spoken(template.format(what=subject.text), phrase_language)]
        else:
            before, after = template.split("{what}")
            if not any(char.isalnum() for char in after):  # a closing stop stays with it
                subject, after = Spoken(subject.text + after, subject.language), ""
            texts = by_language(
                [
                    Spoken(before, phrase_language),
                    subject,
                    Spoken(after, phrase_language),
                ]
            )
        return [
            dataclasses.replace(
                self.system_announcement(part.text, prompt, kind=kind, critical=critical),
                language=part.language,
                continues=index > 0,
            )
            for index, part in enumerate(texts)
        ]

    def _notice_with_reason(
        self,
        template: str,
        subject: Spoken,
        reason: Spoken,
        prompt: PendingPrompt,
        kind: str,
        critical: bool,
    ) -> list[Announcement]:
        """ "<our phrase>: <subject>. <the agent's reason>", each part in its language."""
        text = subject.text.rstrip()
        if text and not text.endswith((".", "!", "?", "…", "。", "؟", "।")):
            text += "."
        phrase_language = self.policy.phrase_language
        if same_language(subject.language, phrase_language) or template.count("{what}") != 1:
            lead = [Spoken(template.format(what=text), phrase_language)]
        else:
            before, after = template.split("{what}")
            lead = [
                Spoken(before, phrase_language),
                Spoken(text + after, subject.language),
            ]
        parts = by_language([*lead, Spoken(reason.text.strip(), reason.language)])
        return [
            dataclasses.replace(
                self.system_announcement(part.text, prompt, kind=kind, critical=critical),
                language=part.language,
                continues=index > 0,
            )
            for index, part in enumerate(parts)
        ]

    def withdrawn_notice(
        self, prompt: PendingPrompt, reason: Spoken | None, *, alone: bool
    ) -> list[Announcement]:
        """The one notice that a heard question was withdrawn (§6.8, issue 30 item 1).

        With the agent's reason: "Withdrawn: <its reason>", the question unnamed when it
        was the only one open (the user knows which); named, "No answer needed any more:
        <its first words>. <reason>", when another question could be meant or at detailed
        verbosity. Without a reason the notice names the question: it is all there is.
        """
        detailed = self.policy.settings.verbosity == "detailed"
        # At the question's own urgency, as when it was never heard: the user heard it
        # and may be about to answer; urgent news after it (a hand-off, an error) must
        # not cut off the one sentence that says not to.
        critical = self.asked_critically(prompt)
        if reason is None or not reason.text.strip() or detailed or not alone:
            return self.notice(
                N_("No answer needed any more: {what}"),
                prompt,
                kind="system.prompt_voided",
                short=True,
                reason=reason,
                critical=critical,
            )
        language = self.policy.phrase_language
        template = translator(language).gettext(N_("Withdrawn: {reason}"))
        said = reason.text.strip()
        if same_language(reason.language, language) or template.count("{reason}") != 1:
            parts = [Spoken(template.format(reason=said), language)]
        else:  # our word in our voice, the agent's reason in its own (§11.5)
            before, after = template.split("{reason}")
            parts = by_language([Spoken(before, language), Spoken(said + after, reason.language)])
        return [
            dataclasses.replace(
                self.system_announcement(
                    part.text, prompt, kind="system.prompt_voided", critical=critical
                ),
                language=part.language,
                continues=index > 0,
            )
            for index, part in enumerate(parts)
        ]

    def unheard_void_notice(
        self, prompt: PendingPrompt, reason: Spoken | None = None
    ) -> list[Announcement]:
        """ "Withdrawn before you could answer: <action>. <why>." (issue 20)

        Said at the question's own urgency, in its place: the user learns what the agent
        wanted to do, even though it no longer waits for an answer. ``reason``: the
        agent's own words about why, said instead of ours (issue 30 item 1).
        """
        session = self.tracker.session(prompt.source_id, prompt.session_id)
        ended = session is not None and session.lifecycle != "active"
        why = translator(self.policy.phrase_language).gettext(
            N_("The session ended.") if ended else N_("The agent went on without your answer.")
        )
        critical = self.asked_critically(prompt)
        return self.notice(
            N_("Withdrawn before you could answer: {what}"),
            prompt,
            kind="system.prompt_voided",
            critical=critical,
            short=True,  # its first words name it; the whole question stays on screen
            why=why,
            reason=reason,
        )

    def asked_critically(self, prompt: PendingPrompt) -> bool:
        """Whether the question was asked at critical urgency (why it ended is said so too)."""
        event = prompt.event
        return not isinstance(event, AaepEvent) or self.policy.urgency_of(event) is Urgency.CRITICAL

    @staticmethod
    def void_on_arrival_msgid(reason: str) -> str:
        if reason == "ended":
            return N_(
                "The agent's session had already ended when this question came; "
                "it cannot be answered: {what}"
            )
        return N_("This question was already withdrawn when it came; it cannot be answered: {what}")

    @staticmethod
    def closed_msgid(prompt: PendingPrompt) -> str:
        event = prompt.event
        if isinstance(event, AwaitingConfirmation):
            return (
                N_("The agent closed the subscription, so it goes ahead with: {what}")
                if event.default_decision == "accept"
                else N_("The agent closed the subscription, so it rejected: {what}")
            )
        return N_("The agent closed the subscription and stopped waiting for: {what}")

    @staticmethod
    def expired_msgid(prompt: PendingPrompt) -> str:
        event = prompt.event
        if isinstance(event, AwaitingConfirmation) and agent_asks_itself(event):
            # a coding-agent hook (formats/hooks.py): no answer is "ask", never a reject
            return N_("Time is up; the agent will ask you itself: {what}")
        if isinstance(event, AwaitingConfirmation):
            return (
                N_("Time is up; the agent goes ahead with: {what}")
                if event.default_decision == "accept"
                else N_("Time is up; the agent rejected: {what}")
            )
        return N_("Time is up; the agent stopped waiting for: {what}")

    def raw_confirmation_details(self, raw: Mapping[str, Any]) -> str:
        """Consequence, risk, reversibility and deadline of a confirmation, as far as
        they can be read from a frame that failed validation (§10.1.3)."""
        tr = translator(self.policy.phrase_language)
        parts = [_as_sentence(_raw_words(raw, ("consequence",)))]
        risk = raw.get("risk_level")
        if risk == "high":
            parts.append(tr.gettext("High risk."))
        elif risk == "medium":
            parts.append(tr.gettext("Medium risk."))
        reversibility = raw.get("reversibility")
        if reversibility == "reversible":
            parts.append(tr.gettext("This can be undone."))
        elif reversibility == "reversible_with_effort":
            parts.append(tr.gettext("Undoing this takes effort."))
        elif reversibility == "irreversible" or raw.get("irreversible") is True:
            parts.append(tr.gettext("This cannot be undone."))
        timeout = raw.get("timeout_seconds")
        default = raw.get("default_decision")
        if isinstance(timeout, int) and not isinstance(timeout, bool) and timeout > 0:
            parts.append(
                self.policy.timeout_phrase(timeout, "accept" if default == "accept" else "reject")
            )
        return " ".join(part for part in parts if part)


def _first_words(text: str) -> str:
    """``text`` cut to ``SHORT_SUBJECT_WORDS`` words, with an ellipsis when cut."""
    words = text.split()
    if len(words) <= SHORT_SUBJECT_WORDS:
        return text.strip()
    return " ".join(words[:SHORT_SUBJECT_WORDS]).rstrip(",;:—-") + "…"
