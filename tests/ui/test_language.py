"""The UI speaks and shows its own words in the user's language (issue 7 catalogs)."""

from __future__ import annotations

from announcer.ui.tui.app import AnnouncerApp
from announcer.ui.tui.text import set_language
from tests.ui.conftest import Harness, load_event


async def test_spanish_user_hears_spanish_keys_and_questions(harness: Harness) -> None:
    harness.session.update_settings(
        harness.session.settings.model_copy(update={"languages": ["es"]})
    )
    app = AnnouncerApp(harness.session)
    try:
        async with app.run_test() as pilot:
            await pilot.press("question_mark")
            help_text = harness.backend.texts[-1]
            assert "l: Repetir." in help_text
            assert "signo de interrogación: Ayuda." in help_text
            harness.open(load_event("agent.awaiting.confirmation.json"))
            await pilot.pause()
            assert harness.backend.said("A y luego Intro acepta, R rechaza; F2 repite.")
            assert harness.backend.said("Si no responde en 5 minutos, se rechazará.")
            await pilot.press("r")
            await pilot.pause()
            # the short echo (issue 30 item 2): one question, one agent, nothing else meant
            assert harness.backend.texts[-1] == "Enviado."
            await pilot.press("v")
            assert harness.backend.texts[-1] == "Nivel de detalle: detallado."
    finally:
        set_language("en")


async def test_changing_language_in_settings_relabels_the_keys(harness: Harness) -> None:
    app = AnnouncerApp(harness.session)
    try:
        async with app.run_test() as pilot:
            app.apply_settings(harness.session.settings.model_copy(update={"languages": ["de"]}))
            await pilot.pause()
            await pilot.press("f1")
            assert "l: Wiederholen." in harness.backend.texts[-1]
    finally:
        set_language("en")
