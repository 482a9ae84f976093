"""What each kind of news says: our phrases around the producer's own text.

Every phrase of ours is an English msgid through ``translator(language).gettext``,
with every value put into it sanitised; the producer's text is taken in the user's
language when it offers one (§11.5.1) and tagged with its own. Sessions starting,
finishing, failing or cancelled sound different (Level 1 requirement 4); short state
flickers are quieted (§4.2.1); tools, progress and handoffs are said by verbosity.
"""

from __future__ import annotations

from typing import Final

from announcer.command_analysis import literal_for_speech
from announcer.engine.phrases import N_
from announcer.engine.policy_rules import PolicyRules
from announcer.engine.policy_topics import _plan_done
from announcer.engine.policy_words import (
    _CANCELLATION_WORDS,
    _COMPLETION_WORDS,
    _FAILURE_WORDS,
    Spoken,
    Wording,
    _capitalised,
    _speakable,
    _tool_name,
    already_says,
    format_number_for,
    format_percent_for,
    negation_words,
    outcome_words,
    words_of,
)
from announcer.engine.text_hygiene import clean_for_speech
from announcer.engine.tracker_records import CYCLE_STATES, SessionState
from announcer.i18n.format import format_integer
from announcer.i18n.negotiate import pick_field_variant
from announcer.i18n.translate import translator
from announcer.protocol.events import (
    AaepEvent,
    HandoffRequested,
    ProgressUpdated,
    SessionCancelled,
    SessionCompleted,
    SessionErrored,
    SessionStarted,
    StateChanged,
    ToolCompleted,
    ToolInvoked,
)
from announcer.protocol.extensions import ANNOUNCER_EXTENSION

# A state flicker shorter than this is not worth a word (§4.2.1 allows suppressing it).
STATE_CYCLE_QUIET_SECONDS: Final = 3.0


