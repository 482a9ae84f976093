"""Which question an answer key answers, and when it may (the keyboard safety rules).

Each confirmation may authorise a real, irreversible action, so a key must only ever
answer the question the user was told about:

* **Bound to the question shown.** Every key press names the question that was on
  screen (or being asked) when it was pressed; a key for any other question is refused.
* **Arming.** When a question appears, or replaces another, its answer keys wait until
  ``arming_seconds`` have passed *and* the question's first words have been spoken
  (the time of :data:`FIRST_WORDS` words at the user's pace after its speech started).
  A key in that window was meant for what the user heard before, so it is refused
  with a spoken reason; nothing is sent.
* **Two keys to accept the irreversible.** Accepting a confirmation that is not a
  known low-risk, reversible action takes a second, different key: ``accept`` asks
  "Accept: <action>? Enter to confirm, Escape to go back", then ``confirm`` sends it
  and ``back`` returns to the question. Rejecting always takes one key. The setting
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

from dataclasses import dataclass
from typing import Final, Literal

from announcer.engine.phrases import N_

KeyIntent = Literal[
    "accept", "reject", "accept_always", "reject_always", "answer", "confirm", "back"
]
#: the intents a second key must confirm whatever the question's risk
ALWAYS_INTENTS: Final = frozenset({"accept_always", "reject_always"})
TwoKeyRule = Literal["risky", "always"]
VerdictKind = Literal["send", "refused", "confirm_step", "back"]

#: Words of a question that must have been spoken before its keys work.
FIRST_WORDS: Final = 2
#: If a question's speech never starts (no working voice, a long queue), the keys arm this
#: long after it appeared anyway: the text is on the screen, and a question must never
#: become impossible to answer.
SPEECH_WAIT_LIMIT: Final = 8.0
DEFAULT_ARMING_SECONDS: Final = 1.0
#: A confirm by the very key that started the accept (Enter on the Accept button, then
#: Enter) must come at least this long after it, so a double press is not two decisions.
SAME_KEY_CONFIRM_SECONDS: Final = 0.5


def accept_needs_two_keys(event: object, rule: TwoKeyRule = "risky") -> bool:
    """True unless the producer says the action is low risk and can be undone.

    Reads the §4.4.1 fields by name (a protocol model or a plain mapping). Irreversible
    (either way of saying it), high, medium or unstated risk all take two keys.
    """
    if rule == "always":
        return True

    def field(name: str) -> object:
        if isinstance(event, dict):
            return event.get(name)
        return getattr(event, name, None)

    irreversible = field("irreversible") is True or field("reversibility") == "irreversible"
    reversible = field("reversibility") in (None, "reversible")
    return irreversible or not reversible or field("risk_level") != "low"


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


def confirm_step_text(intent: str, *, typed: bool = False) -> str:
    """The msgid that asks for the second key of ``intent`` (translate, then format action)."""
    if intent == "accept_always":
        return CONFIRM_ALLOW_ALWAYS_TYPED if typed else CONFIRM_ALLOW_ALWAYS
    if intent == "reject_always":
        return CONFIRM_REJECT_ALWAYS_TYPED if typed else CONFIRM_REJECT_ALWAYS
    return CONFIRM_ACCEPT_TYPED if typed else CONFIRM_ACCEPT


def withdrawn_text(intent: str) -> str:
    """The msgid said when the user goes back from the confirm step of ``intent``."""
    return ACCEPT_WITHDRAWN if intent == "accept" else ALWAYS_WITHDRAWN


_NOT_SHOWN = KeyVerdict(
    "refused",
    "not_shown",
    N_("Nothing was sent: that key was meant for a question that is no longer on screen."),
)
_ARMING_NEW = KeyVerdict(
    "refused",
    "arming",
    N_("Nothing was sent: this question has only just appeared. Listen to it, then answer."),
)
_ARMING_REPLACED = KeyVerdict(
    "refused",
    "arming",
    N_(
        "Nothing was sent: the question changed just before your key. "
        "Listen to the new question, then answer."
    ),
)
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
    confirming: bool = False
    step_key: str = ""
    step_at: float = 0.0
    step_intent: str = ""


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

    def speech_started(self, token: str, now: float) -> None:
        """Speech about the shown question began (the first time counts)."""
        shown = self._shown
        if shown is not None and shown.token == token and shown.spoken_at is None:
            shown.spoken_at = now

    def restart_speech(self, token: str) -> None:
        """The question is being read again after a refused key: arm on its new start."""
        if self._shown is not None and self._shown.token == token:
            self._shown.spoken_at = None

    def hide(self, token: str | None = None) -> None:
        """The question left the screen (answered, withdrawn, put off)."""
        if self._shown is not None and (token is None or self._shown.token == token):
            self._shown = None

    def armed_at(self) -> float | None:
        """When the shown question's keys start to work (None: nothing shown)."""
        shown = self._shown
        if shown is None:
            return None
        if self.arming_seconds == 0:
            return shown.presented_at
        by_time = shown.presented_at + self.arming_seconds
        limit = shown.presented_at + max(self.arming_seconds, SPEECH_WAIT_LIMIT)
        if shown.spoken_at is None:
            return max(by_time, limit)
        heard = shown.spoken_at + FIRST_WORDS * 60.0 / self.pace_wpm
        return max(by_time, min(heard, limit))

    # -- keys -------------------------------------------------------------------------

    def press(
        self,
        token: str | None,
        intent: KeyIntent,
        now: float,
        *,
        two_keys: bool = False,
        key: str = "",
    ) -> KeyVerdict:
        """A key pressed while ``token`` was on screen; ``two_keys``: accept needs confirming.

        ``key`` names the physical key (``"a"``, ``"enter"``), so the same key pressed
        twice in quick succession never counts as the two keys of an accept.

        ``two_keys`` comes from :func:`accept_needs_two_keys` for the question; the
        ``always`` rule is applied here as well, so no caller can loosen it.
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
            return _ARMING_REPLACED if shown.replaced else _ARMING_NEW
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
