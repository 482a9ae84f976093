"""Read what the UI shows and says out of a pending prompt's AAEP event.

``PendingPrompt.event`` is the validated model from ``announcer.protocol``;
this module reads it by field name (the chapter 4 names, §4.4.1 and §4.4.2)
so the screens do not depend on the model classes, and a plain mapping works
too. Every string taken from the event is made printable here, once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum

from announcer.command_analysis import (
    CommandAnalysis,
    analyse,
    for_display,
    literal_for_speech,
    scan_text,
    why_sentences,
)
from announcer.command_analysis import whole_for_speech as whole_command_for_speech
from announcer.engine.answer_guard import (
    command_analysis_of,
    command_of,
    confirm_step_action,
    is_high_risk,
    plan_for_display,
    plan_for_speech,
    plan_of,
    reads_literally,
)
from announcer.engine.prompts import (
    PendingPrompt,
    always_decisions,
    set_aside_choice,
    waits_without_deadline,
)
from announcer.i18n.format import format_duration
from announcer.ui.tui.text import N_, _, current_language, one_line, printable

# §4.4.1 risk_level values, translated where they are shown.
# Each risk phrase whole, so its adjective agrees in every language ("Riesgo alto", not
# "Riesgo alta" from the word "high" shared with the feminine "carga"; issue 30 item 8).
RISK_PHRASES = {"low": N_("Risk low"), "medium": N_("Risk medium"), "high": N_("Risk high")}

RESPONSE_KINDS = ("multiple_choice", "yes_no", "numeric", "freetext")


def _field(event: object, name: str) -> object:
    if isinstance(event, Mapping):
        value = event.get(name)
    else:
        # The protocol model keeps JSON-LD ``@context`` as ``context`` and the
        # clarification's free-text ``context`` (§4.4.2) as ``context_``.
        fields = getattr(type(event), "model_fields", {})
        attribute = f"{name}_" if f"{name}_" in fields else name
        value = getattr(event, attribute, None)
    if isinstance(value, Enum):
        return value.value
    return value


def _text(event: object, name: str) -> str | None:
    value = _field(event, name)
    return printable(str(value)) if value is not None else None


def producer_identity(prompt: PendingPrompt) -> str:
    """Agent name and id, so a user notices a producer asking out of turn."""
    agent_id = one_line(prompt.producer_id)
    name = one_line(prompt.producer_name) if prompt.producer_name else ""
    if name and name != agent_id:
        return f"{name} ({agent_id})"
    return agent_id


def speakable_duration(seconds: float, language: str | None = None) -> str:
    """'2 minutes and 30 seconds', '10 seconds' in the user's language.

    Rounded to 5 seconds from a minute and a half on, and to the minute from an hour:
    precise enough to act on, short enough to hear. Words and plurals come from CLDR
    or our catalogs (announcer.i18n.format), never from English.
    """
    total = max(1, round(seconds))
    if total >= 90:
        total = round(total / 5) * 5 if total < 3600 else round(total / 60) * 60
    return format_duration(
        total, language or current_language(), approximate=False, list_style="standard"
    )


def reminder_marks(timeout_seconds: float) -> list[float]:
    """Seconds remaining at which the time left is spoken: at half and at ten (§6.4.3).

    Marks closer than two seconds to each other are said once.
    """
    marks: list[float] = []
    for remaining in sorted({timeout_seconds / 2, 10.0}, reverse=True):
        if 0 < remaining < timeout_seconds and all(abs(remaining - m) >= 2 for m in marks):
            marks.append(remaining)
    return marks


@dataclass(frozen=True, slots=True)
class ConfirmationView:
    prompt: PendingPrompt
    action: str
    consequence: str
    risk_level: str | None
    irreversible: bool
    reversibility: str | None
    default_decision: str | None
    # decisions the agent also offers "always" for (ACP allow/reject always)
    always: frozenset[str] = frozenset()
    # the command the agent will run, as it sent it (hooks, ACP permissions), if any
    command: str | None = None
    #: the command's true length when only its start was kept (never read in full)
    command_length: int | None = None
    # a plan approval's whole plan (ACP ExitPlanMode), if any
    plan: str | None = None

    @classmethod
    def of(cls, prompt: PendingPrompt) -> ConfirmationView:
        event = prompt.event
        action = _text(event, "action") or _text(event, "summary_normal") or _("(no action given)")
        return cls(
            prompt=prompt,
            action=action,
            consequence=_text(event, "consequence") or _("(no consequence given)"),
            risk_level=_text(event, "risk_level"),
            irreversible=bool(_field(event, "irreversible")),
            reversibility=_text(event, "reversibility"),
            default_decision=_text(event, "default_decision"),
            always=always_decisions(event),
            command=command_of(event),
            command_length=_true_length(command_analysis_of(event)),
            plan=plan_of(event),
        )

    @property
    def analysis(self) -> CommandAnalysis | None:
        if self.command is None:
            return None
        return analyse(self.command, self.command_length)

    def command_display(self) -> str:
        """The whole command, line by line, as the dialog shows it (issue 22: what runs)."""
        analysis = self.analysis
        return for_display(analysis) if analysis is not None else ""

    def plan_display(self) -> str:
        """The whole plan, line by line, as the dialog shows it (said by steps)."""
        return "\n".join(plan_for_display(self.plan)) if self.plan is not None else ""

    def hidden_note(self) -> str:
        """Why the command cannot be read in full (cut, hidden, decoded...), or ''."""
        analysis = self.analysis
        if analysis is None:
            return ""
        return " ".join(why_sentences(analysis, current_language()))

    @property
    def long_command(self) -> bool:
        analysis = self.analysis
        return analysis is not None and analysis.is_long

    def whole_for_speech(self, language: str = "en") -> str:
        """What W says: the command whole, literally; a plan approval's whole plan; else
        the action."""
        analysis = self.analysis
        if analysis is not None:
            return whole_command_for_speech(analysis, language)
        if self.plan is not None:
            return plan_for_speech(self.plan, language)
        return literal_for_speech(self.action, language)

    def short_action(self) -> str:
        """The action named briefly, for the confirm step (it is not read again whole)."""
        return confirm_step_action(one_line(self.action), self.command)

    @property
    def is_risky(self) -> bool:
        """Anything but a known low-risk, reversible action keeps focus on Reject."""
        return (
            self.risk_level != "low"
            or self.irreversible
            or self.reversibility not in (None, "reversible")
        )

    def dangerous_note(self) -> str:
        """A dangerous command named in an action that carries no command field (an AAEP
        producer's own words): shown, so the two keys it takes are explained."""
        if self.command is not None:
            return ""
        found = scan_text(self.action)
        if found is None:
            return ""
        return _("Dangerous: {parts}").format(parts="; ".join(found.dangerous)) + "."

    def risk_phrase(self) -> str:
        # the risk follows what will run, never the producer's declaration alone
        level = "high" if is_high_risk(self.prompt.event) else self.risk_level
        if level in RISK_PHRASES:
            return _(RISK_PHRASES[level])
        return _("Risk {level}").format(level=level or _("not stated"))

    def reversibility_phrase(self) -> str:
        if self.irreversible or self.reversibility == "irreversible":
            return _("Cannot be undone")
        if self.reversibility == "reversible_with_effort":
            return _("Can be undone only with effort")
        if self.reversibility == "reversible":
            return _("Can be undone")
        return _("Reversibility not stated")

    @property
    def waits(self) -> bool:
        """The agent waits without a deadline (ACP): no time limit is said or counted."""
        return waits_without_deadline(self.prompt.event)

    def default_phrase(self, language: str | None = None) -> str:
        if self.waits:
            return _("The agent waits for your answer; there is no time limit.")
        within = speakable_duration(self.prompt.timeout_seconds, language)
        context = _field(self.prompt.event, "extra_context")
        if isinstance(context, dict) and context.get("on_no_answer") == "agent_asks":
            # a coding-agent hook (docs/hooks.md): no answer and the agent asks itself
            agent = one_line(self.prompt.producer_name or self.prompt.producer_id)
            return _("If you do not answer within {time}, {agent} will ask you itself.").format(
                time=within, agent=agent
            )
        if self.default_decision == "accept":
            return _("If you do not answer within {time}, the agent will go ahead.").format(
                time=within
            )
        return _("If you do not answer within {time}, it will be rejected.").format(time=within)

    @property
    def malformed(self) -> bool:
        """§10.1.3: a question that broke a rule is shown so it can be rejected, never accepted."""
        return bool(getattr(self.prompt, "malformed", False))

    def keys_phrase(
        self, two_keys: bool, accept_open: bool = True, *, repeat: bool = False, brief: bool = False
    ) -> str:
        """The keys, as the dialog takes them, in one short line (issue 20): two for a
        high-risk accept, W for a long command, F2 to hear the question again.

        ``accept_open`` is False once accept's time is over (§6.4): only reject is said.
        ``repeat``: the long form, F2 named (after a key that answers nothing, on F2 and at
        detailed verbosity); spoken after every question it is words the user already
        knows (issue 30 item 2). ``brief``: terse verbosity or low cognitive load, the
        keys alone ("A then Enter, or R.")."""
        if self.malformed:
            return " ".join(
                [
                    _("This request was malformed, so only reject is offered."),
                    _("Press R to reject."),
                ]
            )
        if not accept_open:
            parts = [
                _("The time to accept is over, so only reject is offered."),
                _("Press R to reject."),
            ]
            if "reject" in self.always:
                parts.append(_("Shift+R then Enter rejects it from now on."))
            return " ".join(parts)
        if repeat:
            keys = (
                _("A then Enter accepts, R rejects; F2 repeats.")
                if two_keys
                else _("A accepts, R rejects; F2 repeats.")
            )
        elif brief:
            keys = _("A then Enter, or R.") if two_keys else _("A or R.")
        else:
            keys = _("Accept A Enter, reject R.") if two_keys else _("A accepts, R rejects.")
        if self.long_command:
            keys += " " + _("W reads the whole command.")
        elif self.command is None and self.plan is not None:
            keys += " " + _("W reads the whole plan.")
        return f"{keys} {self.always_phrase()}".strip()

    def always_phrase(self) -> str:
        """The keys of the agent's "always" options, which always take Enter as well."""
        if self.malformed or not self.always:
            return ""
        if self.always == {"accept", "reject"}:
            return _(
                "Shift+A allows it from now on, Shift+R rejects it from now on; "
                "either then takes Enter."
            )
        if "accept" in self.always:
            return _("Shift+A then Enter allows it from now on.")
        return _("Shift+R then Enter rejects it from now on.")

    def spoken_words(self, text: str, language: str = "en") -> str:
        """Text about this question as said: literally, symbols named, when it names a
        command or paths (announcer's own mappings); otherwise as it is."""
        literal = self.command is not None or reads_literally(self.prompt.event)
        return literal_for_speech(text, language) if literal else text

    def spoken_action(self, language: str = "en") -> str:
        """The action as said: a command in it literally, its symbols named (issue 21)."""
        return self.spoken_words(self.action.rstrip("."), language)

    def spoken_question(
        self,
        language: str = "en",
        two_keys: bool = False,
        accept_open: bool = True,
        *,
        detailed: bool = True,
    ) -> str:
        """F2: the question again. ``detailed`` False (normal and terse verbosity): no
        longer than its first reading, without who asks, the field names and "F2
        repeats" (issue 30 item 8: it took 22 s where the question took 15)."""
        if not detailed:
            consequence = self.consequence.rstrip(".")
            return " ".join(
                part
                for part in [
                    self.spoken_action(language) + ".",
                    consequence + "." if consequence else "",
                    self.risk_phrase() + ".",
                    self.reversibility_phrase() + ".",
                    self.default_phrase(language),
                    self.keys_phrase(two_keys, accept_open, repeat=False),
                ]
                if part
            )
        return " ".join(
            [
                _("Confirmation requested by {producer}").format(
                    producer=producer_identity(self.prompt)
                )
                + ".",
                _("Action: {action}").format(action=self.spoken_action(language)) + ".",
                _("Consequence: {consequence}").format(consequence=self.consequence.rstrip("."))
                + ".",
                self.risk_phrase() + ".",
                self.reversibility_phrase() + ".",
                self.default_phrase(language),
                self.keys_phrase(two_keys, accept_open, repeat=True),
            ]
        )


@dataclass(frozen=True, slots=True)
class Choice:
    value: str
    label: str
    #: announcer's own way out of a form (decline, cancel): after the numbered choices,
    #: reached with the arrows, never read as a numbered choice (issue 30 item 3)
    set_aside: bool = False


@dataclass(frozen=True, slots=True)
class ClarificationView:
    prompt: PendingPrompt
    question: str
    context: str | None
    kinds: tuple[str, ...]
    choices: tuple[Choice, ...]

    @classmethod
    def of(cls, prompt: PendingPrompt) -> ClarificationView:
        event = prompt.event
        raw_kinds = _field(event, "accepted_response_kinds") or ["freetext"]
        kinds = [
            str(k.value if isinstance(k, Enum) else k)
            for k in raw_kinds  # type: ignore[attr-defined]
        ]
        choices: list[Choice] = []
        for raw in _field(event, "choices") or []:  # type: ignore[attr-defined]
            value, label = _field(raw, "value"), _field(raw, "label")
            if value is not None:
                aside = set_aside_choice(event, value)
                choices.append(Choice(str(value), one_line(str(label or value)), aside))
        choices.sort(key=lambda choice: choice.set_aside)  # the numbered ones first, in order
        if "multiple_choice" in kinds and not choices:
            kinds.remove("multiple_choice")  # §4.4.2: choices are required for it
        ordered = tuple(k for k in RESPONSE_KINDS if k in kinds) or ("freetext",)
        question = _text(event, "question") or _text(event, "summary_normal") or _("(no question)")
        return cls(prompt, question, _text(event, "context"), ordered, tuple(choices))

    def keys_phrase(self, *, detailed: bool = False) -> str:
        """The keys that answer, in a few words ("Y or N."), said after each question at
        normal and terse verbosity (issue 30 item 2). ``detailed``: every key in full,
        with Escape's "later" (at detailed verbosity, on F2, ``?`` and after a key that
        answers nothing)."""
        if not detailed:
            return " ".join(self._short_keys())
        parts: list[str] = []
        if "multiple_choice" in self.kinds:
            parts.append(_("Choose with the arrows or digits 1 to 9, then press Enter."))
        if "yes_no" in self.kinds:
            parts.append(_("Press Y for yes or N for no."))
        if "numeric" in self.kinds and "freetext" not in self.kinds:
            parts.append(_("Type a number and press Enter."))
        if "freetext" in self.kinds:
            parts.append(_("Type your answer and press Enter."))
        if self.set_aside:
            parts.append(
                _("The arrows also reach: {choices}.").format(
                    choices="; ".join(choice.label for choice in self.set_aside)
                )
            )
        parts.append(_("Escape leaves the question for later."))
        return " ".join(parts)

    @property
    def numbered(self) -> tuple[Choice, ...]:
        """The choices read and picked by number (digits 1 to 9)."""
        return tuple(choice for choice in self.choices if not choice.set_aside)

    @property
    def set_aside(self) -> tuple[Choice, ...]:
        """announcer's own ways out of a form, after the numbered choices (arrows only)."""
        return tuple(choice for choice in self.choices if choice.set_aside)

    def _short_keys(self) -> list[str]:
        parts: list[str] = []
        if "multiple_choice" in self.kinds:
            count = len(self.numbered)
            if count > 9:  # digits reach the first nine; the arrows every choice
                parts.append(_("Arrows, then Enter."))
            else:
                parts.append(
                    _("Digits 1 to {count}, then Enter.").format(count=count)
                    if count > 1
                    else _("1, then Enter.")
                )
        if "yes_no" in self.kinds:
            parts.append(_("Y or N."))
        if "numeric" in self.kinds and "freetext" not in self.kinds:
            parts.append(_("A number, then Enter."))
        if "freetext" in self.kinds:
            parts.append(_("Type, then Enter."))
        return parts

    def spoken_question(self, language: str = "en", *, detailed_keys: bool = False) -> str:
        parts = [
            _("Question from {producer}").format(producer=producer_identity(self.prompt)) + ":",
            self.question,
        ]
        if self.context:
            parts.append(self.context)
        if "multiple_choice" in self.kinds:
            parts.append(
                _("Choices: {choices}.").format(
                    choices="; ".join(f"{i}, {c.label}" for i, c in enumerate(self.numbered, 1))
                )
            )
        parts.append(
            _("Answer within {time}.").format(
                time=speakable_duration(self.prompt.timeout_seconds, language)
            )
        )
        parts.append(self.keys_phrase(detailed=detailed_keys))
        return " ".join(parts)


def prompt_title(prompt: PendingPrompt) -> str:
    """One line naming a prompt, for the pending list and the transcript."""
    if prompt.kind == "confirmation":
        view = ConfirmationView.of(prompt)
        return _("Confirm: {action} (from {producer})").format(
            action=one_line(view.action), producer=producer_identity(prompt)
        )
    clar = ClarificationView.of(prompt)
    return _("Question: {question} (from {producer})").format(
        question=one_line(clar.question), producer=producer_identity(prompt)
    )


def _true_length(analysis: CommandAnalysis | None) -> int | None:
    return analysis.length if analysis is not None and analysis.cut else None