class PolicyWording(PolicyRules):
    """The wording of news: sessions, states, progress, tools and handoffs."""

    def summary(self, event: AaepEvent, level: str | None = None) -> Spoken | None:
        """The producer's summary nearest to ``level`` (:class:`announcer.engine.policy.Policy`)."""
        raise NotImplementedError

    def _variant(self, event: AaepEvent, field_name: str) -> Spoken | None:
        """The best §11.5.1 variant of a text field for the user's whole language chain.

        §11.1.3: each language of the chain in turn, then the producer's fallback chain,
        so a user who speaks fr, then es, hears the Spanish variant rather than English.
        Undeclared base text is taken to be in the user's first language (§11).
        """
        payload: dict[str, object] = dict(event.model_extra or {})
        base = event.text(field_name)
        if base:
            payload[field_name] = base
        hints = event.localization_hints
        fallback = (hints.fallback_chain or []) if hints is not None else []
        # §11: beside variants that name their language, an undeclared base text is of
        # unknown language, not the user's: with --language fr,es, summary_normal_es is
        # chosen over an untagged (often English) summary_normal, and labelled es.
        declared = event.primary_language
        choice = pick_field_variant(
            payload,
            field_name,
            self.settings.languages or [self.language],
            fallback,
            declared or "und",
        )
        if choice is None:
            return None
        language = choice.language
        if language == "und":
            language = self._text_language(event)  # nothing else offered: as before
        return Spoken(clean_for_speech(choice.text, language), language)

    def _phrase(self, msgid: str, **values: object) -> str:
        # Every value put into our sentence is sanitised: a producer's name or type with
        # escape codes or bidi controls must not reach a speech backend (issue 22 item 8).
        safe = {
            key: _speakable(value) if isinstance(value, str) else value
            for key, value in values.items()
        }
        return translator(self.phrase_language).gettext(msgid).format(**safe)

    def _own(self, text: str) -> Spoken:
        return Spoken(text, self.phrase_language)

    def _own_phrase(self, msgid: str, **values: object) -> Spoken:
        return self._own(self._phrase(msgid, **values))

    def _text_language(self, event: AaepEvent) -> str:
        """The declared language of the producer's text; undeclared, the user's (§11.1.3)."""
        return event.primary_language or self.language

    def producer_text(self, event: AaepEvent, field_name: str) -> Spoken | None:
        """A producer text field in the user's language if offered, tagged with its own."""
        return self._producer_text(event, field_name)

    def _producer_text(self, event: AaepEvent, field_name: str) -> Spoken | None:
        if event.model_extra:
            return self._variant(event, field_name)
        text = event.text(field_name)
        if not text:
            return None
        language = self._text_language(event)
        return Spoken(clean_for_speech(text, language), language)

    def _started(self, event: SessionStarted, session: SessionState) -> Wording:
        spoken = self.summary(event)
        if spoken is not None:
            if self.level_for(event) == "detailed" and event.request_text:
                request = self._producer_text(event, "request_text")
                if request is not None and request.text not in spoken.text:
                    return [spoken, request]
            return spoken
        return self._own_phrase("{agent} started.", agent=session.display_name)

    def _completed(self, event: SessionCompleted, session: SessionState) -> Wording:
        # Level 1 requirement 4: completed, errored and cancelled must sound different.
        spoken = self.summary(event)
        if spoken is None:
            return self._own_phrase("{agent} finished.", agent=session.display_name)
        lead = self._phrase("Finished.")
        extra = None
        if self.level_for(event) == "detailed":
            extra = self._producer_text(event, "output_summary")
        if self._already_says(spoken, _COMPLETION_WORDS, lead):
            return [spoken, extra] if extra else spoken
        return [p for p in (self._own(lead), spoken, extra) if p]

    def _errored(self, event: SessionErrored) -> Wording:
        spoken = self.summary(event)
        text = spoken or self._own(self._category_phrase(event.error_category))
        parts = [self._own_phrase("Error."), text]
        hint = self._producer_text(event, "remediation_hint")
        if hint and hint.text not in text.text:
            parts.append(hint)
        if self.settings.verbosity == "detailed" and event.error_code:
            parts.append(self._own_phrase("Code {code}.", code=event.error_code))
        return parts

    def _category_phrase(self, category: str) -> str:
        phrases = {
            "transient": N_("A temporary problem stopped the agent; trying again may work."),
            "permanent": N_("The agent hit a problem that retrying will not fix."),
            "requires_user": N_("The agent needs you to act before it can go on."),
        }
        return self._phrase(phrases.get(category, N_("The agent stopped because of an error.")))

    def _cancelled(self, event: SessionCancelled) -> Wording:
        who = {
            "user": N_("Cancelled at your request."),
            "producer": N_("Cancelled by the agent."),
            "timeout": N_("Cancelled: it took too long."),
            "system": N_("Cancelled by the system."),
        }
        lead = self._phrase(who.get(event.cancelled_by, N_("Cancelled.")))
        spoken = self.summary(event)
        if spoken is None:
            return self._own(lead)
        if self._already_says(spoken, _CANCELLATION_WORDS, lead):
            return spoken
        partial = None
        if self.level_for(event) == "detailed":
            partial = self._producer_text(event, "partial_result")
        return [p for p in (self._own(lead), spoken, partial) if p]

    def _state_changed(self, event: StateChanged, session: SessionState, now: float) -> Wording:
        quiet = (
            self.settings.cognitive_load != "high"
            # the same state again carries news (a new thought), not a cycle
            and event.from_state != event.to_state
            and event.to_state in CYCLE_STATES
            and event.from_state in CYCLE_STATES
            and session.last_state_announced_at is not None
            and now - session.last_state_announced_at < STATE_CYCLE_QUIET_SECONDS
        )
        if quiet:
            # §4.2.1 may suppress short cycles; other states are always spoken.
            self.suppressed["short state cycle"] += 1
            return None
        session.last_state_announced_at = now
        spoken = self.summary(event)
        if spoken is not None and (
            self.level_for(event) != "terse"
            or self._producer_text(event, "summary_terse")
            # What came of the user's answer, in the agent's words, even when terse: our
            # "Calling a tool." would not say it (issue 30 item 6).
            or event.from_state == "awaiting_input"
        ):
            return spoken
        names = {
            "idle": N_("Idle."),
            "thinking": N_("Thinking."),
            "calling_tool": N_("Calling a tool."),
            "writing_output": N_("Writing the answer."),
            "awaiting_input": N_("Waiting for your answer."),
            "deciding": N_("Deciding what to do next."),
            "handing_off": N_("Handing off."),
        }
        msgid = names.get(event.to_state)
        if msgid is not None:
            return self._own_phrase(msgid)
        return self._own_phrase("Now {state}.", state=event.to_state.replace("_", " "))

    def _progress(self, event: ProgressUpdated, session: SessionState, now: float) -> Wording:
        # Issue 20: every step reaches the scheduler, which keeps each source's newest.
        progress = event.progress
        spoken = self.summary(event)
        if spoken is not None:
            return spoken
        language = self.phrase_language
        parts: list[Spoken] = []
        if _plan_done(event) and progress.total_steps is not None:
            count = int(progress.total_steps)
            return self._own(
                translator(language)
                .ngettext("The one step is done.", "All {count} steps done.", count)
                .format(count=format_integer(count, language))
            )
        if progress.percent is not None:
            parts.append(
                self._own_phrase(
                    "{percent} done.", percent=format_percent_for(progress.percent, language)
                )
            )
        if progress.step is not None and progress.total_steps is not None:
            parts.append(
                self._own_phrase(
                    "Step {step} of {total}.",
                    step=format_number_for(progress.step, language),
                    total=format_number_for(progress.total_steps, language),
                )
            )
        elif progress.step is not None:
            parts.append(
                self._own_phrase("Step {step}.", step=format_number_for(progress.step, language))
            )
        if progress.description and self.level_for(event) != "terse":
            described = self._text_language(event)
            parts.append(Spoken(clean_for_speech(progress.description, described), described))
        return parts or None

    def _tool_invoked(self, event: ToolInvoked) -> Wording:
        if _ours(event).get("said_as_question") is True:
            return None  # its question said it; the user has just answered it
        spoken = self.summary(event)
        risk = None
        if event.irreversible:
            risk = self._own_phrase("This cannot be undone.")
        elif event.risk_level == "high":
            risk = self._own_phrase("High risk.")
        if spoken is None:
            parts: list[Spoken | None] = [
                self._own_phrase("Calling {tool}.", tool=_tool_name(event.tool))
            ]
            if self.level_for(event) == "detailed" and event.args_summary:
                parts.append(self._producer_text(event, "args_summary"))
            return [p for p in (*parts, risk) if p]
        args = None
        if self.level_for(event) == "detailed" and event.args_summary:
            args = self._producer_text(event, "args_summary")
            if args is not None and args.text in spoken.text:
                args = None
        return [p for p in (spoken, args, risk) if p]

    def _tool_completed(self, event: ToolCompleted) -> Wording:
        spoken = self.summary(event)
        tool = _tool_name(event.tool)
        if event.status == "success":
            if spoken is not None:
                return spoken
            return self._own(_capitalised(self._phrase("{tool} finished.", tool=tool)))
        lead = (
            _capitalised(self._phrase("{tool} failed.", tool=tool))
            if event.status == "error"
            else _capitalised(self._phrase("{tool} timed out.", tool=tool))
        )
        if spoken is not None and (
            self._names_outcome(spoken, tool, lead) or _says_its_outcome(event)
        ):
            # "Bash was denied by ..." or "Bash failed.": our lead would say it twice,
            # or call a denial a failure
            return spoken
        if self.level_for(event) == "terse" and not self._producer_text(event, "summary_terse"):
            return self._own(lead)
        detail = spoken or self._producer_text(event, "error_message")
        return [self._own(lead), detail] if detail else self._own(lead)

    def _handoff(self, event: HandoffRequested) -> Wording:
        spoken = self.summary(event)
        if spoken is not None:
            return spoken
        targets = {
            "human": N_("Handing off to a person."),
            "specialist_agent": N_("Handing off to a specialist agent."),
            "escalation_queue": N_("Handing off to an escalation queue."),
        }
        reason = self._producer_text(event, "reason")
        target = self._own_phrase(targets[event.target_kind])
        return [target, reason] if reason else target

    def _keys(self, msgid: str) -> Spoken | None:
        """The answering UI's key help, unless that UI speaks its own."""
        return self._own_phrase(msgid) if msgid else None

    def _literal_text(self, event: AaepEvent, field_name: str) -> Spoken | None:
        """A field holding a command, read as written (issue 21): never markdown-cleaned,
        the symbols a voice drops named (``dist/*``, ``__pycache__``, ``~``)."""
        text = event.text(field_name)
        if not text:
            return None
        language = self._text_language(event)
        return Spoken(literal_for_speech(text, language), language)

    def _names_outcome(self, spoken: Spoken, tool: str, lead: str) -> bool:
        """Whether a failed tool's summary names the tool and says how it ended."""
        named = words_of(tool)
        tokens = words_of(spoken.text)
        if not named or not any(tokens[i : i + len(named)] == named for i in range(len(tokens))):
            return False
        return self._already_says(spoken, _FAILURE_WORDS, lead)

    def _already_says(self, spoken: Spoken, words_msgid: str, lead: str) -> bool:
        """Whether the producer's text already conveys the outcome our ``lead`` names.

        The outcome words and the negations come from the catalog of the text's own
        language (a Yoruba summary is read with Yoruba words); our translated lead
        phrase itself counts too.
        """
        return already_says(
            spoken.text,
            outcome_words(words_msgid, spoken.language) | {words_of(lead)},
            negation_words(spoken.language),
        )


def _ours(event: ToolInvoked | ToolCompleted) -> dict[str, object]:
    """announcer's own marks on an event (``x-announcer``, trusted only from sources it
    maps itself: the engine removes them from any other producer's events)."""
    ours = (event.extensions or {}).get(ANNOUNCER_EXTENSION)
    return ours if isinstance(ours, dict) else {}


def _says_its_outcome(event: ToolCompleted) -> bool:
    """announcer's own mapping wrote a summary that names the call and how it ended."""
    return _ours(event).get("outcome_said") is True
