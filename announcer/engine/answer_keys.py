"""What a spoken question says about the keys that answer it.

The keys belong to the interface the user answers in, not to the engine: the
Textual dialogs take single key presses, the plain line UI takes a typed line.
Each interface hands its :class:`AnswerKeys` to the engine
(``Engine.set_answer_keys``) so the question names keys that really work; an
interface that speaks its own key help (the Textual dialogs) hands
:data:`UI_SPEAKS_KEYS`, so the user hears one set of keys, once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from announcer.engine.phrases import N_


@dataclass(frozen=True, slots=True)
class AnswerKeys:
    """English msgids read after a question, one per answer kind; "" says nothing."""

    confirmation: str
    multiple_choice: str
    yes_no: str
    numeric: str
    freetext: str
    # a confirmation whose accept takes two keys (answer_guard.accept_needs_two_keys):
    # every key it needs is named, the second one too; "" uses ``confirmation``
    confirmation_two_keys: str = ""
    #: after a question naming a long command: the key that reads it whole
    whole_command: str = ""
    #: after a plan approval: the key that reads the whole plan
    whole_plan: str = ""
    #: after a form question with announcer's own ways out (decline, cancel): how to
    #: take them; said in the long form only (issue 30 item 3)
    set_aside: str = ""
    #: the long forms, every key in full: said at detailed verbosity and on the help key
    #: (issue 30 item 2); None when these are the only forms
    detailed: AnswerKeys | None = None

    def at(self, verbosity: str) -> AnswerKeys:
        """The keys as said at ``verbosity``: the long forms only at detailed."""
        return self.detailed if verbosity == "detailed" and self.detailed is not None else self


# The Textual dialogs bind these (announcer/ui/tui/modals.py): A or Y accepts, R, N or Escape
# rejects, as the buttons "Accept (A)" and "Reject (R)" show.
KEY_PRESS_ANSWER_KEYS: Final = AnswerKeys(
    confirmation=N_("Press A to accept, or R to reject."),
    multiple_choice=N_("Choose with the arrows or digits 1 to 9, then press Enter."),
    yes_no=N_("Press Y for yes or N for no."),
    numeric=N_("Type a number and press Enter."),
    freetext=N_("Type your answer and press Enter."),
    confirmation_two_keys=N_("Accept A Enter, reject R."),
    whole_command=N_("W reads the whole command."),
    whole_plan=N_("W reads the whole plan."),
)
# The plain line UI (announcer/ui/plain.py) reads whole lines: a or r, y or n, a number.
# Every line ends with Enter, so the short forms do not say it (issue 30 item 2: a few
# words after each question); the long forms say every key, at detailed verbosity and on
# the plain UI's help (``?`` or ``:help`` over a question).
TYPED_LINE_ANSWER_KEYS_LONG: Final = AnswerKeys(
    confirmation=N_("Type A to accept or R to reject, then press Enter."),
    multiple_choice=N_("Type the number of your choice, then press Enter."),
    yes_no=N_("Type Y for yes or N for no, then press Enter."),
    numeric=N_("Type a number and press Enter."),
    freetext=N_("Type your answer and press Enter."),
    confirmation_two_keys=N_("Type A or R, then Enter; C confirms an accept."),
    whole_command=N_("Type W then Enter to hear the whole command."),
    whole_plan=N_("Type W then Enter to hear the whole plan."),
    set_aside=N_("Type decline to decline to answer, or cancel to cancel the question."),
)
TYPED_LINE_ANSWER_KEYS: Final = AnswerKeys(
    confirmation=N_("A or R."),
    multiple_choice=N_("Type the number."),
    yes_no=N_("Y or N."),
    numeric=N_("Type a number."),
    freetext=N_("Type your answer."),
    # issue 30 item 1: with the confirm step "C." and the echo "Sent.", under 3 s at 180 wpm
    confirmation_two_keys=N_("A then C, or R."),
    whole_command=N_("W reads the whole command."),
    whole_plan=N_("W reads the whole plan."),
    detailed=TYPED_LINE_ANSWER_KEYS_LONG,
)
# For an interface that speaks its own key help when it shows the question.
UI_SPEAKS_KEYS: Final = AnswerKeys("", "", "", "", "")
# No interface can answer (``listen --ui none``): no key is named, since nobody could press
# it; the runtime says instead, right after each question, that it cannot be answered here
# and which default the agent applies (announcer/ui/no_answer.py). Never answered for the user.
NO_ANSWERING_UI_KEYS: Final = AnswerKeys("", "", "", "", "")

#: Typed answers to a question. A message that is only one of these is never sent to an
#: agent: it was meant for a question that has just closed (both UIs, ``announcer agent``).
LONE_ANSWER_WORDS: Final = frozenset(
    {"a", "r", "y", "n", "c", "accept", "reject", "yes", "no", "confirm", "always", "never"}
    | {"decline", "cancel"}  # a form's ways out (engine.prompts.SET_ASIDE_WORDS)
)
