"""Which question an answer key answers, and when it may (the keyboard safety rules).

Each confirmation may authorise a real, irreversible action, so a key must only ever
answer the question the user was told about:

* **Bound to the question shown.** Every key press names the question that was on
  screen (or being asked) when it was pressed; a key for any other question is refused.
* **Arming.** When a question appears, or replaces another, its answer keys wait until
  ``arming_seconds`` have passed *and* its own speech has started and its first
  :data:`FIRST_WORDS` words were said (at the user's pace). There is no time-out after
  which unheard keys work (issue 20: after the old 8 s fallback an ``rm -rf`` was
  accepted unheard): when no voice works (:attr:`KeyGuard.voice_working` False), the
  question on screen is its presentation and the keys arm after ``arming_seconds``.
* **An early key costs nothing.** A key in that window was meant for what the user heard
  before: nothing is sent, and the user gets a two-word cue ("Not yet."), at most once
  per :data:`CUE_INTERVAL_SECONDS`; the question is never read again for it.
* **Heard before a risky yes.** Accepting a high-risk or irreversible question also needs
  the question to have been said through (its words at the user's pace from the start
  of its speech, :meth:`KeyGuard.speech_started`), or shown with no voice working.
* **Two keys to accept the risky.** A low- or medium-risk accept is one key once armed.
  Accepting a high-risk or irreversible one (or one whose risk is not stated) takes a
  second, different key: ``accept`` asks to confirm, then ``confirm`` sends it and
  ``back`` returns to the question. Rejecting always takes one key. The setting
  ``two_key_accept = "always"`` asks for both keys on every confirmation; no setting
  makes an irreversible accept a single key.
* **Two keys for "always".** An answer the agent remembers (``accept_always``,
  ``reject_always``: ACP's allow-always and reject-always options) persists beyond this
  question, so it always takes the second key too, whatever the risk or the setting;
  only a reject for this time is a single key.

Pure, like the rest of the engine: every call takes ``now`` from the caller's clock,
and the same class serves the Textual UI, the plain line UI and ``hook serve``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, Literal

from announcer.command_analysis import (
    CommandAnalysis,
    analyse,
    literal_for_speech,
    scan_text,
)
from announcer.engine.phrases import N_
from announcer.protocol.extensions import ANNOUNCER_EXTENSION
from announcer.protocol.sanitise import clean_display, clean_speech

KeyIntent = Literal[
    "accept", "reject", "accept_always", "reject_always", "answer", "confirm", "back"
]
#: the intents a second key must confirm whatever the question's risk
ALWAYS_INTENTS: Final = frozenset({"accept_always", "reject_always"})
TwoKeyRule = Literal["risky", "always"]
VerdictKind = Literal["send", "refused", "confirm_step", "back"]

#: Words of a question that must have been spoken before its keys work.
FIRST_WORDS: Final = 2
DEFAULT_ARMING_SECONDS: Final = 1.0
#: A confirm by the very key that started the accept (Enter on the Accept button, then
#: Enter) must come at least this long after it, so a double press is not two decisions.
SAME_KEY_CONFIRM_SECONDS: Final = 0.5
#: An early key's cue is said at most this often: a user pressing again and again while
#: the question is read hears one "Not yet.", and the question goes on.
CUE_INTERVAL_SECONDS: Final = 2.0


def _field(event: object, name: str) -> object:
    if isinstance(event, dict):
        return event.get(name)
    return getattr(event, name, None)


def command_of(event: object) -> str | None:
    """The command a question's agent will run, as announcer's own mappings record it
    (``x-announcer`` ``command``: hooks, ACP permissions); None for other questions."""
    extensions = _field(event, "extensions")
    ours = extensions.get(ANNOUNCER_EXTENSION) if isinstance(extensions, dict) else None
    command = ours.get("command") if isinstance(ours, dict) else None
    return command if isinstance(command, str) and command.strip() else None


def command_analysis_of(event: object) -> CommandAnalysis | None:
    """What a question's command will do, judged with its true length: a command kept
    cut (``x-announcer`` ``command_length``) is never read in full (issue 29)."""
    command = command_of(event)
    if command is None:
        return None
    extensions = _field(event, "extensions")
    ours = extensions.get(ANNOUNCER_EXTENSION) if isinstance(extensions, dict) else None
    length = ours.get("command_length") if isinstance(ours, dict) else None
    valid = isinstance(length, int) and not isinstance(length, bool)
    return analyse(command, length if valid else None)


def plan_of(event: object) -> str | None:
    """The whole plan of a plan approval, as announcer's own mappings record it
    (``x-announcer`` ``plan``: ACP's ExitPlanMode); None for other questions."""
    extensions = _field(event, "extensions")
    ours = extensions.get(ANNOUNCER_EXTENSION) if isinstance(extensions, dict) else None
    plan = ours.get("plan") if isinstance(ours, dict) else None
    return plan if isinstance(plan, str) and plan.strip() else None


#: a markdown heading or bullet at the start of a plan's line ("## ", "- ", "* ")
_PLAN_MARK = re.compile(r"^(?:#{1,6}\s+|[-*+]\s+(?:\[[ xX]\]\s+)?)")
_CODE_SPAN = re.compile(r"`([^`\n]+)`")


def plan_for_display(plan: str) -> list[str]:
    """The whole plan to show, line by line as the agent wrote it, made printable."""
    lines = [clean_display(line).rstrip() for line in plan.strip().splitlines()]
    return [line for line in lines if line.strip()] or [""]


def plan_for_speech(plan: str, language: str = "en") -> str:
    """The whole plan as the read-whole key says it: every line, a sentence each, heading
    and bullet marks dropped, code spans read literally (``dist/*`` is "dist/ star")."""
    said = []
    for line in plan.splitlines():
        text = _PLAN_MARK.sub("", line.strip()).replace("**", "").strip()
        if not text:
            continue
        text = _CODE_SPAN.sub(lambda code: literal_for_speech(code.group(1), language), text)
        said.append(text if text[-1] in ".!?:;…" else f"{text}.")
    return clean_speech(" ".join(said)).strip()


def reads_literally(event: object) -> bool:
    """The question's action names commands, paths or code as written (announcer's own
    mappings mark it, ``x-announcer`` ``literal``): read as written, never markdown-cleaned."""
    extensions = _field(event, "extensions")
    ours = extensions.get(ANNOUNCER_EXTENSION) if isinstance(extensions, dict) else None
    return isinstance(ours, dict) and (ours.get("literal") is True or "command" in ours)


def is_high_risk(event: object) -> bool:
    """High risk, irreversible (either way of saying it), or a command that is (issue 22:
    risk follows the command, never the agent's own words alone)."""
    irreversible = _field(event, "irreversible") is True or (
        _field(event, "reversibility") == "irreversible"
    )
    if irreversible or _field(event, "risk_level") == "high":
        return True
    analysis = command_analysis_of(event)
    if analysis is not None and (analysis.risk == "high" or analysis.irreversible):
        return True
    # a dangerous command named in the action counts too, whatever else the event says
    # (an AAEP producer's own words, or a command field that tries to say otherwise)
    action = _field(event, "action")
    return isinstance(action, str) and scan_text(action) is not None


def accept_needs_two_keys(event: object, rule: TwoKeyRule = "risky") -> bool:
    """True for a high-risk or irreversible question, or one whose risk is not stated.

    Reads the §4.4.1 fields by name (a protocol model or a plain mapping). A low- or
    medium-risk accept is one key (issue 20); ``rule="always"`` asks for two on all.
    """
    if rule == "always":
        return True
    return is_high_risk(event) or _field(event, "risk_level") not in ("low", "medium")


@dataclass(frozen=True, slots=True)
class KeyVerdict:
    """What a key press does.

    ``send``: send the answer ``intent`` stands for (after a confirm, the intent the
    first key chose). ``confirm_step``: ask the user to confirm ``intent``
    (:func:`confirm_step_text`). ``back``: the accept was withdrawn by the user; the
    question stays open. ``refused``: nothing happens; say ``message`` (an English
    msgid, translate it) to the user.
    """

    kind: VerdictKind
    code: str = ""
    message: str = ""
    intent: str = ""

    @property
    def sends(self) -> bool:
        return self.kind == "send"


CONFIRM_ACCEPT: Final = N_("Accept: {action}? Press Enter to confirm, or Escape to go back.")
CONFIRM_ACCEPT_TYPED: Final = N_(
    "Accept: {action}? Type c then Enter to confirm; anything else goes back."
)
CONFIRM_ALLOW_ALWAYS: Final = N_(
    "Always allow: {action}? The agent will not ask again for this. "
    "Press Enter to confirm, or Escape to go back."
)
CONFIRM_ALLOW_ALWAYS_TYPED: Final = N_(
    "Always allow: {action}? The agent will not ask again for this. "
    "Type c then Enter to confirm; anything else goes back."
)
CONFIRM_REJECT_ALWAYS: Final = N_(
    "Always reject: {action}? The agent will refuse this from now on without asking. "
    "Press Enter to confirm, or Escape to go back."
)
CONFIRM_REJECT_ALWAYS_TYPED: Final = N_(
    "Always reject: {action}? The agent will refuse this from now on without asking. "
    "Type c then Enter to confirm; anything else goes back."
)
ACCEPT_WITHDRAWN: Final = N_("Not accepted. The question is still open.")
ALWAYS_WITHDRAWN: Final = N_("Nothing was sent. The question is still open.")


#: The confirm step as a screen reader says it (issue 30 item 2): the user has just heard
#: the action and pressed its key. Said at normal and terse verbosity for a plain accept;
#: the long form (naming the action) is on screen, on F2 and at detailed verbosity. An
#: "always" answer keeps its long form: what it does beyond this question is news.
CONFIRM_ACCEPT_SHORT: Final = N_("Enter.")
# the plain UI: every line ends with Enter; its keys line said "A then C, or R."
CONFIRM_ACCEPT_TYPED_SHORT: Final = N_("C.")


def confirm_step_short(intent: str, *, typed: bool = False) -> str:
    """The short msgid of ``intent``'s confirm step; empty when it has none (always)."""
    if intent != "accept":
        return ""
    return CONFIRM_ACCEPT_TYPED_SHORT if typed else CONFIRM_ACCEPT_SHORT


def confirm_step_text(intent: str, *, typed: bool = False) -> str:
    """The msgid that asks for the second key of ``intent`` (translate, then format action)."""
    if intent == "accept_always":
        return CONFIRM_ALLOW_ALWAYS_TYPED if typed else CONFIRM_ALLOW_ALWAYS
    if intent == "reject_always":
        return CONFIRM_REJECT_ALWAYS_TYPED if typed else CONFIRM_REJECT_ALWAYS
    return CONFIRM_ACCEPT_TYPED if typed else CONFIRM_ACCEPT


#: The confirm step names the action by at most this many words: the question was just
#: heard, and a long command is never read a second time (issue 20).
CONFIRM_STEP_WORDS: Final = 14


def confirm_step_action(action: str, command: str | None = None) -> str:
    """The action as the confirm step names it: its first sentence, or its first words;
    with the command it runs when short, else its dangerous parts (never the title alone)."""
    words = " ".join(action.split()).rstrip(".?").split()
    first: list[str] = []
    named = ""
    for word in words:
        first.append(word)
        if word.endswith((".", "?", "!")) and len(first) > 2:
            named = " ".join(first).rstrip(".?!")
            break
    if not named:
        named = " ".join(words[:CONFIRM_STEP_WORDS]).rstrip(",;:")
        if len(words) > CONFIRM_STEP_WORDS:
            named += "…"
    if command is not None:
        analysis = analyse(command)
        if not analysis.is_long and " ".join(analysis.normalised.split()) not in named:
            named += ": " + " ".join(analysis.normalised.split())
        elif analysis.is_long and analysis.dangerous:
            named += ": " + "; ".join(analysis.dangerous[:2])
    return named


def withdrawn_text(intent: str) -> str:
    """The msgid said when the user goes back from the confirm step of ``intent``."""
    return ACCEPT_WITHDRAWN if intent == "accept" else ALWAYS_WITHDRAWN


_NOT_SHOWN = KeyVerdict(
    "refused",
    "not_shown",
    N_("Nothing was sent: that key was meant for a question that is no longer on screen."),
)
#: The cue for an early key: two words, never a sentence that delays the question.
NOT_YET: Final = N_("Not yet.")
_ARMING = KeyVerdict("refused", "arming", NOT_YET)
_ARMING_QUIET = KeyVerdict("refused", "arming", "")
_NOT_HEARD = KeyVerdict("refused", "not_heard", NOT_YET)
_NOT_HEARD_QUIET = KeyVerdict("refused", "not_heard", "")
_NOTHING_TO_CONFIRM = KeyVerdict(
    "refused", "nothing_to_confirm", N_("There is nothing to confirm.")
)
_CONFIRM_PENDING = KeyVerdict(
    "refused",
    "confirm_pending",
    N_("To accept, press Enter to confirm, or Escape to go back."),
)


@dataclass(slots=True)
class _Shown:
    token: str
    presented_at: float
    replaced: bool
    spoken_at: float | None = None
    heard_at: float | None = None
    confirming: bool = False
    step_key: str = ""
    step_at: float = 0.0
    step_intent: str = ""
    cued_at: float | None = None


class KeyGuard:
    """The question one interface shows, and whether a key may act on it now."""

    def __init__(
        self,
        arming_seconds: float = DEFAULT_ARMING_SECONDS,
        pace_wpm: int = 180,
        two_key_rule: TwoKeyRule = "risky",
    ) -> None:
        self.arming_seconds = max(0.0, arming_seconds)
        self.pace_wpm = max(1, pace_wpm)
        self.two_key_rule: TwoKeyRule = two_key_rule
        #: A voice works: keys wait for the question's speech. False (no voice, or only
        #: printed text): the question on screen is what the user was told.
        self.voice_working = True
        self._shown: _Shown | None = None
        self._last_token: str | None = None

    def configure(self, arming_seconds: float, pace_wpm: int, two_key_rule: TwoKeyRule) -> None:
        """New settings apply from the next key press."""
        self.arming_seconds = max(0.0, arming_seconds)
        self.pace_wpm = max(1, pace_wpm)
        self.two_key_rule = two_key_rule

    # -- what is on screen ------------------------------------------------------------

    @property
    def shown(self) -> str | None:
        return self._shown.token if self._shown is not None else None

    @property
    def confirming(self) -> bool:
        return self._shown is not None and self._shown.confirming

    @property
    def confirming_intent(self) -> str:
        """What the pending second key would send (``accept``, ``accept_always``...)."""
        shown = self._shown
        return shown.step_intent if shown is not None and shown.confirming else ""

    def present(self, token: str, now: float) -> None:
        """A question is now on screen (or asked again after another): its keys re-arm."""
        if self._shown is not None and self._shown.token == token:
            return
        replaced = self._last_token is not None and self._last_token != token
        self._shown = _Shown(token, now, replaced)
        self._last_token = token

    def speech_started(
        self, token: str, now: float, words: str = "", *, whole: bool = False
    ) -> None:
        """Speech about the shown question began (its first start arms the keys).

        ``words``: the text that began, so the guard knows when the question has been
        said through (each part of it extends that time). ``whole``: the answer to the
        user's key that says the question whole (``w``, F2), cutting its reading off: the
        question is heard once these words are said through (docs/speech.md).
        """
        shown = self._shown
        if shown is None or shown.token != token:
            return
        if shown.spoken_at is None:
            shown.spoken_at = now
        if shown.heard_at is not None and now >= shown.heard_at:
            return  # said through already: hearing it again (F2, W) never delays a key
        if words:
            through = now + _seconds_to_say(words, self.pace_wpm)
            if whole or shown.heard_at is None:
                shown.heard_at = through
            else:
                shown.heard_at = max(shown.heard_at, through)

    def hide(self, token: str | None = None) -> None:
        """The question left the screen (answered, withdrawn, put off)."""
        if self._shown is not None and (token is None or self._shown.token == token):
            self._shown = None

    def armed_at(self) -> float | None:
        """When the shown question's keys start to work (None: nothing shown; infinity:
        not until its speech starts)."""
        shown = self._shown
        if shown is None:
            return None
        by_time = shown.presented_at + self.arming_seconds
        if not self.voice_working or self.arming_seconds == 0:
            return by_time  # no voice: the screen told it; 0: the user turned waits off
        if shown.spoken_at is None:
            return float("inf")
        return max(by_time, shown.spoken_at + FIRST_WORDS * 60.0 / self.pace_wpm)

    def heard_at(self) -> float | None:
        """When the shown question has been said through (infinity: not started yet)."""
        shown = self._shown
        if shown is None:
            return None
        armed = self.armed_at()
        if not self.voice_working or self.arming_seconds == 0 or armed is None:
            return armed
        if shown.spoken_at is None:
            return float("inf")
        return max(armed, shown.heard_at or shown.spoken_at)

    # -- keys -------------------------------------------------------------------------

    def press(
        self,
        token: str | None,
        intent: KeyIntent,
        now: float,
        *,
        two_keys: bool = False,
        key: str = "",
        must_be_heard: bool = False,
        cut_off: bool = False,
    ) -> KeyVerdict:
        """A key pressed while ``token`` was on screen; ``two_keys``: accept needs confirming.

        ``key`` names the physical key (``"a"``, ``"enter"``), so the same key pressed
        twice in quick succession never counts as the two keys of an accept.

        ``two_keys`` comes from :func:`accept_needs_two_keys` for the question; the
        ``always`` rule is applied here as well, so no caller can loosen it.
        ``must_be_heard`` (:func:`is_high_risk`): an accept waits until the question was
        said through. ``cut_off``: the speech engine's word that a key's answer cut the
        question off and it was not said through since (``question_cut``): however much
        time has passed, it was not heard, and such an accept waits for its next reading.
        """
        shown = self._shown
        if shown is None or token is None or shown.token != token:
            return _NOT_SHOWN
        if intent == "back":
            if not shown.confirming:
                return _NOTHING_TO_CONFIRM
            shown.confirming = False
            return KeyVerdict(
                "back", "accept_withdrawn", withdrawn_text(shown.step_intent), shown.step_intent
            )
        if intent == "confirm":
            if not shown.confirming:
                return _NOTHING_TO_CONFIRM
            if key and key == shown.step_key and now - shown.step_at < SAME_KEY_CONFIRM_SECONDS:
                return _CONFIRM_PENDING
            shown.confirming = False
            return KeyVerdict("send", "confirmed", intent=shown.step_intent or "accept")
        armed = self.armed_at()
        if armed is not None and now < armed:
            return _ARMING if self._cue(shown, now) else _ARMING_QUIET
        accepting = intent == "accept" or intent == "accept_always"
        heard = self.heard_at()
        if accepting and must_be_heard and heard is not None and (cut_off or now < heard):
            return _NOT_HEARD if self._cue(shown, now) else _NOT_HEARD_QUIET
        if intent == "accept" or intent in ALWAYS_INTENTS:
            if shown.confirming:
                return _CONFIRM_PENDING  # the same key twice is not two deliberate keys
            if intent in ALWAYS_INTENTS or two_keys or self.two_key_rule == "always":
                shown.confirming = True
                shown.step_key, shown.step_at, shown.step_intent = key, now, intent
                code = "confirm_accept" if intent == "accept" else f"confirm_{intent}"
                return KeyVerdict("confirm_step", code, intent=intent)
        shown.confirming = False
        return KeyVerdict("send", intent, intent=intent)

    @staticmethod
    def _cue(shown: _Shown, now: float) -> bool:
        """Whether an early key gets its cue now (not again within the interval)."""
        if shown.cued_at is not None and now - shown.cued_at < CUE_INTERVAL_SECONDS:
            return False
        shown.cued_at = now
        return True


def _seconds_to_say(text: str, pace_wpm: int) -> float:
    """How long ``text`` takes at ``pace_wpm`` (as the scheduler estimates it)."""
    words = max(text.count(" ") + 1, len(text) / 6.0)
    return words * 60.0 / pace_wpm
