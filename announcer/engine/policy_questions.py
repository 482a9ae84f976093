"""What a question says (chapter 6): the action, its consequence, risk and
reversibility, the time left or that the agent waits, and the answering UI's keys.

What will run is said as written and decides the risk (issues 21, 22); a hook's agent
that asks itself when no answer comes is said so, never "it will be rejected".
"""

from __future__ import annotations

from announcer.engine.answer_guard import (
    accept_needs_two_keys,
    command_analysis_of,
    command_of,
    is_high_risk,
    plan_of,
    reads_literally,
)
from announcer.engine.phrases import N_, duration_phrase
from announcer.engine.policy_wording import PolicyWording
from announcer.engine.policy_words import Spoken, Wording, same_language
from announcer.engine.prompts import set_aside_choice
from announcer.engine.text_hygiene import clean_for_speech
from announcer.i18n.format import format_integer
from announcer.i18n.translate import translator
from announcer.protocol.events import (
    AaepEvent,
    AwaitingClarification,
    AwaitingConfirmation,
    Choice,
)
from announcer.protocol.extensions import ANNOUNCER_EXTENSION


def agent_asks_itself(event: AwaitingConfirmation) -> bool:
    """A hook confirmation (formats/hooks.py): no answer means the agent asks, not reject."""
    context = event.extra_context
    return isinstance(context, dict) and context.get("on_no_answer") == "agent_asks"


def waits_without_timeout(event: AaepEvent) -> bool:
    """announcer's own §7 extension marks a question whose agent has no deadline."""
    ours = (event.extensions or {}).get(ANNOUNCER_EXTENSION)
    return isinstance(ours, dict) and ours.get("no_timeout") is True


def options_of(event: object) -> str | None:
    """Every option of an agent's question by its own label (announcer's ACP mapping marks
    it), read at detailed verbosity and on the read-whole key; None when not marked."""
    extensions = getattr(event, "extensions", None)
    ours = extensions.get(ANNOUNCER_EXTENSION) if isinstance(extensions, dict) else None
    options = ours.get("options") if isinstance(ours, dict) else None
    return options if isinstance(options, str) and options.strip() else None


