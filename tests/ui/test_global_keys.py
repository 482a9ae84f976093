"""Every global key on the main screen does what the Footer says, and says so aloud."""

from __future__ import annotations

from textual.widgets import Footer

from announcer.engine.announcement import Announcement
from announcer.ui.tui.app import AnnouncerApp
from announcer.ui.tui.screens import HistoryScreen, PromptListScreen, SettingsScreen
from tests.ui.conftest import Harness, load_event, schema_example


async def test_l_repeats_the_last_announcement(harness: Harness) -> None:
    app = AnnouncerApp(harness.session)
    async with app.run_test() as pilot:
        harness.session.announce(Announcement("First."))
        harness.session.announce(Announcement("Second thing happened."))
        await pilot.pause()
        await pilot.press("l")
        assert harness.backend.texts[-1] == "Second thing happened."
        assert harness.backend.texts.count("Second thing happened.") == 2


async def test_l_with_nothing_said_yet_says_so(harness: Harness) -> None:
    app = AnnouncerApp(harness.session)
    async with app.run_test() as pilot:
        await pilot.press("l")
        assert harness.backend.texts[-1] == "Nothing has been announced yet."


async def test_s_stops_speech(harness: Harness) -> None:
    app = AnnouncerApp(harness.session)
    async with app.run_test() as pilot:
        await pilot.press("s")
        assert harness.backend.stops == 1


async def test_w_says_where_am_i(harness: Harness) -> None:
    app = AnnouncerApp(harness.session)
    async with app.run_test() as pilot:
        harness.session.set_status(
            connection="connected", producers=("banking-assistant",), session_state="working"
        )
        await pilot.pause()
        await pilot.press("w")
        assert harness.backend.texts[-1] == (
            "Main screen. Connection connected. Producer banking-assistant. "
            "Session working. 0 pending questions."
        )


async def test_v_cycles_verbosity_applies_persists_and_speaks(harness: Harness) -> None:
    app = AnnouncerApp(harness.session)
    async with app.run_test() as pilot:
        await pilot.press("v")
        assert harness.session.settings.verbosity == "detailed"
        assert harness.backend.texts[-1] == "Verbosity detailed."
        await pilot.press("v")
        assert harness.session.settings.verbosity == "terse"
        await pilot.press("v")
        assert harness.session.settings.verbosity == "normal"
        assert [s.verbosity for s in harness.saved] == ["detailed", "terse", "normal"]


async def test_c_toggles_low_cognitive_load_and_the_screen_reduces(harness: Harness) -> None:
    app = AnnouncerApp(harness.session)
    async with app.run_test() as pilot:
        main = app.main_screen
        assert main.query_one("#status").display
        await pilot.press("c")
        await pilot.pause()
        assert harness.session.settings.cognitive_load == "low"
        assert harness.backend.texts[-1] == "Low cognitive load on."
        assert not main.query_one("#status").display
        assert not main.query_one(Footer).display
        await pilot.press("c")
        await pilot.pause()
        assert harness.session.settings.cognitive_load == "medium"
        assert harness.backend.texts[-1] == "Low cognitive load off."
        assert main.query_one("#status").display


async def test_p_lists_pending_prompts_and_enter_opens_one(harness: Harness) -> None:
    app = AnnouncerApp(harness.session)
    async with app.run_test() as pilot:
        await pilot.press("p")
        assert harness.backend.texts[-1] == "No pending questions."
        harness.open(schema_example("agent.awaiting.clarification", 2))
        await pilot.pause()
        await pilot.press("escape")  # leave the question for later
        await pilot.pause()
        assert harness.backend.said("Question left for later. 1 pending.")
        await pilot.press("p")
        await pilot.pause()
        assert isinstance(app.screen, PromptListScreen)
        assert harness.backend.texts[-1].startswith("Pending questions. 1 pending. Question: ")
        await pilot.press("enter")
        await pilot.pause()
        assert type(app.screen).__name__ == "ClarifyScreen"


async def test_h_opens_history_and_enter_respeaks(harness: Harness) -> None:
    app = AnnouncerApp(harness.session)
    async with app.run_test() as pilot:
        harness.session.announce(Announcement("Opened the report."))
        harness.session.announce(Announcement("Saved the report."))
        await pilot.pause()
        await pilot.press("h")
        await pilot.pause()
        assert isinstance(app.screen, HistoryScreen)
        assert harness.backend.texts[-1] == (
            "History. 2 entries, newest last. Saved the report., 2 of 2"
        )
        await pilot.press("up")
        await pilot.pause()
        assert harness.backend.texts[-1] == "Opened the report., 1 of 2"
        await pilot.press("enter")
        assert harness.backend.texts[-1] == "Opened the report."
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is app.main_screen
        assert harness.backend.texts[-1] == "Back."


async def test_o_opens_settings(harness: Harness) -> None:
    app = AnnouncerApp(harness.session)
    async with app.run_test() as pilot:
        await pilot.press("o")
        await pilot.pause()
        assert isinstance(app.screen, SettingsScreen)
        assert harness.backend.said("Settings. Tab moves between settings")


async def test_help_speaks_the_bindings_the_footer_shows(harness: Harness) -> None:
    app = AnnouncerApp(harness.session)
    async with app.run_test() as pilot:
        await pilot.press("question_mark")
        help_text = harness.backend.texts[-1]
        shown = [
            b.binding.description for b in app.screen.active_bindings.values() if b.binding.show
        ]
        for description in shown:
            assert f": {description}." in help_text
        assert "l: Repeat. s: Stop speech. w: Where am I." in help_text
        assert "question mark: Help." in help_text
        assert "Control q: Quit." in help_text
        await pilot.press("f1")
        assert harness.backend.texts[-1] == help_text


async def test_help_in_a_confirmation_speaks_its_keys(harness: Harness) -> None:
    app = AnnouncerApp(harness.session)
    async with app.run_test() as pilot:
        harness.open(load_event("agent.awaiting.confirmation.json"))
        await pilot.pause()
        await pilot.press("f1")
        assert harness.backend.texts[-1].startswith("a: Accept. r: Reject. F2: Say again.")


async def test_ctrl_q_quits(harness: Harness) -> None:
    app = AnnouncerApp(harness.session)
    async with app.run_test() as pilot:
        await pilot.press("ctrl+q")
        await pilot.pause()
    assert app.return_code == 0


async def test_ctrl_c_says_how_to_quit(harness: Harness) -> None:
    app = AnnouncerApp(harness.session)
    async with app.run_test() as pilot:
        await pilot.press("ctrl+c")
        assert harness.backend.texts[-1] == "To quit, press Control Q."
        assert app.is_running


async def test_ctrl_q_quits_from_inside_a_dialog(harness: Harness) -> None:
    app = AnnouncerApp(harness.session)
    async with app.run_test() as pilot:
        harness.open(schema_example("agent.awaiting.clarification", 2))
        await pilot.pause()
        await pilot.press("ctrl+q")
        await pilot.pause()
    assert app.return_code == 0
    assert harness.replies == []  # quitting never answers
