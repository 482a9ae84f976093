"""Issue 30 item 8: the dialog's risk line agrees in every language ("Riesgo alta" was
heard in Spanish: the word "high" is shared with the feminine "carga cognitiva")."""

from __future__ import annotations

import pytest

from announcer.i18n.translate import translator
from announcer.ui.tui.prompt_view import RISK_PHRASES


@pytest.mark.parametrize(
    ("language", "level", "said"),
    [
        ("es", "high", "Riesgo alto"),
        ("es", "low", "Riesgo bajo"),
        ("pt_BR", "high", "Risco alto"),
        ("fr", "high", "Risque élevé"),
        ("de", "high", "Risiko hoch"),
    ],
)
def test_the_risk_phrase_is_one_message_that_agrees(language: str, level: str, said: str) -> None:
    assert translator(language).gettext(RISK_PHRASES[level]) == said