class PolicyQuestions(PolicyWording):
    """The wording of confirmations and clarifications."""

    def _confirmation(self, event: AwaitingConfirmation) -> Wording:
        """Action, consequence, risk, reversibility, timeout and keys (chapter 6)."""
        level = self.level_for(event)
        parts: list[Spoken | None] = [self._own_phrase("Confirmation needed.")]
        command = command_of(event)
        if command is not None:
            # What will run is said at every verbosity, as written (issue 22).
            parts += [
                self._literal_text(event, "action"),
                self._producer_text(event, "consequence") if level != "terse" else None,
            ]
        elif reads_literally(event) and level != "terse":
            # paths and code named as written (issue 21), never tidied as markdown
            parts += [
                self._literal_text(event, "action"),
                self._producer_text(event, "consequence"),
            ]
        elif level == "terse":
            parts.append(
                self._producer_text(event, "summary_terse") or self._producer_text(event, "action")
            )
        else:
            parts += [
                self._producer_text(event, "action"),
                self._producer_text(event, "consequence"),
            ]
        # risk follows what will run: a dangerous command named in the action is high
        # risk whatever the producer declared (issue 22)
        risk = "high" if is_high_risk(event) else event.risk_level
        if risk == "high":
            parts.append(self._own_phrase("High risk."))
        elif risk == "medium":
            parts.append(self._own_phrase("Medium risk."))
        reversibility = {
            "irreversible": N_("This cannot be undone."),
            "reversible_with_effort": N_("Undoing this takes effort."),
            "reversible": N_("This can be undone."),
        }
        if event.reversibility is not None:
            how_reversible = reversibility[event.reversibility]
            parts.append(self._own_phrase(how_reversible))
        elif event.irreversible:
            cannot_undo = reversibility["irreversible"]
            parts.append(self._own_phrase(cannot_undo))
        if level == "detailed" and not reads_literally(event):
            parts.append(self._producer_text(event, "summary_detailed"))
        options = options_of(event) if level == "detailed" else None
        if options:  # every option by the agent's own label (issue 31, item 10)
            language = self._text_language(event)
            parts.append(Spoken(clean_for_speech(options, language), language))
        if waits_without_timeout(event):
            # An ACP agent waits for the answer (formats/acp_questions.py): no deadline to
            # announce; said at detailed verbosity (issue 31, item 10: a short question).
            if level == "detailed":
                parts.append(self._own_phrase("The agent waits for your answer."))
        else:
            parts.append(
                self._own(
                    self._timeout_phrase(event.timeout_seconds, event.default_decision, event)
                )
            )
        keys = self.answer_keys.at(level)  # the long forms at detailed only (issue 30)
        two_keys = accept_needs_two_keys(event, self.settings.two_key_accept)
        parts.append(
            self._keys(
                keys.confirmation_two_keys
                if two_keys and keys.confirmation_two_keys
                else keys.confirmation
            )
        )
        analysis = command_analysis_of(event)
        if analysis is not None and analysis.is_long:
            parts.append(self._keys(keys.whole_command))
        elif command is None and plan_of(event) is not None:
            parts.append(self._keys(keys.whole_plan))  # the plan by steps; whole on a key
        return [part for part in parts if part]

    def _timeout_phrase(
        self, seconds: int, default: str, event: AwaitingConfirmation | None = None
    ) -> str:
        amount = duration_phrase(seconds, self.phrase_language)
        if event is not None and agent_asks_itself(event):
            # a coding-agent hook: with no answer the agent shows its own prompt
            agent = clean_for_speech(
                event.producer.agent_name or event.producer.agent_id, self.phrase_language
            )
            return self._phrase(
                "If you do not answer within {time}, {agent} will ask you itself.",
                time=amount,
                agent=agent,
            )
        if default == "accept":
            return self._phrase(
                "If you do not answer within {time}, the agent will go ahead.", time=amount
            )
        return self._phrase("If you do not answer within {time}, it will be rejected.", time=amount)

    def timeout_phrase(self, seconds: int, default: str) -> str:
        """ "If you do not answer within 1 minute, it will be rejected." (our language)."""
        return self._timeout_phrase(seconds, default)

    def _choices(self, event: AwaitingClarification, language: str) -> str:
        """Numbered labels ("1: Savings; 2: Checking") punctuated as ``language`` does;
        announcer's own ways out of a form (decline, cancel) are not read as numbered
        choices (issue 30 item 3: they came in every sentence), only in the long keys."""
        tr = translator(language)
        return "; ".join(
            tr.gettext("{number}: {label}").format(
                number=format_integer(index, language),
                label=clean_for_speech(choice.label, language),
            )
            for index, choice in enumerate(numbered_choices(event), start=1)
        )

    def _clarification(self, event: AwaitingClarification) -> Wording:
        level = self.level_for(event)
        parts: list[Spoken | None] = [
            self._own_phrase("Question."),
            self._producer_text(event, "question"),
        ]
        if level == "detailed" and event.context_:
            language = self._text_language(event)
            parts.append(Spoken(clean_for_speech(event.context_, language), language))
        if event.choices:
            labels = self._text_language(event)
            if same_language(labels, self.phrase_language):
                choices = self._choices(event, self.phrase_language)
                parts.append(self._own_phrase("Choices: {choices}.", choices=choices))
            else:
                # Our word in our voice, the producer's labels in theirs.
                parts.append(self._own_phrase("Choices."))
                parts.append(Spoken(self._choices(event, labels) + ".", labels))
        if waits_without_timeout(event):
            # An ACP agent's own question (formats/acp_questions.py): it waits, no deadline to say.
            parts.append(self._own_phrase("The agent waits for your answer."))
        else:
            parts.append(
                self._own_phrase(
                    "Answer within {time}.",
                    time=duration_phrase(event.timeout_seconds, self.phrase_language),
                )
            )
        # The key help of the UI the user answers in (announcer.engine.answer_keys).
        keys = self.answer_keys.at(level)  # the long forms at detailed only (issue 30)
        kinds = event.accepted_response_kinds or ["freetext"]
        if "multiple_choice" in kinds and event.choices:
            parts.append(self._keys(keys.multiple_choice))
        if "yes_no" in kinds:
            parts.append(self._keys(keys.yes_no))
        if "numeric" in kinds and "freetext" not in kinds:
            parts.append(self._keys(keys.numeric))
        if "freetext" in kinds:
            parts.append(self._keys(keys.freetext))
        if len(numbered_choices(event)) < len(event.choices or []):
            parts.append(self._keys(keys.set_aside))  # decline, cancel: the long form only
        return [part for part in parts if part]


def numbered_choices(event: AwaitingClarification) -> list[Choice]:
    """The choices read with their numbers: all but announcer's own ways out of a form."""
    return [c for c in event.choices or [] if not set_aside_choice(event, c.value)]
