"""The screen-reader backend. NVDA cannot run here, so a stand-in plays its part."""

from __future__ import annotations

from pathlib import Path

import pytest

from announcer.engine.announcement import Announcement, Urgency
from announcer.speech.backend import BackendUnavailable, SpeechBackend, VoiceSettings
from announcer.speech.screenreader import ScreenReaderBackend, orca_is_running

from .helpers import Done


class FakeNvda:
    """Stands in for accessible_output2.outputs.nvda.NVDA (Windows only)."""

    name = "NVDA"

    def __init__(self, running: bool = True) -> None:
        self.running = running
        self.spoken: list[tuple[str, bool]] = []
        self.brailled: list[str] = []
        self.silenced = 0

    def is_active(self) -> bool:
        return self.running

    def speak(self, text: str, interrupt: bool = False) -> None:
        self.spoken.append((text, interrupt))

    def braille(self, text: str) -> None:
        self.brailled.append(text)

    def silence(self) -> None:
        self.silenced += 1


def test_speaks_and_brailles_through_the_running_screen_reader() -> None:
    stopped, nvda = FakeNvda(running=False), FakeNvda()
    backend = ScreenReaderBackend([stopped, nvda])
    backend.start()
    assert isinstance(backend, SpeechBackend) and backend.capabilities.supports_braille
    assert backend.output is nvda
    done = Done()
    backend.speak(Announcement("Tests passed."), VoiceSettings(rate_wpm=600), done)
    assert nvda.spoken == [("Tests passed.", False)]
    assert nvda.brailled == ["Tests passed."]
    assert done.wait() and done.calls == 1


def test_critical_and_interrupting_map_to_the_interrupt_flag() -> None:
    nvda = FakeNvda()
    backend = ScreenReaderBackend([nvda])
    backend.start()
    for announcement in (
        Announcement("Confirm?", urgency=Urgency.CRITICAL),
        Announcement("Now.", interrupt=True),
        Announcement("Later.", urgency=Urgency.BACKGROUND),
    ):
        backend.speak(announcement, VoiceSettings(), Done())
        backend.stop()
    assert [flag for _, flag in nvda.spoken] == [True, True, False]


def test_stop_silences_and_completes_once() -> None:
    nvda = FakeNvda()
    backend = ScreenReaderBackend([nvda])
    backend.start()
    done = Done()
    backend.speak(Announcement("A long sentence " * 30), VoiceSettings(), done)
    assert backend.is_speaking()
    backend.stop()
    assert nvda.silenced == 1 and done.calls == 1 and not backend.is_speaking()
    backend.stop()
    assert nvda.silenced == 1 and done.calls == 1


def test_braille_can_be_turned_off() -> None:
    nvda = FakeNvda()
    backend = ScreenReaderBackend([nvda], braille=False)
    backend.start()
    backend.speak(Announcement("Hi."), VoiceSettings(), Done())
    assert nvda.brailled == []


def test_no_running_screen_reader_is_a_clear_message() -> None:
    with pytest.raises(BackendUnavailable, match="no screen reader is running"):
        ScreenReaderBackend([FakeNvda(running=False)]).start()


def test_on_this_machine_the_real_discovery_explains_itself() -> None:
    if orca_is_running():
        pytest.skip("a screen reader is running here")
    with pytest.raises(BackendUnavailable, match="no screen reader is running") as err:
        ScreenReaderBackend().start()
    assert "\n" not in str(err.value)


def test_orca_is_found_by_its_process(tmp_path: Path) -> None:
    (tmp_path / "1").mkdir()
    (tmp_path / "1" / "cmdline").write_bytes(b"/usr/bin/python3\0/usr/bin/orca\0--replace\0")
    (tmp_path / "2").mkdir()
    (tmp_path / "2" / "cmdline").write_bytes(b"bash\0")
    assert orca_is_running(tmp_path)
    (tmp_path / "1" / "cmdline").write_bytes(b"vim\0orca-notes.txt\0")
    assert not orca_is_running(tmp_path)
