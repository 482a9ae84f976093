"""Main screen: literal transcript, quiet status line, global keys (issue 6 §2, §5, §7, §8)."""

from __future__ import annotations

from textual.widgets import Footer, Static

from announcer.engine.announcement import Announcement, Urgency
from announcer.ui.tui.app import AnnouncerApp, MainScreen
from tests.ui.conftest import Harness, load_event


def transcript(app: AnnouncerApp) -> list[str]:
    return list(app.main_screen.transcript.entries)


async def test_producer_markup_is_shown_verbatim_and_does_nothing(harness: Harness) -> None:
    app = AnnouncerApp(harness.session)
    hostile = "[@click=app.quit]Continue[/] and [b]bold[/b] [link=https://x.invalid]here[/link]"
    async with app.run_test() as pilot:
        harness.session.announce(Announcement(hostile, producer_id="agent-1"))
        await pilot.pause()
        assert transcript(app)[-1] == hostile
        # Clicking the line must not run the producer's "action".
        await pilot.click("#transcript", offset=(2, 0))
        await pilot.pause()
        assert app.is_running
        assert app.return_code is None


async def test_control_sequences_are_removed_before_display(harness: Harness) -> None:
    app = AnnouncerApp(harness.session)
    async with app.run_test() as pilot:
        harness.session.announce(
            Announcement("\x1b[2J\x1b]0;pwned\x07Build \x1b[31mfailed\x1b[0m\x07 at step\x9b2J 3")
        )
        await pilot.pause()
        assert transcript(app)[-1] == "Build failed at step 3"


async def test_transcript_is_append_only_newest_last_with_producer_names(
    harness: Harness,
) -> None:
    app = AnnouncerApp(harness.session)
    async with app.run_test() as pilot:
        harness.session.announce(Announcement("Reading files.", producer_id="coder"))
        await pilot.pause()
        assert transcript(app) == ["Reading files."]  # one producer: no name needed
        harness.session.announce(Announcement("Market opened.", producer_id="broker"))
        harness.session.announce(Announcement("Tests pass.", producer_id="coder"))
        await pilot.pause()
        assert transcript(app) == [
            "Reading files.",
            "Market opened. — broker",
            "Tests pass. — coder",
        ]


async def test_status_line_changes_only_on_real_changes(harness: Harness) -> None:
    app = AnnouncerApp(harness.session)
    async with app.run_test() as pilot:
        status = app.main_screen.query_one("#status", Static)
        harness.session.set_status(
            connection="connected", producers=("banking-assistant",), session_state="working"
        )
        await pilot.pause()
        line = str(status.content)
        assert line == "connected · banking-assistant · working · 0 pending"
        assert harness.backend.said("Connection: connected.")
        spoken_before = len(harness.backend.spoken)
        harness.session.set_status(connection="connected", session_state="working")
        await pilot.pause()
        assert len(harness.backend.spoken) == spoken_before  # nothing new, nothing said
        harness.open(load_event("agent.awaiting.confirmation.json"))
        await pilot.pause()
        assert str(status.content).endswith("1 pending")


async def test_no_animation_and_no_color_filter(harness: Harness, monkeypatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    app = AnnouncerApp(harness.session)
    async with app.run_test() as pilot:
        await pilot.pause()
        assert app.animation_level == "none"
        assert app.no_color
        assert any(type(f).__name__ in {"Monochrome", "NoColor"} for f in app._filters)
        assert app.theme.startswith("ansi")


async def test_welcome_is_spoken_and_focus_is_on_the_transcript(harness: Harness) -> None:
    app = AnnouncerApp(harness.session)
    async with app.run_test() as pilot:
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)
        assert app.focused is app.main_screen.transcript
        assert harness.backend.texts[0] == "announcer is listening. Press question mark for help."
        assert app.main_screen.query_one(Footer).display
        assert app.main_screen.query_one(Footer).display


async def test_critical_announcement_appears_even_in_low_load(harness: Harness) -> None:
    harness.session.update_settings(
        harness.session.settings.model_copy(update={"cognitive_load": "low"})
    )
    app = AnnouncerApp(harness.session)
    async with app.run_test() as pilot:
        harness.session.announce(Announcement("Disk full.", urgency=Urgency.CRITICAL))
        await pilot.pause()
        assert transcript(app) == ["Disk full."]
        assert not app.main_screen.query_one("#status").display
        assert not app.main_screen.query_one(Footer).display


async def test_nothing_blinks_in_text_fields(harness: Harness) -> None:
    from textual.widgets import Input

    from tests.ui.conftest import schema_example

    app = AnnouncerApp(harness.session)
    async with app.run_test() as pilot:
        harness.open(schema_example("agent.awaiting.clarification", 1))
        await pilot.pause()
        fields = list(app.screen.query(Input))
        assert fields and all(not f.cursor_blink for f in fields)


async def test_transcript_and_history_stay_bounded(harness: Harness, monkeypatch) -> None:
    from announcer.ui.tui import app as app_module

    monkeypatch.setattr(app_module, "HISTORY_SIZE", 50)
    app = AnnouncerApp(harness.session)
    async with app.run_test() as pilot:
        for number in range(120):
            harness.session.announce(Announcement(f"Step {number} done."), speak=False)
        await pilot.pause()
        assert len(app.history) == 50
        assert app.history[-1].text == "Step 119 done."
        assert transcript(app)[-1] == "Step 119 done."
        assert len(transcript(app)) == 50


async def test_long_lines_wrap_instead_of_scrolling_sideways(harness: Harness) -> None:
    app = AnnouncerApp(harness.session)
    long_text = "The agent is [b]reading[/b] " + " ".join(f"file{i}.txt" for i in range(30))
    async with app.run_test(size=(60, 20)) as pilot:
        harness.session.announce(Announcement(long_text))
        await pilot.pause()
        await pilot.pause()
        drawn = [strip.text.rstrip() for strip in app.main_screen.transcript.lines]
        assert len(drawn) > 1 and all(len(line) <= 60 for line in drawn)
        assert (
            " ".join(drawn).replace("  ", " ").startswith("The agent is [b]reading[/b] file0.txt")
        )
        assert app.main_screen.transcript.max_scroll_x == 0
