"""The plain UI's questions: the prompt line, what a typed answer means, two-step accepts.

A line answers only the question printed and spoken before it, after the arming
interval (announcer.engine.answer_guard); accepting a risky confirmation takes ``c``.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from announcer.command_analysis import (
    analyse,
    for_display,
    scan_text,
    whole_for_speech,
    why_sentences,
)
from announcer.engine.answer_guard import (
    KeyVerdict,
    accept_needs_two_keys,
    command_analysis_of,
    command_of,
    plan_for_display,
    plan_for_speech,
    plan_of,
    withdrawn_text,
)
from announcer.engine.answer_keys import TYPED_LINE_ANSWER_KEYS_LONG
from announcer.engine.phrases import N_
from announcer.engine.policy_questions import options_of
from announcer.engine.prompts import SET_ASIDE_WORDS, PendingPrompt, UserAnswer, always_decisions
from announcer.i18n.format import format_number
from announcer.i18n.numbers import read_number
from announcer.i18n.translate import catalog_language
from announcer.ui.plain_state import (
    PlainState,
    _action,
    _action_as_written,
    _also_numeric,
    _clarification_kind,
    _numbered,
    _question,
    _set_aside,
    _takes_text,
    clean,
    event_field,
)

#: said after a question's keys by ``?`` and ``:help`` (the plain UI's help over a question)
REPEAT_HELP = N_(":repeat says the question again.")

# a sentence's end inside a text: a stop, then a space and more words
_SENTENCE_INSIDE = re.compile(r"[.!?。؟]\s+\S")

# Typed answers that the agent remembers (ACP "allow always" / "reject always").
_ALWAYS_WORDS = {"always": "accept", "never": "reject"}


class PlainQuestions(PlainState):
    """Asking the waiting question and turning typed lines into answers."""

    def _no_such_always(self, word: str, offered: Collection[str]) -> str:
        """Why "always" or "never" was refused, true to what the agent offers (issue 31,
        item 6: codex-acp offers "always" and no "never")."""
        if word == "never" and "accept" in offered:
            return self._tr(
                "The agent offers no never answer for this question; always is offered."
            )
        if word == "always" and "reject" in offered:
            return self._tr(
                "The agent offers no always answer for this question; never is offered."
            )
        return self._tr("The agent offers no always answer for this question.")

    # ---- prompts -----------------------------------------------------------------------

    def _next_prompt(self, *, fresh: bool = False) -> None:
        """Show the next waiting question; its answer keys arm from now (answer_guard).

        ``fresh``: it arrived this moment, so the engine is reading it out now; a
        question shown later (after another closed) is read out again here, unless the
        engine presents one question at a time (``session.presented_prompt``) and reads
        it itself when its turn comes.
        """
        self._current = self._queue.popleft() if self._queue else None
        prompt = self._current
        if prompt is None:
            return
        # With no voice the printed line is what the user was told: keys arm at once
        # (after the arming interval); with one, once the question's speech has started.
        self.guard.voice_working = self._voice_works()
        self.guard.present(prompt.reply_token, self._now())
        started = self._speech_starts.get(prompt.event_id)
        engine_reads_it = self.session is not None and self.session.presents_prompts
        if started is not None and (fresh or (engine_reads_it and started >= self._closed_at)):
            # read out this turn; its words say when it will have been said through
            words = self._question_words.get(prompt.event_id, "")
            self.guard.speech_started(prompt.reply_token, started, words)
        line = self._ask(prompt)
        if not fresh and not engine_reads_it:
            words = self._question_words.get(prompt.event_id) or line
            now_answering = self._tr("Now answering: {question}").format(question=words)
            self._speak(now_answering, prompt, at_once=False)

    def _print_command(self, prompt: PendingPrompt) -> None:
        """What will run, whole, line by line (issue 22: never cut, never only a title)."""
        command = command_of(prompt.event)
        plan = plan_of(prompt.event)
        if command is None and plan is not None:
            # a plan approval: the whole plan, line by line (said by steps; W reads it whole)
            self._print(self._tr("Plan:"))
            for line in plan_for_display(plan):
                self._print(f"  | {line}")
            return
        if command is None:
            # a producer's own words naming a dangerous command: shown, so the two keys
            # it takes are explained (risk follows the command, never the label alone)
            found = scan_text(str(event_field(prompt.event, "action") or ""))
            if found is not None:
                self._print(self._tr("Dangerous: {parts}").format(parts="; ".join(found.dangerous)))
            return
        analysis = command_analysis_of(prompt.event) or analyse(command)
        lines = for_display(analysis).split("\n")
        self._print(self._tr("Command:") + (" " + lines[0] if len(lines) == 1 else ""))
        if len(lines) > 1:
            for line in lines:
                self._print(f"  | {line}")
        why = why_sentences(analysis, catalog_language(self._languages()))
        if why:  # cut, hidden, decoded...: why it cannot be read in full
            self._print(" ".join(why))

    def _read_whole(self, prompt: PendingPrompt) -> None:
        """``w``: what will run (or a plan approval's plan), whole and literally, printed
        and said at once."""
        languages = self.session.settings.languages if self.session is not None else ["en"]
        command = command_of(prompt.event)
        plan = plan_of(prompt.event)
        if command is not None:
            analysis = command_analysis_of(prompt.event) or analyse(command)
            text = whole_for_speech(analysis, catalog_language(languages))
        elif plan is not None:
            text = plan_for_speech(plan, catalog_language(languages))
        else:
            text = _action(prompt.event)
        options = options_of(prompt.event)
        if options:  # the agent's own label of each answer (issue 31, item 10)
            text = f"{text} {clean(options)}"
        self._print_command(prompt)
        if options:
            self._print(clean(options))
        # About the question: it cuts the question off at once, and once said through the
        # question counts as heard (docs/speech.md).
        self._speak(text, prompt)

    def _ask(self, prompt: PendingPrompt, *, command: bool = True) -> str:
        """Print the prompt line, which always names what it asks about (and, the first
        time, the whole command it would run)."""
        event = prompt.event
        who = f" ({clean(prompt.producer_name)})" if prompt.producer_name else ""
        if prompt.kind == "confirmation" and getattr(prompt, "malformed", False):
            # §10.1.3: shown so it can be rejected; accept is never offered.
            line = self._with_action(
                self._tr("Reject only, this request was malformed: {action}? [r]"), event
            )
            self._print(line + who)
            return line + who
        if prompt.kind == "confirmation" and not self._accept_open(prompt):
            # §6.4: accept's time is over; reject stays possible until the deadline.
            line = self._with_action(
                self._tr("Reject only, the time to accept is over: {action}? [r]"), event
            )
            self._print(line + who)
            return line + who
        if prompt.kind == "confirmation":
            if command:
                self._print_command(prompt)
            always = always_decisions(event)
            if "accept" in always and "reject" in always:
                line = self._with_action(
                    self._tr("Accept or reject: {action}? [a/r; always or never: from now on]"),
                    event,
                )
            elif "accept" in always:  # only what the agent offers (issue 31, item 6)
                line = self._with_action(
                    self._tr("Accept or reject: {action}? [a/r; always: from now on]"), event
                )
            elif always:
                line = self._with_action(
                    self._tr("Accept or reject: {action}? [a/r; never: from now on]"), event
                )
            else:
                line = self._with_action(self._tr("Accept or reject: {action}? [a/r]"), event)
            self._print(line + who)
            return line + who
        kind = _clarification_kind(event)
        question = _question(event)
        if kind == "yes_no":
            line = self._tr("Yes or no: {question} [y/n]").format(question=question)
        elif kind == "multiple_choice":
            numbered = _numbered(event)
            for number, choice in enumerate(numbered, start=1):
                self._print(f"  {number}. {clean(choice[1])}")
            for value, label in _set_aside(event):  # typed as a word, not a number
                self._print(f"  {SET_ASIDE_WORDS[value]}: {clean(label)}")
            if _takes_text(event):
                line = self._tr(
                    "Choose a number from 1 to {count}, or type your own answer: {question}"
                ).format(count=len(numbered), question=question)
            elif _also_numeric(event):
                line = self._tr(
                    "Choose a number from 1 to {count}, or type any other number: {question}"
                ).format(count=len(numbered), question=question)
            else:
                line = self._tr("Choose a number from 1 to {count}: {question}").format(
                    count=len(numbered), question=question
                )
        elif kind == "numeric":
            line = self._tr("Type a number: {question}").format(question=question)
        else:
            line = self._tr("Type your answer and press Enter: {question}").format(
                question=question
            )
        self._print(line + who)
        return line + who

    def _keys_help(self, prompt: PendingPrompt) -> str:
        """Every key of the question in view, in full: the long forms the question itself
        says only at detailed verbosity (issue 30 item 2); ``?`` or ``:help`` over it."""
        keys = TYPED_LINE_ANSWER_KEYS_LONG
        event = prompt.event
        parts: list[str] = []
        if prompt.kind == "confirmation":
            if getattr(prompt, "malformed", False):
                return self._tr("This request was malformed, so only reject is offered.")
            if not self._accept_open(prompt):
                return self._tr("The time to accept is over, so only reject is offered.")
            two = accept_needs_two_keys(event, self.guard.two_key_rule)
            parts.append(keys.confirmation_two_keys if two else keys.confirmation)
            analysis = command_analysis_of(event)
            if analysis is not None and analysis.is_long:
                parts.append(keys.whole_command)
            elif command_of(event) is None and plan_of(event) is not None:
                parts.append(keys.whole_plan)
        else:
            kind = _clarification_kind(event)
            parts.append(
                {
                    "multiple_choice": keys.multiple_choice,
                    "yes_no": keys.yes_no,
                    "numeric": keys.numeric,
                }.get(kind, keys.freetext)
            )
            if kind == "multiple_choice" and _takes_text(event):
                parts.append(keys.freetext)
            if kind == "multiple_choice" and _set_aside(event):
                parts.append(keys.set_aside)  # decline, cancel (issue 30 item 3)
        parts.append(REPEAT_HELP)
        return " ".join(self._tr(part) for part in parts)

    @staticmethod
    def _with_action(template: str, event: object) -> str:
        """The prompt line naming the action. An action of several sentences ("python3 -c
        …. It runs code announcer cannot check.") keeps its own last stop: the line's
        question mark after it would turn that sentence into a question (issue 30 item 1)."""
        whole = _action_as_written(event)
        if not whole.endswith((".", "!", "。")) or not _SENTENCE_INSIDE.search(whole[:-1]):
            return template.format(action=_action(event))
        before, _, after = template.partition("{action}")
        mark = re.match(r"\s*[?？؟]", after)
        if mark is None:
            return template.format(action=whole)
        before = before.replace("¿", "", 1)  # its Spanish opening mark goes with it
        return f"{before}{whole} {after[mark.end() :].lstrip()}"

    def _refused(self, prompt: PendingPrompt, verdict: KeyVerdict) -> None:
        """Say why a line did nothing. A line before the question was heard gets a
        two-word cue (at most once in a moment) and nothing more: the question goes on,
        and is never read again for it (issue 20)."""
        if not verdict.message:
            self._print(self._tr("Not yet."))
            return
        reason = self._tr(verdict.message)
        self._print(reason)
        if verdict.code in ("arming", "not_heard"):
            # An early key's cue follows the words being said and cuts nothing off: what it
            # cut would be said again first, and a user pressing on would keep the
            # question waiting behind it for ever.
            self._own_words.append(reason)
            if self.session is not None:
                self.session.say_cue(reason)
            return
        self._speak(reason)

    def _confirm_step(self, prompt: PendingPrompt, typed: str) -> UserAnswer | None:
        """The second line of a risky accept: ``c`` confirms, r rejects, anything else goes back."""
        token = prompt.reply_token
        if typed in ("c", "confirm"):
            verdict = self.guard.press(token, "confirm", self._now(), key=typed)
            if verdict.sends:
                decision, _, always = verdict.intent.partition("_")
                return UserAnswer(
                    token,
                    event_id=prompt.event_id,
                    decision=decision,
                    scope="always" if always else "once",
                )
            self._refused(prompt, verdict)
            return None
        if typed in ("r", "reject", "n"):
            self.guard.press(token, "back", self._now(), key=typed)
            verdict = self.guard.press(token, "reject", self._now(), key=typed)
            if verdict.sends:
                return UserAnswer(token, event_id=prompt.event_id, decision="reject")
            self._refused(prompt, verdict)
            return None
        back = self.guard.press(token, "back", self._now(), key=typed)
        withdrawn = self._tr(back.message or withdrawn_text("accept"))
        self._print(withdrawn)
        self._speak(withdrawn)
        self._ask(prompt, command=False)
        return None

    def _parse(self, prompt: PendingPrompt, text: str) -> UserAnswer | None:
        lowered = text.lower()
        if prompt.kind == "confirmation":
            # a/r as printed and spoken; y/n too, as the Textual dialog also takes them.
            if lowered in ("a", "accept", "y") and getattr(prompt, "malformed", False):
                refusal = self._tr("This request was malformed, so only reject is offered.")
                self._print(refusal)
                self._speak(refusal)
                return None
            if lowered in ("a", "accept", "y", "always") and not self._accept_open(prompt):
                refusal = self._tr(
                    "Too late to accept: the agent's time for this ran out. You can still reject."
                )
                self._print(refusal)
                self._speak(refusal)
                return None
            if lowered in ("a", "accept", "y"):
                return UserAnswer(prompt.reply_token, event_id=prompt.event_id, decision="accept")
            if lowered in ("r", "reject", "n"):
                return UserAnswer(prompt.reply_token, event_id=prompt.event_id, decision="reject")
            always = always_decisions(prompt.event)
            if lowered in _ALWAYS_WORDS and _ALWAYS_WORDS[lowered] in always:
                return UserAnswer(
                    prompt.reply_token,
                    event_id=prompt.event_id,
                    decision=_ALWAYS_WORDS[lowered],
                    scope="always",
                )
            if lowered in _ALWAYS_WORDS:
                self._say_line(self._no_such_always(lowered, always))
            self._print(
                self._tr("Please type a to accept or r to reject: {action}").format(
                    action=_action(prompt.event)
                )
            )
            # every refusal is heard, not only printed (issue 20); briefly
            self._speak(self._tr("Type A to accept or R to reject, then press Enter."))
            return None
        event = prompt.event
        kind = _clarification_kind(event)
        if kind == "yes_no":
            if lowered in ("y", "yes"):
                return UserAnswer(prompt.reply_token, event_id=prompt.event_id, response=True)
            if lowered in ("n", "no"):
                return UserAnswer(prompt.reply_token, event_id=prompt.event_id, response=False)
            self._say_line(self._tr("Please type y for yes or n for no."))
            return None
        if kind == "multiple_choice":
            choices = _numbered(event)
            if text.isdigit() and 1 <= int(text) <= len(choices):
                return UserAnswer(
                    prompt.reply_token, event_id=prompt.event_id, response=choices[int(text) - 1][0]
                )
            for value, _label in _set_aside(event):
                if lowered == SET_ASIDE_WORDS[value]:  # "decline", "cancel": a form's way out
                    return UserAnswer(prompt.reply_token, event_id=prompt.event_id, response=value)
            for value, _label in choices:
                if text.strip() == value:  # the choice's own value, as typed
                    return UserAnswer(prompt.reply_token, event_id=prompt.event_id, response=value)
            if text.strip() and not text.isdigit() and _takes_text(event):
                # choices or your own words, as the question says (§4.4.2 several kinds)
                return UserAnswer(prompt.reply_token, event_id=prompt.event_id, response=text)
            if not _also_numeric(event):
                self._say_line(
                    self._tr("Please type a number from 1 to {count}.").format(count=len(choices))
                )
                return None
            # §6.5.2: "the producer accepts any of the listed kinds": any other number
        if kind in ("numeric", "multiple_choice"):
            # §6.5.2: a plain number as the user's language writes it; never 2.5e3.
            languages = self.session.settings.languages if self.session is not None else ["en"]
            language = catalog_language(languages)
            reading = read_number(text, language)
            if reading.value is None:
                if reading.problem == "too_large":
                    self._say_line(self._tr("That number is too large to send exactly."))
                else:
                    self._say_line(
                        self._tr(
                            "That is not a number. Please type a number, like 3 or {example}."
                        ).format(example=format_number(2.5, language))
                    )
                return None
            return UserAnswer(prompt.reply_token, event_id=prompt.event_id, response=reading.value)
        if not text:
            self._say_line(self._tr("The answer is empty."))
            return None
        return UserAnswer(prompt.reply_token, event_id=prompt.event_id, response=text)
