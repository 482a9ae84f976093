"""``--ui none``: no interface answers, so each question says so and names the agent's default.

Nothing here ever answers a question (never auto-accept): the producer applies
its own default when its timeout runs out (§6). Instead of key help nobody could
use, the user hears which default that is: a confirmation's ``default_decision``
or a clarification's ``default_response``.
"""

from __future__ import annotations

from typing import Any

from announcer.engine.answer_keys import NO_ANSWERING_UI_KEYS
from announcer.engine.prompts import PendingPrompt
from announcer.i18n.text import grapheme_floor
from announcer.i18n.translate import catalog_language, translator
from announcer.runtime.contract import UiSession

# A producer's default answer is read, not interpreted; keep it short.
MAX_DEFAULT_CHARS = 200


def no_answer_notice(prompt: PendingPrompt, language: str) -> str:
    """What happens to a question nobody here can answer, in ``language``."""
    _ = translator(language).gettext
    event = prompt.event
    if prompt.kind == "confirmation":
        if getattr(event, "default_decision", "reject") == "accept":
            return _(
                "This question cannot be answered here. When the time is up, "
                "the agent will apply its default and go ahead."
            )
        return _(
            "This question cannot be answered here. When the time is up, "
            "the agent will apply its default and reject it."
        )
    default = getattr(event, "default_response", None)
    if isinstance(default, str) and default.strip():
        labels = {c.value: c.label for c in getattr(event, "choices", None) or []}
        answer = " ".join(labels.get(default, default).split())
        answer = answer[: grapheme_floor(answer, MAX_DEFAULT_CHARS)]
        return _(
            "This question cannot be answered here. When the time is up, "
            "the agent will use its default answer: {answer}."
        ).format(answer=answer)
    return _(
        "This question cannot be answered here. When the time is up, "
        "the agent will go on without your answer."
    )


class NoAnswerUi:
    """A listener that answers nothing and says so after each question."""

    def __init__(self) -> None:
        self.session: UiSession | None = None

    def attach(self, session: UiSession) -> None:
        self.session = session
        session.set_answer_keys(NO_ANSWERING_UI_KEYS)  # no keys to name: nothing can press them
        session.subscribe(self)

    def prompt_opened(self, prompt: PendingPrompt) -> None:
        if self.session is None:
            return
        language = catalog_language(self.session.settings.languages)
        self.session.say_after_question(prompt, no_answer_notice(prompt, language))

    def announcement_made(self, announcement: Any) -> None:
        return None

    def prompt_voided(self, reply_token: str, reason: str) -> None:
        return None

    def status_changed(self, status: Any) -> None:
        return None
